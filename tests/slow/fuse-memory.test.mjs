// The slow tier: a fuse filter too large for one WebAssembly memory fails with
// BloomgateError E_NOMEM, never a wasm trap. 200M keys in one memory used to
// end in "memory access out of bounds" (emmalloc handed out a block running
// past 4 GiB; wasm/bloomgate_wasm.c now refuses such requests). Needs ~3.2 GB
// of RAM for about half a minute, so it runs only with 5 GiB free.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { freemem } from 'node:os';

import { BloomFilter } from '../../js/index.js';

const KEYS = 200_000_000;
const CHUNK = 1 << 20;
const skip = freemem() < 5 * 2 ** 30 ? `needs 5 GiB of free memory, ${(freemem() / 2 ** 30).toFixed(1)} GiB free` : false;

test('200M keys in one fuse build: E_NOMEM, not a trap; the filter stays usable', { skip, timeout: 600000 }, async () => {
  const filter = await BloomFilter.create({ capacity: KEYS, errorRate: 0.01, kind: 'fuse8' });
  try {
    // Packed 8-byte keys, one wasm call per chunk.
    const bytes = new Uint8Array(CHUNK * 8);
    const words = new Uint32Array(bytes.buffer);
    const offsets = new Uint32Array(CHUNK + 1);
    for (let i = 0; i <= CHUNK; i++) offsets[i] = 8 * i;
    let added = 0;
    let failure = null;
    while (added < KEYS && failure === null) {
      const n = Math.min(CHUNK, KEYS - added);
      for (let i = 0; i < n; i++) {
        words[2 * i] = added + i;
        words[2 * i + 1] = Math.imul(added + i, 0x9e3779b1) >>> 0;
      }
      try {
        filter.addAll({ bytes: bytes.subarray(0, 8 * n), offsets: offsets.subarray(0, n + 1) });
        added += n;
      } catch (error) {
        failure = error;
      }
    }
    // The build (sealing, at the first query) cannot fit either way.
    if (failure === null) {
      try {
        filter.mightContain('x');
      } catch (error) {
        failure = error;
      }
    }
    assert.ok(failure !== null, 'a 200M-key fuse filter does not fit in one wasm memory');
    assert.equal(failure.name, 'BloomgateError', String(failure?.stack ?? failure));
    assert.equal(failure.code, 'E_NOMEM');
    process.stdout.write(`# ${added.toLocaleString('en')} keys added, then ${failure.code}: ${failure.message}\n`);
  } finally {
    filter.free();
  }
  // The module is still sound after the refusal: a small filter builds and answers.
  const small = await BloomFilter.create({ capacity: 1000, errorRate: 0.01, kind: 'fuse8' });
  for (let i = 0; i < 1000; i++) small.add(`k${i}`);
  assert.ok(small.mightContain('k1'));
  small.free();
});
