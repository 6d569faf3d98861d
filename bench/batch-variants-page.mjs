// The variants bench/batch-variants.mjs times in each engine's page (see there).
// Each returns how many keys it handled.

function packWordsLoHi(items, start, total, maxUnits) {
  const { arenaReserve } = env.arenaMod;
  arenaReserve(maxUnits + 4);
  const a = env.arenaMod.arena;
  const words = env.module.HEAPU32;
  let w = a.items >>> 2;
  let at = a.offsets >>> 2;
  const last = Math.min(total, start + 4096);
  let pending = 0;
  let bits = 0;
  let units = 0;
  let seen = 0;
  let i = start;
  words[at++] = 0;
  for (; i < last; i++) {
    const s = items[i];
    if (typeof s !== 'string') break;
    const n = s.length;
    if (units + n > maxUnits) break;
    const full = n & ~3;
    let j = 0;
    if (bits === 0) {
      for (; j < full; j += 4) {
        const lo = s.charCodeAt(j) | (s.charCodeAt(j + 2) << 16);
        const hi = s.charCodeAt(j + 1) | (s.charCodeAt(j + 3) << 16);
        seen |= lo | hi;
        words[w++] = lo | (hi << 8);
      }
    } else {
      const back = 32 - bits;
      for (; j < full; j += 4) {
        const lo = s.charCodeAt(j) | (s.charCodeAt(j + 2) << 16);
        const hi = s.charCodeAt(j + 1) | (s.charCodeAt(j + 3) << 16);
        seen |= lo | hi;
        const word = lo | (hi << 8);
        words[w++] = pending | (word << bits);
        pending = word >>> back;
      }
    }
    if (j < n) {
      const x = s.charCodeAt(j);
      const y = j + 1 < n ? s.charCodeAt(j + 1) : 0;
      const z = j + 2 < n ? s.charCodeAt(j + 2) : 0;
      seen |= x | y | z;
      const tail = x | (y << 8) | (z << 16);
      const filled = bits + ((n - j) << 3);
      if (filled < 32) {
        pending |= tail << bits;
        bits = filled;
      } else {
        words[w++] = pending | (tail << bits);
        pending = tail >>> (32 - bits);
        bits = filled - 32;
      }
    }
    units += n;
    words[at++] = units;
  }
  if (bits !== 0) words[w] = pending;
  return (seen & 0xff80ff80) === 0 ? i : -(i + 1);
}

function packWordsCopy(items, start, total, maxUnits) {
  const { arenaReserve } = env.arenaMod;
  arenaReserve(maxUnits + 4);
  const a = env.arenaMod.arena;
  const words = env.module.HEAPU32;
  let w = a.items >>> 2;
  let at = a.offsets >>> 2;
  const last = Math.min(total, start + 4096);
  let pending = 0;
  let bits = 0;
  let units = 0;
  let seen = 0;
  let i = start;
  words[at++] = 0;
  for (; i < last; i++) {
    const s = items[i];
    if (typeof s !== 'string') break;
    const n = s.length;
    if (units + n > maxUnits) break;
    const full = n & ~3;
    let j = 0;
    if (bits === 0) {
      for (; j < full; j += 4) {
        const a = s.charCodeAt(j);
        const b = s.charCodeAt(j + 1);
        const c = s.charCodeAt(j + 2);
        const d = s.charCodeAt(j + 3);
        seen |= a | b | c | d;
        words[w++] = a | (b << 8) | (c << 16) | (d << 24);
      }
    } else {
      const back = 32 - bits;
      for (; j < full; j += 4) {
        const a = s.charCodeAt(j);
        const b = s.charCodeAt(j + 1);
        const c = s.charCodeAt(j + 2);
        const d = s.charCodeAt(j + 3);
        seen |= a | b | c | d;
        const word = a | (b << 8) | (c << 16) | (d << 24);
        words[w++] = pending | (word << bits);
        pending = word >>> back;
      }
    }
    if (j < n) {
      const x = s.charCodeAt(j);
      const y = j + 1 < n ? s.charCodeAt(j + 1) : 0;
      const z = j + 2 < n ? s.charCodeAt(j + 2) : 0;
      seen |= x | y | z;
      const tail = x | (y << 8) | (z << 16);
      const filled = bits + ((n - j) << 3);
      if (filled < 32) {
        pending |= tail << bits;
        bits = filled;
      } else {
        words[w++] = pending | (tail << bits);
        pending = tail >>> (32 - bits);
        bits = filled - 32;
      }
    }
    units += n;
    words[at++] = units;
  }
  if (bits !== 0) words[w] = pending;
  return seen < 0x80 ? i : -(i + 1);
}

