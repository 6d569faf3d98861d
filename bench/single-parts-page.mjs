// The cases of bench/single-parts.mjs, in a module the page imports (no Node imports).
export function parts({ filter, fresh, bf, bfFresh, ex, staging, calls, members, probes, packedBase, packedNon, len, misc }) {
  const sink = { value: 0 };
  const encoder = new TextEncoder();
  const scratch = () => new Uint8Array(ex.memory.buffer, misc, 1024);
  const ptr = calls.__ptr;
  const cases = {
    'bg.member'() {
      let hits = 0;
      for (let i = 0; i < members.length; i++) if (filter.mightContain(members[i])) hits++;
      sink.value += hits;
      return members.length;
    },
    'bf.member'() {
      let hits = 0;
      for (let i = 0; i < members.length; i++) if (bf.test(members[i])) hits++;
      sink.value += hits;
      return members.length;
    },
    'bg.nonmember'() {
      let hits = 0;
      for (let i = 0; i < probes.length; i++) if (filter.mightContain(probes[i])) hits++;
      sink.value += hits;
      return probes.length;
    },
    'bf.nonmember'() {
      let hits = 0;
      for (let i = 0; i < probes.length; i++) if (bf.test(probes[i])) hits++;
      sink.value += hits;
      return probes.length;
    },
    'bg.add'() {
      const f = fresh;
      for (let i = 0; i < members.length; i++) f.add(members[i]);
      return members.length;
    },
    'bf.add'() {
      const f = bfFresh;
      for (let i = 0; i < members.length; i++) f.add(members[i]);
      return members.length;
    },
    // calls.js directly: no BloomFilter method, no handle.
    'calls.filterContains'() {
      let hits = 0;
      for (let i = 0; i < probes.length; i++) if (calls.filterContains(ptr, probes[i])) hits++;
      sink.value += hits;
      return probes.length;
    },
    'calls.filterAdd'() {
      const p = calls.__freshPtr;
      for (let i = 0; i < members.length; i++) calls.filterAdd(p, members[i]);
      return members.length;
    },
    // stage and call fused by hand: a local view, the export in a local, no module bindings
    'fused by hand'() {
      let hits = 0;
      const fn = ex.bg_filter_contains;
      const words = new Uint32Array(ex.memory.buffer, misc, 256);
      for (let i = 0; i < probes.length; i++) {
        const s = probes[i];
        const n = s.length;
        if (!wordsCheckEach(s, n, words)) throw new Error('not ascii');
        hits += fn(ptr, misc, n);
      }
      sink.value += hits;
      return probes.length;
    },
    // the same through stageKey (the library's staging, the scratch it writes)
    'fused via stageKey'() {
      let hits = 0;
      const fn = ex.bg_filter_contains;
      for (let i = 0; i < probes.length; i++) {
        const len = staging.stageKey(probes[i], 'item');
        hits += fn(ptr, staging.scratchPtr, len);
      }
      sink.value += hits;
      return probes.length;
    },
    // hand staging, the export read from the exports object at each call
    'fused via ex.prop'() {
      let hits = 0;
      const words = new Uint32Array(ex.memory.buffer, misc, 256);
      for (let i = 0; i < probes.length; i++) {
        const s = probes[i];
        const n = s.length;
        if (!wordsCheckEach(s, n, words)) throw new Error('not ascii');
        hits += ex.bg_filter_contains(ptr, misc, n);
      }
      sink.value += hits;
      return probes.length;
    },
    // stageKey alone (the charCodeAt loop into the scratch).
    'stageKey'() {
      let total = 0;
      for (let i = 0; i < probes.length; i++) total += staging.stageKey(probes[i], 'item');
      sink.value += total;
      return probes.length;
    },
    // reading the characters alone: the floor of any JavaScript staging
    'charCodeAt only'() {
      let total = 0;
      for (let i = 0; i < probes.length; i++) {
        const s = probes[i];
        for (let j = 0; j < s.length; j++) total += s.charCodeAt(j);
      }
      sink.value += total;
      return probes.length;
    },
    'encodeInto'() {
      let total = 0;
      const view = scratch();
      for (let i = 0; i < probes.length; i++) total += encoder.encodeInto(probes[i], view).written;
      sink.value += total;
      return probes.length;
    },
    'byte loop'() {
      let total = 0;
      const view = scratch();
      for (let i = 0; i < probes.length; i++) {
        const s = probes[i];
        const n = s.length;
        for (let j = 0; j < n; j++) view[j] = s.charCodeAt(j);
        total += n;
      }
      sink.value += total;
      return probes.length;
    },
    // an export that returns at once (bg_filter_contains(NULL, NULL, 1) = E_ARG)
    'empty export call'() {
      let total = 0;
      const fn = ex.bg_filter_contains;
      for (let i = 0; i < probes.length; i++) total += fn(0, 0, 1);
      sink.value += total;
      return probes.length;
    },
    // the wasm query on keys already in wasm memory (one after another)
    'wasm contains staged'() {
      let hits = 0;
      const fn = ex.bg_filter_contains;
      for (let i = 0; i < probes.length; i++) hits += fn(ptr, packedNon + i * len, len);
      sink.value += hits;
      return probes.length;
    },
    'wasm contains_key staged'() {
      let hits = 0;
      const fn = ex.bg_filter_contains_key;
      for (let i = 0; i < probes.length; i++) hits += fn(ptr, packedNon + i * len, len);
      sink.value += hits;
      return probes.length;
    },
    'wasm add staged'() {
      const fn = ex.bg_filter_add;
      const p = calls.__freshPtr;
      for (let i = 0; i < members.length; i++) fn(p, packedBase + i * len, len);
      return members.length;
    },
    // XXH3-128 alone, through bgw_hash (writes 4 u32 to misc)
    'wasm hash staged'() {
      const fn = ex.bgw_hash;
      for (let i = 0; i < probes.length; i++) fn(packedNon + i * len, len, 0, 0, misc);
      return probes.length;
    },
  };
  if (ex.bg_filter_contains_utf8_classic) {
    cases['wasm fast contains staged'] = function () {
      let hits = 0;
      const fn = ex.bg_filter_contains_utf8_classic;
      for (let i = 0; i < probes.length; i++) hits += fn(ptr, packedNon + i * len, len);
      sink.value += hits;
      return probes.length;
    };
  }
  return { cases, sink };
}

