// The fuse4 kind through the library (docs/kinds/fuse4.md): values per key, the width chosen
// from the error rate, refusals with their codes, determinism, files (load, inspect), url and
// sha1 keys, kinds without values, and a shard built from h1 records and values.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { BloomFilter, BloomgateError, inspectFile, loadFilter } from '../../js/index.js';
import * as wasm from '../../js/wasm/index.js';

const valueOf = (i, bits) => (Math.imul(i, 2654435761) >>> 7) & ((1 << bits) - 1);

async function build(n, { errorRate = 0.01, valueBits = 3, seed = 5, order = 'forwards', prefix = 'item-' } = {}) {
  const filter = await BloomFilter.create({ kind: 'fuse4', capacity: Math.max(1, n), errorRate, valueBits, seed });
  for (let j = 0; j < n; j++) {
    const i = order === 'forwards' ? j : n - 1 - j;
    if (valueBits > 0) filter.add(prefix + i, valueOf(i, valueBits));
    else filter.add(prefix + i);
  }
  return filter;
}

const rejects = (fn, code) => assert.throws(fn, (error) => error instanceof BloomgateError && error.code === code);

test('every member reads back its exact value; non-members are null but for about 2^-w of them', async () => {
  for (const valueBits of [1, 3, 8]) {
    const n = 20000;
    const filter = await build(n, { valueBits });
    for (let i = 0; i < n; i++) assert.equal(filter.valueOf('item-' + i), valueOf(i, valueBits), `item-${i}`);
    let hits = 0;
    const probes = 100000;
    for (let i = 0; i < probes; i++) {
      const value = filter.valueOf('absent-' + i);
      if (value !== null) {
        hits++;
        assert.ok(Number.isInteger(value) && value >= 0 && value < 2 ** valueBits);
      }
      assert.equal(filter.mightContain('absent-' + i), value !== null);
    }
    // errorRate 0.01 -> w = 7, rate 2^-7; within four standard deviations.
    const rate = 2 ** -7;
    assert.ok(hits / probes <= rate + 4 * Math.sqrt(rate / probes), `${hits} false positives`);
    assert.ok(hits / probes >= rate / 2, `${hits} false positives: the width is not 7 bits`);
    const stats = filter.stats();
    assert.equal(stats.kind, 'fuse4');
    assert.equal(stats.k, 4);
    assert.equal(stats.valueBits, valueBits);
    assert.equal(filter.valueBits, valueBits);
    assert.ok(stats.buildAttempts >= 1);
    assert.equal(stats.estimatedErrorRate, rate);
    assert.equal(stats.m % (7 + valueBits), 0);
    // Near the floor: <= 1.15 x (log2(1/eps) + r) bits per key at 2 x 10^4 keys.
    assert.ok(stats.bytes * 8 / n <= 1.15 * (7 + valueBits), `${stats.bytes * 8 / n} bits per key`);
    filter.free();
  }
});

test('the fingerprint width follows the error rate, 1 to 32 bits', async () => {
  for (const [errorRate, w] of [[0.5, 1], [0.1, 4], [0.01, 7], [2 ** -8, 8], [0.001, 10], [2 ** -20, 20], [2 ** -32, 32]]) {
    const filter = await build(100, { errorRate, valueBits: 0 });
    assert.equal(filter.stats().estimatedErrorRate, 2 ** -w, `errorRate ${errorRate}`);
    assert.equal(filter.stats().m % w, 0);
    for (let i = 0; i < 100; i++) assert.equal(filter.mightContain('item-' + i), true);
    filter.free();
  }
  await assert.rejects(BloomFilter.create({ kind: 'fuse4', capacity: 10, errorRate: 2 ** -33 }), (e) => e.code === 'E_RANGE');
});

