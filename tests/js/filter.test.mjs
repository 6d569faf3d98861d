// BloomFilter and sizeFor: the seeds' experiment, UTF-8 keys, batches, round trips,
// merging, argument validation and use after free.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';

import { BloomFilter, BloomgateError, sizeFor } from '../../js/index.js';
import { sha1, sha256 } from '../../js/wasm/index.js';
import { hashKey, positions } from './helpers/hash.mjs';

const utf8 = new TextEncoder();

function keys(prefix, first, count) {
  const out = new Array(count);
  for (let i = 0; i < count; i++) out[i] = `${prefix}${first + i}`;
  return out;
}

function isCode(code) {
  return (error) => {
    assert.ok(error instanceof BloomgateError, `expected a BloomgateError, got ${error}`);
    assert.equal(error.code, code);
    return true;
  };
}

describe("the seeds' experiment: 200,000 keys at p = 0.01", () => {
  const n = 200_000;
  const p = 0.01;
  const members = keys('key_', 0, n);
  const probes = keys('key_', n, 50_000);

  test('sizing: m = 1,917,012 and k = 7, from sizeFor and from the filter', async () => {
    const size = sizeFor({ capacity: n, errorRate: p });
    assert.equal(size.m, 1_917_012);
    assert.equal(size.k, 7);
    assert.equal(size.bytes, Math.ceil(1_917_012 / 8));
    assert.equal(size.bitsPerItem, 1_917_012 / n);
    const filter = await BloomFilter.create({ capacity: n, errorRate: p });
    try {
      const stats = filter.stats();
      assert.equal(stats.m, size.m);
      assert.equal(stats.k, size.k);
      assert.equal(stats.bytes, size.bytes);
      assert.equal(stats.capacity, n);
      assert.equal(stats.errorRate, p);
      assert.equal(stats.n, 0);
      assert.equal(stats.bitsSet, 0);
    } finally {
      filter.free();
    }
  });

  test('no false negatives; the false-positive rate is within 4 sigma of theory', async () => {
    const filter = await BloomFilter.create({ capacity: n, errorRate: p });
    try {
      filter.addAll(members);
      const stats = filter.stats();
      assert.equal(stats.n, n);

      const answers = filter.mightContainMany(members);
      assert.equal(answers.length, n);
      assert.equal(answers.filter((x) => !x).length, 0, 'false negatives in mightContainMany');
      let missing = 0;
      for (let i = 0; i < n; i += 7) if (!filter.mightContain(members[i])) missing++;
      assert.equal(missing, 0, 'false negatives in mightContain');

      let falsePositives = 0;
      for (const probe of probes) if (filter.mightContain(probe)) falsePositives++;
      const { m, k } = stats;
      const theory = (1 - Math.exp((-k * n) / m)) ** k;
      const sigma = Math.sqrt((theory * (1 - theory)) / probes.length);
      const measured = falsePositives / probes.length;
      assert.ok(Math.abs(measured - theory) <= 4 * sigma,
        `measured ${measured} vs theory ${theory} (4 sigma = ${4 * sigma})`);

      assert.ok(Math.abs(stats.theoreticalErrorRate - theory) < 1e-12);
      assert.ok(Math.abs(stats.fillRatio - stats.bitsSet / m) < 1e-15);
      // The fill implies the item count: n* = -(m/k) ln(1 - X/m), close to n for distinct keys.
      assert.ok(Math.abs(stats.estimatedItems - n) / n < 0.01, `estimatedItems ${stats.estimatedItems}`);
      assert.ok(Math.abs(stats.estimatedErrorRate - stats.fillRatio ** k) < 1e-15);
      assert.equal(stats.overCapacity, false);
      assert.equal(stats.overFilled, false);
    } finally {
      filter.free();
    }
  });
});

