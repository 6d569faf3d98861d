// Values per key under hostile bytes: mutated labelled stores (js/store.js) and hostile
// labelled hashes endpoints (js/url.js, js/endpoint.js). Every outcome is a clean refusal with a
// code, or an answer whose values are within what the labels allow: never a crash, never a
// label that is not one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { BloomFilter, checkUrl, init } from '../../js/index.js';
import { StoreReader, writeStore } from '../../js/store.js';
import { prng } from './helpers/prng.mjs';

const dir = mkdtempSync(join(tmpdir(), 'bloomgate-values-fuzz-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));
const sha256 = (bytes) => new Uint8Array(createHash('sha256').update(bytes).digest());
const STORE_CODES = new Set(['E_MAGIC', 'E_VERSION', 'E_HEADER', 'E_TRUNCATED', 'E_TRAILING', 'E_CHECKSUM', 'E_ORDER', 'E_INDEX', 'E_VALUE']);

test('1,000 mutated labelled stores: refused with a store code, or every record\'s value names a label', async () => {
  const labels = ['phishing', 'malware', 'unwanted', 'ünïcode label'];
  const records = Array.from({ length: 120 }, (_, i) => ({ hash: sha256(`s${i}`), count: i % labels.length }));
  const good = writeStore(records, { hashType: 'sha256', listId: '12'.repeat(16), labels });
  const random = prng(0x5eed);
  const outcomes = { refused: 0, opened: 0 };
  const path = join(dir, 'mutant.bgs');
  for (let round = 0; round < 1000; round++) {
    const bytes = Uint8Array.from(good);
    // Mostly the header's label length, the label table and the records' value bytes.
    const flips = 1 + random.int(4);
    for (let f = 0; f < flips; f++) {
      const where = random.int(4);
      const at = where === 0 ? 76 + random.int(4) : where === 1 ? good.length - 120 * 36 - 1 - random.int(40) : where === 2 ? good.length - 1 - 36 * random.int(120) : random.int(good.length);
      bytes[at] = random.chance(0.5) ? random.byte() : bytes[at] ^ (1 << random.int(8));
    }
    if (random.chance(0.7)) bytes.set(createHash('sha256').update(bytes.subarray(16)).digest().subarray(0, 8), 8); // a valid checksum
    writeFileSync(path, bytes);
    let store;
    try {
      store = await StoreReader.open(path);
    } catch (error) {
      assert.equal(error.name, 'BloomgateError', `round ${round}: ${error.stack}`);
      assert.ok(STORE_CODES.has(error.code), `round ${round}: ${error.code}`);
      outcomes.refused++;
      continue;
    }
    try {
      outcomes.opened++;
      if (store.labels !== null) {
        assert.ok(store.labels.length >= 1 && store.labels.length <= 256);
        for await (const { count } of store.records()) assert.ok(count < store.labels.length, `round ${round}: value ${count}`);
      }
    } finally {
      await store.close();
    }
  }
  assert.ok(outcomes.refused > 500 && outcomes.opened > 0, JSON.stringify(outcomes));
});

test('a hostile labelled hashes endpoint: every reply is an answer with one of its labels, or E_ESCALATION', async () => {
  await init();
  const url = 'http://listed.example/bad/';
  const hash = Buffer.from(sha256('listed.example/bad/')).toString('hex');
  const filter = await BloomFilter.create({ kind: 'fuse4', capacity: 1, errorRate: 0.01, keyEncoding: 'url', valueBits: 2, listId: 'ab'.repeat(16), metadata: { values: { meaning: 'threat', labels: ['phishing', 'malware'] } } });
  filter.add(url, 1);
  const manifest = { format: 'bloomgate-escalation', version: 1, protocol: 'hashes', hashType: 'sha256', listId: 'ab'.repeat(16), generation: 0, records: 1, minCount: 0, padding: 'none', notFound: 'empty' };
  const random = prng(0xbad);
  const rows = [
    () => `${hash}:${random.int(4)}`, () => hash, () => `${hash}:`, () => `${hash}:-1`, () => `${hash}:1:2`, () => `${hash}:0001`,
    () => `${hash.toUpperCase()}:1`, () => `${hash} 1`, () => `${hash}:99999999999`, () => `${hash.slice(0, 63)}:1`, () => '',
  ];
  const manifests = [
    { ...manifest, values: { meaning: 'threat', labels: ['x', 'y', 'z'] } }, manifest,
    { ...manifest, values: { meaning: 'threat', labels: [] } }, { ...manifest, values: { meaning: 'seen-at-least', buckets: [1] } },
    { ...manifest, values: { meaning: 'threat', labels: ['x', 'x'] } }, { ...manifest, values: 'threat' },
  ];
  const counts = { answered: 0, refused: 0 };
  for (let round = 0; round < 300; round++) {
    // Half the rounds a well-formed manifest (labelled or not), and most replies one row.
    const shown = random.chance(0.5) ? manifests[random.int(2)] : manifests[random.int(manifests.length)];
    const reply = Array.from({ length: random.chance(0.7) ? 1 : 2 + random.int(2) }, () => rows[random.chance(0.5) ? random.int(2) : random.int(rows.length)]()).join('\n');
    const fetch = async (request) => {
      const target = String(request.url ?? request);
      if (target.endsWith('/manifest.json')) return new Response(JSON.stringify(shown), { status: 200 });
      return new Response(reply, { status: 200 });
    };
    try {
      const result = await checkUrl(url, { filter, hashesUrl: `http://127.0.0.1:9/r${round}/hashes`, fetch });
      counts.answered++;
      assert.equal(result.confirmed, true);
      const labels = shown.values?.labels ?? ['phishing', 'malware'];
      if (result.listed) assert.ok(labels.includes(result.threat), `round ${round}: ${JSON.stringify({ result, reply, shown })}`);
      else assert.equal(result.threat, null);
    } catch (error) {
      assert.equal(error.code, 'E_ESCALATION', `round ${round}: ${error.stack}`);
      counts.refused++;
    }
  }
  filter.free();
  assert.ok(counts.answered > 30 && counts.refused > 30, JSON.stringify(counts));
});
