// Errors end to end: BloomgateError itself, the C status table as seen from JS, and
// every corruption of a .bgf file that JavaScript can produce mapped to its exact code
// (checks before the checksum, and the checksum itself; the C tests cover the checks
// after it, which need a recomputed XXH3).
import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';

import { BloomFilter, BloomgateError, inspectFile, loadFilter, sizeFor } from '../../js/index.js';
import { statusName, statusMessage, init } from '../../js/wasm/index.js';

let file; // a valid .bgf file with metadata
let header; // its parsed fixed header

function isCode(code) {
  return (error) => {
    assert.ok(error instanceof BloomgateError, `expected a BloomgateError, got ${error && error.stack}`);
    assert.equal(error.code, code, error.message);
    return true;
  };
}

function edit(change) {
  const copy = Buffer.from(file);
  change(copy);
  return copy;
}

before(async () => {
  const filter = await BloomFilter.create({
    capacity: 500,
    errorRate: 0.01,
    metadata: { source: 'errors.test', description: 'a small filter to corrupt' },
    listId: 'ffeeddccbbaa99887766554433221100',
    generation: 9,
  });
  filter.addAll(Array.from({ length: 400 }, (_, i) => `item ${i}`));
  file = Buffer.from(filter.serialize());
  filter.free();
  header = {
    payloadOffset: Number(file.readBigUInt64LE(96)),
    payloadLength: Number(file.readBigUInt64LE(104)),
    metadataLength: file.readUInt32LE(28),
  };
});

describe('BloomgateError', () => {
  test('is an Error with a stable code, a message and an optional cause', () => {
    const cause = new Error('inner');
    const error = new BloomgateError('E_CHECKSUM', 'checksum mismatch', { cause });
    assert.ok(error instanceof Error);
    assert.ok(error instanceof BloomgateError);
    assert.equal(error.name, 'BloomgateError');
    assert.equal(error.code, 'E_CHECKSUM');
    assert.equal(error.message, 'checksum mismatch');
    assert.equal(error.cause, cause);
    assert.match(String(error), /^BloomgateError: checksum mismatch/);
    assert.equal(new BloomgateError('E_FETCH', 'x').cause, undefined);
  });

  test('codes come from the C status table: E_ plus the enum name, each with a message', async () => {
    await init();
    assert.equal(statusName(0), 'OK');
    const names = new Set();
    for (let rc = -1; rc >= -17; rc--) {
      const name = statusName(rc);
      assert.match(name, /^E_[A-Z0-9_]+$/, `status ${rc}`);
      assert.ok(statusMessage(rc).length > 5, `message for ${name}`);
      names.add(name);
    }
    assert.equal(names.size, 17, 'status names are distinct');
    for (const name of ['E_ARG', 'E_RANGE', 'E_NOMEM', 'E_TOO_LARGE', 'E_TRUNCATED', 'E_MAGIC', 'E_VERSION',
      'E_HEADER', 'E_TRAILING', 'E_CHECKSUM', 'E_KIND', 'E_KEY_ENCODING', 'E_HASH', 'E_PAYLOAD',
      'E_INCOMPATIBLE', 'E_BUFFER', 'E_METADATA']) {
      assert.ok(names.has(name), name);
    }
  });

  test('errors thrown for core failures carry the core message', async () => {
    await assert.rejects(BloomFilter.from(file.subarray(0, 10)), (error) => {
      isCode('E_TRUNCATED')(error);
      assert.equal(error.message, statusMessage(-5));
      return true;
    });
  });

  test('a filter too large for wasm memory is an error, not a crash', async () => {
    await assert.rejects(BloomFilter.create({ capacity: 2 ** 36, errorRate: 0.01 }), (error) => {
      assert.ok(error instanceof BloomgateError);
      assert.ok(['E_NOMEM', 'E_TOO_LARGE'].includes(error.code), error.code);
      return true;
    });
    assert.throws(() => sizeFor({ capacity: 2 ** 53, errorRate: 0.5 }), isCode('E_TOO_LARGE'));
    // The module still works afterwards.
    const filter = await BloomFilter.create({ capacity: 10, errorRate: 0.1 });
    filter.add('still alive');
    assert.equal(filter.mightContain('still alive'), true);
    filter.free();
  });
});

