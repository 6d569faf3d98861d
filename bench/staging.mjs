#!/usr/bin/env node
// @ts-check
// node bench/staging.mjs [--browser] [--rounds N] [--min-ms MS] [--n KEYS] [--small KEYS] [--lengths 12,16,..]
//                         [--only stage|query] [--no-mix] [--before DIR]
//
// How fast a string key gets into wasm memory, in Node or (--browser) in
// headless Debian Chromium driven by playwright-core, the same code in both:
//   stage.*  the encoders alone, each writing the 38-character ASCII keys of
//            bench/keys.mjs to a 4-aligned spot of a WebAssembly.Memory: the
//            byte loop (one store a character), the word loops (4 characters a
//            u32 store, 8 a pair), encodeInto, and in Node Buffer's utf8Write
//            and latin1Write bound to the memory;
//   query.*  mightContain(string) of non-members and add(string) with the
//            library's own choice, the loop forced and encodeInto forced (and,
//            with --before DIR, the same from a copy of an older js/ + wasm/,
//            e.g. `git archive HEAD js wasm package.json | tar -x -C DIR`).
// Each over a small key set (--small keys, repeated: staging alone) and the
// 1M-key set bench:browser uses (cache misses on the strings included). Cases
// of one group take turns within a round, in an order rotated per round; the
// report gives medians of ns per key and of per-round ratios to the first case.
// Load from other processes moves absolute numbers; compare within a run.

const PAGE_PATH = '/bench/staging.html';
const isNode = typeof process === 'object' && typeof process?.versions?.node === 'string' && typeof window === 'undefined';

/** Every answer a pass computes is added here, so no engine can drop the work. */
const sink = { value: 0 };

/* ------------------------------------------------------------------------ */
/* The encoders (standalone copies of the variants measured)                 */
/* ------------------------------------------------------------------------ */

/** One byte store a character (js/wasm/staging.js before issue 11's rework). */
function loop8(s, bytes) {
  const n = s.length;
  let i = 0;
  for (; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80) return -1;
    bytes[i] = c;
  }
  return n;
}

/** Four characters a u32 store (little-endian), one ASCII test a group; the tail as one partial word. */
function loop32(s, words) {
  const n = s.length;
  const full = n & ~3;
  let i = 0;
  let w = 0;
  for (; i < full; i += 4) {
    const a = s.charCodeAt(i);
    const b = s.charCodeAt(i + 1);
    const c = s.charCodeAt(i + 2);
    const d = s.charCodeAt(i + 3);
    if ((a | b | c | d) >= 0x80) return -1;
    words[w++] = a | (b << 8) | (c << 16) | (d << 24);
  }
  if (i < n) {
    let word = 0;
    for (let shift = 0; i < n; i++, shift += 8) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) return -1;
      word |= c << shift;
    }
    words[w] = word;
  }
  return n;
}

/** loop32 with the ASCII test once at the end (the words are written speculatively). */
function loop32acc(s, words) {
  const n = s.length;
  const full = n & ~3;
  let i = 0;
  let w = 0;
  let any = 0;
  for (; i < full; i += 4) {
    const a = s.charCodeAt(i);
    const b = s.charCodeAt(i + 1);
    const c = s.charCodeAt(i + 2);
    const d = s.charCodeAt(i + 3);
    any |= a | b | c | d;
    words[w++] = a | (b << 8) | (c << 16) | (d << 24);
  }
  if (i < n) {
    let word = 0;
    for (let shift = 0; i < n; i++, shift += 8) {
      const c = s.charCodeAt(i);
      any |= c;
      word |= c << shift;
    }
    words[w] = word;
  }
  return any >= 0x80 ? -1 : n;
}

