// mightContainMany(items, into): the answers written to the caller's bytes instead of a
// new boolean[] (issue 21: in JavaScriptCore a batch's answer array costs the page's
// collector more than the batch saves). The bytes must be the boolean answers exactly,
// for every form a batch takes (array of strings under both encoders, non-ASCII text,
// Uint8Array items, packed keys, iterables of unknown length, several chunks), and every
// misuse (a short `into`, a non-Uint8Array, keys over `into`'s memory) must fail clearly
// without a wrong answer. A FreshFilter's forwarding is checked in open-filter.test.mjs. Speed is measured by bench/browser.mjs, never here.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';

import { BloomFilter, BloomgateError } from '../../js/index.js';
import { BATCH_ENCODERS, getBatchEncoder, setBatchEncoder } from '../../js/wasm/staging.js';

const utf8 = new TextEncoder();

async function filterWith(keys, options = { capacity: 20_000, errorRate: 0.01 }) {
  const filter = await BloomFilter.create(options);
  filter.addAll(keys);
  return filter;
}

/** Members and non-members interleaved, so the answers are a mix of 1 and 0. */
function probes(count, prefix) {
  return Array.from({ length: count }, (_, i) => (i % 2 === 0 ? `${prefix}member-${i}` : `${prefix}other-${i}`));
}

const asBytes = (answers) => Uint8Array.from(answers, (a) => (a ? 1 : 0));

/** Packed keys { bytes, offsets } of the UTF-8 of strings. */
function pack(strings) {
  const parts = strings.map((s) => utf8.encode(s));
  const offsets = new Uint32Array(parts.length + 1);
  for (let i = 0; i < parts.length; i++) offsets[i + 1] = offsets[i] + parts[i].length;
  const bytes = new Uint8Array(offsets[parts.length]);
  parts.forEach((part, i) => bytes.set(part, offsets[i]));
  return { bytes, offsets };
}