test('values are checked before anything crosses into wasm, with the limit named', async () => {
  const filter = await BloomFilter.create({ kind: 'fuse4', capacity: 10, errorRate: 0.01, valueBits: 2 });
  rejects(() => filter.add('a'), 'E_ARG');
  rejects(() => filter.addKey(new Uint8Array([1])), 'E_ARG');
  rejects(() => filter.addAll(['a', 'b']), 'E_ARG');
  rejects(() => filter.add('a', 4), 'E_RANGE');
  rejects(() => filter.add('a', -1), 'E_RANGE');
  rejects(() => filter.add('a', 1.5), 'E_RANGE');
  rejects(() => filter.add('a', '1'), 'E_RANGE');
  assert.throws(() => filter.add('a', 4), /from 0 to 3 \(valueBits 2\)/);
  filter.add('a', 3);
  assert.equal(filter.valueOf('a'), 3); // seals
  rejects(() => filter.add('b', 1), 'E_STATIC');
  rejects(() => filter.remove('a'), 'E_UNSUPPORTED');
  filter.free();
  await assert.rejects(BloomFilter.create({ kind: 'fuse4', capacity: 10, errorRate: 0.01, valueBits: 9 }), /from 0 to 8/);
  await assert.rejects(BloomFilter.create({ kind: 'fuse4', capacity: 10, errorRate: 0.01, valueBits: 1.5 }), (e) => e.code === 'E_RANGE');
  await assert.rejects(BloomFilter.create({ kind: 'fuse4', capacity: 10, errorRate: 0.01, valueBits: '3' }), TypeError);
  for (const kind of ['classic', 'fuse8', 'cuckoo']) {
    await assert.rejects(BloomFilter.create({ kind, capacity: 10, errorRate: 0.01, valueBits: 1 }), (e) => e.code === 'E_UNSUPPORTED');
  }
});

test('valueBits 0 is a plain filter: the same bytes, values absent or 0', async () => {
  const plain = await BloomFilter.create({ kind: 'fuse4', capacity: 50, errorRate: 0.001, seed: 9 });
  const zero = await BloomFilter.create({ kind: 'fuse4', capacity: 50, errorRate: 0.001, seed: 9, valueBits: 0 });
  for (let i = 0; i < 50; i++) {
    plain.add('k' + i);
    zero.add('k' + i, 0);
  }
  rejects(() => zero.add('x', 1), 'E_RANGE');
  assert.deepEqual(plain.serialize(), zero.serialize());
  assert.equal(plain.valueOf('k3'), 0);
  assert.equal(plain.valueBits, 0);
  plain.free();
  zero.free();
});

test('kinds without values answer 0 for maybe and null for no', async () => {
  const classic = await BloomFilter.create({ capacity: 100, errorRate: 0.001 });
  classic.add('here');
  classic.add('also', 0);
  rejects(() => classic.add('x', 1), 'E_RANGE');
  assert.equal(classic.valueOf('here'), 0);
  assert.equal(classic.valueOf('also'), 0);
  assert.equal(classic.valueOf('surely-not-here'), null);
  assert.equal(classic.valueBits, 0);
  assert.equal(classic.stats().buildAttempts, 0);
  classic.free();
});

test('same keys and seed, same bytes in any order; a key added twice keeps its larger value', async () => {
  const a = await build(3000, { order: 'forwards' });
  const b = await build(3000, { order: 'backwards' });
  assert.deepEqual(a.serialize(), b.serialize());
  const c = await build(3000, { seed: 6 });
  assert.notDeepEqual(a.serialize(), c.serialize());
  for (const f of [a, b, c]) f.free();
  for (const order of [[2, 6, 1], [6, 1, 2], [1, 2, 6]]) {
    const f = await BloomFilter.create({ kind: 'fuse4', capacity: 4, errorRate: 0.01, valueBits: 3 });
    for (const value of order) f.add('dup', value);
    f.add('other', 5);
    assert.equal(f.valueOf('dup'), 6);
    assert.equal(f.valueOf('other'), 5);
    assert.equal(f.stats().n, 4);
    f.free();
  }
});

test('files: from(), loadFilter() and inspectFile() read fuse4 with its values', async () => {
  const filter = await build(5000, { valueBits: 5, errorRate: 0.0001 });
  filter.setMetadata({ classes: 32 });
  const bytes = filter.serialize();
  const copy = await BloomFilter.from(bytes);
  assert.equal(copy.kind, 'fuse4');
  assert.equal(copy.valueBits, 5);
  for (let i = 0; i < 5000; i += 7) assert.equal(copy.valueOf('item-' + i), valueOf(i, 5));
  assert.deepEqual(copy.serialize(), bytes);
  assert.deepEqual(copy.metadata, { classes: 32 });
  const loaded = await loadFilter(bytes);
  assert.equal(loaded.valueOf('item-42'), valueOf(42, 5));
  const report = await inspectFile(bytes);
  assert.equal(report.ok, true);
  assert.equal(report.stats?.kind, 'fuse4');
  assert.equal(report.stats?.valueBits, 5);
  assert.equal(report.header?.k, 4);
  // A corrupted cell area with a fresh checksum still loads (any cells are a filter); a corrupted width does not.
  const bad = Uint8Array.from(bytes);
  const payload = bytes.length - report.stats.bytes;
  bad[payload] = 40; // w = 40
  const badReport = await inspectFile(bad);
  assert.equal(badReport.ok, false);
  for (const f of [filter, copy, loaded]) f.free();
});

