// The two batch encoders of js/wasm/staging.js ('join': one encodeInto of a chunk's
// joined strings; 'words': four characters a u32 store, streamed across key
// boundaries, which WebKit and Firefox take): under each, a batch of strings is
// exactly their UTF-8 bytes, back to back, whatever the lengths, the alignment each
// key starts at, the chunking, a non-ASCII unit anywhere (the chunk is redone key by
// key) and memory growth. Speed is measured by bench/batch-variants.mjs and
// bench/browser.mjs, never here; tests/browser/batch-encoder.test.mjs runs the same
// checks in the three engines with their own defaults.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';

import { BloomFilter } from '../../js/index.js';
import { heapSize } from '../../js/wasm/index.js';
import { BATCH_ENCODERS, getBatchEncoder, setBatchEncoder } from '../../js/wasm/staging.js';

const utf8 = new TextEncoder();

/** ASCII strings of every length 0..n, cycling printable units. */
const ascii = (n, shift = 0) => Array.from({ length: n }, (_, i) => String.fromCharCode(0x20 + ((i * 7 + shift) % 95))).join('');

/**
 * Lengths 0..40 in an order that starts keys at every offset mod 4, each ASCII and with
 * one unit past ASCII (at both ends and in the middle), lone surrogates and a pair.
 */
function samples() {
  const out = [];
  for (let n = 0; n <= 40; n++) out.push(ascii(n, n));
  for (let n = 1; n <= 13; n++) {
    for (const at of new Set([0, n >> 1, n - 1])) {
      for (const unit of ['\x7f', '\x80', '\u00ff', '\u0100', '\u07ff', '\u0800', '\uD800', '\uDC00', '\uFFFD']) {
        const base = ascii(n, at);
        out.push(base.slice(0, at) + unit + base.slice(at + 1));
      }
    }
  }
  out.push('pair \uD83C\uDF89', 'ü'.repeat(300), 'y'.repeat(1000));
  return out;
}

/** The bytes each item stands for. */
const bytesOf = (item) => (typeof item === 'string' ? utf8.encode(item) : item);

/** A filter holding `items` added one at a time as their UTF-8 bytes: the reference. */
async function reference(items, capacity = 20_000) {
  const filter = await BloomFilter.create({ capacity, errorRate: 0.000001 });
  for (const item of items) filter.add(bytesOf(item));
  return filter;
}