describe('mightContainMany(items, into)', () => {
  for (const encoder of BATCH_ENCODERS) {
    test(`an array of strings, encoder '${encoder}': the bytes are the boolean answers, over several chunks`, async () => {
      const before = getBatchEncoder();
      setBatchEncoder(encoder);
      try {
        // 5,000 keys: more than one chunk (BATCH_KEYS), with non-ASCII keys in the middle.
        const items = probes(5000, 'k');
        for (let i = 2000; i < 2100; i++) items[i] = `${items[i]}-ü-${i}`;
        const filter = await filterWith(items.filter((_, i) => i % 2 === 0));
        const expected = filter.mightContainMany(items);
        assert.ok(expected.includes(true) && expected.includes(false), 'the probes mix maybes and definitely-nots');
        const into = new Uint8Array(items.length);
        const answers = filter.mightContainMany(items, into);
        assert.ok(answers instanceof Uint8Array);
        assert.equal(answers.buffer, into.buffer, 'the answers are a view of into');
        assert.equal(answers.length, items.length);
        assert.deepEqual(answers, asBytes(expected));
        // Every member answers 1: no false negative through this path.
        for (let i = 0; i < items.length; i += 2) assert.equal(answers[i], 1, `member ${i}`);
        filter.free();
      } finally {
        setBatchEncoder(before);
      }
    });
  }

  test('Uint8Array items, mixed items, packed keys and an iterable of unknown length give the same bytes', async () => {
    const strings = probes(3000, 'm');
    const filter = await filterWith(strings.filter((_, i) => i % 2 === 0));
    const expected = asBytes(filter.mightContainMany(strings));
    const encoded = strings.map((s) => utf8.encode(s));
    const mixed = strings.map((s, i) => (i % 3 === 0 ? utf8.encode(s) : s));
    function* generated() {
      yield* strings;
    }
    for (const [label, items] of [['Uint8Array[]', encoded], ['mixed', mixed], ['packed', pack(strings)],
      ['a generator', generated()], ['a Set', new Set(strings)]]) {
      const into = new Uint8Array(strings.length);
      assert.deepEqual(filter.mightContainMany(items, into), expected, label);
    }
    filter.free();
  });

  test('a larger into: the answers are its first count bytes, the rest untouched; an empty batch answers nothing', async () => {
    const filter = await filterWith(['a', 'b']);
    const into = new Uint8Array(10).fill(7);
    const answers = filter.mightContainMany(['a', 'zz-not-there', 'b'], into);
    assert.equal(answers.length, 3);
    assert.equal(answers[0], 1);
    assert.equal(answers[2], 1);
    assert.deepEqual([...into.subarray(3)], [7, 7, 7, 7, 7, 7, 7]);
    assert.equal(filter.mightContainMany([], new Uint8Array(0)).length, 0);
    // A Buffer is a Uint8Array; a view at an offset writes at its own start.
    const buffer = Buffer.alloc(4);
    assert.deepEqual([...filter.mightContainMany(['a', 'b'], buffer)], [1, 1]);
    const big = new Uint8Array(8);
    filter.mightContainMany(['a', 'b'], big.subarray(5));
    assert.deepEqual([...big], [0, 0, 0, 0, 0, 1, 1, 0]);
    filter.free();
  });

  test('an into too short for an array or packed keys fails with E_RANGE before anything is written', async () => {
    const filter = await filterWith(['a']);
    for (const items of [['a', 'b', 'c'], pack(['a', 'b', 'c'])]) {
      const into = new Uint8Array(2).fill(9);
      assert.throws(() => filter.mightContainMany(items, into), (error) => {
        assert.ok(error instanceof BloomgateError);
        assert.equal(error.code, 'E_RANGE');
        assert.match(error.message, /room for 2 answers and the batch has 3 items/);
        return true;
      });
      assert.deepEqual([...into], [9, 9], 'nothing written');
    }
    filter.free();
  });

  test('an iterable that outgrows into fails with E_RANGE at the chunk that would overrun, saying what was written', async () => {
    const strings = probes(2500, 'g');
    const filter = await filterWith(strings.filter((_, i) => i % 2 === 0));
    const expected = asBytes(filter.mightContainMany(strings));
    const into = new Uint8Array(2000);
    assert.throws(() => filter.mightContainMany(new Set(strings), into), (error) => {
      assert.ok(error instanceof BloomgateError);
      assert.equal(error.code, 'E_RANGE');
      assert.match(error.message, /room for 2000 answers and the batch has more items \((no answer is|answers 0 to \d+ are) written\)/);
      const written = /answers 0 to (\d+) are/.exec(error.message);
      const count = written === null ? 0 : Number(written[1]) + 1;
      assert.deepEqual(into.subarray(0, count), expected.subarray(0, count), 'what it says is written is right');
      return true;
    });
    // The filter is unharmed and the next batch is answered.
    assert.deepEqual(filter.mightContainMany(strings.slice(0, 10), new Uint8Array(10)), expected.subarray(0, 10));
    filter.free();
  });

  test('into must be a Uint8Array: an Array, a Uint16Array, an ArrayBuffer or null is a TypeError naming it', async () => {
    const filter = await filterWith(['a']);
    for (const [into, name] of [[[], 'an Array'], [new Uint16Array(4), 'Uint16Array'], [new ArrayBuffer(4), 'ArrayBuffer'],
      [null, 'null'], [4, 'number'], [new Uint8ClampedArray(4), 'Uint8ClampedArray']]) {
      assert.throws(() => filter.mightContainMany(['a'], into), (error) => {
        assert.ok(error instanceof TypeError, name);
        assert.ok(error.message.includes(`into must be a Uint8Array, got ${name}`), error.message);
        return true;
      });
    }
    // undefined is "no into": the boolean[] form.
    assert.deepEqual(filter.mightContainMany(['a'], undefined), [true]);
    filter.free();
  });

  test('keys over into\'s memory are refused (E_ARG) rather than read after answers overwrote them', async () => {
    const strings = probes(3000, 's');
    const filter = await filterWith(strings.filter((_, i) => i % 2 === 0));
    const { bytes, offsets } = pack(strings);
    // Packed keys whose bytes or offsets share into's buffer.
    const shared = new Uint8Array(bytes.length + strings.length);
    shared.set(bytes);
    const packedOver = { bytes: shared.subarray(0, bytes.length), offsets };
    assert.throws(() => filter.mightContainMany(packedOver, shared.subarray(bytes.length)), { code: 'E_ARG', message: /items\.bytes shares memory/ });
    const offsetBuffer = new ArrayBuffer(offsets.byteLength + strings.length);
    const offsetsOver = new Uint32Array(offsetBuffer, 0, offsets.length);
    offsetsOver.set(offsets);
    assert.throws(() => filter.mightContainMany({ bytes, offsets: offsetsOver }, new Uint8Array(offsetBuffer, offsets.byteLength)),
      { code: 'E_ARG', message: /items\.offsets shares memory/ });
    // Uint8Array items viewing into's buffer, in an array and in a generator (the second chunk's keys).
    const memory = new Uint8Array(strings.length + 64 * strings.length);
    const answersPart = memory.subarray(0, strings.length);
    const items = strings.map((s, i) => {
      const view = memory.subarray(strings.length + 64 * i, strings.length + 64 * i + utf8.encode(s).length);
      view.set(utf8.encode(s));
      return view;
    });
    const mixed = strings.map((s, i) => (i < 1500 ? s : items[i]));
    assert.throws(() => filter.mightContainMany(mixed, answersPart), { code: 'E_ARG', message: /items\[\d+\] shares memory/ });
    assert.throws(() => filter.mightContainMany((function* () { yield* mixed; })(), answersPart), { code: 'E_ARG' });
    // Separate memory for the same keys is answered, members as maybe.
    const answers = filter.mightContainMany(items.map((v) => v.slice()), new Uint8Array(strings.length));
    for (let i = 0; i < strings.length; i += 2) assert.equal(answers[i], 1);
    filter.free();
  });

  test('a freed filter, an unsealed static kind and a bad item fail as the boolean[] form does', async () => {
    const freed = await filterWith(['a']);
    freed.free();
    const intoError = (() => { try { freed.mightContainMany(['a'], new Uint8Array(1)); } catch (error) { return error; } })();
    const plainError = (() => { try { freed.mightContainMany(['a']); } catch (error) { return error; } })();
    assert.ok(intoError instanceof BloomgateError);
    assert.equal(intoError.code, plainError.code);
    const filter = await filterWith(['a']);
    assert.throws(() => filter.mightContainMany(['a', 5], new Uint8Array(2)), TypeError);
    assert.throws(() => filter.mightContainMany('ab', new Uint8Array(2)), TypeError);
    filter.free();
    // A static kind answers from its keys once sealed (queries seal it).
    const fuse = await BloomFilter.create({ kind: 'fuse8', capacity: 100, errorRate: 0.01 });
    fuse.addAll(['x', 'y']);
    assert.deepEqual([...fuse.mightContainMany(['x', 'y'], new Uint8Array(2))], [1, 1]);
    fuse.free();
  });
});
