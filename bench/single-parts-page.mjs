// The cases of bench/single-parts.mjs, in a module the page imports (no Node imports).
export function parts({ filter, fresh, bf, bfFresh, ex, staging, calls, members, probes, packedBase, packedNon, len, misc }) {
  const sink = { value: 0 };
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
    // stageKey alone (the charCodeAt loop into the scratch).
    'stageKey'() {
      let total = 0;
      for (let i = 0; i < probes.length; i++) total += staging.stageKey(probes[i], 'item');
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
    'wasm contains, staged'() {
      let hits = 0;
      const fn = ex.bg_filter_contains;
      for (let i = 0; i < probes.length; i++) hits += fn(ptr, packedNon + i * len, len);
      sink.value += hits;
      return probes.length;
    },
    'wasm contains_key, staged'() {
      let hits = 0;
      const fn = ex.bg_filter_contains_key;
      for (let i = 0; i < probes.length; i++) hits += fn(ptr, packedNon + i * len, len);
      sink.value += hits;
      return probes.length;
    },
    'wasm add, staged'() {
      const fn = ex.bg_filter_add;
      const p = calls.__freshPtr;
      for (let i = 0; i < members.length; i++) fn(p, packedBase + i * len, len);
      return members.length;
    },
    // XXH3-128 alone, through bgw_hash (writes 4 u32 to misc)
    'wasm hash, staged'() {
      const fn = ex.bgw_hash;
      for (let i = 0; i < probes.length; i++) fn(packedNon + i * len, len, 0, 0, misc);
      return probes.length;
    },
  };
  if (ex.bg_filter_contains_utf8_classic) {
    cases['wasm fast contains, staged'] = function () {
      let hits = 0;
      const fn = ex.bg_filter_contains_utf8_classic;
      for (let i = 0; i < probes.length; i++) hits += fn(ptr, packedNon + i * len, len);
      sink.value += hits;
      return probes.length;
    };
  }
  return { cases, sink };
}