/** The raw wasm calls of one module instance on keys already in its memory (`label` prefixes the names). */
export function rawCases(label, { ex, ptr, freshPtr, packedBase, packedNon, len, count, sink }) {
  return {
    [`${label} contains staged`]() {
      let hits = 0;
      const fn = ex.bg_filter_contains;
      for (let i = 0; i < count; i++) hits += fn(ptr, packedNon + i * len, len);
      sink.value += hits;
      return count;
    },
    [`${label} add staged`]() {
      const fn = ex.bg_filter_add;
      for (let i = 0; i < count; i++) fn(freshPtr, packedBase + i * len, len);
      return count;
    },
  };
}

/** A raw classic filter (1M keys, 1 %) in a module instance, `count` keys of `keys` added, both key sets copied in. */
export function rawSetup(module, members, probes) {
  const ex = module.ex;
  const out = module.mallocOrThrow(4);
  const create = () => {
    const rc = ex.bgw_filter_create(1, 1000000, 0.01, 0, 0, 0, out, 0);
    if (rc !== 0) throw new Error(`bgw_filter_create: ${rc}`);
    return module.HEAPU32[out >>> 2];
  };
  const ptr = create();
  const freshPtr = create();
  const packedBase = module.mallocOrThrow(members.bytes.length);
  const packedNon = module.mallocOrThrow(probes.bytes.length);
  module.HEAPU8.set(members.bytes, packedBase);
  module.HEAPU8.set(probes.bytes, packedNon);
  const len = members.bytes.length / (members.offsets.length - 1);
  const count = members.offsets.length - 1;
  for (let i = 0; i < count; i++) ex.bg_filter_add(ptr, packedBase + i * len, len);
  return { ex, ptr, freshPtr, packedBase, packedNon, len, count };
}

/* Staging variants, standalone, each writing one key to the start of `bytes`/`words` (a 4-aligned spot of wasm memory). */
function wordsCheckEach(s, n, words) {
  const full = n & ~3;
  let i = 0;
  let w = 0;
  for (; i < full; i += 4) {
    const a = s.charCodeAt(i);
    const b = s.charCodeAt(i + 1);
    const c = s.charCodeAt(i + 2);
    const d = s.charCodeAt(i + 3);
    if ((a | b | c | d) >= 0x80) return false;
    words[w++] = a | (b << 8) | (c << 16) | (d << 24);
  }
  if (i < n) {
    let word = 0;
    for (let shift = 0; i < n; i++, shift += 8) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) return false;
      word |= c << shift;
    }
    words[w] = word;
  }
  return true;
}
function wordsCheckEnd(s, n, words) {
  const full = n & ~3;
  let i = 0;
  let w = 0;
  let all = 0;
  for (; i < full; i += 4) {
    const a = s.charCodeAt(i);
    const b = s.charCodeAt(i + 1);
    const c = s.charCodeAt(i + 2);
    const d = s.charCodeAt(i + 3);
    all |= a | b | c | d;
    words[w++] = a | (b << 8) | (c << 16) | (d << 24);
  }
  if (i < n) {
    let word = 0;
    for (let shift = 0; i < n; i++, shift += 8) {
      const c = s.charCodeAt(i);
      all |= c;
      word |= c << shift;
    }
    words[w] = word;
  }
  return all < 0x80;
}
function bytesCheckEnd(s, n, bytes) {
  let all = 0;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    all |= c;
    bytes[i] = c;
  }
  return all < 0x80;
}
function bytesCheckEach(s, n, bytes) {
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80) return false;
    bytes[i] = c;
  }
  return true;
}

export function stagingCases({ ex, at, probes, sink }) {
  const bytes = () => new Uint8Array(ex.memory.buffer, at, 1024);
  const words = () => new Uint32Array(ex.memory.buffer, at, 256);
  const run = (fn, view) => function () {
    const v = view();
    let ok = 0;
    for (let i = 0; i < probes.length; i++) {
      const s = probes[i];
      if (fn(s, s.length, v)) ok++;
    }
    sink.value += ok + v[3];
    return probes.length;
  };
  return {
    'stage words check each 4': run(wordsCheckEach, words),
    'stage words check at end': run(wordsCheckEnd, words),
    'stage bytes check at end': run(bytesCheckEnd, bytes),
    'stage bytes check each': run(bytesCheckEach, bytes),
  };
}