/** Eight characters per two u32 stores, one ASCII test a group; then loop32's tail. */
function loop64(s, words) {
  const n = s.length;
  const full8 = n & ~7;
  let i = 0;
  let w = 0;
  for (; i < full8; i += 8) {
    const a = s.charCodeAt(i);
    const b = s.charCodeAt(i + 1);
    const c = s.charCodeAt(i + 2);
    const d = s.charCodeAt(i + 3);
    const e = s.charCodeAt(i + 4);
    const f = s.charCodeAt(i + 5);
    const g = s.charCodeAt(i + 6);
    const h = s.charCodeAt(i + 7);
    if ((a | b | c | d | e | f | g | h) >= 0x80) return -1;
    words[w] = a | (b << 8) | (c << 16) | (d << 24);
    words[w + 1] = e | (f << 8) | (g << 16) | (h << 24);
    w += 2;
  }
  if (i + 4 <= n) {
    const a = s.charCodeAt(i);
    const b = s.charCodeAt(i + 1);
    const c = s.charCodeAt(i + 2);
    const d = s.charCodeAt(i + 3);
    if ((a | b | c | d) >= 0x80) return -1;
    words[w++] = a | (b << 8) | (c << 16) | (d << 24);
    i += 4;
  }
  if (i < n) {
    let word = 0;
    for (let shift = 0; i < n; i++, shift += 8) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) return -1;
      word |= c << shift;
    }
    words[w] = word;
  }
  return n;
}

/* ------------------------------------------------------------------------ */
/* Cases                                                                     */
/* ------------------------------------------------------------------------ */

/**
 * Build every case in this runtime. `libs` maps a label to { lib, staging }
 * (js/index.js and js/wasm/staging.js of one checkout); `makeKeys` is
 * bench/browser-cases.mjs's. Returns the groups of cases.
 */