function packHalves(items, start, total, maxUnits) {
  const { arenaReserve } = env.arenaMod;
  arenaReserve(maxUnits + 4);
  const a = env.arenaMod.arena;
  const heap = env.module.HEAPU8;
  if (env.halves === undefined || env.halves.buffer !== heap.buffer) env.halves = new Uint16Array(heap.buffer);
  const halves = env.halves;
  const words = env.module.HEAPU32;
  const base = a.items;
  let p = base; // byte position
  let at = a.offsets >>> 2;
  const last = Math.min(total, start + 4096);
  let seen = 0;
  let i = start;
  words[at++] = 0;
  for (; i < last; i++) {
    const s = items[i];
    if (typeof s !== 'string') break;
    const n = s.length;
    if (p - base + n > maxUnits) break;
    let j = 0;
    if ((p & 1) !== 0 && n > 0) {
      const c = s.charCodeAt(0);
      seen |= c;
      heap[p++] = c;
      j = 1;
    }
    let h = p >>> 1;
    const pairs = j + ((n - j) & ~1);
    for (; j < pairs; j += 2) {
      const lo = s.charCodeAt(j);
      const hi = s.charCodeAt(j + 1);
      seen |= lo | hi;
      halves[h++] = lo | (hi << 8);
    }
    p = h << 1;
    if (j < n) {
      const c = s.charCodeAt(j);
      seen |= c;
      heap[p++] = c;
    }
    words[at++] = p - base;
  }
  return seen < 0x80 ? i : -(i + 1);
}

