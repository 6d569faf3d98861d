// The cases of `npm run bench:browser`, written once for both runtimes: the
// Chromium page (bench/browser.mjs serves it) and the Node worker
// (bench/browser-node.mjs) import this file and run the same code on the same
// keys, so a ratio in one runtime compares with the same ratio in the other.
// Nothing here imports Node built-ins or touches the DOM; time is
// performance.now() in both.
import { keyAt } from './keys.mjs';

const PREFIX = 'https://example.com/posts/';
const SUFFIX = '.html';
const DIGITS = 7;
const KEY_LENGTH = PREFIX.length + DIGITS + SUFFIX.length; // 38

/** Every answer a pass computes is added here, so no engine can drop the work. */
const sink = { value: 0 };

/**
 * Keys first .. first+count-1 as bench/keys.mjs defines them: the packed bytes,
 * their offsets, and flat strings decoded one key at a time (as strings read
 * from I/O are; concatenation would leave "cons" strings).
 */
export function makeKeys(first, count) {
  if (first + count > 10 ** DIGITS) throw new RangeError('key indexes must stay below 10^7 (fixed-length keys)');
  const bytes = new Uint8Array(KEY_LENGTH * count);
  const template = new TextEncoder().encode(PREFIX + '0'.repeat(DIGITS) + SUFFIX);
  const offsets = new Uint32Array(count + 1);
  for (let i = 0; i < count; i++) {
    const at = i * KEY_LENGTH;
    bytes.set(template, at);
    let value = first + i;
    for (let d = PREFIX.length + DIGITS - 1; value > 0; d--, value = Math.floor(value / 10)) bytes[at + d] = 48 + (value % 10);
    offsets[i] = at;
  }
  offsets[count] = KEY_LENGTH * count;
  const decoder = new TextDecoder();
  const strings = new Array(count);
  for (let i = 0; i < count; i++) strings[i] = decoder.decode(bytes.subarray(offsets[i], offsets[i + 1]));
  for (const i of [0, count >> 1, count - 1]) {
    if (strings[i] !== keyAt(first + i)) throw new Error(`key ${first + i} differs from bench/keys.mjs`);
  }
  return { strings, bytes, offsets };
}