export async function createStagingBench({ libs, makeKeys, config, NodeBuffer }) {
  const { n, small } = config;
  const members = makeKeys(0, n).strings;
  const probes = makeKeys(n, n).strings;
  const smallSet = probes.slice(0, small);
  const memory = new WebAssembly.Memory({ initial: 2 });
  const base = 1024; // 4-aligned, as the library's scratch is
  const bytes = new Uint8Array(memory.buffer, base, 1024);
  const words = new Uint32Array(memory.buffer, base, 256);
  const encoder = new TextEncoder();
  const reference = new Uint8Array(1024);
  // Every encoder writes exactly TextEncoder's bytes (checked once, untimed).
  for (const s of [...smallSet.slice(0, 50), 'a', 'ab', 'abc', 'abcd', 'abcde', 'x'.repeat(63)]) {
    const expected = encoder.encodeInto(s, reference).written;
    for (const [name, original, view] of [['loop8', loop8, bytes], ['loop32', loop32, words], ['loop32acc', loop32acc, words], ['loop64', loop64, words]]) {
      // A copy of the encoder is checked: the mixed strings here would otherwise shape
      // the timed one's type feedback (in Chromium that made the loops up to 4x slower).
      // eslint-disable-next-line no-new-func -- a function of its own: its own type feedback
      const fn = new Function(`return ${original.toString()}`)();
      bytes.fill(0);
      if (fn(s, view) !== expected || bytes.subarray(0, expected).some((b, i) => b !== reference[i])) throw new Error(`${name} is wrong for ${s}`);
    }
  }

  // Each case's loop is compiled from its own source, so every call site in it
  // sees one encoder (or one filter class) and V8 can inline it: closures made
  // from one literal would share type feedback and go megamorphic.
  // eslint-disable-next-line no-new-func -- a function of its own: its own type feedback
  const repeat = (body) => new Function('keys', 'op', 'sink', `return function pass() {
    let acc = 0;
    const rounds = Math.max(1, Math.floor(1000000 / keys.length));
    for (let r = 0; r < rounds; r++) for (let i = 0; i < keys.length; i++) ${body};
    sink.value += acc & 1;
    return rounds * keys.length;
  }`);
  const stageCase = (id, keys, stage) => ({ id, pass: repeat('acc += op(keys[i])')(keys, stage, sink) });
  const stagers = [
    ['loop8', (s) => loop8(s, bytes)],
    ['loop32', (s) => loop32(s, words)],
    ['loop32acc', (s) => loop32acc(s, words)],
    ['loop64', (s) => loop64(s, words)],
    ['encodeInto', (s) => encoder.encodeInto(s, bytes).written],
  ];
  if (NodeBuffer) {
    const buffer = NodeBuffer.from(memory.buffer);
    stagers.push(['utf8Write', (s) => buffer.utf8Write(s, base, 1024)], ['latin1Write', (s) => buffer.latin1Write(s, base, 1024)]);
  }
  const groups = [];
  for (const [label, keys] of [['small', smallSet], ['1M', probes]]) {
    groups.push(stagers.map(([name, fn]) => stageCase(`stage.${name} ${label}`, keys, fn)));
  }
  // Shorter keys (flat copies of the small set's first characters): where the loop stops winning in Node.
  for (const length of config.lengths) {
    const keys = smallSet.map((k) => new TextDecoder().decode(encoder.encode(k.slice(0, length))));
    groups.push(stagers.filter(([name]) => name === 'loop8' || name === 'loop32' || name === 'encodeInto')
      .map(([name, fn]) => stageCase(`stage.${name} ${length} chars`, keys, fn)));
  }

  const mixedStrings = ['', 'a', 'ab', 'abc', 'abcd', 'abcde', 'x'.repeat(63), 'caf\u00e9', '\u65e5\u672c', 'lone \uD800',
    ...smallSet.slice(0, 50).map((k, i) => k + String(i)), ...Array.from({ length: 41 }, (_, i) => 'k'.repeat(i))];
  // Whole queries and inserts, through each library given, at its default limit and forced both ways.
  const queryGroups = { small: [], '1M': [], add: [] };
  for (const [label, { lib, staging }] of Object.entries(libs)) {
    const filter = await lib.BloomFilter.create({ capacity: n, errorRate: 0.01 });
    for (const key of members) filter.add(key);
    // Untimed: the strings an application also passes (literals, concatenations,
    // repeats, non-ASCII, every short length), so the encoder's type feedback is
    // not that of one uniform key set.
    for (const limit of config.noMix ? [] : [undefined, 1024]) {
      staging.setAsciiLoopMax(limit);
      for (const s of mixedStrings) filter.mightContain(s);
      staging.setAsciiLoopMax(undefined);
    }
    const limits = [['default', undefined], ['loop', 1024], ['encodeInto', 0]];
    for (const [mode, limit] of limits) {
      const forced = (id, pass) => ({
        id,
        setup() {
          staging.setAsciiLoopMax(limit);
        },
        pass,
        teardown() {
          staging.setAsciiLoopMax(undefined);
        },
      });
      for (const [set, keys] of [['small', smallSet], ['1M', probes]]) {
        queryGroups[set].push(forced(`query.${label}.${mode} ${set}`, repeat('if (op.mightContain(keys[i])) acc++')(keys, filter, sink)));
      }
      let fresh = null;
      queryGroups.add.push({
        id: `add.${label}.${mode} 1M`,
        async setup() {
          staging.setAsciiLoopMax(limit);
          if (fresh) fresh.free();
          fresh = await lib.BloomFilter.create({ capacity: n, errorRate: 0.01 });
        },
        // eslint-disable-next-line no-new-func -- a function of its own: its own type feedback
        pass: new Function('members', 'get', `return function pass() {
          const f = get();
          for (let i = 0; i < members.length; i++) f.add(members[i]);
          return members.length;
        }`)(members, () => fresh),
        teardown() {
          staging.setAsciiLoopMax(undefined);
          if (fresh) fresh.free();
          fresh = null;
        },
      });
    }
  }
  if (!config.only || config.only === 'query') groups.push(queryGroups.small, queryGroups['1M'], queryGroups.add);
  if (config.only === 'query') groups.splice(0, 2 + config.lengths.length);
  const defaults = Object.fromEntries(Object.entries(libs).map(([label, { staging }]) => [label, staging.getAsciiLoopMax()]));

  async function measure(benchCase, minMs) {
    let elapsed = 0;
    let ops = 0;
    do {
      if (benchCase.setup) await benchCase.setup();
      const start = performance.now();
      ops += benchCase.pass();
      elapsed += performance.now() - start;
    } while (elapsed < minMs);
    if (benchCase.teardown) await benchCase.teardown();
    return (elapsed * 1e6) / ops;
  }

  return {
    defaults,
    ids: groups.map((group) => group.map((c) => c.id)),
    /** One round: every group, its cases in an order rotated by r; { id: ns per key }. */
    async round(r, minMs) {
      const out = {};
      for (const group of groups) {
        for (let j = 0; j < group.length; j++) {
          const c = group[(j + r) % group.length];
          out[c.id] = await measure(c, minMs);
        }
      }
      return out;
    },
  };
}