describe('sizeFor', () => {
  test('agrees with the filters the core creates', async () => {
    for (const capacity of [1, 7, 100, 12_345, 1_000_000]) {
      for (const errorRate of [0.5, 0.1, 0.01, 0.001, 1e-6]) {
        const size = sizeFor({ capacity, errorRate });
        const filter = await BloomFilter.create({ capacity, errorRate });
        const stats = filter.stats();
        filter.free();
        assert.equal(stats.m, size.m, `m for n=${capacity}, p=${errorRate}`);
        assert.equal(stats.k, size.k, `k for n=${capacity}, p=${errorRate}`);
        assert.equal(stats.bytes, size.bytes);
        assert.ok(size.k >= 1);
      }
    }
  });

  test('works before and without the wasm module being involved (pure and synchronous)', () => {
    const result = sizeFor({ capacity: 1_000_000, errorRate: 0.01 });
    assert.deepEqual(Object.keys(result).sort(), ['bitsPerItem', 'bytes', 'k', 'm']);
    assert.equal(result.m, 9_585_059);
    assert.equal(result.k, 7);
  });

  test('rejects bad arguments', () => {
    assert.throws(() => sizeFor(), TypeError);
    assert.throws(() => sizeFor(null), TypeError);
    assert.throws(() => sizeFor({ capacity: '10', errorRate: 0.01 }), TypeError);
    assert.throws(() => sizeFor({ capacity: 10 }), TypeError);
    for (const capacity of [0, -1, 1.5, NaN, Infinity, 2 ** 53 + 2]) {
      assert.throws(() => sizeFor({ capacity, errorRate: 0.01 }), RangeError, `capacity ${capacity}`);
    }
    for (const errorRate of [0, 1, -0.5, 1.5, NaN]) {
      assert.throws(() => sizeFor({ capacity: 10, errorRate }), RangeError, `errorRate ${errorRate}`);
    }
    // k would exceed the core's BG_MAX_K = 64.
    assert.throws(() => sizeFor({ capacity: 10, errorRate: 1e-30 }), RangeError);
  });
});

describe('keys are UTF-8', () => {
  const samples = [
    'é',
    'naïve café',
    'abc\u0100',
    '日本語のキー',
    'emoji 🎉 and more text past sixteen units',
    '\uD800 lone high surrogate',
    'lone low \uDC00',
    '',
    'x'.repeat(5000),
    'ü'.repeat(3000),
  ];

  test('a string and its UTF-8 bytes are the same key', async () => {
    const filter = await BloomFilter.create({ capacity: 1000, errorRate: 0.001 });
    try {
      for (const sample of samples) filter.add(sample);
      for (const sample of samples) {
        assert.equal(filter.mightContain(utf8.encode(sample)), true, JSON.stringify(sample.slice(0, 20)));
      }
      const other = await BloomFilter.create({ capacity: 1000, errorRate: 0.001 });
      for (const sample of samples) other.add(utf8.encode(sample));
      assert.deepEqual(other.serialize(), filter.serialize());
      other.free();
    } finally {
      filter.free();
    }
  });

  test('lone surrogates encode as U+FFFD, as TextEncoder does', async () => {
    const filter = await BloomFilter.create({ capacity: 100, errorRate: 0.001 });
    filter.add('\uD800');
    assert.equal(filter.mightContainKey(new Uint8Array([0xef, 0xbf, 0xbd])), true);
    filter.free();
  });

  test('UTF-16 code units are a different key', async () => {
    const filter = await BloomFilter.create({ capacity: 1000, errorRate: 0.0001 });
    try {
      const word = 'naïve café';
      const units = new Uint8Array(new Uint16Array([...word].map((c) => c.charCodeAt(0))).buffer);
      filter.add(units);
      assert.equal(filter.mightContain(units), true);
      assert.equal(filter.mightContain(word), false);
      assert.equal(filter.mightContain(utf8.encode(word)), false);
      const seed = 0;
      assert.notDeepEqual(hashKey(units, seed), hashKey(utf8.encode(word), seed));
    } finally {
      filter.free();
    }
  });

  test('keys longer than the scratch buffer (including > 1 MiB) work and match their bytes', async () => {
    const filter = await BloomFilter.create({ capacity: 100, errorRate: 0.001 });
    try {
      const big = '日'.repeat(400_000); // 1.2 MB of UTF-8
      const bigAscii = 'a'.repeat(2_000_000);
      filter.add(big);
      filter.add(bigAscii);
      assert.equal(filter.mightContain(utf8.encode(big)), true);
      assert.equal(filter.mightContain(bigAscii), true);
      assert.equal(filter.mightContain(big.slice(1)), false);
      assert.deepEqual(filter.mightContainMany([big, bigAscii, 'nope', utf8.encode(bigAscii)]), [true, true, false, true]);
      filter.add('short');
      assert.equal(filter.mightContain('short'), true);
    } finally {
      filter.free();
    }
  });
});

