// The string encoder of js/wasm/staging.js under every loop limit a runtime can
// choose (Node's, the browsers', always encodeInto, always the loop): a string
// key is exactly its UTF-8 bytes, single and in batches, at and around the
// limit, with non-ASCII anywhere and lone surrogates. The browser tests run the
// same samples in Chromium with its own default (tests/browser/single-file.test.mjs).
// Speed is measured by bench/browser.mjs, never here.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';

import { BloomFilter } from '../../js/index.js';
import {
  BROWSER_ASCII_LOOP_MAX, NODE_ASCII_LOOP_MAX, getAsciiLoopMax, setAsciiLoopMax,
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