/* ------------------------------------------------------------------------ */
/* Driver (Node only)                                                        */
/* ------------------------------------------------------------------------ */

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function report(title, ids, rounds) {
  const lines = [`### ${title}`, '', '| case | ns per key (median) | ÷ first of its group (median of rounds) |', '|:---|---:|---:|'];
  for (const group of ids) {
    for (const id of group) {
      const ns = median(rounds.map((r) => r[id]));
      const ratio = median(rounds.map((r) => r[id] / r[group[0]]));
      lines.push(`| ${id} | ${ns.toFixed(1)} | ${ratio.toFixed(2)} |`);
    }
  }
  return lines.join('\n');
}

async function main() {
  const { readFileSync } = await import('node:fs');
  const { createServer } = await import('node:http');
  const path = await import('node:path');
  const os = await import('node:os');
  const { fileURLToPath, pathToFileURL } = await import('node:url');
  const config = { browser: false, rounds: 5, minMs: 150, n: 1_000_000, small: 1000, only: '', noMix: false, lengths: [12, 16, 20, 24, 32], before: /** @type {string | null} */ (null) };
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--browser') config.browser = true;
    else if (arg === '--rounds') config.rounds = Number(argv[++i]);
    else if (arg === '--min-ms') config.minMs = Number(argv[++i]);
    else if (arg === '--n') config.n = Number(argv[++i]);
    else if (arg === '--small') config.small = Number(argv[++i]);
    else if (arg === '--lengths') config.lengths = argv[++i].split(',').map(Number); // shorter keys, staging alone
    else if (arg === '--no-mix') config.noMix = true; // skip the untimed mixed strings
    else if (arg === '--only') config.only = argv[++i]; // 'stage' or 'query'
    else if (arg === '--before') config.before = path.resolve(argv[++i]);
    else throw new RangeError(`unknown option ${arg}`);
  }
  const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
  const started = Date.now();
  const log = (text) => process.stderr.write(`bench:staging [${((Date.now() - started) / 1000).toFixed(0)} s] ${text}\n`);
  const load = () => os.loadavg()[0].toFixed(2);
  let title;
  let ids;
  const rounds = [];
  if (!config.browser) {
    const libs = { now: { lib: await import('../js/index.js'), staging: await import('../js/wasm/staging.js') } };
    if (config.before) {
      libs.before = {
        lib: await import(pathToFileURL(path.join(config.before, 'js/index.js')).href),
        staging: await import(pathToFileURL(path.join(config.before, 'js/wasm/staging.js')).href),
      };
    }
    const { makeKeys } = await import('./browser-cases.mjs');
    const bench = await createStagingBench({ libs, makeKeys, config, NodeBuffer: Buffer });
    title = `Node ${process.versions.node}, limits ${JSON.stringify(bench.defaults)}`;
    ids = bench.ids;
    await bench.round(0, config.minMs / 3); // warm-up
    for (let r = 0; r < config.rounds; r++) {
      rounds.push(await bench.round(r, config.minMs));
      log(`round ${r + 1}/${config.rounds}, load ${load()}`);
    }
  } else {
    const { chromium } = await import('playwright-core');
    const { mkdtempSync, rmSync } = await import('node:fs');
    const page = `<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><title>staging</title>
<script type="module">
import { createStagingBench } from '/bench/staging.mjs';
import { makeKeys } from '/bench/browser-cases.mjs';
window.setup = async (config) => {
  const libs = { now: { lib: await import('/js/index.js'), staging: await import('/js/wasm/staging.js') } };
  if (config.before) libs.before = { lib: await import('/before/js/index.js'), staging: await import('/before/js/wasm/staging.js') };
  window.bench = await createStagingBench({ libs, makeKeys, config });
  return { ids: window.bench.ids, defaults: window.bench.defaults, ua: navigator.userAgent };
};
document.documentElement.dataset.ready = 'yes';
</script>`;
    const server = createServer((req, res) => {
      const pathname = decodeURIComponent(new URL(req.url ?? '/', 'http://127.0.0.1').pathname);
      let body;
      if (pathname === PAGE_PATH) body = Buffer.from(page);
      else if (!pathname.includes('..')) {
        const file = pathname.startsWith('/before/') && config.before ? path.join(config.before, pathname.slice(8))
          : /^\/(js|wasm|bench)\//.test(pathname) ? path.join(root, pathname) : null;
        try {
          if (file) body = readFileSync(file);
        } catch {
          body = undefined;
        }
      }
      if (body === undefined) return void res.writeHead(404).end();
      const type = pathname.endsWith('.wasm') ? 'application/wasm' : pathname.endsWith('.html') ? 'text/html; charset=utf-8' : 'text/javascript';
      res.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' }).end(body);
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
    const address = /** @type {import('node:net').AddressInfo} */ (server.address());
    const dir = mkdtempSync(path.join(os.tmpdir(), 'bg-staging-'));
    const context = await chromium.launchPersistentContext(dir, {
      executablePath: process.env.BG_CHROMIUM ?? '/usr/bin/chromium', headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', ...(process.env.BG_JS_FLAGS ? [`--js-flags=${process.env.BG_JS_FLAGS}`] : [])],
    });
    try {
      const tab = await context.newPage();
      const errors = [];
      tab.on('pageerror', (error) => errors.push(error.message));
      await tab.goto(`http://127.0.0.1:${address.port}${PAGE_PATH}`);
      await tab.waitForFunction(() => document.documentElement.dataset.ready === 'yes', null, { timeout: 30000 })
        .catch(() => {
          throw new Error(`page failed: ${errors.join('; ')}`);
        });
      const info = await tab.evaluate((c) => /** @type {any} */ (window).setup(c), { ...config, before: config.before !== null });
      title = `${info.ua.match(/Chrome\/[\d.]+/)?.[0] ?? 'Chromium'}, limits ${JSON.stringify(info.defaults)}`;
      ids = info.ids;
      await tab.evaluate((ms) => /** @type {any} */ (window).bench.round(0, ms), config.minMs / 3);
      for (let r = 0; r < config.rounds; r++) {
        rounds.push(await tab.evaluate(([round, ms]) => /** @type {any} */ (window).bench.round(round, ms), [r, config.minMs]));
        log(`round ${r + 1}/${config.rounds}, load ${load()}`);
      }
    } finally {
      await context.close();
      server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  process.stdout.write(`${report(`${title}: ${config.rounds} rounds, ${config.n} keys, small set ${config.small}`, ids, rounds)}\n`);
}

if (isNode && import.meta.url === (await import('node:url')).pathToFileURL(process.argv[1]).href) await main();