describe('batches answer exactly like single calls', () => {
  function mixedItems(count) {
    const items = [];
    for (let i = 0; i < count; i++) {
      switch (i % 6) {
        case 0: items.push(`k${i}`); break;
        case 1: items.push(`a longer ascii key number ${i} with padding`); break;
        case 2: items.push(`ключ ${i}`); break;
        case 3: items.push(utf8.encode(`k${i - 3}`)); break;
        case 4: items.push(new Uint8Array([i & 255, (i >> 8) & 255, 1, 2, 3])); break;
        default: items.push(i % 12 === 5 ? '' : new Uint8Array(0));
      }
    }
    return items;
  }

  test('mightContainMany equals mightContain over mixed strings and bytes, across chunk boundaries', async () => {
    const filter = await BloomFilter.create({ capacity: 3000, errorRate: 0.05 });
    try {
      const items = mixedItems(10_000);
      for (let i = 0; i < items.length; i += 3) filter.add(items[i]);
      const single = items.map((item) => filter.mightContain(item));
      assert.deepEqual(filter.mightContainMany(items), single);
      // Any iterable, not only arrays.
      function* generate() { yield* items; }
      assert.deepEqual(filter.mightContainMany(generate()), single);
      assert.deepEqual(filter.mightContainMany(new Set(['k0', 'k6'])), [true, true]);
      assert.deepEqual(filter.mightContainMany([]), []);
      // All-ASCII string batches take the one-encodeInto path; non-ASCII ones fall back.
      const ascii = keys('probe-', 0, 5000);
      assert.deepEqual(filter.mightContainMany(ascii), ascii.map((x) => filter.mightContain(x)));
      const accented = keys('é-', 0, 5000);
      assert.deepEqual(filter.mightContainMany(accented), accented.map((x) => filter.mightContain(x)));
    } finally {
      filter.free();
    }
  });

  test('addAll builds the same filter as add, byte for byte', async () => {
    for (const keyEncoding of ['utf8', 'sha1']) {
      const items = mixedItems(9000);
      const one = await BloomFilter.create({ capacity: 10_000, errorRate: 0.01, keyEncoding });
      const all = await BloomFilter.create({ capacity: 10_000, errorRate: 0.01, keyEncoding });
      for (const item of items) one.add(item);
      all.addAll(items);
      assert.deepEqual(all.serialize(), one.serialize(), keyEncoding);
      // Any iterable: a Set (which drops the duplicate empty strings) against add() of its values.
      const distinct = new Set(items);
      const fromSet = await BloomFilter.create({ capacity: 10_000, errorRate: 0.01, keyEncoding });
      const fromValues = await BloomFilter.create({ capacity: 10_000, errorRate: 0.01, keyEncoding });
      fromSet.addAll(distinct);
      for (const item of distinct) fromValues.add(item);
      assert.equal(fromSet.stats().n, distinct.size);
      assert.deepEqual(fromSet.serialize(), fromValues.serialize(), `${keyEncoding} from a Set`);
      for (const f of [one, all, fromSet, fromValues]) f.free();
    }
  });

  // Packs byte keys back to back, starting `lead` bytes into the buffer.
  function pack(byteKeys, lead = 0) {
    const offsets = new Uint32Array(byteKeys.length + 1);
    let total = lead;
    offsets[0] = lead;
    byteKeys.forEach((key, i) => { total += key.length; offsets[i + 1] = total; });
    const bytes = new Uint8Array(total + 5).fill(0xee); // bytes outside the keys must not matter
    byteKeys.forEach((key, i) => bytes.set(key, offsets[i]));
    return { bytes, offsets };
  }

  test('packed keys { bytes, offsets } answer as the same keys one by one, across chunk boundaries', async () => {
    for (const keyEncoding of ['utf8', 'sha1']) {
      const filter = await BloomFilter.create({ capacity: 3000, errorRate: 0.05, keyEncoding });
      try {
        // 10,000 short mixed keys (empty ones among them) split chunks on count; 40 keys of
        // 300 KB, past one chunk's 256 KiB byte budget, split them on bytes.
        const byteKeys = mixedItems(10_000).map((item) => (typeof item === 'string' ? utf8.encode(item) : item));
        for (let i = 0; i < 40; i++) byteKeys.splice(i * 250, 0, new Uint8Array(300_000 + i).fill(i));
        for (let i = 0; i < byteKeys.length; i += 3) filter.add(byteKeys[i]);
        const single = byteKeys.map((key) => filter.mightContain(key));
        assert.ok(single.includes(false) && single.includes(true));
        assert.deepEqual(filter.mightContainMany(pack(byteKeys)), single, keyEncoding);
        assert.deepEqual(filter.mightContainMany(pack(byteKeys, 7)), single, `${keyEncoding}, keys not at offset 0`);
        assert.deepEqual(filter.mightContainMany({ bytes: new Uint8Array(0), offsets: new Uint32Array(1) }), []);
        assert.deepEqual(filter.mightContainMany({ bytes: new Uint8Array(3), offsets: Uint32Array.of(1, 1) }), [filter.mightContain('')]);
      } finally {
        filter.free();
      }
    }
  });

  test('addAll of packed keys builds the same filter as add, byte for byte', async () => {
    const byteKeys = mixedItems(9000).map((item) => (typeof item === 'string' ? utf8.encode(item) : item));
    const one = await BloomFilter.create({ capacity: 10_000, errorRate: 0.01 });
    const all = await BloomFilter.create({ capacity: 10_000, errorRate: 0.01 });
    try {
      for (const key of byteKeys) one.add(key);
      all.addAll(pack(byteKeys, 3));
      assert.equal(all.stats().n, byteKeys.length);
      assert.deepEqual(all.serialize(), one.serialize());
    } finally {
      one.free();
      all.free();
    }
  });

  test('malformed packed keys are rejected before any key is added', async () => {
    const filter = await BloomFilter.create({ capacity: 100, errorRate: 0.01 });
    try {
      const before = filter.serialize();
      const bytes = utf8.encode('abcdef');
      const cases = [
        [{ bytes: 'abcdef', offsets: Uint32Array.of(0, 6) }, TypeError, /items\.bytes must be a Uint8Array/],
        [{ bytes, offsets: [0, 3, 6] }, TypeError, /items\.offsets must be a Uint32Array/],
        [{ bytes }, TypeError, /items\.offsets must be a Uint32Array/],
        [{ offsets: Uint32Array.of(0) }, TypeError, /items\.bytes must be a Uint8Array/],
        [{ bytes, offsets: new Uint32Array(0) }, RangeError, /one entry more than there are keys/],
        [{ bytes, offsets: Uint32Array.of(0, 4, 3, 6) }, RangeError, /items\.offsets\[2\] is below items\.offsets\[1\]/],
        [{ bytes, offsets: Uint32Array.of(0, 3, 7) }, RangeError, /items\.offsets\[2\] \(7\) is past the end of items\.bytes \(6 bytes\)/],
      ];
      for (const [packed, type, message] of cases) {
        assert.throws(() => filter.addAll(packed), (error) => error instanceof type && message.test(error.message));
        assert.throws(() => filter.mightContainMany(packed), (error) => error instanceof type && message.test(error.message));
      }
      // A decreasing offset late in a batch larger than one chunk: still nothing added.
      const offsets = new Uint32Array(10_001);
      for (let i = 0; i <= 10_000; i++) offsets[i] = i;
      offsets[9_999] = 5;
      assert.throws(() => filter.addAll({ bytes: new Uint8Array(10_000), offsets }), RangeError);
      assert.equal(filter.stats().n, 0);
      assert.deepEqual(filter.serialize(), before);
      // An object that is neither iterable nor packed keys.
      assert.throws(() => filter.mightContainMany({ keys: [] }), /iterable of strings or Uint8Arrays, or packed keys/);
    } finally {
      filter.free();
    }
  });

  test('a batch item of the wrong type is a TypeError naming its index', async () => {
    const filter = await BloomFilter.create({ capacity: 100, errorRate: 0.01 });
    try {
      assert.throws(() => filter.mightContainMany(['a', 'b', 3]), { name: 'TypeError', message: /items\[2\]/ });
      assert.throws(() => filter.addAll((function* () { yield 'a'; yield null; })()), { name: 'TypeError', message: /items\[1\]/ });
      assert.throws(() => filter.mightContainMany(42), TypeError);
      assert.throws(() => filter.mightContainMany('abc'), TypeError);
      assert.throws(() => filter.addAll(null), TypeError);
      assert.throws(() => filter.addAll(undefined), TypeError);
      assert.throws(() => filter.addAll({}), TypeError);
    } finally {
      filter.free();
    }
  });
});

