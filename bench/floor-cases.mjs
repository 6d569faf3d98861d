// The query cases of bench/floor-speed.mjs, written once for both runtimes: Node imports
// this file, and the Chromium page (served by floor-speed.mjs) imports the same file, so a
// ratio in one runtime compares with the same ratio in the other. Nothing here imports Node
// built-ins or touches the DOM; time is performance.now() in both.
//
// Each filter is loaded from its file's bytes with BloomFilter.from. Cases, per filter:
//   miss   mightContain(string), non-members (the common answer of a filter in front of a server)
//   hit    mightContain(string), members
//   many   mightContainMany(strings), non-members, batches of 1,000 (time per key)
//   value  valueOf(string), members (filters with value bits only)
// Before timing, every member answers true and, with values, its exact value.
import { makeKeys } from './browser-cases.mjs';

/** Member i's value in a filter of `bits` value bits: the top bits of i x the golden ratio (bench/floor_build.c value_of). */
export function valueAt(i, bits) {
  return bits === 0 ? 0 : Math.imul(i, 2654435769) >>> (32 - bits);
}

const sink = { value: 0 };

/** A pass compiled from its own source text, so each loop has one call target (its own type feedback). */
function compile(names, body, ...args) {
  // eslint-disable-next-line no-new-func -- a function of its own: its own type feedback
  return new Function(...names, 'sink', `return () => { ${body} };`)(...args, sink);
}

const EACH = 'let s = 0; for (let i = 0; i < keys.length; i++) if (filter.mightContain(keys[i])) s++; sink.value += s; return keys.length;';
const MANY = 'let s = 0, k = 0; for (const batch of batches) { const answers = filter.mightContainMany(batch); ' +
  'for (let i = 0; i < answers.length; i++) if (answers[i]) s++; k += batch.length; } sink.value += s; return k;';
const VALUE = 'let s = 0; for (let i = 0; i < keys.length; i++) s += filter.valueOf(keys[i]); sink.value += s; return keys.length;';

function measure(pass, minMs) {
  let elapsed = 0;
  let ops = 0;
  do {
    const start = performance.now();
    ops += pass();
    elapsed += performance.now() - start;
  } while (elapsed < minMs);
  return (elapsed * 1e6) / ops;
}

/**
 * @param {{ BloomFilter: any, files: Record<string, { bytes: Uint8Array, valueBits: number, n: number }>,
 *   config: { probes: number, minMs: number, batch: number }, log?: (text: string) => void }} options
 */
export async function createFloorBench({ BloomFilter, files, config, log = () => {} }) {
  const n = Math.min(...Object.values(files).map((file) => file.n));
  const count = Math.min(config.probes, n);
  const members = makeKeys(0, count).strings;
  const outsiders = makeKeys(n, count).strings;
  const filters = {};
  const cases = [];
  for (const [name, file] of Object.entries(files)) {
    const filter = await BloomFilter.from(file.bytes);
    filters[name] = filter;
    // Every member answers maybe, and its own value.
    for (let i = 0; i < count; i++) {
      if (!filter.mightContain(members[i])) throw new Error(`${name}: member ${i} answered no`);
      if (file.valueBits > 0 && filter.valueOf(members[i]) !== valueAt(i, file.valueBits)) {
        throw new Error(`${name}: member ${i} has value ${filter.valueOf(members[i])}, not ${valueAt(i, file.valueBits)}`);
      }
    }
    const many = [];
    for (let i = 0; i < count; i += config.batch) many.push(outsiders.slice(i, i + config.batch));
    cases.push({ id: `${name}:miss`, pass: compile(['filter', 'keys'], EACH, filter, outsiders) });
    cases.push({ id: `${name}:hit`, pass: compile(['filter', 'keys'], EACH, filter, members) });
    cases.push({ id: `${name}:many`, pass: compile(['filter', 'batches'], MANY, filter, many) });
    if (file.valueBits > 0) cases.push({ id: `${name}:value`, pass: compile(['filter', 'keys'], VALUE, filter, members) });
    log(`${name}: ${file.bytes.length} bytes, ${count} members checked`);
  }
  for (const benchCase of cases) measure(benchCase.pass, Math.min(50, config.minMs)); // warm-up
  return {
    ids: cases.map((benchCase) => benchCase.id),
    /** One round: every case once, in an order rotated by `round`; ns per key by id. */
    round(round) {
      const out = {};
      for (let j = 0; j < cases.length; j++) {
        const benchCase = cases[(j + round) % cases.length];
        out[benchCase.id] = measure(benchCase.pass, config.minMs);
      }
      return out;
    },
    sink: () => sink.value,
    free() {
      for (const filter of Object.values(filters)) filter.free();
    },
  };
}