describe('batch encoders', () => {
  test(`Node chooses 'join'; setBatchEncoder forces, checks and restores`, () => {
    assert.deepEqual(BATCH_ENCODERS, ['join', 'words']);
    assert.equal(getBatchEncoder(), 'join');
    assert.equal(setBatchEncoder('words'), 'join');
    assert.equal(getBatchEncoder(), 'words');
    for (const bad of ['', 'Words', 'encodeInto', 0, null]) assert.throws(() => setBatchEncoder(bad), RangeError, String(bad));
    assert.equal(getBatchEncoder(), 'words', 'a refused name changes nothing');
    assert.equal(setBatchEncoder(undefined), 'words');
    assert.equal(getBatchEncoder(), 'join');
  });

  for (const encoder of BATCH_ENCODERS) {
    test(`${encoder}: ASCII batches of every length and alignment are their bytes back to back`, async () => {
      // Every length 0..40 after every length 0..40: each key starts at every offset mod 4,
      // and the open word carries 0-3 bytes into it. No non-ASCII: the encoder's own path runs.
      const items = [];
      for (let a = 0; a <= 40; a++) for (let b = 0; b <= 40; b++) items.push(ascii(a, b), ascii(b, a + 1));
      const expected = await reference(items, 200_000);
      const batched = await BloomFilter.create({ capacity: 200_000, errorRate: 0.000001 });
      setBatchEncoder(encoder);
      try {
        batched.addAll(items);
        assert.deepEqual(batched.serialize(), expected.serialize(), 'addAll(strings) sets the bits of add(their UTF-8 bytes)');
        const probes = items.map((s, i) => (i % 3 === 0 ? `${s}~` : s));
        assert.deepEqual(batched.mightContainMany(probes), probes.map((p) => expected.mightContain(utf8.encode(p))));
      } finally {
        setBatchEncoder(undefined);
        batched.free();
        expected.free();
      }
    });

    test(`${encoder}: non-ASCII units anywhere, mixed byte keys, iterables and chunking`, async () => {
      const base = samples();
      // Over 4,096 keys (more than one chunk), the non-ASCII ones first in the second chunk only.
      const asciiOnly = base.filter((s) => [...s].every((c) => c.charCodeAt(0) < 0x80));
      const items = [];
      while (items.length < 5000) items.push(...asciiOnly);
      items.push(...base);
      const expected = await reference(items, 50_000);
      const batched = await BloomFilter.create({ capacity: 50_000, errorRate: 0.000001 });
      const fromIterable = await BloomFilter.create({ capacity: 50_000, errorRate: 0.000001 });
      setBatchEncoder(encoder);
      try {
        batched.addAll(items);
        fromIterable.addAll((function* generate() { yield* items; })());
        assert.deepEqual(batched.serialize(), expected.serialize(), 'addAll(array)');
        assert.deepEqual(fromIterable.serialize(), expected.serialize(), 'addAll(iterable)');
        const probes = [...base.map((s) => `${s}?`), ...base, utf8.encode('bytes'), ...asciiOnly.map((s) => `#${s}`)];
        const answers = probes.map((p) => expected.mightContain(bytesOf(p)));
        assert.deepEqual(batched.mightContainMany(probes), answers, 'a batch mixing bytes and strings');
        assert.deepEqual(batched.mightContainMany(probes.filter((p) => typeof p === 'string')),
          answers.filter((_, i) => typeof probes[i] === 'string'), 'strings only');
        // A non-ASCII chunk sends the rest of that batch key by key; the next batch tries the encoder again.
        const asciiProbes = asciiOnly.map((s) => `${s}!`);
        assert.deepEqual(batched.mightContainMany(asciiProbes), asciiProbes.map((p) => expected.mightContain(utf8.encode(p))));
      } finally {
        setBatchEncoder(undefined);
        for (const filter of [batched, fromIterable, expected]) filter.free();
      }
    });

    test(`${encoder}: a key longer than a chunk's budget grows the arena and memory mid-batch`, async () => {
      const huge = ascii(300_000);
      const items = ['a', 'bc', huge, 'def', `${huge}!`, 'ghij'];
      const expected = await reference(items);
      const batched = await BloomFilter.create({ capacity: 20_000, errorRate: 0.000001 });
      setBatchEncoder(encoder);
      const before = heapSize();
      try {
        batched.addAll(items);
        assert.deepEqual(batched.serialize(), expected.serialize());
        assert.deepEqual(batched.mightContainMany([...items, `${huge}?`]), [...items.map(() => true), expected.mightContain(utf8.encode(`${huge}?`))]);
        assert.ok(heapSize() >= before);
      } finally {
        setBatchEncoder(undefined);
        batched.free();
        expected.free();
      }
    });

    test(`${encoder}: a bad item fails its whole chunk before any of it is added; the chunks before it stay`, async () => {
      // The 'words' encoder finds a chunk's end in the pass that encodes it and stops at
      // a non-string: the keys before the bad one in its chunk must not be added either.
      const first = Array.from({ length: 4096 }, (_, i) => `k${i}`); // 4,096 keys, well inside the unit budget: one chunk
      const filter = await BloomFilter.create({ capacity: 20_000, errorRate: 0.000001 });
      setBatchEncoder(encoder);
      try {
        assert.throws(() => filter.addAll(['a', 'bc', 42, 'def']), (error) => error instanceof TypeError && /items\[2\]/.test(error.message));
        assert.deepEqual(filter.mightContainMany(['a', 'bc', 'def']), [false, false, false], 'nothing of the failed chunk added');
        assert.throws(() => filter.addAll([...first, 'second chunk', null]), (error) => error instanceof TypeError && /items\[4097\]/.test(error.message));
        assert.ok(filter.mightContainMany(first).every(Boolean), 'the full chunk before the bad item was added');
        assert.equal(filter.mightContain('second chunk'), false);
        assert.throws(() => filter.mightContainMany(['x', utf8.encode('y'), {}]), (error) => error instanceof TypeError && /items\[2\]/.test(error.message));
        // Strings, then bytes, then strings: the encoder's chunks stop at the bytes and resume after them.
        const mixed = ['s0', utf8.encode('b1'), utf8.encode('b2'), 's3', 'ü4', 's5', utf8.encode('')];
        filter.addAll(mixed);
        assert.deepEqual(filter.mightContainMany(['s0', 'b1', 'b2', 's3', 'ü4', 's5', '', 'absent']), [true, true, true, true, true, true, true, false]);
      } finally {
        setBatchEncoder(undefined);
        filter.free();
      }
    });
  }
});