describe('serialize and from', () => {
  test('round trip: same bytes, same answers, same stats and metadata', async () => {
    const filter = await BloomFilter.create({
      capacity: 5000,
      errorRate: 0.01,
      seed: 12345,
      metadata: { source: 'test', items: 4000 },
      listId: '0123456789abcdef0123456789ABCDEF',
      generation: 42,
    });
    try {
      filter.addAll(keys('member-', 0, 4000));
      const bytes = filter.serialize();
      assert.ok(bytes instanceof Uint8Array);
      assert.equal(bytes.length, filter.stats().serializedBytes);
      const probes = keys('member-', 0, 8000);
      const expected = filter.mightContainMany(probes);

      const copies = [
        await BloomFilter.from(bytes),
        await BloomFilter.from(bytes.slice().buffer),
        await BloomFilter.from(Buffer.concat([Buffer.from('xx'), bytes]).subarray(2)),
      ];
      for (const copy of copies) {
        assert.deepEqual(copy.mightContainMany(probes), expected);
        assert.deepEqual(copy.serialize(), bytes);
        assert.deepEqual(copy.stats(), filter.stats());
        assert.deepEqual(copy.metadata, { source: 'test', items: 4000 });
        assert.equal(copy.stats().listId, '0123456789abcdef0123456789abcdef');
        assert.equal(copy.stats().generation, 42);
        assert.equal(copy.stats().seed, 12345);
        copy.free();
      }
      // The filter keeps working after the copies are gone.
      assert.deepEqual(filter.mightContainMany(probes), expected);
    } finally {
      filter.free();
    }
  });

  test('from() rejects non-bytes with a TypeError', async () => {
    await assert.rejects(BloomFilter.from('not bytes'), TypeError);
    await assert.rejects(BloomFilter.from(null), TypeError);
    await assert.rejects(BloomFilter.from([1, 2, 3]), TypeError);
  });
});