test('sha1 and url keys: valueOfKey, and the first matching URL expression', async () => {
  const sha1 = await BloomFilter.create({ kind: 'fuse4', capacity: 100, errorRate: 0.001, keyEncoding: 'sha1', valueBits: 4 });
  const digest = (text) => new Uint8Array(createHash('sha1').update(text).digest());
  for (let i = 0; i < 100; i++) sha1.addKey(digest('pw' + i), i % 16);
  for (let i = 0; i < 100; i++) {
    assert.equal(sha1.valueOfKey(digest('pw' + i)), i % 16);
    assert.equal(sha1.valueOf('pw' + i), i % 16);
  }
  sha1.free();
  const urls = await BloomFilter.create({ kind: 'fuse4', capacity: 10, errorRate: 0.001, keyEncoding: 'url', valueBits: 2 });
  urls.add('http://bad.example/', 1);
  urls.add('http://bad.example/phish/login.html', 3);
  assert.equal(urls.valueOf('http://bad.example/phish/login.html'), 3);
  assert.equal(urls.valueOf('http://bad.example/elsewhere'), 1);
  assert.equal(urls.valueOf('http://good.example/'), null);
  urls.free();
});

test('a shard from h1 records and values is the filter of its keys', async () => {
  await wasm.ready();
  const n = 2000;
  const h1 = new Uint8Array(8 * n);
  const values = new Uint8Array(n);
  const words = new Uint32Array(4);
  for (let i = 0; i < n; i++) {
    wasm.hashWords('item-' + i, 5, 0, words);
    new DataView(h1.buffer).setUint32(8 * i, words[0], true);
    new DataView(h1.buffer).setUint32(8 * i + 4, words[1], true);
    values[i] = valueOf(i, 3);
  }
  const kind = wasm.KINDS.find((k) => k.name === 'fuse4').id;
  const ptr = wasm.filterCreate(kind, n, 0.01, 5, 0, 0, 3);
  try {
    wasm.filterAddH1(ptr, h1, values);
    assert.throws(() => wasm.filterAddH1(ptr, h1.subarray(0, 16), values.subarray(0, 1)), RangeError);
    wasm.filterSeal(ptr);
    const viaH1 = wasm.filterSerialize(ptr);
    const viaAdd = await build(n, { valueBits: 3, seed: 5 });
    assert.deepEqual(viaH1, viaAdd.serialize());
    viaAdd.free();
  } finally {
    wasm.filterFree(ptr);
  }
});

test('valueOf() with no argument is Object.prototype.valueOf: a filter still turns into a primitive', async () => {
  const filter = await build(10);
  assert.equal(filter.valueOf(), filter);
  assert.equal(`${filter}`, '[object Object]');
  assert.equal(filter + '', '[object Object]');
  filter.free();
});

test('native = wasm: the fuse4 seeds the native build wrote (tests/fuzz/corpus) come out of the wasm byte for byte', async () => {
  const { readFileSync } = await import('node:fs');
  // test_fuse4.c's value_of(i, r): ((i * 2654435761) >> 7) mod 2^r in 64 bits, exact in a double for these i.
  const nativeValue = (i, bits) => (bits ? Math.floor((i * 2654435761) / 128) % 2 ** bits : 0);
  // test_fuse4 --write-corpus: build(p, r, "corpus-", n, seed, forwards).
  for (const [file, errorRate, valueBits, n, seed] of [
    ['kind_fuse4.bgf', 0.01, 0, 60, 1], ['kind_fuse4_values.bgf', 2 ** -5, 3, 40, 2], ['kind_fuse4_empty.bgf', 0.5, 8, 0, 3],
  ]) {
    const native = new Uint8Array(readFileSync(new URL(`../fuzz/corpus/${file}`, import.meta.url)));
    const filter = await BloomFilter.create({ kind: 'fuse4', capacity: Math.max(1, n), errorRate, valueBits, seed });
    for (let i = 0; i < n; i++) filter.add('corpus-' + i, valueBits ? nativeValue(i, valueBits) : undefined);
    assert.deepEqual(filter.serialize(), native, file);
    filter.free();
  }
  // The sharded seed (two shards of 30 keys, r = 2) answers every key with its value.
  const sharded = await BloomFilter.from(readFileSync(new URL('../fuzz/corpus/kind_fuse4_sharded.bgf', import.meta.url)));
  for (let i = 0; i < 30; i++) assert.equal(sharded.valueOf('shard-' + i), nativeValue(i, 2));
  sharded.free();
});

