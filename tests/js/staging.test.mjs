// The string encoder of js/wasm/staging.js under every loop limit a runtime can
// choose (Node's, the browsers', always encodeInto, always the loop): a string
// key is exactly its UTF-8 bytes, single and in batches, at and around the
// limit, with non-ASCII anywhere and lone surrogates. The browser tests run the
// same samples in Chromium with its own default (tests/browser/single-file.test.mjs).
// Speed is measured by bench/staging.mjs and bench/browser.mjs, never here.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';

import { BloomFilter } from '../../js/index.js';
import { heapSize } from '../../js/wasm/index.js';
import {
  BROWSER_ASCII_LOOP_MAX, NODE_ASCII_LOOP_MAX, getAsciiLoopMax, scratchPtr, setAsciiLoopMax,
} from '../../js/wasm/staging.js';

const utf8 = new TextEncoder();
const LIMITS = [0, NODE_ASCII_LOOP_MAX, BROWSER_ASCII_LOOP_MAX, 1024];

/** Strings of every length around `limit`, with the non-ASCII unit first, in the middle and last. */
function samplesAround(limit) {
  const out = ['', 'a', '\uD800', 'lone low \uDC00', 'pair \uD83C\uDF89', 'ü'.repeat(3000), 'x'.repeat(5000)];
  for (const n of [limit - 1, limit, limit + 1]) {
    if (n < 1) continue;
    const ascii = 'k'.repeat(n);
    out.push(ascii);
    for (const at of [0, n >> 1, n - 1]) {
      out.push(ascii.slice(0, at) + 'é' + ascii.slice(at + 1));
      out.push(ascii.slice(0, at) + '日' + ascii.slice(at + 1));
      out.push(ascii.slice(0, at) + '\uD800' + ascii.slice(at + 1)); // lone high surrogate: U+FFFD
      out.push(ascii.slice(0, at) + '\x7f' + ascii.slice(at + 1)); // the last ASCII unit
      out.push(ascii.slice(0, at) + '\x80' + ascii.slice(at + 1)); // the first that is not
    }
  }
  return out;
}

describe('string keys are their UTF-8 bytes under every loop limit', () => {
  test(`Node chooses ${NODE_ASCII_LOOP_MAX}; setAsciiLoopMax forces, checks and restores`, () => {
    assert.equal(getAsciiLoopMax(), NODE_ASCII_LOOP_MAX);
    assert.equal(setAsciiLoopMax(0), NODE_ASCII_LOOP_MAX);
    assert.equal(getAsciiLoopMax(), 0);
    for (const bad of [-1, 1025, 1.5, NaN, '16', null]) assert.throws(() => setAsciiLoopMax(bad), RangeError, String(bad));
    assert.equal(getAsciiLoopMax(), 0, 'a refused limit changes nothing');
    assert.equal(setAsciiLoopMax(undefined), 0);
    assert.equal(getAsciiLoopMax(), NODE_ASCII_LOOP_MAX);
  });

  for (const limit of LIMITS) {
    test(`limit ${limit}: add, mightContain and the batches agree with the bytes`, async () => {
      const samples = [...new Set(LIMITS.flatMap(samplesAround))];
      const byString = await BloomFilter.create({ capacity: 10_000, errorRate: 0.0001 });
      const byBytes = await BloomFilter.create({ capacity: 10_000, errorRate: 0.0001 });
      const byBatch = await BloomFilter.create({ capacity: 10_000, errorRate: 0.0001 });
      setAsciiLoopMax(limit);
      try {
        for (const sample of samples) byString.add(sample);
        byBatch.addAll(samples);
        setAsciiLoopMax(undefined);
        for (const sample of samples) byBytes.add(utf8.encode(sample));
        assert.deepEqual(byString.serialize(), byBytes.serialize(), 'add(string) sets the bits of add(its UTF-8 bytes)');
        assert.deepEqual(byBatch.serialize(), byBytes.serialize(), 'addAll(strings) too');
        setAsciiLoopMax(limit);
        const probes = samples.map((s) => `${s}?`);
        const expected = probes.map((p) => byBytes.mightContain(utf8.encode(p)));
        assert.deepEqual(probes.map((p) => byString.mightContain(p)), expected);
        assert.deepEqual(samples.map((s) => byString.mightContain(s)), samples.map(() => true));
        // A batch mixing bytes and strings goes key by key, through the same loop.
        const mixed = [...samples, utf8.encode('bytes'), ...probes];
        assert.deepEqual(byString.mightContainMany(mixed), mixed.map((item) => byBytes.mightContain(typeof item === 'string' ? utf8.encode(item) : item)));
      } finally {
        setAsciiLoopMax(undefined);
        for (const f of [byString, byBytes, byBatch]) f.free();
      }
    });
  }
});