describe('merge', () => {
  test('the OR of two filters holds both sets and equals a filter built from both', async () => {
    const options = { capacity: 4000, errorRate: 0.01, seed: 7 };
    const left = await BloomFilter.create(options);
    const right = await BloomFilter.create(options);
    const both = await BloomFilter.create(options);
    try {
      const a = keys('left-', 0, 1500);
      const b = keys('right-', 0, 1500);
      left.addAll(a);
      right.addAll(b);
      both.addAll(a);
      both.addAll(b);
      assert.equal(left.merge(right), left);
      assert.ok(left.mightContainMany([...a, ...b]).every(Boolean));
      const merged = left.stats();
      assert.equal(merged.bitsSet, both.stats().bitsSet);
      assert.deepEqual(left.mightContainMany(keys('other-', 0, 3000)), both.mightContainMany(keys('other-', 0, 3000)));
    } finally {
      for (const f of [left, right, both]) f.free();
    }
  });

  test('incompatible filters: E_INCOMPATIBLE; non-filters: TypeError', async () => {
    const base = await BloomFilter.create({ capacity: 1000, errorRate: 0.01 });
    const others = [
      await BloomFilter.create({ capacity: 2000, errorRate: 0.01 }),
      await BloomFilter.create({ capacity: 1000, errorRate: 0.01, seed: 1 }),
      await BloomFilter.create({ capacity: 1000, errorRate: 0.01, keyEncoding: 'sha1' }),
    ];
    try {
      for (const other of others) assert.throws(() => base.merge(other), isCode('E_INCOMPATIBLE'));
      assert.throws(() => base.merge({}), TypeError);
      assert.throws(() => base.merge(null), TypeError);
    } finally {
      base.free();
      for (const f of others) f.free();
    }
  });
});

describe('key encodings', () => {
  test("sha1: add('password') is found by the SHA-1 bytes of 'password'", async () => {
    const filter = await BloomFilter.create({ capacity: 1000, errorRate: 0.001, keyEncoding: 'sha1' });
    try {
      assert.equal(filter.stats().keyEncoding, 'sha1');
      filter.add('password');
      const digest = createHash('sha1').update('password').digest();
      assert.equal(filter.mightContainKey(new Uint8Array(digest)), true);
      assert.equal(filter.mightContain('password'), true);
      assert.equal(filter.mightContain('Password'), false);
      // A breach dump gives digests: add them as keys, query with the password.
      filter.addKey(createHash('sha1').update('letmein').digest());
      assert.equal(filter.mightContain('letmein'), true);
      assert.equal(filter.mightContain(utf8.encode('letmein')), true);
      assert.equal(filter.mightContainKey(utf8.encode('letmein')), false);
    } finally {
      filter.free();
    }
  });

  test('the wasm digests match node:crypto for strings (UTF-8) and bytes', () => {
    for (const input of ['', 'password', 'ünïcødé 🎉', 'x'.repeat(100_000)]) {
      assert.deepEqual(Buffer.from(sha1(input)), createHash('sha1').update(input, 'utf8').digest(), `sha1 ${input.slice(0, 10)}`);
      assert.deepEqual(Buffer.from(sha256(input)), createHash('sha256').update(input, 'utf8').digest(), `sha256 ${input.slice(0, 10)}`);
    }
    const bytes = new Uint8Array(1000).map((_, i) => (i * 7) & 255);
    assert.deepEqual(Buffer.from(sha256(bytes)), createHash('sha256').update(bytes).digest());
  });

  test('utf8: addKey and add are the same thing', async () => {
    const filter = await BloomFilter.create({ capacity: 100, errorRate: 0.001 });
    filter.addKey(utf8.encode('same'));
    assert.equal(filter.mightContain('same'), true);
    assert.equal(filter.mightContainKey(utf8.encode('same')), true);
    filter.free();
  });

  test("'url': adding lists a URL's most specific expression; queries ask every expression", async () => {
    const filter = await BloomFilter.create({ capacity: 100, errorRate: 0.01, keyEncoding: 'url' });
    try {
      assert.equal(filter.keyEncoding, 'url');
      filter.add('evil.example');
      filter.add('http://bad.example/phish/login.html');
      assert.equal(filter.mightContain('https://evil.example/any/path?q=1'), true);
      assert.equal(filter.mightContain('http://sub.evil.example/'), true);
      assert.equal(filter.mightContain('HTTP://BAD.example/phish/login.html#frag'), true);
      assert.equal(filter.mightContain('http://%65vil.example/'), true, 'percent-escaped host');
      assert.equal(filter.mightContain('http://good.example/'), false);
      assert.deepEqual(filter.mightContainMany(['http://evil.example/', 'http://good.example/']), [true, false]);
      assert.throws(() => filter.mightContain('http://[::1'), isCode('E_URL'));
      // Sized so that at most p of clean URLs (up to 30 expressions each) escalate.
      assert.ok(filter.stats().m > sizeFor({ capacity: 100, errorRate: 0.01 }).m * 1.5);
      assert.equal(filter.stats().m, sizeFor({ capacity: 100, errorRate: 0.01, keyEncoding: 'url' }).m);
    } finally {
      filter.free();
    }
  });
});