function batches(items, size) {
  const out = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

function packedBatches({ bytes, offsets }, size) {
  const out = [];
  const count = offsets.length - 1;
  for (let i = 0; i < count; i += size) {
    const end = Math.min(count, i + size);
    const first = offsets[i];
    out.push({ bytes: bytes.subarray(first, offsets[end]), offsets: offsets.slice(i, end + 1).map((x) => x - first) });
  }
  return out;
}

/**
 * Run case.pass() (after an untimed case.setup()) until minMs of timed work has
 * accumulated; returns { ms, ops } (pass() returns how many operations it did).
 */
async function measure(benchCase, minMs) {
  let elapsed = 0;
  let ops = 0;
  do {
    if (benchCase.setup) await benchCase.setup();
    const start = performance.now();
    const done = benchCase.pass();
    ops += done instanceof Promise ? await done : done;
    elapsed += performance.now() - start;
  } while (elapsed < minMs);
  if (benchCase.teardown) await benchCase.teardown();
  return { ms: elapsed, ops };
}

/**
 * The cases whose times are divided by each other run as a group: within a
 * round, SLICES turns through the group, in alternating order, each case
 * measured for 1/SLICES of its time per turn. A load spike then lands on both
 * sides of a ratio, and the ratio of one round is read from times seconds apart.
 */
const SLICES = 2;
const GROUPS = [
  ['bg.add', 'bf.add', 'bfs.add'],
  ['bg.member', 'bf.member', 'bfs.member'],
  ['bg.nonmember', 'bf.nonmember', 'bfs.nonmember'],
  ['bg.addAll'],
  // One call a key again, beside the batches: the batch target divides times taken seconds apart.
  ['bg.manyStrMember', 'bg.manyStrNonmember', 'bg.manyPackedMember', 'bg.manyPackedNonmember', 'bg.memberBeside', 'bg.nonmemberBeside',
    'bg.manyStrMemberInto', 'bg.manyStrNonmemberInto', 'bg.manyPackedMemberInto', 'bg.manyPackedNonmemberInto'],
  ['diag.stageLoop', 'diag.stageEncodeInto'],
  ['diag.containsLoop', 'diag.containsEncodeInto'],
  ['load.fetch1M', 'load.url1M', 'load.url1MIntegrity'],
  ['load.fetch10M', 'load.url10M', 'load.url10MIntegrity'],
  ['load.bytes10M', 'load.bytes10MIntegrity', 'load.subtle10M'],
];

/**
 * Set up every case in this runtime. `lib` is bloomgate ({ BloomFilter,
 * loadFilter }), `staging` its js/wasm/staging.js (for the encoder
 * diagnostics), `filters` the URLs and integrity strings of the served filter
 * files. Returns { info, ids, round(r) }: round(r) runs every group of cases
 * once, in an order rotated by r, and returns { caseId: ns per operation }.
 */
export async function createBench({ lib, staging, Bloomfilter, BloomFilters, config, filters, log = () => {} }) {
  const { BloomFilter, loadFilter } = lib;
  const { n, errorRate, batch } = config;
  const started = performance.now();
  log(`keys: ${n} members and ${n} probes`);
  const memberKeys = makeKeys(0, n);
  const probeKeys = makeKeys(n, n);
  const members = memberKeys.strings;
  const probes = probeKeys.strings;
  const memberBatches = batches(members, batch);
  const probeBatches = batches(probes, batch);
  const memberPacked = packedBatches(memberKeys, batch);
  const probePacked = packedBatches(probeKeys, batch);

  log('filling the query filters');
  const bg = await BloomFilter.create({ capacity: n, errorRate });
  for (const key of members) bg.add(key);
  const { m, k } = bg.stats();
  const bf = new Bloomfilter(m, k);
  for (const key of members) bf.add(key);
  const bfs = new BloomFilters(m, k);
  const fillStart = performance.now();
  for (let i = 0; i < config.bfsFill; i++) bfs.add(members[i]);
  log(`bloom-filters: ${config.bfsFill} inserts took ${((performance.now() - fillStart) / 1000).toFixed(1)} s`);

  // Accuracy, untimed, and agreement of single and batch answers.
  let bgFalseNeg = 0, bgFalsePos = 0, bfFalseNeg = 0, bfFalsePos = 0;
  for (let i = 0; i < n; i++) {
    if (!bg.mightContain(members[i])) bgFalseNeg++;
    if (bg.mightContain(probes[i])) bgFalsePos++;
    if (!bf.test(members[i])) bfFalseNeg++;
    if (bf.test(probes[i])) bfFalsePos++;
  }
  if (bgFalseNeg) throw new Error(`bloomgate has ${bgFalseNeg} false negatives`);
  const manyAnswers = bg.mightContainMany(probes.slice(0, 5000));
  for (let i = 0; i < 5000; i++) {
    if (manyAnswers[i] !== bg.mightContain(probes[i])) throw new Error(`mightContainMany and mightContain disagree on probe ${i}`);
  }
  const intoAnswers = bg.mightContainMany(probes.slice(0, 5000), new Uint8Array(5000));
  for (let i = 0; i < 5000; i++) {
    if (intoAnswers[i] !== (manyAnswers[i] ? 1 : 0)) throw new Error(`mightContainMany(items, into) and mightContainMany(items) disagree on probe ${i}`);
  }

  // The bytes of the served files, for loads from memory and the digest alone.
  const fetchBytes = async (url) => new Uint8Array(await (await fetch(url)).arrayBuffer());
  const bytes10M = await fetchBytes(filters.url10M);
  const probeKey = probes[0];

  const bfsMembers = members.slice(0, config.bfsSubset);
  const bfsProbes = probes.slice(0, config.bfsSubset);
  let fresh = null;
  const freeFresh = () => {
    if (fresh) fresh.free();
    fresh = null;
  };
  let bfFresh = null;
  let bfsFresh = null;
  const query = (id, keys, test) => ({
    id,
    pass() {
      let hits = 0;
      for (let i = 0; i < keys.length; i++) if (test(keys[i])) hits++;
      sink.value += hits;
      return keys.length;
    },
  });
  const many = (id, groups) => ({
    id,
    pass() {
      let hits = 0;
      for (let g = 0; g < groups.length; g++) {
        const answers = bg.mightContainMany(groups[g]);
        for (let i = 0; i < answers.length; i++) if (answers[i]) hits++;
      }
      sink.value += hits;
      return n;
    },
  });
  // The answers as bytes in one Uint8Array the page keeps: no array a call.
  const into = new Uint8Array(Math.max(...[...memberBatches, ...probeBatches].map((g) => g.length),
    ...[...memberPacked, ...probePacked].map((p) => p.offsets.length - 1)));
  const manyInto = (id, groups) => ({
    id,
    pass() {
      let hits = 0;
      for (let g = 0; g < groups.length; g++) {
        const answers = bg.mightContainMany(groups[g], into);
        for (let i = 0; i < answers.length; i++) hits += answers[i];
      }
      sink.value += hits;
      return n;
    },
  });
  const cases = [
    {
      id: 'bg.add',
      async setup() {
        freeFresh();
        fresh = await BloomFilter.create({ capacity: n, errorRate });
      },
      pass() {
        const f = fresh;
        for (let i = 0; i < members.length; i++) f.add(members[i]);
        return members.length;
      },
      teardown: freeFresh,
    },
    {
      id: 'bf.add',
      setup() {
        bfFresh = new Bloomfilter(m, k);
      },
      pass() {
        const f = bfFresh;
        for (let i = 0; i < members.length; i++) f.add(members[i]);
        return members.length;
      },
    },
    {
      id: 'bfs.add',
      setup() {
        bfsFresh = new BloomFilters(m, k);
      },
      pass() {
        const f = bfsFresh;
        for (let i = 0; i < bfsMembers.length; i++) f.add(bfsMembers[i]);
        return bfsMembers.length;
      },
    },
    {
      id: 'bg.addAll',
      async setup() {
        freeFresh();
        fresh = await BloomFilter.create({ capacity: n, errorRate });
      },
      pass() {
        fresh.addAll(members);
        return members.length;
      },
      teardown: freeFresh,
    },
    // Each query loop is its own closure over one filter, so it stays monomorphic.
    {
      id: 'bg.member',
      pass() {
        let hits = 0;
        for (let i = 0; i < members.length; i++) if (bg.mightContain(members[i])) hits++;
        sink.value += hits;
        return members.length;
      },
    },
    {
      id: 'bf.member',
      pass() {
        let hits = 0;
        for (let i = 0; i < members.length; i++) if (bf.test(members[i])) hits++;
        sink.value += hits;
        return members.length;
      },
    },
    query('bfs.member', bfsMembers, (key) => bfs.has(key)),
    {
      id: 'bg.nonmember',
      pass() {
        let hits = 0;
        for (let i = 0; i < probes.length; i++) if (bg.mightContain(probes[i])) hits++;
        sink.value += hits;
        return probes.length;
      },
    },
    {
      id: 'bf.nonmember',
      pass() {
        let hits = 0;
        for (let i = 0; i < probes.length; i++) if (bf.test(probes[i])) hits++;
        sink.value += hits;
        return probes.length;
      },
    },
    query('bfs.nonmember', bfsProbes, (key) => bfs.has(key)),
    {
      id: 'bg.memberBeside', // bg.member's loop, timed in the batches' group
      pass() {
        let hits = 0;
        for (let i = 0; i < members.length; i++) if (bg.mightContain(members[i])) hits++;
        sink.value += hits;
        return members.length;
      },
    },
    {
      id: 'bg.nonmemberBeside',
      pass() {
        let hits = 0;
        for (let i = 0; i < probes.length; i++) if (bg.mightContain(probes[i])) hits++;
        sink.value += hits;
        return probes.length;
      },
    },
    many('bg.manyStrMember', memberBatches),
    many('bg.manyStrNonmember', probeBatches),
    many('bg.manyPackedMember', memberPacked),
    many('bg.manyPackedNonmember', probePacked),
    manyInto('bg.manyStrMemberInto', memberBatches),
    manyInto('bg.manyStrNonmemberInto', probeBatches),
    manyInto('bg.manyPackedMemberInto', memberPacked),
    manyInto('bg.manyPackedNonmemberInto', probePacked),
  ];

  // The encoder: a 38-character key staged each way, alone (into a wasm memory
  // view) and inside the whole query (the library's own switch forced).
  if (config.diagnose) {
    const memory = new WebAssembly.Memory({ initial: 1 });
    const view = new Uint8Array(memory.buffer, 1024, 1024);
    const encoder = new TextEncoder();
    cases.push(
      {
        id: 'diag.stageLoop',
        pass() {
          let acc = 0;
          for (let i = 0; i < n; i++) {
            const s = probes[i];
            const len = s.length;
            let j = 0;
            for (; j < len; j++) {
              const c = s.charCodeAt(j);
              if (c >= 0x80) break;
              view[j] = c;
            }
            acc += j;
          }
          sink.value += acc & 1;
          return n;
        },
      },
      {
        id: 'diag.stageEncodeInto',
        pass() {
          let acc = 0;
          for (let i = 0; i < n; i++) acc += encoder.encodeInto(probes[i], view).written;
          sink.value += acc & 1;
          return n;
        },
      },
    );
    if (staging) {
      const forced = (id, limit) => ({
        id,
        setup() {
          staging.setAsciiLoopMax(limit);
        },
        pass() {
          let hits = 0;
          for (let i = 0; i < probes.length; i++) if (bg.mightContain(probes[i])) hits++;
          sink.value += hits;
          return probes.length;
        },
        teardown() {
          staging.setAsciiLoopMax(undefined); // back to this runtime's choice
        },
      });
      cases.push(forced('diag.containsLoop', 1024), forced('diag.containsEncodeInto', 0));
    }
  }

  // Loads from 127.0.0.1, each ending in one query; a plain fetch of the same
  // bytes is the floor. From memory and the digest alone separate the network
  // from the integrity check.
  const loadCase = (id, source, options) => ({
    id,
    async pass() {
      const f = await loadFilter(typeof source === 'function' ? source() : source, options);
      if (f.mightContain(probeKey)) sink.value++;
      f.free();
      return 1;
    },
  });
  const fetchCase = (id, url) => ({
    id,
    async pass() {
      const response = await fetch(url);
      sink.value += (await response.arrayBuffer()).byteLength & 1;
      return 1;
    },
  });
  const integrity1M = { integrity: filters.integrity1M };
  const integrity10M = { integrity: filters.integrity10M };
  cases.push(
    fetchCase('load.fetch1M', filters.url1M),
    loadCase('load.url1M', filters.url1M),
    loadCase('load.url1MIntegrity', filters.url1M, integrity1M),
    fetchCase('load.fetch10M', filters.url10M),
    loadCase('load.url10M', filters.url10M),
    loadCase('load.url10MIntegrity', filters.url10M, integrity10M),
    loadCase('load.bytes10M', bytes10M),
    loadCase('load.bytes10MIntegrity', bytes10M, integrity10M),
  );
  if (globalThis.crypto?.subtle) {
    cases.push({
      id: 'load.subtle10M',
      async pass() {
        const digest = await crypto.subtle.digest('SHA-256', bytes10M);
        sink.value += new Uint8Array(digest)[0] & 1;
        return 1;
      },
    });
  }

  log(`warming up ${cases.length} cases`);
  for (const c of cases) await measure(c, config.warmupMs);
  const byId = new Map(cases.map((c) => [c.id, c]));
  const groups = GROUPS.map((ids) => ids.filter((id) => byId.has(id)).map((id) => byId.get(id))).filter((g) => g.length > 0);
  const grouped = new Set(groups.flat());
  for (const c of cases) if (!grouped.has(c)) groups.push([c]);
  const info = {
    m,
    k,
    bfM: bf.m,
    bfK: bf.k,
    bfsM: bfs._size,
    bfsK: bfs._nbHashes,
    fpRate: bgFalsePos / n,
    bfFpRate: bfFalsePos / n,
    bfFalseNegatives: bfFalseNeg,
    fileBytes10M: bytes10M.length,
    asciiLoopMax: staging ? staging.getAsciiLoopMax() : null,
    hasSubtle: typeof globalThis.crypto?.subtle?.digest === 'function',
    setupSeconds: (performance.now() - started) / 1000,
  };
  return {
    info,
    ids: cases.map((c) => c.id),
    async round(r) {
      const out = {};
      for (let g = 0; g < groups.length; g++) {
        const group = groups[(g + r) % groups.length];
        const total = new Map(group.map((c) => [c, { ms: 0, ops: 0 }]));
        for (let slice = 0; slice < SLICES; slice++) {
          const order = (slice + r) % 2 === 0 ? group : [...group].reverse();
          for (const c of order) {
            const { ms, ops } = await measure(c, (c.id.startsWith('load.') ? config.loadMinMs : config.minMs) / SLICES);
            total.get(c).ms += ms;
            total.get(c).ops += ops;
          }
        }
        for (const [c, { ms, ops }] of total) out[c.id] = (ms * 1e6) / ops;
      }
      out.sink = sink.value;
      return out;
    },
  };
}