describe('corrupt files map to exact codes', () => {
  const cases = () => [
    ['bad magic (first byte)', edit((b) => { b[0] = 0x50; }), 'E_MAGIC', false],
    ['bad magic (CR/LF mangled)', edit((b) => { b[4] = 0x0a; }), 'E_MAGIC', false],
    ['a text file', Buffer.from('this is not a filter file, just some text that is long enough '.repeat(4)), 'E_MAGIC', false],
    ['version 2', edit((b) => b.writeUInt16LE(2, 16)), 'E_VERSION', false],
    ['version 0', edit((b) => b.writeUInt16LE(0, 16)), 'E_VERSION', false],
    ['header_size not 128', edit((b) => b.writeUInt16LE(64, 18)), 'E_HEADER', false],
    ['flags set', edit((b) => { b[23] = 1; }), 'E_HEADER', false],
    ['reserved bytes set', edit((b) => { b[120] = 7; }), 'E_HEADER', false],
    ['metadata longer than 1 MiB', edit((b) => b.writeUInt32LE(2 * 1024 * 1024, 28)), 'E_METADATA', false],
    ['payload_offset misplaced', edit((b) => b.writeBigUInt64LE(BigInt(header.payloadOffset + 64), 96)), 'E_HEADER', false],
    ['absurd payload_length', edit((b) => b.writeBigUInt64LE(2n ** 41n, 104)), 'E_TOO_LARGE', false],
    ['one byte appended', Buffer.concat([file, Buffer.from([0])]), 'E_TRAILING', true],
    ['a second copy appended', Buffer.concat([file, file]), 'E_TRAILING', true],
    ['flipped payload byte', edit((b) => { b[header.payloadOffset + 5] ^= 0x01; }), 'E_CHECKSUM', true],
    ['flipped last byte', edit((b) => { b[b.length - 1] ^= 0x80; }), 'E_CHECKSUM', true],
    ['flipped metadata byte', edit((b) => { b[130] ^= 0x20; }), 'E_CHECKSUM', true],
    ['changed item count', edit((b) => { b[56] ^= 0x01; }), 'E_CHECKSUM', true],
    ['changed k', edit((b) => { b[24] = 3; }), 'E_CHECKSUM', true],
    ['changed checksum', edit((b) => { b[8] ^= 0xff; }), 'E_CHECKSUM', true],
  ];

  test('BloomFilter.from rejects each corruption with its code', async () => {
    for (const [name, bytes, code] of cases()) {
      await assert.rejects(BloomFilter.from(bytes), isCode(code), name);
    }
  });

  test('loadFilter rejects each corruption with the same code', async () => {
    for (const [name, bytes, code] of cases()) {
      await assert.rejects(loadFilter(bytes), isCode(code), name);
      await assert.rejects(loadFilter(new Response(bytes)), isCode(code), `${name} (streamed)`);
    }
  });

  test('truncation at every interesting length is E_TRUNCATED', async () => {
    const lengths = [0, 1, 7, 8, 17, 18, 64, 127, 128, 129, header.payloadOffset - 1, header.payloadOffset,
      header.payloadOffset + 1, file.length - 64, file.length - 1];
    for (const length of lengths) {
      const bytes = file.subarray(0, length);
      await assert.rejects(BloomFilter.from(bytes), isCode('E_TRUNCATED'), `length ${length}`);
      await assert.rejects(loadFilter(new Response(bytes)), isCode('E_TRUNCATED'), `streamed, length ${length}`);
      const report = await inspectFile(bytes);
      assert.equal(report.ok, false);
      assert.equal(report.code, 'E_TRUNCATED');
      // The fixed header is reported once all 128 bytes are there.
      assert.equal(report.header !== null, length >= 128, `header at length ${length}`);
    }
  });

  test('no single-bit flip anywhere in the file yields a filter', async () => {
    for (let at = 0; at < file.length; at++) {
      const bit = 1 << (at % 8);
      const bytes = edit((b) => { b[at] ^= bit; });
      await assert.rejects(BloomFilter.from(bytes), BloomgateError, `flip at byte ${at}`);
    }
  });
});

describe('inspectFile', () => {
  test('a valid file: ok, every header field, stats and metadata', async () => {
    const report = await inspectFile(file);
    assert.equal(report.ok, true);
    assert.equal(report.code, 'OK');
    const h = report.header;
    assert.equal(h.version, 1);
    assert.equal(h.kind, 1);
    assert.equal(h.keyEncoding, 0);
    assert.equal(h.hashAlgorithm, 1);
    assert.equal(h.capacity, 500);
    assert.equal(h.errorRate, 0.01);
    assert.equal(h.count, 400);
    assert.equal(h.seed, 0);
    assert.equal(h.generation, 9);
    assert.equal(h.listId, 'ffeeddccbbaa99887766554433221100');
    assert.equal(h.metadataLength, header.metadataLength);
    assert.equal(h.payloadOffset, header.payloadOffset);
    assert.equal(h.payloadLength, header.payloadLength);
    assert.equal(h.fileLength, file.length);
    assert.equal(h.checksum, file.readBigUInt64LE(8).toString(16).padStart(16, '0'));
    const size = sizeFor({ capacity: 500, errorRate: 0.01 });
    assert.equal(h.m, size.m);
    assert.equal(h.k, size.k);
    assert.equal(report.stats.n, 400);
    assert.equal(report.stats.m, size.m);
    assert.deepEqual(report.metadata, { source: 'errors.test', description: 'a small filter to corrupt' });
  });

  test('never throws on bad bytes: reports the code, and the header when it parses', async () => {
    const checksum = await inspectFile(edit((b) => { b[b.length - 1] ^= 1; }));
    assert.equal(checksum.ok, false);
    assert.equal(checksum.code, 'E_CHECKSUM');
    assert.match(checksum.message, /checksum/);
    assert.equal(checksum.header.fileLength, file.length);
    assert.equal(checksum.stats, null);

    const magic = await inspectFile(edit((b) => { b[0] = 0; }));
    assert.equal(magic.code, 'E_MAGIC');
    assert.equal(magic.header, null);

    for (const bytes of [new Uint8Array(0), new Uint8Array(3), new Uint8Array(4096).fill(0xff), new ArrayBuffer(200)]) {
      const report = await inspectFile(bytes);
      assert.equal(report.ok, false);
      assert.match(report.code, /^E_/);
    }
    await assert.rejects(inspectFile('a string'), TypeError);
  });
});
