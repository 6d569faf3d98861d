// The golden files written by the native core (tests/c/golden_gen.c), checked against the
// wasm build: hashes, positions, sizing, digests, and classic.bgf decoded and re-written
// byte for byte. This is the proof that native C and wasm agree bit for bit.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';

import { BloomFilter, BloomgateError, sizeFor, inspectFile } from '../../js/index.js';
import { sha1, ready } from '../../js/wasm/index.js';
import { hashKey, positions } from './helpers/hash.mjs';

const goldenDir = new URL('../golden/', import.meta.url);
const vectors = JSON.parse(await readFile(new URL('vectors.json', goldenDir), 'utf8'));
const golden = vectors.golden_file;
const goldenBytes = new Uint8Array(await readFile(new URL(golden.path, goldenDir)));
await ready();

const utf8 = new TextEncoder();

function fromHex(hex) {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

function toHex(bytes) {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** The first byte where two arrays differ, or -1. */
function firstDifference(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return a.length === b.length ? -1 : n;
}

describe('hash vectors: XXH3-128 and positions, wasm vs native', () => {
  test('the vectors cover the cases they claim to', () => {
    const lengths = new Set(vectors.hash.map((v) => v.key_hex.length / 2));
    for (const length of [0, 1, 3, 16, 17, 128, 129, 240, 241]) assert.ok(lengths.has(length), `key length ${length}`);
    const seeds = new Set(vectors.hash.map((v) => v.seed));
    for (const seed of ['0', '1', '9223372036854775813']) assert.ok(seeds.has(seed), `seed ${seed}`);
    const ms = new Set(vectors.hash.map((v) => v.m));
    for (const m of [2 ** 32 - 1, 2 ** 32, 2 ** 32 + 1, 2 ** 40 + 3]) assert.ok(ms.has(m), `m ${m}`);
  });

  test('hashKey gives the native h1, h2 for every key and seed', () => {
    for (const v of vectors.hash) {
      const key = fromHex(v.key_hex);
      if (v.key !== null) assert.equal(toHex(utf8.encode(v.key)), v.key_hex, 'key text is its UTF-8 bytes');
      const { h1, h2 } = hashKey(key, BigInt(v.seed));
      const where = `key ${v.key_hex.slice(0, 16)}… (${key.length} bytes), seed ${v.seed}`;
      assert.equal(h1.toString(16).padStart(16, '0'), v.h1, `h1 of ${where}`);
      assert.equal(h2.toString(16).padStart(16, '0'), v.h2, `h2 of ${where}`);
    }
  });

  test('positions match the native ones, including m around 2^32 and above', () => {
    for (const v of vectors.hash) {
      const got = positions(fromHex(v.key_hex), BigInt(v.seed), v.m, v.k);
      assert.deepEqual(got, v.positions, `key ${v.key_hex.slice(0, 16)}…, seed ${v.seed}, m ${v.m}, k ${v.k}`);
      for (const p of got) assert.ok(Number.isInteger(p) && p >= 0 && p < v.m);
    }
  });

  test('seeds below 2^53 give the same answer as a Number and as a BigInt', () => {
    for (const v of vectors.hash.filter((x) => BigInt(x.seed) < 2n ** 53n)) {
      const key = fromHex(v.key_hex);
      assert.deepEqual(hashKey(key, Number(v.seed)), hashKey(key, BigInt(v.seed)));
    }
  });
});

describe('sizing vectors', () => {
  test('sizeFor gives the native (m, k), or fails where the core does', () => {
    for (const v of vectors.sizing) {
      const where = `capacity ${v.capacity}, errorRate ${v.errorRate}`;
      if (v.error) {
        assert.throws(() => sizeFor({ capacity: v.capacity, errorRate: v.errorRate }), (error) => {
          if (error instanceof BloomgateError) return error.code === v.error;
          // JS reports the caller's out-of-range rate as a RangeError (the core's E_RANGE).
          return v.error === 'E_RANGE' && error instanceof RangeError;
        }, where);
        continue;
      }
      const size = sizeFor({ capacity: v.capacity, errorRate: v.errorRate });
      assert.equal(size.m, v.m, `m for ${where}`);
      assert.equal(size.k, v.k, `k for ${where}`);
      assert.equal(size.bytes, Math.ceil(v.m / 8), `bytes for ${where}`);
    }
  });

  test('a filter created in wasm has the sized m and k', async () => {
    for (const v of vectors.sizing.filter((x) => !x.error && x.m <= 1e8)) {
      const filter = await BloomFilter.create({ capacity: v.capacity, errorRate: v.errorRate });
      const stats = filter.stats();
      filter.free();
      assert.equal(stats.m, v.m);
      assert.equal(stats.k, v.k);
    }
  });
});

describe('digest vectors', () => {
  test('SHA-1 in wasm matches', () => {
    for (const v of vectors.sha1) {
      assert.equal(toHex(sha1(fromHex(v.input_hex))), v.digest_hex, `sha1 of ${v.input_hex.slice(0, 16)}…`);
      // and Node's own SHA-1 agrees with the core's
      assert.equal(createHash('sha1').update(fromHex(v.input_hex)).digest('hex'), v.digest_hex);
    }
  });

  test('SHA-256 vectors agree with Node', () => {
    for (const v of vectors.sha256) {
      assert.equal(createHash('sha256').update(fromHex(v.input_hex)).digest('hex'), v.digest_hex);
    }
  });
});

describe('classic.bgf, the golden filter file', () => {
  test('its SHA-256 is the one recorded', () => {
    assert.equal(createHash('sha256').update(goldenBytes).digest('hex'), golden.sha256);
  });

  test('BloomFilter.from decodes it: members true, absent keys false, stats as native', async () => {
    const filter = await BloomFilter.from(goldenBytes);
    try {
      for (const key of golden.keys) assert.equal(filter.mightContain(key), true, `member ${JSON.stringify(key)}`);
      for (const key of golden.absent) assert.equal(filter.mightContain(key), false, `absent ${key}`);
      assert.deepEqual(filter.mightContainMany(golden.keys), golden.keys.map(() => true));
      assert.deepEqual(filter.mightContainMany(golden.absent), golden.absent.map(() => false));
      const stats = filter.stats();
      assert.equal(stats.kind, golden.kind);
      assert.equal(stats.m, golden.stats.m);
      assert.equal(stats.k, golden.stats.k);
      assert.equal(stats.n, golden.stats.n);
      assert.equal(stats.n, golden.keys.length);
      assert.equal(stats.capacity, golden.capacity);
      assert.equal(stats.errorRate, golden.errorRate);
      assert.equal(stats.bitsSet, golden.stats.bitsSet);
      assert.equal(stats.fillRatio, golden.stats.fillRatio);
      assert.equal(stats.estimatedErrorRate, golden.stats.estimatedErrorRate);
      assert.equal(stats.estimatedItems, golden.stats.estimatedItems);
      assert.equal(stats.bytes, golden.stats.payloadBytes);
      assert.equal(stats.serializedBytes, golden.stats.fileBytes);
      assert.equal(BigInt(stats.seed), BigInt(golden.seed));
      assert.equal(stats.keyEncoding, golden.keyEncoding);
      assert.equal(stats.listId, golden.listId);
      assert.equal(stats.generation, golden.generation);
      assert.deepEqual(filter.metadata, golden.metadata);
      // Loaded and written back: the same bytes.
      const again = filter.serialize();
      assert.equal(firstDifference(again, goldenBytes), -1, 'a decoded golden file re-serializes identically');
    } finally {
      filter.free();
    }
  });

  test('a filter built in wasm from the same inputs is byte-identical to the native file', async () => {
    const filter = await BloomFilter.create({
      capacity: golden.capacity,
      errorRate: golden.errorRate,
      kind: golden.kind,
      seed: BigInt(golden.seed),
      keyEncoding: golden.keyEncoding,
      metadata: golden.metadata,
      listId: golden.listId,
      generation: golden.generation,
    });
    try {
      for (const key of golden.keys) filter.add(key);
      const bytes = filter.serialize();
      const at = firstDifference(bytes, goldenBytes);
      assert.equal(at, -1, `wasm-written file differs from classic.bgf at byte ${at} (of ${goldenBytes.length})`);
      assert.equal(createHash('sha256').update(bytes).digest('hex'), golden.sha256);
    } finally {
      filter.free();
    }
  });

  test('built with addAll (batches) instead: still byte-identical', async () => {
    const filter = await BloomFilter.create({
      capacity: golden.capacity,
      errorRate: golden.errorRate,
      seed: BigInt(golden.seed),
      metadata: golden.metadata,
      listId: golden.listId,
      generation: golden.generation,
    });
    try {
      filter.addAll(golden.keys);
      assert.equal(firstDifference(filter.serialize(), goldenBytes), -1);
    } finally {
      filter.free();
    }
  });

  test('the metadata block is JSON.stringify of the metadata object', () => {
    assert.equal(JSON.stringify(golden.metadata), golden.metadataJson);
    const start = 128;
    const text = new TextDecoder().decode(goldenBytes.subarray(start, start + golden.metadataJson.length));
    assert.equal(text, golden.metadataJson);
  });

  test('inspectFile reads the header and verifies the checksum', async () => {
    const report = await inspectFile(goldenBytes);
    assert.equal(report.ok, true);
    assert.equal(report.header.m, golden.stats.m);
    assert.equal(report.header.k, golden.stats.k);
    assert.equal(report.header.generation, golden.generation);
    assert.deepEqual(report.metadata, golden.metadata);
  });

  test('a flipped payload bit is E_CHECKSUM in wasm too', async () => {
    const broken = goldenBytes.slice();
    broken[broken.length - 1] ^= 0x01;
    await assert.rejects(BloomFilter.from(broken), (error) => error instanceof BloomgateError && error.code === 'E_CHECKSUM');
  });
});

describe('every kind: the same program gives the same file and the same answers natively and in wasm', () => {
  // tests/c/golden_gen.c runs each program natively and records the file's length, checksum and
  // SHA-256, and the SHA-256 of its answers (program_answers); here the wasm build runs it again
  // through the public API. fuse4 runs at several rates and value widths (valueBits).
  const valueOfKey = (i, bits) => (bits === 0 ? 0 : Math.imul(i, 2654435769) >>> (32 - bits));
  /** Answers as program_answers writes them: per item 1 byte (maybe?) and its value, 4 bytes little-endian. */
  function answersDigest(filter, program) {
    const items = [
      ...Array.from({ length: program.adds }, (_, i) => `kind-${i}`),
      ...Array.from({ length: program.extra }, (_, i) => `kind-extra-${i}`),
      ...Array.from({ length: 3000 }, (_, i) => `kind-probe-${i}`),
    ];
    const bytes = new Uint8Array(5 * items.length);
    const view = new DataView(bytes.buffer);
    items.forEach((item, i) => {
      const value = filter.valueOf(item);
      assert.equal(value === null, !filter.mightContain(item), `valueOf and mightContain disagree on ${item}`);
      bytes[5 * i] = value === null ? 0 : 1;
      view.setUint32(5 * i + 1, value ?? 0, true);
    });
    return createHash('sha256').update(bytes).digest('hex');
  }
  test('the programs cover fuse4 at several rates and value widths 0, 1, 3 and 8', () => {
    const fuse4 = vectors.kinds.filter((program) => program.kind === 'fuse4');
    assert.deepEqual([...new Set(fuse4.map((program) => program.valueBits))].sort(), [0, 1, 3, 8]);
    assert.ok(new Set(fuse4.map((program) => program.errorRate)).size >= 5);
  });
  for (const program of vectors.kinds) {
    const bits = program.valueBits ?? 0;
    test(`${program.kind}${bits ? ` with ${bits} value bits` : ''} at ${program.errorRate}: ${program.adds} adds${program.removes ? ', every third removed' : ''}${program.extra ? `, ${program.extra} more` : ''}`, async () => {
      const filter = await BloomFilter.create({
        kind: program.kind, capacity: program.capacity, errorRate: program.errorRate, seed: program.seed, ...(bits > 0 && { valueBits: bits }),
      });
      for (let i = 0; i < program.adds; i++) {
        if (bits > 0) filter.add(`kind-${i}`, valueOfKey(i, bits));
        else filter.add(`kind-${i}`);
      }
      if (program.removes) for (let i = 0; i < program.adds; i += 3) assert.equal(filter.remove(`kind-${i}`), true);
      for (let i = 0; i < program.extra; i++) filter.add(`kind-extra-${i}`);
      const bytes = filter.serialize();
      assert.equal(bytes.length, program.fileBytes);
      const checksum = toHex(bytes.slice(8, 16).reverse());
      assert.equal(checksum, program.checksum, `checksum differs (first differing byte unknown: native file not stored)`);
      assert.equal(createHash('sha256').update(bytes).digest('hex'), program.sha256);
      // The same answers (and values) for members, extras and 3,000 other items.
      assert.equal(answersDigest(filter, program), program.answers, 'answers differ from the native build\'s');
      // And the wasm reader takes the native bytes' twin: every kept key still answers maybe, with its value.
      const loaded = await BloomFilter.from(bytes);
      for (let i = 1; i < program.adds; i += 3) assert.equal(loaded.mightContain(`kind-${i}`), true);
      for (let i = 0; i < program.extra; i++) assert.equal(loaded.mightContain(`kind-extra-${i}`), true);
      if (bits > 0) for (let i = 0; i < program.adds; i++) assert.equal(loaded.valueOf(`kind-${i}`), valueOfKey(i, bits));
      assert.equal(answersDigest(loaded, program), program.answers, 'the loaded file answers otherwise');
      loaded.free();
      filter.free();
    });
  }
});