// The loop writes four characters a u32 store and the last 1-3 as one word: every
// length 0..300 (each residue mod 4 and 8, the group boundaries), ASCII and with
// one non-ASCII unit at each position of the first and last groups.
describe('the word loop writes exactly the bytes at every length', () => {
  /** Every string of the sweep: length n, ASCII, then one unit replaced near each end. */
  function sweep() {
    const out = [];
    for (let n = 0; n <= 300; n++) {
      const ascii = Array.from({ length: n }, (_, i) => String.fromCharCode(0x20 + ((i * 7) % 95))).join('');
      out.push(ascii);
      const positions = new Set([0, 1, 2, 3, 4, n >> 1, n - 5, n - 4, n - 3, n - 2, n - 1].filter((at) => at >= 0 && at < n));
      for (const at of positions) {
        for (const unit of ['\x7f', '\x80', '\u00ff', '\u0100', '\uD800', '\uDC00', '\uFFFD']) {
          out.push(ascii.slice(0, at) + unit + ascii.slice(at + 1));
        }
      }
      if (n >= 2) out.push(ascii.slice(0, n - 2) + '\uD83C\uDF89'); // a pair in the last group
    }
    return out;
  }

  test('the scratch is 4-aligned', () => {
    assert.equal(scratchPtr % 4, 0);
  });

  for (const limit of [NODE_ASCII_LOOP_MAX, 300]) {
    test(`limit ${limit}: single keys of 0..300 units agree with TextEncoder's bytes`, async () => {
      const samples = sweep();
      const byString = await BloomFilter.create({ capacity: 50_000, errorRate: 0.000001 });
      const byBytes = await BloomFilter.create({ capacity: 50_000, errorRate: 0.000001 });
      setAsciiLoopMax(limit);
      try {
        for (const sample of samples) byString.add(sample);
        for (const sample of samples) byBytes.add(utf8.encode(sample));
        // Each prefix right after the whole key, while the scratch still holds the longer key's bytes.
        const long = 'p'.repeat(37) + 'q';
        for (let n = 0; n <= long.length; n++) {
          byString.add(long);
          byString.add(long.slice(0, n));
          byBytes.add(utf8.encode(long));
          byBytes.add(utf8.encode(long.slice(0, n)));
        }
        assert.deepEqual(byString.serialize(), byBytes.serialize(), 'add(string) sets the bits of add(its UTF-8 bytes)');
        const probes = samples.map((s) => `${s}#`);
        assert.deepEqual(probes.map((p) => byString.mightContain(p)), probes.map((p) => byString.mightContain(utf8.encode(p))));
        assert.deepEqual(samples.map((s) => byString.mightContain(s)), samples.map(() => true));
      } finally {
        setAsciiLoopMax(undefined);
        byString.free();
        byBytes.free();
      }
    });
  }

  test('after wasm memory grows, keys are written through fresh views (never the detached ones)', async () => {
    setAsciiLoopMax(1024);
    const filters = [];
    try {
      const filter = await BloomFilter.create({ capacity: 1000, errorRate: 0.001 });
      const keys = Array.from({ length: 64 }, (_, i) => `key ${i} ${'z'.repeat(i)}`);
      for (const key of keys) filter.add(key);
      const before = heapSize();
      // Grow memory by filters the scratch knows nothing about, between string keys.
      while (heapSize() < before + (64 << 20)) {
        filters.push(await BloomFilter.create({ capacity: 2_000_000, errorRate: 0.01 }));
        filter.add(`grown ${heapSize()}`);
        assert.equal(filter.mightContain(`grown ${heapSize()}`), true);
      }
      assert.ok(heapSize() > before, 'memory grew');
      for (const key of keys) assert.equal(filter.mightContain(key), true, key);
      assert.equal(filter.mightContain(utf8.encode(keys[5])), true);
      // A key longer than the scratch moves it (a new, aligned buffer), and the short keys still land right.
      const huge = 'h'.repeat(3000);
      filter.add(huge);
      assert.equal(scratchPtr % 4, 0);
      assert.equal(filter.mightContain(utf8.encode(huge)), true);
      for (const key of keys) assert.equal(filter.mightContain(key), true, key);
      const control = await BloomFilter.create({ capacity: 1000, errorRate: 0.001 });
      filters.push(control);
      for (const key of keys) control.add(utf8.encode(key));
      for (const key of keys) assert.equal(control.mightContain(key), true, `${key} as a string finds its bytes`);
      filter.free();
    } finally {
      setAsciiLoopMax(undefined);
      for (const f of filters) f.free();
    }
  });
});

test('the host byte-order check agrees with the OS: u32 key words land as bytes 0..3 only on little-endian hosts', async () => {
  const { endianness } = await import('node:os');
  const { HOST_IS_LITTLE_ENDIAN } = await import('../../js/wasm/module.js');
  assert.equal(HOST_IS_LITTLE_ENDIAN, endianness() === 'LE');
});