describe('hash positions', () => {
  test('the bits a key sets are the positions reported for it', async () => {
    const seed = 99n;
    const filter = await BloomFilter.create({ capacity: 50, errorRate: 0.01, seed });
    try {
      const key = utf8.encode('where do my bits go?');
      filter.add(key);
      const { m, k } = filter.stats();
      const expected = [...new Set(positions(key, seed, m, k))].sort((x, y) => x - y);
      const bytes = filter.serialize();
      const payloadOffset = bytes.length - Math.ceil(m / 8);
      const set = [];
      for (let bit = 0; bit < m; bit++) {
        if (bytes[payloadOffset + (bit >> 3)] & (1 << (bit & 7))) set.push(bit);
      }
      assert.deepEqual(set, expected);
      const { h1, h2 } = hashKey(key, seed);
      assert.equal(typeof h1, 'bigint');
      assert.equal(typeof h2, 'bigint');
      assert.ok(h1 < 1n << 64n && h2 < 1n << 64n);
    } finally {
      filter.free();
    }
  });
});

describe('stats, clear and metadata', () => {
  test('overCapacity and overFilled flag a filter used beyond its sizing', async () => {
    const filter = await BloomFilter.create({ capacity: 1000, errorRate: 0.01 });
    try {
      filter.addAll(keys('x', 0, 1000));
      assert.equal(filter.stats().overCapacity, false);
      assert.equal(filter.stats().overFilled, false);
      filter.add('x0'); // a duplicate still counts as an insert
      assert.equal(filter.stats().overCapacity, true);
      assert.equal(filter.stats().overFilled, false);
      filter.addAll(keys('y', 0, 1000));
      const stats = filter.stats();
      assert.equal(stats.overFilled, true);
      assert.ok(stats.estimatedErrorRate > 2 * stats.errorRate);
    } finally {
      filter.free();
    }
  });

  test('clear() empties the filter', async () => {
    const filter = await BloomFilter.create({ capacity: 100, errorRate: 0.01 });
    filter.addAll(keys('x', 0, 50));
    filter.clear();
    const stats = filter.stats();
    assert.equal(stats.n, 0);
    assert.equal(stats.bitsSet, 0);
    assert.equal(stats.fillRatio, 0);
    assert.deepEqual(filter.mightContainMany(keys('x', 0, 50)), new Array(50).fill(false));
    filter.free();
  });

  test('seeds: Number below 2^53, BigInt up to 2^64 - 1, and the two forms agree', async () => {
    const big = 2n ** 64n - 1n;
    const a = await BloomFilter.create({ capacity: 100, errorRate: 0.01, seed: big });
    const b = await BloomFilter.create({ capacity: 100, errorRate: 0.01, seed: 2 ** 53 - 1 });
    const c = await BloomFilter.create({ capacity: 100, errorRate: 0.01, seed: 2n ** 53n - 1n });
    const d = await BloomFilter.create({ capacity: 100, errorRate: 0.01, seed: 5 });
    try {
      assert.equal(a.stats().seed, big);
      assert.equal(b.stats().seed, 2 ** 53 - 1);
      assert.equal(c.stats().seed, 2 ** 53 - 1);
      assert.equal(d.stats().seed, 5);
      for (const f of [a, b, c, d]) f.add('seeded');
      assert.deepEqual(b.serialize(), c.serialize());
      assert.notDeepEqual(b.serialize(), d.serialize());
    } finally {
      for (const f of [a, b, c, d]) f.free();
    }
  });

  test('metadata is null when absent and survives a round trip', async () => {
    const plain = await BloomFilter.create({ capacity: 10, errorRate: 0.1 });
    assert.equal(plain.metadata, null);
    plain.free();
    const described = await BloomFilter.create({ capacity: 10, errorRate: 0.1, metadata: { description: 'ünïcode', list: [1, 2] } });
    const copy = await BloomFilter.from(described.serialize());
    assert.deepEqual(copy.metadata, { description: 'ünïcode', list: [1, 2] });
    described.free();
    copy.free();
  });
});