const env = {};
export function variants({ filter, module, arenaMod, staging, calls, KINDS, strings, packed, batch }) {
  env.arenaMod = arenaMod;
  env.module = module;
  const { ex } = module;
  const { arenaReserve } = arenaMod;
  const arena = () => arenaMod.arena;
  const groups = [];
  for (let i = 0; i < strings.length; i += batch) groups.push(strings.slice(i, i + batch));
  const encoder = new TextEncoder();
  const jsWords = new Uint32Array(64 * 1024);
  const jsBytes = new Uint8Array(jsWords.buffer);
  let sink = 0;
  const falses = new Array(4096).fill(false);
  window.__sink = () => sink;
  // The filter's pointer, for the raw wasm call (the handle's #ptr is private: read it by a query's staging).
  const units = groups[0].reduce((n, s) => n + s.length, 0);
  arenaReserve(units * 3);
  const stageJoined = (g) => {
    const base = arena().items;
    return encoder.encodeInto(g.join(''), module.HEAPU8.subarray(base, base + units)).written;
  };
  const raw = calls.filterCreate(KINDS.find((k) => k.name === 'classic').id, 1000000, 0.01, 0, 0, 0);
  calls.filterAddAll({ ptrOrThrow: () => raw }, strings);
  const packedGroups = [];
  for (let i = 0; i < strings.length; i += batch) {
    const first = packed.offsets[i];
    const end = Math.min(strings.length, i + batch);
    packedGroups.push({ bytes: packed.bytes.subarray(first, packed.offsets[end]), offsets: packed.offsets.slice(i, end + 1).map((x) => x - first) });
  }
  const small = calls.filterCreate(KINDS.find((k) => k.name === 'classic').id, 10000, 0.01, 0, 0, 0);
  calls.filterAddAll({ ptrOrThrow: () => small }, strings.slice(0, 10000));
  // Every key staged once in a buffer of its own (not the arena), with absolute offsets: the C paths alone, on fresh keys.
  const allBytes = packed.offsets[strings.length];
  const rawItems = ex.malloc(allBytes + 8) >>> 0;
  const rawOffsets = ex.malloc((strings.length + 1) * 4) >>> 0;
  const rawResults = ex.malloc(batch) >>> 0;
  module.HEAPU8.set(packed.bytes.subarray(0, allBytes), rawItems);
  module.HEAPU32.set(packed.offsets.subarray(0, strings.length + 1), rawOffsets >>> 2);
  return {
    single: () => {
      let n = 0;
      for (const g of groups) for (let i = 0; i < g.length; i++) n += filter.mightContain(g[i]) ? 1 : 0;
      sink += n;
      return strings.length;
    },
    many: () => {
      for (const g of groups) {
        const out = filter.mightContainMany(g);
        sink += out[0] ? 1 : 0;
      }
      return strings.length;
    },
    manyJoin: () => {
      const previous = staging.setBatchEncoder('join');
      for (const g of groups) {
        const out = filter.mightContainMany(g);
        sink += out[0] ? 1 : 0;
      }
      staging.setBatchEncoder(previous);
      return strings.length;
    },
    manyWords: () => {
      const previous = staging.setBatchEncoder('words');
      for (const g of groups) {
        const out = filter.mightContainMany(g);
        sink += out[0] ? 1 : 0;
      }
      staging.setBatchEncoder(previous);
      return strings.length;
    },
    packed: () => {
      for (const g of packedGroups) {
        const out = filter.mightContainMany(g);
        sink += out[0] ? 1 : 0;
      }
      return strings.length;
    },
    wasmCallOnly: () => {
      const a = arena();
      stageJoined(groups[0]);
      const heap32 = module.HEAPU32;
      let at = a.offsets >>> 2;
      let offset = 0;
      heap32[at++] = 0;
      for (let i = 0; i < groups[0].length; i++) { offset += groups[0][i].length; heap32[at++] = offset; }
      for (let k = 0; k < groups.length; k++) sink += ex.bg_filter_contains_many(raw, a.items, a.offsets, groups[0].length, a.results);
      return strings.length;
    },
    rawSingle: () => {
      // bg_filter_contains on each staged key: the C of one call a key, with no staging
      const off = packed.offsets;
      let n = 0;
      for (let i = 0; i < strings.length; i++) n += ex.bg_filter_contains(raw, rawItems + off[i], off[i + 1] - off[i]);
      sink += n;
      return strings.length;
    },
    rawMany: () => {
      // bg_filter_contains_many over the staged keys, batch a call: the C of a batch, with no staging
      for (let i = 0; i < strings.length; i += batch) {
        const n = Math.min(batch, strings.length - i);
        sink += ex.bg_filter_contains_many(raw, rawItems, rawOffsets + 4 * i, n, rawResults);
      }
      return strings.length;
    },
    rawManySmall: () => {
      // rawMany on a 10,000-key filter (12 KB, in cache): the hashing and probing without the cache misses
      for (let i = 0; i < strings.length; i += batch) {
        const n = Math.min(batch, strings.length - i);
        sink += ex.bg_filter_contains_many(small, rawItems, rawOffsets + 4 * i, n, rawResults);
      }
      return strings.length;
    },
    rawManyAnswers: () => {
      // rawMany and reading the answers into a new array, as filterContainsMany does
      for (let i = 0; i < strings.length; i += batch) {
        const n = Math.min(batch, strings.length - i);
        sink += ex.bg_filter_contains_many(raw, rawItems, rawOffsets + 4 * i, n, rawResults);
        const heap = module.HEAPU8;
        const out = new Array(n);
        for (let j = 0; j < n; j++) out[j] = heap[rawResults + j] !== 0;
        sink += out[0] ? 1 : 0;
      }
      return strings.length;
    },
    ...Object.fromEntries(Object.entries({
      // rawMany with each way of turning the answer bytes into a boolean[]
      ansNewArray: (heap, r, n) => { const out = new Array(n); for (let j = 0; j < n; j++) out[j] = heap[r + j] !== 0; return out; },
      ansPush: (heap, r, n) => { const out = []; for (let j = 0; j < n; j++) out.push(heap[r + j] !== 0); return out; },
      ansFill: (heap, r, n) => { const out = new Array(n).fill(false); for (let j = 0; j < n; j++) if (heap[r + j] !== 0) out[j] = true; return out; },
      ansFrom: (heap, r, n) => Array.from(heap.subarray(r, r + n), (x) => x !== 0),
      ansSlice: (heap, r, n) => { const v = heap.slice(r, r + n); const out = new Array(n); for (let j = 0; j < n; j++) out[j] = v[j] !== 0; return out; },
      ansNone: (heap, r, n) => heap[r + n - 1],
    }).map(([name, build]) => [name, () => {
      for (let i = 0; i < strings.length; i += batch) {
        const n = Math.min(batch, strings.length - i);
        sink += ex.bg_filter_contains_many(raw, rawItems, rawOffsets + 4 * i, n, rawResults);
        const out = build(module.HEAPU8, rawResults, n);
        sink += out[0] ? 1 : 0;
      }
      return strings.length;
    }])),
    ...Object.fromEntries([50, 100, 250, 500, 1000].map((size) => [`ansSplit${size}`, () => {
      // the answers of each batch as arrays of `size` (the batch's 8-byte slots: does one array's size cost?)
      for (let i = 0; i < strings.length; i += batch) {
        const n = Math.min(batch, strings.length - i);
        sink += ex.bg_filter_contains_many(raw, rawItems, rawOffsets + 4 * i, n, rawResults);
        const heap = module.HEAPU8;
        for (let p = 0; p < n; p += size) {
          const m = Math.min(size, n - p);
          const out = new Array(m);
          for (let j = 0; j < m; j++) out[j] = heap[rawResults + p + j] !== 0;
          sink += out[0] ? 1 : 0;
        }
      }
      return strings.length;
    }])),
    ansReadOnly: () => {
      // rawMany and a loop reading the answer bytes (no array)
      for (let i = 0; i < strings.length; i += batch) {
        const n = Math.min(batch, strings.length - i);
        sink += ex.bg_filter_contains_many(raw, rawItems, rawOffsets + 4 * i, n, rawResults);
        const heap = module.HEAPU8;
        let hits = 0;
        for (let j = 0; j < n; j++) hits += heap[rawResults + j];
        sink += hits;
      }
      return strings.length;
    },
    ansWriteOnly: () => {
      // rawMany and an array of n booleans not read from wasm memory
      for (let i = 0; i < strings.length; i += batch) {
        const n = Math.min(batch, strings.length - i);
        sink += ex.bg_filter_contains_many(raw, rawItems, rawOffsets + 4 * i, n, rawResults);
        const out = new Array(n);
        for (let j = 0; j < n; j++) out[j] = (j & 1) === 0;
        sink += out[0] ? 1 : 0;
      }
      return strings.length;
    },
    arrayOnly: () => {
      // an array of n booleans a batch, no wasm
      for (let i = 0; i < strings.length; i += batch) {
        const n = Math.min(batch, strings.length - i);
        const out = new Array(n);
        for (let j = 0; j < n; j++) out[j] = (j & 1) === 0;
        sink += out[0] ? 1 : 0;
      }
      return strings.length;
    },
    arraySliceTemplate: () => {
      // arrayOnly, the array a slice of a prebuilt array of false
      for (let i = 0; i < strings.length; i += batch) {
        const n = Math.min(batch, strings.length - i);
        const out = falses.slice(0, n);
        for (let j = 0; j < n; j++) out[j] = (j & 1) === 0;
        sink += out[0] ? 1 : 0;
      }
      return strings.length;
    },
    arrayLiteralPush: () => {
      // arrayOnly, the array grown by push from []
      for (let i = 0; i < strings.length; i += batch) {
        const n = Math.min(batch, strings.length - i);
        const out = [];
        for (let j = 0; j < n; j++) out.push((j & 1) === 0);
        sink += out[0] ? 1 : 0;
      }
      return strings.length;
    },
    arraySliceOnly: () => {
      // the slice of arraySliceTemplate alone
      for (let i = 0; i < strings.length; i += batch) {
        const n = Math.min(batch, strings.length - i);
        const out = falses.slice(0, n);
        sink += out[0] ? 1 : 0;
      }
      return strings.length;
    },
    packWords: () => {
      // the library's 'words' pass over each batch (arena.js packWordsChunk): type checks, chunk end, words, offsets
      for (const g of groups) sink += arenaMod.packWordsChunk(g, 0, g.length, 48 * 1024);
      return strings.length;
    },
    packWordsLoHi: () => {
      // packWordsChunk with characters paired as (a | c << 16) and (b | d << 16): one ASCII test per pair of pairs
      for (const g of groups) sink += packWordsLoHi(g, 0, g.length, 48 * 1024);
      return strings.length;
    },
    packWordsCopy: () => {
      // packWordsChunk's loop copied into this file (the same code as packWords, another function)
      for (const g of groups) sink += packWordsCopy(g, 0, g.length, 48 * 1024);
      return strings.length;
    },
    packHalves: () => {
      // two characters a u16 store (keys start at any byte: an odd start writes one byte first)
      for (const g of groups) sink += packHalves(g, 0, g.length, 48 * 1024);
      return strings.length;
    },
    arrayAllocBig: () => {
      // the bytes of arrayAllocOnly as one array a pass (one allocation instead of one a batch)
      const out = new Array(strings.length).fill(false);
      sink += out[0] ? 1 : 0;
      return strings.length;
    },
    arrayReuse: () => {
      // the stores of arrayOnly into one array kept across batches (no allocation)
      const out = new Array(batch).fill(false);
      for (let i = 0; i < strings.length; i += batch) {
        const n = Math.min(batch, strings.length - i);
        for (let j = 0; j < n; j++) out[j] = (j & 1) === 0;
        sink += out[0] ? 1 : 0;
      }
      return strings.length;
    },
    arrayAllocOnly: () => {
      // the allocation of arrayOnly alone: new Array(n).fill(false)
      for (let i = 0; i < strings.length; i += batch) {
        const n = Math.min(batch, strings.length - i);
        const out = new Array(n).fill(false);
        sink += out[0] ? 1 : 0;
      }
      return strings.length;
    },
    arrayInt: () => {
      // arrayOnly with 0/1 instead of booleans
      for (let i = 0; i < strings.length; i += batch) {
        const n = Math.min(batch, strings.length - i);
        const out = new Array(n);
        for (let j = 0; j < n; j++) out[j] = j & 1;
        sink += out[0] ? 1 : 0;
      }
      return strings.length;
    },
    joinPathInline: () => {
      // the library's path for an all-ASCII chunk, inlined: join, one encodeInto, offsets, call, answers
      for (const g of groups) {
        const a = arena();
        const n = g.length;
        let u = 0;
        for (let i = 0; i < n; i++) u += g[i].length;
        const { read, written } = encoder.encodeInto(g.join(''), module.HEAPU8.subarray(a.items, a.items + u));
        if (read !== u || written !== u) throw new Error('not ascii');
        const heap32 = module.HEAPU32;
        let o = a.offsets >>> 2;
        let offset = 0;
        heap32[o++] = 0;
        for (let i = 0; i < n; i++) { offset += g[i].length; heap32[o++] = offset; }
        ex.bg_filter_contains_many(raw, a.items, a.offsets, n, a.results);
        const heap = module.HEAPU8;
        const out = new Array(n);
        for (let i = 0; i < n; i++) out[i] = heap[a.results + i] !== 0;
        sink += out[0] ? 1 : 0;
      }
      return strings.length;
    },
    streamPathInline: () => {
      // words streamed across key boundaries: four characters a u32 store at any alignment
      for (const g of groups) {
        const a = arena();
        const n = g.length;
        const heap32 = module.HEAPU32;
        let w = a.items >>> 2; // items is 8-aligned
        let o = a.offsets >>> 2;
        let acc = 0;
        let bits = 0;
        let offset = 0;
        let bad = 0;
        heap32[o++] = 0;
        for (let i = 0; i < n; i++) {
          const s = g[i];
          const len = s.length;
          const full = len & ~3;
          let j = 0;
          if (bits === 0) {
            for (; j < full; j += 4) {
              const c0 = s.charCodeAt(j), c1 = s.charCodeAt(j + 1), c2 = s.charCodeAt(j + 2), c3 = s.charCodeAt(j + 3);
              bad |= c0 | c1 | c2 | c3;
              heap32[w++] = c0 | (c1 << 8) | (c2 << 16) | (c3 << 24);
            }
          } else {
            const back = 32 - bits;
            for (; j < full; j += 4) {
              const c0 = s.charCodeAt(j), c1 = s.charCodeAt(j + 1), c2 = s.charCodeAt(j + 2), c3 = s.charCodeAt(j + 3);
              bad |= c0 | c1 | c2 | c3;
              const word = c0 | (c1 << 8) | (c2 << 16) | (c3 << 24);
              heap32[w++] = acc | (word << bits);
              acc = word >>> back;
            }
          }
          for (; j < len; j++) {
            const c = s.charCodeAt(j);
            bad |= c;
            acc |= c << bits;
            bits += 8;
            if (bits === 32) {
              heap32[w++] = acc;
              acc = 0;
              bits = 0;
            }
          }
          offset += len;
          heap32[o++] = offset;
        }
        if (bits !== 0) heap32[w] = acc;
        if (bad >= 0x80) throw new Error('not ascii');
        ex.bg_filter_contains_many(raw, a.items, a.offsets, n, a.results);
        const heap = module.HEAPU8;
        const out = new Array(n);
        for (let i = 0; i < n; i++) out[i] = heap[a.results + i] !== 0;
        sink += out[0] ? 1 : 0;
      }
      return strings.length;
    },
    streamPathOneLoop: () => {
      // the same with one loop: (word >>> 1) >>> (31 - bits) carries nothing when bits is 0
      // words streamed across key boundaries: four characters a u32 store at any alignment
      for (const g of groups) {
        const a = arena();
        const n = g.length;
        const heap32 = module.HEAPU32;
        let w = a.items >>> 2; // items is 8-aligned
        let o = a.offsets >>> 2;
        let acc = 0;
        let bits = 0;
        let offset = 0;
        let bad = 0;
        heap32[o++] = 0;
        for (let i = 0; i < n; i++) {
          const s = g[i];
          const len = s.length;
          const full = len & ~3;
          let j = 0;
          const back1 = 31 - bits;
          for (; j < full; j += 4) {
            const c0 = s.charCodeAt(j), c1 = s.charCodeAt(j + 1), c2 = s.charCodeAt(j + 2), c3 = s.charCodeAt(j + 3);
            bad |= c0 | c1 | c2 | c3;
            const word = c0 | (c1 << 8) | (c2 << 16) | (c3 << 24);
            heap32[w++] = acc | (word << bits);
            acc = (word >>> 1) >>> back1;
          }
          for (; j < len; j++) {
            const c = s.charCodeAt(j);
            bad |= c;
            acc |= c << bits;
            bits += 8;
            if (bits === 32) {
              heap32[w++] = acc;
              acc = 0;
              bits = 0;
            }
          }
          offset += len;
          heap32[o++] = offset;
        }
        if (bits !== 0) heap32[w] = acc;
        if (bad >= 0x80) throw new Error('not ascii');
        ex.bg_filter_contains_many(raw, a.items, a.offsets, n, a.results);
        const heap = module.HEAPU8;
        const out = new Array(n);
        for (let i = 0; i < n; i++) out[i] = heap[a.results + i] !== 0;
        sink += out[0] ? 1 : 0;
      }
      return strings.length;
    },
    join: () => {
      for (const g of groups) sink += g.join('').length;
      return strings.length;
    },
    joinEncodeInto: () => {
      for (const g of groups) sink += stageJoined(g);
      return strings.length;
    },
    encodeIntoPerKey: () => {
      const heap = module.HEAPU8;
      for (const g of groups) {
        let at = arena().items;
        for (let i = 0; i < g.length; i++) at += encoder.encodeInto(g[i], heap.subarray(at, at + 3 * g[i].length)).written;
        sink += at;
      }
      return strings.length;
    },
    byteLoop: () => {
      const heap = module.HEAPU8;
      for (const g of groups) {
        let at = arena().items;
        for (let i = 0; i < g.length; i++) {
          const s = g[i];
          for (let j = 0; j < s.length; j++) heap[at++] = s.charCodeAt(j);
        }
        sink += at;
      }
      return strings.length;
    },
    byteLoopAscii: () => {
      // the byte loop with the ASCII test and the offsets, as a batch would need
      const heap = module.HEAPU8;
      const heap32 = module.HEAPU32;
      for (const g of groups) {
        const a = arena();
        const base = a.items;
        let at = base;
        let o = a.offsets >>> 2;
        heap32[o++] = 0;
        let bad = 0;
        for (let i = 0; i < g.length; i++) {
          const s = g[i];
          const n = s.length;
          for (let j = 0; j < n; j++) {
            const c = s.charCodeAt(j);
            bad |= c;
            heap[at + j] = c;
          }
          at += n;
          heap32[o++] = at - base;
        }
        sink += bad >= 0x80 ? 1 : at;
      }
      return strings.length;
    },
    wordLoopAscii: () => {
      // 4-aligned words in the middle of each key, bytes at its ends
      const heap = module.HEAPU8;
      const heap32 = module.HEAPU32;
      for (const g of groups) {
        const a = arena();
        const base = a.items;
        let at = base;
        let o = a.offsets >>> 2;
        heap32[o++] = 0;
        let bad = 0;
        for (let i = 0; i < g.length; i++) {
          const s = g[i];
          const n = s.length;
          let j = 0;
          let p = at;
          for (; (p & 3) !== 0 && j < n; j++, p++) {
            const c = s.charCodeAt(j);
            bad |= c;
            heap[p] = c;
          }
          let w = p >>> 2;
          for (; j + 4 <= n; j += 4, p += 4) {
            const c0 = s.charCodeAt(j), c1 = s.charCodeAt(j + 1), c2 = s.charCodeAt(j + 2), c3 = s.charCodeAt(j + 3);
            bad |= c0 | c1 | c2 | c3;
            heap32[w++] = c0 | (c1 << 8) | (c2 << 16) | (c3 << 24);
          }
          for (; j < n; j++, p++) {
            const c = s.charCodeAt(j);
            bad |= c;
            heap[p] = c;
          }
          at += n;
          heap32[o++] = at - base;
        }
        sink += bad >= 0x80 ? 1 : at;
      }
      return strings.length;
    },
    wordLoopJsBuffer: () => {
      // the same into a plain Uint32Array (not wasm memory), then one set() into the arena
      for (const g of groups) {
        const a = arena();
        const heap = jsBytes;
        const heap32 = jsWords;
        const base = 0;
        let at = base;
        let o = 32 * 1024; // the offsets after the keys' bytes
        heap32[o++] = 0;
        let bad = 0;
        for (let i = 0; i < g.length; i++) {
          const s = g[i];
          const n = s.length;
          let j = 0;
          let p = at;
          for (; (p & 3) !== 0 && j < n; j++, p++) {
            const c = s.charCodeAt(j);
            bad |= c;
            heap[p] = c;
          }
          let w = p >>> 2;
          for (; j + 4 <= n; j += 4, p += 4) {
            const c0 = s.charCodeAt(j), c1 = s.charCodeAt(j + 1), c2 = s.charCodeAt(j + 2), c3 = s.charCodeAt(j + 3);
            bad |= c0 | c1 | c2 | c3;
            heap32[w++] = c0 | (c1 << 8) | (c2 << 16) | (c3 << 24);
          }
          for (; j < n; j++, p++) {
            const c = s.charCodeAt(j);
            bad |= c;
            heap[p] = c;
          }
          at += n;
          heap32[o++] = at - base;
        }
        module.HEAPU8.set(jsBytes.subarray(0, at), a.items);
        sink += bad >= 0x80 ? 1 : at;
      }
      return strings.length;
    },
    resultsPush: () => {
      const heap = module.HEAPU8;
      for (const g of groups) {
        const out = [];
        const r = arena().results;
        for (let i = 0; i < g.length; i++) out.push(heap[r + i] !== 0);
        sink += out.length;
      }
      return strings.length;
    },
    resultsSubarray: () => {
      const heap = module.HEAPU8;
      for (const g of groups) {
        const out = [];
        const r = arena().results;
        const v = heap.subarray(r, r + g.length);
        for (let i = 0; i < v.length; i++) out.push(v[i] !== 0);
        sink += out.length;
      }
      return strings.length;
    },
    offsetsLoop: () => {
      const heap32 = module.HEAPU32;
      for (const g of groups) {
        let at = arena().offsets >>> 2;
        let offset = 0;
        heap32[at++] = 0;
        for (let i = 0; i < g.length; i++) { offset += g[i].length; heap32[at++] = offset; }
        sink += offset;
      }
      return strings.length;
    },
    resultsArray: () => {
      const heap = module.HEAPU8;
      for (const g of groups) {
        const out = new Array(g.length);
        const r = arena().results;
        for (let i = 0; i < g.length; i++) out[i] = heap[r + i] !== 0;
        sink += out.length;
      }
      return strings.length;
    },
  };
}
