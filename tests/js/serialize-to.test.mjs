// serializeTo (the CLI's write path): the same bytes as serialize() for every
// kind, with and without header overrides, without a copy of the file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BloomFilter, serializeTo } from '../../js/filter.js';
import { inspectFile } from '../../js/inspect.js';

const KINDS = ['classic', 'blocked', 'fuse8', 'fuse16', 'counting', 'scalable', 'cuckoo'];

function collect(filter, overrides) {
  const parts = [];
  const length = serializeTo(filter, (view) => parts.push(view.slice()), overrides);
  const bytes = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    bytes.set(part, at);
    at += part.length;
  }
  assert.equal(length, bytes.length);
  return { bytes, parts: parts.length };
}

test('serializeTo writes exactly serialize()\'s bytes, classic and blocked in two parts with no copy', async () => {
  for (const kind of KINDS) {
    const filter = await BloomFilter.create({ capacity: 5000, errorRate: 0.01, kind, metadata: { kind } });
    filter.addAll(Array.from({ length: 3000 }, (_, i) => `item-${i}`));
    const { bytes, parts } = collect(filter);
    assert.deepEqual(bytes, filter.serialize(), kind);
    assert.equal(parts, kind === 'classic' || kind === 'blocked' ? 2 : 1, `${kind}: head and payload where they lie`);
    filter.free();
  }
});

test('overrides set header fields and restamp the checksum: the file validates and says what was set', async () => {
  for (const kind of ['classic', 'cuckoo', 'fuse8']) {
    const filter = await BloomFilter.create({ capacity: 5000, errorRate: 0.01, kind });
    filter.addAll(Array.from({ length: 4000 }, (_, i) => `k${i}`));
    // The CLI's hibp path: a utf8 filter of digests relabelled sha1; a one-pass fuse filter's capacity set after.
    const overrides = kind === 'fuse8' ? { keyEncoding: 1, capacity: 4000 } : { keyEncoding: 1 };
    const { bytes } = collect(filter, overrides);
    const report = await inspectFile(bytes);
    assert.equal(report.ok, true, `${kind}: ${report.code} ${report.message}`);
    assert.equal(report.header.keyEncoding, 1);
    assert.equal(report.header.capacity, kind === 'fuse8' ? 4000 : 5000);
    assert.equal(report.checksumVerified, true);
    assert.throws(() => serializeTo(filter, () => {}, { magic: 1 }), RangeError);
    assert.throws(() => serializeTo(filter, () => {}, { errorRate: 0.5 }), RangeError);
    filter.free();
  }
});