describe('memory', () => {
  test('forgotten filters are reclaimed by the FinalizationRegistry', async () => {
    // A fresh process with --expose-gc: 40 filters of 3.6 MB each, never freed.
    const { execFile } = await import('node:child_process');
    const script = `
      import { BloomFilter } from ${JSON.stringify(new URL('../../js/index.js', import.meta.url).href)};
      import { heapSize } from ${JSON.stringify(new URL('../../js/wasm/index.js', import.meta.url).href)};
      const tick = () => new Promise((resolve) => setTimeout(resolve, 0));
      for (let i = 0; i < 40; i++) {
        const filter = await BloomFilter.create({ capacity: 3_000_000, errorRate: 0.01 });
        filter.add('x');
        if (i % 4 === 3) { globalThis.gc(); await tick(); await tick(); }
      }
      console.log(heapSize());`;
    const stdout = await new Promise((resolve, reject) => {
      execFile(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], (error, out, err) => {
        if (error) reject(new Error(err || error.message));
        else resolve(out);
      });
    });
    const heap = Number(stdout.trim());
    const oneFilter = sizeFor({ capacity: 3_000_000, errorRate: 0.01 }).bytes;
    assert.ok(heap < 12 * oneFilter, `wasm memory is ${heap} bytes after 40 forgotten ${oneFilter}-byte filters`);
  });
});

