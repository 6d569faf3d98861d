// The variants bench/batch-variants.mjs times in each engine's page (see there).
// Each returns how many keys it handled.
export function variants({ filter, module, arenaMod, staging, calls, KINDS, strings, packed, batch }) {
  const { ex } = module;
  const { arenaReserve } = arenaMod;
  const arena = () => arenaMod.arena;
  const groups = [];
  for (let i = 0; i < strings.length; i += batch) groups.push(strings.slice(i, i + batch));
  const encoder = new TextEncoder();
  const jsWords = new Uint32Array(64 * 1024);
  const jsBytes = new Uint8Array(jsWords.buffer);
  let sink = 0;
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