test('addAll(items, values) is add(item, value) one by one, byte for byte, from an array, an iterable or packed keys', async () => {
  const n = 20_000; // several batch chunks
  const bits = 5;
  const items = Array.from({ length: n }, (_, i) => 'item-' + i);
  const values = Uint8Array.from(items, (_, i) => valueOf(i, bits));
  const oneByOne = (await build(n, { valueBits: bits })).serialize();
  const make = () => BloomFilter.create({ kind: 'fuse4', capacity: n, errorRate: 0.01, valueBits: bits, seed: 5 });
  const encoder = new TextEncoder();
  const encoded = items.map((item) => encoder.encode(item));
  const offsets = new Uint32Array(n + 1);
  for (let i = 0; i < n; i++) offsets[i + 1] = offsets[i] + encoded[i].length;
  const bytes = new Uint8Array(offsets[n]);
  encoded.forEach((key, i) => bytes.set(key, offsets[i]));
  const cases = [
    ['array, Uint8Array values', items, values],
    ['array, array values', items, Array.from(values)],
    ['generator', (function* () { yield* items; })(), values],
    ['packed keys', { bytes, offsets }, values],
  ];
  for (const [name, batch, batchValues] of cases) {
    const filter = await make();
    filter.addAll(batch, batchValues);
    assert.equal(filter.stats().n, n, name);
    assert.deepEqual(filter.serialize(), oneByOne, name);
    for (const i of [0, 1, 4095, 4096, n - 1]) assert.equal(filter.valueOf(items[i]), valueOf(i, bits), `${name}: item ${i}`);
    filter.free();
  }
});

test('addAll(items, values) refuses a count mismatch or a bad value before adding anything', async () => {
  const filter = await BloomFilter.create({ kind: 'fuse4', capacity: 100, errorRate: 0.01, valueBits: 2, seed: 5 });
  const items = Array.from({ length: 50 }, (_, i) => 'k' + i);
  const good = Array.from(items, (_, i) => i & 3);
  const refused = [
    [items, good.slice(1), 'E_ARG', /50 items need 50 values, got 49/],
    [items, [...good, 0], 'E_ARG', /50 items need 50 values, got 51/],
    [new Set(items), new Uint8Array(3), 'E_ARG', /50 items need 50 values, got 3/],
    [items, 'values', 'E_ARG', /array or a Uint8Array/],
    [items, null, 'E_ARG', /array or a Uint8Array/],
    [items, [...good.slice(0, 49), 4], 'E_RANGE', /values\[49\] must be an integer from 0 to 3 \(valueBits 2\), got 4/],
    [items, Uint8Array.from(good, (v, i) => (i === 30 ? 255 : v)), 'E_RANGE', /values\[30\]/],
    [items, [...good.slice(0, 10), 1.5, ...good.slice(11)], 'E_RANGE', /values\[10\]/],
    [items, [...good.slice(0, 10), -1, ...good.slice(11)], 'E_RANGE', /values\[10\]/],
    [items, [...good.slice(0, 10), '1', ...good.slice(11)], 'E_RANGE', /values\[10\]/],
  ];
  for (const [batch, values, code, message] of refused) {
    assert.throws(() => filter.addAll(batch, values), (e) => e instanceof BloomgateError && e.code === code && message.test(e.message));
  }
  rejects(() => filter.addAll(items), 'E_ARG');
  // stats() would seal the filter; the count after the good batch shows the refused ones added nothing
  // (every add counts, duplicates too), and the bytes are those of a filter that only saw the good batch.
  filter.addAll(items, good);
  const fresh = await BloomFilter.create({ kind: 'fuse4', capacity: 100, errorRate: 0.01, valueBits: 2, seed: 5 });
  items.forEach((item, i) => fresh.add(item, good[i]));
  assert.equal(filter.stats().n, 50);
  assert.deepEqual(filter.serialize(), fresh.serialize());
  for (let i = 0; i < 50; i++) assert.equal(filter.valueOf(items[i]), i & 3);
  filter.free();
  fresh.free();
  // Filters without values take values only when all are 0, as add(item, 0) does.
  const classic = await BloomFilter.create({ kind: 'classic', capacity: 10, errorRate: 0.01 });
  rejects(() => classic.addAll(['a', 'b'], [0, 1]), 'E_RANGE');
  assert.equal(classic.stats().n, 0);
  classic.addAll(['a', 'b'], new Uint8Array(2));
  assert.equal(classic.stats().n, 2);
  assert.equal(classic.mightContain('b'), true);
  classic.free();
});