describe('argument validation', () => {
  test('create: TypeError for wrong types, RangeError for bad numbers', async () => {
    await assert.rejects(BloomFilter.create(), TypeError);
    await assert.rejects(BloomFilter.create(null), TypeError);
    await assert.rejects(BloomFilter.create(1000), TypeError);
    await assert.rejects(BloomFilter.create({ capacity: '1000', errorRate: 0.01 }), TypeError);
    await assert.rejects(BloomFilter.create({ capacity: 1000n, errorRate: 0.01 }), TypeError);
    await assert.rejects(BloomFilter.create({ capacity: 1000 }), TypeError);
    await assert.rejects(BloomFilter.create({ capacity: 1000, errorRate: '0.01' }), TypeError);
    for (const capacity of [0, -5, 1.5, NaN, Infinity, 2 ** 53 + 2]) {
      await assert.rejects(BloomFilter.create({ capacity, errorRate: 0.01 }), RangeError, `capacity ${capacity}`);
    }
    for (const errorRate of [0, 1, -0.01, 2, NaN]) {
      await assert.rejects(BloomFilter.create({ capacity: 10, errorRate }), RangeError, `errorRate ${errorRate}`);
    }
    await assert.rejects(BloomFilter.create({ capacity: 10, errorRate: 1e-30 }), RangeError);
  });

  test('create: kind and keyEncoding', async () => {
    await assert.rejects(BloomFilter.create({ capacity: 10, errorRate: 0.01, kind: 'nonsense' }), isCode('E_KIND'));
    await assert.rejects(BloomFilter.create({ capacity: 10, errorRate: 0.01, kind: 1 }), TypeError);
    await assert.rejects(BloomFilter.create({ capacity: 10, errorRate: 0.01, keyEncoding: 'latin1' }), isCode('E_KEY_ENCODING'));
    await assert.rejects(BloomFilter.create({ capacity: 10, errorRate: 0.01, keyEncoding: 0 }), TypeError);
    const f = await BloomFilter.create({ capacity: 10, errorRate: 0.01, kind: 'classic', keyEncoding: 'utf8' });
    assert.equal(f.stats().kind, 'classic');
    f.free();
  });

  test('create: seed, listId, generation, metadata', async () => {
    const base = { capacity: 10, errorRate: 0.01 };
    for (const seed of [-1, 1.5, 2 ** 53, NaN, -1n, 2n ** 64n]) {
      await assert.rejects(BloomFilter.create({ ...base, seed }), RangeError, `seed ${seed}`);
    }
    await assert.rejects(BloomFilter.create({ ...base, seed: '1' }), TypeError);
    await assert.rejects(BloomFilter.create({ ...base, listId: 'xyz' }), RangeError);
    await assert.rejects(BloomFilter.create({ ...base, listId: new Uint8Array(15) }), RangeError);
    await assert.rejects(BloomFilter.create({ ...base, listId: 42 }), TypeError);
    await assert.rejects(BloomFilter.create({ ...base, generation: -1 }), RangeError);
    await assert.rejects(BloomFilter.create({ ...base, generation: 1.5 }), RangeError);
    await assert.rejects(BloomFilter.create({ ...base, generation: 'a' }), TypeError);
    const cyclic = {};
    cyclic.self = cyclic;
    await assert.rejects(BloomFilter.create({ ...base, metadata: cyclic }), TypeError);
    await assert.rejects(BloomFilter.create({ ...base, metadata: { n: 1n } }), TypeError);
    await assert.rejects(BloomFilter.create({ ...base, metadata: () => 1 }), TypeError);
    await assert.rejects(BloomFilter.create({ ...base, metadata: 'x'.repeat(2 * 1024 * 1024) }), isCode('E_METADATA'));
    const named = await BloomFilter.create({ ...base, listId: new Uint8Array(16).fill(0xab), generation: 3n });
    assert.equal(named.stats().listId, 'ab'.repeat(16));
    assert.equal(named.stats().generation, 3);
    named.free();
  });

  test('items: strings and Uint8Arrays only', async () => {
    const filter = await BloomFilter.create({ capacity: 10, errorRate: 0.01 });
    try {
      for (const bad of [42, null, undefined, {}, [1, 2], new Uint16Array(2), new ArrayBuffer(4), true, 1n]) {
        assert.throws(() => filter.add(bad), TypeError);
        assert.throws(() => filter.mightContain(bad), TypeError);
      }
      assert.throws(() => filter.addKey('string'), TypeError);
      assert.throws(() => filter.mightContainKey('string'), TypeError);
      assert.throws(() => new BloomFilter(), TypeError);
      // Node's Buffer is a Uint8Array.
      filter.add(Buffer.from('buffer'));
      assert.equal(filter.mightContain('buffer'), true);
    } finally {
      filter.free();
    }
  });

  test('use after free: every method throws E_FREED; free() is idempotent', async () => {
    const filter = await BloomFilter.create({ capacity: 10, errorRate: 0.01 });
    const live = await BloomFilter.create({ capacity: 10, errorRate: 0.01 });
    filter.free();
    filter.free();
    const calls = [
      () => filter.add('a'),
      () => filter.addAll(['a']),
      () => filter.mightContain('a'),
      () => filter.mightContainMany(['a']),
      () => filter.addKey(new Uint8Array(1)),
      () => filter.mightContainKey(new Uint8Array(1)),
      () => filter.merge(live),
      () => live.merge(filter),
      () => filter.clear(),
      () => filter.stats(),
      () => filter.serialize(),
      () => filter.metadata,
    ];
    for (const call of calls) assert.throws(call, isCode('E_FREED'), call.toString());
    // A generator that frees the filter mid-batch stops the batch at the next chunk.
    const victim = await BloomFilter.create({ capacity: 10_000, errorRate: 0.01 });
    function* items() {
      for (let i = 0; i < 10_000; i++) {
        if (i === 5000) victim.free();
        yield `i${i}`;
      }
    }
    assert.throws(() => victim.addAll(items()), isCode('E_FREED'));
    live.free();
  });
});

describe('static kinds', () => {
  test('asking a collecting fuse filter its kind, or clearing it, does not seal it', async () => {
    const filter = await BloomFilter.create({ capacity: 100, errorRate: 0.01, kind: 'fuse' });
    filter.add('a');
    assert.equal(filter.kind, 'fuse8');
    assert.equal(filter.keyEncoding, 'utf8');
    filter.add('b'); // still collecting
    assert.deepEqual(filter.mightContainMany(['a', 'b']), [true, true]);
    assert.throws(() => filter.add('c'), isCode('E_STATIC')); // the first query built it
    filter.clear();
    filter.add('d');
    assert.equal(filter.mightContain('d'), true);
    filter.free();
  });
});
