// Values per key, the parts that need no wasm: what values mean (js/values.js), the CLI's
// parsing of --buckets / --value-bits / labels (js/cli/values.js), the labelled exact store
// (js/store.js, js/cli/store-writer.js) and the endpoint manifest's `values` (js/endpoint.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { bitsFor, boundOf, bucketOf, labelOf, parseValues, seenAtLeastOf, validLabel } from '../../js/values.js';
import { LabelSet, parseBuckets, parseValueBits, valueBitsFor, valueKind } from '../../js/cli/values.js';
import { StoreReader, writeStore } from '../../js/store.js';
import { manifestBytes, parseManifest, storeManifest } from '../../js/endpoint.js';

const sha256 = (text) => new Uint8Array(createHash('sha256').update(text).digest());

const dir = mkdtempSync(join(tmpdir(), 'bloomgate-values-pure-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

test('bitsFor: the fewest bits that hold the classes, 0 past 256', () => {
  assert.deepEqual([1, 2, 3, 4, 5, 8, 9, 16, 17, 128, 129, 256].map(bitsFor), [1, 1, 2, 2, 3, 3, 4, 4, 5, 7, 8, 8]);
  assert.equal(bitsFor(257), 0);
});

test('bucketOf: the index of the largest bound <= count, -1 below the first', () => {
  const buckets = [1, 10, 100, 1000, 100000];
  const cases = [[0, -1], [1, 0], [9, 0], [10, 1], [99, 1], [100, 2], [999, 2], [1000, 3], [99999, 3], [100000, 4], [5e9, 4]];
  for (const [count, bucket] of cases) assert.equal(bucketOf(buckets, count), bucket, `count ${count}`);
  assert.equal(seenAtLeastOf({ meaning: 'seen-at-least', buckets }, 12345), 1000);
  assert.equal(seenAtLeastOf({ meaning: 'seen-at-least', buckets }, 0), null);
  assert.equal(boundOf({ meaning: 'seen-at-least', buckets }, 4), 100000);
  assert.equal(boundOf({ meaning: 'seen-at-least', buckets }, 7), null, 'a false positive\'s value past the buckets');
  assert.equal(labelOf({ meaning: 'threat', labels: ['phishing', 'malware'] }, 1), 'malware');
  assert.equal(labelOf({ meaning: 'threat', labels: ['phishing', 'malware'] }, 3), null);
});

test('parseValues: both meanings, and every malformed block refused with a reason', () => {
  assert.deepEqual(parseValues({ meaning: 'seen-at-least', buckets: [1, 10] }), { meaning: 'seen-at-least', buckets: [1, 10] });
  assert.deepEqual(parseValues({ meaning: 'threat', labels: ['a', 'b c'] }), { meaning: 'threat', labels: ['a', 'b c'] });
  assert.equal(parseValues(undefined), null);
  const bad = [
    [1],
    { meaning: 'seen-at-least', buckets: [] },
    { meaning: 'seen-at-least', buckets: [10, 10] },
    { meaning: 'seen-at-least', buckets: [0, 10] },
    { meaning: 'seen-at-least', buckets: [1.5] },
    { meaning: 'seen-at-least', buckets: Array.from({ length: 257 }, (_, i) => i + 1) },
    { meaning: 'seen-at-least', labels: ['a'] },
    { meaning: 'threat', labels: ['a', 'a'] },
    { meaning: 'threat', labels: ['a\tb'] },
    { meaning: 'threat', labels: [''] },
    { meaning: 'threat', labels: [7] },
    { meaning: 'threat', labels: Array.from({ length: 257 }, (_, i) => `l${i}`) },
    { meaning: 'colour', labels: ['a'] },
  ];
  for (const block of bad) assert.equal(parseValues(block), null, JSON.stringify(block).slice(0, 60));
  assert.equal(parseValues(null), null);
  assert.deepEqual(parseValues({ meaning: 'seen-at-least', buckets: Array.from({ length: 256 }, (_, i) => i + 1) }).buckets.length, 256);
  assert.equal(validLabel('x'.repeat(64)), true);
  assert.equal(validLabel('x'.repeat(65)), false);
  assert.equal(validLabel('é'.repeat(33)), false, '66 bytes of UTF-8');
});

test('--buckets, --value-bits and the kind: usage errors (exit 64) that name the limit', () => {
  assert.deepEqual(parseBuckets('1,10,100,1000,100000'), [1, 10, 100, 1000, 100000]);
  assert.deepEqual(parseBuckets(' 2 , 3 '), [2, 3]);
  const refused = [
    [() => parseBuckets(''), /at least one bound/],
    [() => parseBuckets('1,10,10'), /must be ascending: bound 3 \(10\) is not above bound 2 \(10\)/],
    [() => parseBuckets('10,1'), /ascending/],
    [() => parseBuckets('1,x'), /bound 2 'x' is not a positive integer/],
    [() => parseBuckets('1,2.5'), /not a positive integer/],
    [() => parseBuckets('0,5'), /from 1 to 2\^53 - 1/],
    [() => parseBuckets('1,-4'), /not a positive integer/],
    [() => parseBuckets(Array.from({ length: 257 }, (_, i) => i + 1).join(',')), /257 bounds are more than 256 \(2\^8/],
    [() => parseValueBits('9'), /1 to 8 bits/],
    [() => parseValueBits('0'), /1 to 8 bits/],
    [() => valueBitsFor(5, 2, '5 buckets'), /5 buckets do not fit --value-bits 2 \(at most 2\^2 = 4 classes; give --value-bits 3/],
    [() => valueBitsFor(300, undefined, '300 labels'), /more than 256/],
    [() => valueKind('fuse8', '--buckets'), /only --kind fuse4 does; --kind fuse8 cannot/],
    [() => valueKind('classic', '--buckets'), /--kind classic cannot/],
  ];
  for (const [run, message] of refused) {
    assert.throws(run, (error) => error.name === 'CliError' && error.exitCode === 64 && message.test(error.message), String(message));
  }
  assert.equal(valueBitsFor(5, undefined, '5 buckets'), 3);
  assert.equal(valueBitsFor(5, 8, '5 buckets'), 8);
  assert.equal(valueKind(undefined, 'x'), 'fuse4');
  assert.equal(valueKind('smallest', 'x'), 'fuse4');
});

test('LabelSet: values in first-appearance order, refused past its limit', () => {
  const labels = new LabelSet(2, '2^1 = 2');
  assert.equal(labels.valueOf('phishing'), 0);
  assert.equal(labels.valueOf('malware'), 1);
  assert.equal(labels.valueOf('phishing'), 0);
  assert.throws(() => labels.valueOf('unwanted'), /label 3: more than 2\^1 = 2/);
  assert.deepEqual(labels.labels, ['phishing', 'malware']);
});

test('a labelled store: written, read back, its label table checked; an unlabelled one unchanged', async () => {
  const labels = ['phishing', 'malware', 'unwanted software'];
  const records = Array.from({ length: 500 }, (_, i) => ({ hash: sha256(`u${i}`), count: i % 3 }));
  const bytes = writeStore(records, { hashType: 'sha256', listId: 'cd'.repeat(16), labels });
  const path = join(dir, 'labelled.bgs');
  writeFileSync(path, bytes);
  const store = await StoreReader.open(path);
  try {
    assert.deepEqual(store.labels, labels);
    const one = records[17];
    const found = await store.lookup(one.hash.subarray(0, 4), 32);
    assert.deepEqual(found.map((r) => r.count), [one.count]);
    assert.deepEqual(storeManifest(store, { protocol: 'hashes', padding: 'none', notFound: 'empty' }).values, { meaning: 'threat', labels });
  } finally {
    await store.close();
  }
  // Without labels: no label table, the header's bytes 76..79 zero, and the manifest has no `values`.
  const plain = writeStore(records.map((r) => ({ hash: r.hash, count: 1 })), { hashType: 'sha256' });
  assert.deepEqual([...plain.subarray(76, 80)], [0, 0, 0, 0]);
  writeFileSync(join(dir, 'plain.bgs'), plain);
  const reader = await StoreReader.open(join(dir, 'plain.bgs'));
  assert.equal(reader.labels, null);
  assert.equal('values' in storeManifest(reader, { protocol: 'hashes', padding: 'none', notFound: 'empty' }), false);
  await reader.close();

  assert.throws(() => writeStore([{ hash: sha256('x'), count: 3 }], { hashType: 'sha256', labels }), /value 3 names no label/);
  assert.throws(() => writeStore([], { hashType: 'sha256', labels: ['a', 'a'] }), /distinct/);
  assert.throws(() => writeStore([], { hashType: 'sha256', labels: ['x'.repeat(65)] }), /longer than 64 bytes/);
});

test('a labelled store with a value past its labels, or a broken table, is refused (checksum restamped)', async () => {
  const labels = ['phishing', 'malware'];
  const records = Array.from({ length: 40 }, (_, i) => ({ hash: sha256(`v${i}`), count: i % 2 }));
  const good = writeStore(records, { hashType: 'sha256', labels });
  const restamp = (bytes) => {
    bytes.set(createHash('sha256').update(bytes.subarray(16)).digest().subarray(0, 8), 8);
    return bytes;
  };
  const open = async (bytes, name) => {
    const path = join(dir, name);
    writeFileSync(path, bytes);
    const store = await StoreReader.open(path);
    await store.close();
  };
  const recordsOffset = Number(new DataView(good.buffer).getBigUint64(40, true));
  const pastLabels = Uint8Array.from(good);
  pastLabels[recordsOffset + 5 * 36 + 35] = 2; // record 5's value: 2, with 2 labels
  await assert.rejects(open(restamp(pastLabels), 'past.bgs'), (error) => error.code === 'E_VALUE' && /record 5 has value 2, past the 2 labels/.test(error.message));
  const table = Uint8Array.from(good);
  table[recordsOffset - 1] = 0x41; // the last label's LF
  await assert.rejects(open(restamp(table), 'table.bgs'), (error) => error.code === 'E_HEADER' && /label table/.test(error.message));
  const length = Uint8Array.from(good);
  new DataView(length.buffer).setUint32(76, 1 << 20, true);
  await assert.rejects(open(restamp(length), 'length.bgs'), (error) => error.code === 'E_HEADER' && /over 16640/.test(error.message));
});

test("the CLI's StoreWriter writes a labelled store's bytes exactly as writeStore, sorted or not", async () => {
  const { AtomicOutput } = await import('../../js/cli/output.js');
  const { StoreWriter } = await import('../../js/cli/store-writer.js');
  const labels = ['a', 'b', 'c', 'd', 'e'];
  const records = Array.from({ length: 3000 }, (_, i) => ({ hash: sha256(`w${i}`), count: (i * 7) % 5 }));
  const expected = writeStore(records, { hashType: 'sha256', listId: 'ef'.repeat(16), generation: 2, labels });
  for (const [name, list, runBytes] of [['sorted', [...records].sort((x, y) => Buffer.compare(x.hash, y.hash)), undefined], ['shuffled', records, 36 * 500]]) {
    const path = join(dir, `${name}.bgs`);
    const output = await AtomicOutput.create(path);
    const writer = new StoreWriter(output, { hashType: 'sha256', listId: 'ef'.repeat(16), generation: 2, labelled: true, ...(runBytes && { runBytes }) });
    for (const { hash, count } of list) writer.add(hash, count);
    await writer.finish(labels);
    await output.commit();
    assert.deepEqual(new Uint8Array(readFileSync(path)), expected, name);
  }
});

test('endpoint manifests: `values` parsed and checked, signed bytes cover it, old manifests as they were', () => {
  const base = {
    format: 'bloomgate-escalation', version: 1, protocol: 'hashes', hashType: 'sha256', listId: 'ab'.repeat(16),
    generation: 0, records: 3, minCount: 0, padding: 'none', notFound: 'empty',
  };
  const url = 'http://127.0.0.1/hashes/manifest.json';
  assert.equal(parseManifest(JSON.stringify(base), url, 'hashes').values, undefined);
  const labelled = parseManifest(JSON.stringify({ ...base, values: { meaning: 'threat', labels: ['phishing', 'malware'] } }), url, 'hashes');
  assert.deepEqual(labelled.values, { meaning: 'threat', labels: ['phishing', 'malware'] });
  assert.throws(() => parseManifest(JSON.stringify({ ...base, values: { meaning: 'threat', labels: [] } }), url, 'hashes'), /malformed: values must be a hashes endpoint's threat labels/);
  const range = { ...base, protocol: 'range', hashType: 'sha1', values: { meaning: 'seen-at-least', buckets: [1] } };
  assert.throws(() => parseManifest(JSON.stringify(range), url, 'range'), /values must be a hashes endpoint's threat labels/);

  const signed = { ...base, version: 2, depth: 32, blockBits: 16, root: '00'.repeat(32), expires: 0 };
  const plainBytes = manifestBytes(signed);
  const withValues = manifestBytes({ ...signed, values: { meaning: 'threat', labels: ['phishing', 'malware'] } });
  const otherValues = manifestBytes({ ...signed, values: { meaning: 'threat', labels: ['malware', 'phishing'] } });
  assert.deepEqual(withValues.subarray(0, plainBytes.length), plainBytes, 'the labels follow the fields that were there');
  assert.ok(withValues.length > plainBytes.length);
  assert.notDeepEqual(withValues, otherValues, 'reordered labels are other bytes: a signature covers them');
});
