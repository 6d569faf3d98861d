// The exact store (.bgs): format version 2 (list identity), version 1 still
// read, and `bloomgate build --store` (identity flags, layouts, streaming).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { StoreReader, writeStore, STORE_VERSION, STORE_HEADER_SIZE } from '../../js/store.js';

const CLI = fileURLToPath(new URL('../../js/cli.js', import.meta.url));

let dir;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'bloomgate-store-'));
});
after(() => {
  rmSync(dir, { recursive: true, force: true });
});

const sha1 = (text) => createHash('sha1').update(text).digest();
const sha256 = (bytes) => createHash('sha256').update(bytes).digest();

function run(args, { input = '', env } = {}) {
  const result = spawnSync(process.execPath, [CLI, ...args], { cwd: dir, input, encoding: 'utf8', env: { ...process.env, ...env }, maxBuffer: 64 << 20 });
  assert.equal(result.error, undefined);
  assert.doesNotMatch(result.stderr, /\n\s+at /, `stack trace in stderr:\n${result.stderr}`);
  return result;
}

async function openStore(bytes, name) {
  const path = join(dir, name);
  writeFileSync(path, bytes);
  return StoreReader.open(path);
}

async function allRecords(store) {
  const out = [];
  for await (const { hash, count } of store.records()) out.push(`${Buffer.from(hash).toString('hex')}:${count}`);
  return out;
}

/** A version 1 store, byte by byte as docs/FORMAT.md specified it: 64-byte header, index at 64. */
function versionOneStore(records) {
  const sorted = [...records].sort((a, b) => Buffer.compare(a.hash, b.hash));
  const indexBits = 0;
  const recordsOffset = 64 + 2 * 8;
  const bytes = Buffer.alloc(recordsOffset + sorted.length * 24);
  Buffer.from([0x89, 0x42, 0x47, 0x53, 0x0d, 0x0a, 0x1a, 0x0a]).copy(bytes, 0);
  bytes.writeUInt16LE(1, 16);
  bytes.writeUInt8(1, 18);
  bytes.writeUInt8(indexBits, 19);
  bytes.writeUInt32LE(24, 20);
  bytes.writeBigUInt64LE(BigInt(sorted.length), 24);
  bytes.writeBigUInt64LE(64n, 32);
  bytes.writeBigUInt64LE(BigInt(recordsOffset), 40);
  bytes.writeBigUInt64LE(0n, 64);
  bytes.writeBigUInt64LE(BigInt(sorted.length), 72);
  sorted.forEach(({ hash, count }, i) => {
    hash.copy(bytes, recordsOffset + i * 24);
    bytes.writeUInt32BE(count, recordsOffset + i * 24 + 20);
  });
  sha256(bytes.subarray(16)).copy(bytes, 8, 0, 8);
  return bytes;
}

/** Recompute the checksum after an edit, so only the edited field is wrong. */
function resum(bytes) {
  const copy = Buffer.from(bytes);
  sha256(copy.subarray(16)).copy(copy, 8, 0, 8);
  return copy;
}

test('version 2 header: 128 bytes, list id, generation and min count at their offsets', async () => {
  const records = Array.from({ length: 100 }, (_, i) => ({ hash: sha1(`pw${i}`), count: i + 1 }));
  const listId = '00112233445566778899aabbccddeeff';
  const bytes = Buffer.from(writeStore(records, { hashType: 'sha1', listId, generation: 2 ** 40 + 3, minCount: 10 }));
  assert.equal(STORE_VERSION, 2);
  assert.equal(STORE_HEADER_SIZE, 128);
  assert.equal(bytes.readUInt16LE(16), 2);
  assert.equal(bytes.readBigUInt64LE(32), 128n, 'index_offset');
  const indexBits = bytes[19];
  assert.equal(bytes.readBigUInt64LE(40), BigInt(128 + (2 ** indexBits + 1) * 8), 'records_offset');
  assert.equal(bytes.subarray(48, 64).toString('hex'), listId);
  assert.equal(bytes.readBigUInt64LE(64), BigInt(2 ** 40 + 3));
  assert.equal(bytes.readUInt32LE(72), 10);
  assert.ok(bytes.subarray(76, 128).every((b) => b === 0), 'reserved bytes are zero');
  assert.equal(bytes.length, 128 + (2 ** indexBits + 1) * 8 + 100 * 24);

  const store = await openStore(bytes, 'v2.bgs');
  assert.equal(store.version, 2);
  assert.equal(store.listId, listId);
  assert.equal(store.generation, 2 ** 40 + 3);
  assert.equal(store.minCount, 10);
  assert.equal(store.count, 100);
  const hit = await store.lookup(sha1('pw42').subarray(0, 3), 20);
  assert.ok(hit.some((r) => Buffer.from(r.hash).equals(sha1('pw42')) && r.count === 43));
  await store.close();

  // A Uint8Array list id is the same identity; no identity is the unnamed list.
  const fromBytes = Buffer.from(writeStore(records, { hashType: 'sha1', listId: Buffer.from(listId, 'hex'), generation: 2 ** 40 + 3, minCount: 10 }));
  assert.deepEqual(fromBytes, bytes);
  const unnamed = await openStore(writeStore(records, { hashType: 'sha1' }), 'unnamed.bgs');
  assert.deepEqual([unnamed.listId, unnamed.generation, unnamed.minCount], ['0'.repeat(32), 0, 0]);
  await unnamed.close();

  for (const bad of [{ listId: 'xyz' }, { listId: new Uint8Array(15) }, { generation: -1 }, { generation: 1.5 }, { minCount: 2 ** 32 }]) {
    assert.throws(() => writeStore(records, { hashType: 'sha1', ...bad }), RangeError, JSON.stringify(bad));
  }
  assert.throws(() => writeStore(records, { hashType: 'sha1', listId: 42 }), TypeError);
});

test('version 1 stores are still read, with an unnamed identity', async () => {
  const records = ['a', 'b', 'c'].map((pw, i) => ({ hash: sha1(pw), count: 10 * (i + 1) }));
  const store = await openStore(versionOneStore(records), 'v1.bgs');
  assert.equal(store.version, 1);
  assert.equal(store.listId, '0'.repeat(32));
  assert.equal(store.generation, 0);
  assert.equal(store.minCount, 0);
  assert.equal(store.recordsOffset, 80);
  const found = await store.lookup(sha1('b').subarray(0, 3), 20);
  assert.deepEqual(found.map((r) => r.count), [20]);
  assert.equal((await allRecords(store)).length, 3);
  await store.close();
});

test('corrupt version 2 headers are rejected with their codes', async () => {
  const records = Array.from({ length: 50 }, (_, i) => ({ hash: sha1(`x${i}`), count: 1 }));
  const good = Buffer.from(writeStore(records, { hashType: 'sha1', listId: 'ff'.repeat(16), generation: 5 }));
  const edit = (at, fn) => {
    const copy = Buffer.from(good);
    fn(copy, at);
    return resum(copy);
  };
  const cases = [
    ['version 3', edit(16, (b) => b.writeUInt16LE(3, 16)), 'E_VERSION'],
    ['version 0', edit(16, (b) => b.writeUInt16LE(0, 16)), 'E_VERSION'],
    ['reserved byte', edit(100, (b) => { b[100] = 1; }), 'E_HEADER'],
    ['reserved byte 76', edit(76, (b) => { b[76] = 1; }), 'E_HEADER'],
    ['index offset 64', edit(32, (b) => b.writeBigUInt64LE(64n, 32)), 'E_HEADER'],
    ['generation above 2^53', edit(64, (b) => b.writeBigUInt64LE(2n ** 60n, 64)), 'E_HEADER'],
    ['header cut short', good.subarray(0, 100), 'E_TRUNCATED'],
    ['list id flipped, old checksum', (() => { const c = Buffer.from(good); c[50] ^= 1; return c; })(), 'E_CHECKSUM'],
  ];
  for (const [name, bytes, code] of cases) {
    await assert.rejects(openStore(bytes, 'bad.bgs'), (e) => e.code === code, name);
  }
  // A version 1 file whose "reserved" bytes 48..63 are not zero stays an error.
  const v1 = versionOneStore(records);
  v1[50] = 1;
  await assert.rejects(openStore(resum(v1), 'bad-v1.bgs'), (e) => e.code === 'E_HEADER');
});

test('build --store pairs the filter and the store: one random list id, --generation, min count', async () => {
  const rows = ['password', '123456', 'letmein', 'rare'].map((pw, i) => `${sha1(pw).toString('hex').toUpperCase()}:${[50, 20, 9, 0][i]}`);
  writeFileSync(join(dir, 'dump.txt'), `${rows.join('\r\n')}\r\n`);
  const identities = [];
  for (const name of ['a', 'b']) {
    const built = run(['build', 'dump.txt', '--format', 'hibp', '--min-count', '10', '-o', `${name}.bgf`, '--store', `${name}.bgs`, '--generation', '12']);
    assert.equal(built.status, 0, built.stderr);
    const header = JSON.parse(run(['inspect', `${name}.bgf`, '--json']).stdout).header;
    const store = await StoreReader.open(join(dir, `${name}.bgs`));
    assert.match(header.listId, /^[0-9a-f]{32}$/);
    assert.notEqual(header.listId, '0'.repeat(32));
    assert.equal(store.listId, header.listId, 'the store carries the filter\'s list id');
    assert.equal(store.generation, 12);
    assert.equal(header.generation, 12);
    assert.equal(store.minCount, 10);
    assert.equal(store.count, 2);
    assert.match(built.stderr, new RegExp(`wrote ${name}\\.bgs .*2 records, list id ${header.listId}, generation 12`));
    identities.push(header.listId);
    await store.close();
  }
  assert.notEqual(identities[0], identities[1], 'each build without --list-id gets its own id');

  const named = run(['build', 'dump.txt', '--format', 'hibp', '-o', 'n.bgf', '--store', 'n.bgs', '--list-id', 'ABCDEF0123456789ABCDEF0123456789', '-q']);
  assert.equal(named.status, 0, named.stderr);
  const store = await StoreReader.open(join(dir, 'n.bgs'));
  assert.equal(store.listId, 'abcdef0123456789abcdef0123456789');
  assert.equal(store.minCount, 1, 'the default --min-count');
  assert.equal(store.generation, 0);
  await store.close();
  assert.equal(JSON.parse(run(['inspect', 'n.bgf', '--json']).stdout).header.listId, 'abcdef0123456789abcdef0123456789');

  // Without --store the filter stays unnamed, so builds are reproducible.
  assert.equal(run(['build', 'dump.txt', '--format', 'hibp', '-o', 'r1.bgf', '-q']).status, 0);
  assert.equal(run(['build', 'dump.txt', '--format', 'hibp', '-o', 'r2.bgf', '-q']).status, 0);
  assert.deepEqual(readFileSync(join(dir, 'r1.bgf')), readFileSync(join(dir, 'r2.bgf')));
  assert.equal(JSON.parse(run(['inspect', 'r1.bgf', '--json']).stdout).header.listId, '0'.repeat(32));
  // ... and with --list-id and --store the pair is reproducible too.
  for (const name of ['p1', 'p2']) {
    assert.equal(run(['build', 'dump.txt', '--format', 'hibp', '-o', `${name}.bgf`, '--store', `${name}.bgs`, '--list-id', '11'.repeat(16), '-q']).status, 0);
  }
  assert.deepEqual(readFileSync(join(dir, 'p1.bgf')), readFileSync(join(dir, 'p2.bgf')));
  assert.deepEqual(readFileSync(join(dir, 'p1.bgs')), readFileSync(join(dir, 'p2.bgs')));

  // URL stores record min count 0.
  writeFileSync(join(dir, 'urls.txt'), 'evil.example/\nbad.example/login\n');
  assert.equal(run(['build', 'urls.txt', '--format', 'urls', '-o', 'u.bgf', '--store', 'u.bgs', '-q']).status, 0);
  const urls = await StoreReader.open(join(dir, 'u.bgs'));
  assert.equal(urls.minCount, 0);
  assert.equal(urls.listId, JSON.parse(run(['inspect', 'u.bgf', '--json']).stdout).header.listId);
  await urls.close();

  for (const args of [['--list-id', 'abc'], ['--list-id', 'g'.repeat(32)], ['--generation', '-1'], ['--generation', 'x'], ['--generation', '1e3']]) {
    const result = run(['build', 'dump.txt', '--format', 'hibp', '-o', 'bad.bgf', ...args]);
    assert.equal(result.status, 64, `${args.join(' ')}: ${result.stderr}`);
    assert.match(result.stderr, /\(E_USAGE\)\n$/);
  }
});

// ---------------------------------------------------------------------------
// The streaming writer: the same bytes as writeStore, in bounded memory.

async function streamStore(records, options, name) {
  const { AtomicOutput } = await import('../../js/cli/output.js');
  const { StoreWriter } = await import('../../js/cli/store-writer.js');
  const path = join(dir, name);
  const output = await AtomicOutput.create(path);
  const writer = new StoreWriter(output, options);
  for (const { hash, count } of records) writer.add(hash, count);
  const result = await writer.finish();
  await output.commit();
  const leftovers = (await import('node:fs')).readdirSync(dir).filter((entry) => entry.startsWith(`${name}.tmp-`));
  assert.deepEqual(leftovers, [], 'no temporary file is left');
  return { bytes: readFileSync(path), ...result };
}

function shuffled(list, seed = 1) {
  const out = [...list];
  let state = seed;
  for (let i = out.length - 1; i > 0; i--) {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    const j = state % (i + 1);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

test('StoreWriter writes the bytes of writeStore: sorted, shuffled, duplicates, many runs and merge passes', async () => {
  const identity = { listId: 'ab'.repeat(16), generation: 9, minCount: 3 };
  const base = Array.from({ length: 5000 }, (_, i) => ({ hash: sha1(`s${i}`), count: (i * 7919) % 100000 }));
  const sorted = [...base].sort((a, b) => Buffer.compare(a.hash, b.hash));
  // Duplicates, with the larger count first and last, and hashes sharing their first 5 bytes.
  const twins = Array.from({ length: 40 }, (_, i) => {
    const hash = Buffer.from(sha1('twin'));
    hash[19] = i;
    hash[10] = 255 - i;
    return { hash, count: i };
  });
  const withDuplicates = [...base, ...base.slice(0, 300).map((r) => ({ hash: r.hash, count: r.count + 1 })), ...base.slice(300, 600).map((r) => ({ hash: r.hash, count: 0 })), ...twins, ...twins];
  const cases = [
    ['sorted', sorted, {}, { sorted: true }],
    ['sorted with duplicates', [...sorted.slice(0, 10), sorted[9], sorted[9], ...sorted.slice(10)], {}, { sorted: true }],
    ['shuffled, one run', shuffled(base), {}, { sorted: false, runs: 1 }],
    ['sorted, then one late record', [...sorted.slice(1), sorted[0]], { runBytes: 24 * 1000 }, { sorted: false }],
    ['shuffled, 5 runs', shuffled(base, 2), { runBytes: 24 * 1000 }, { sorted: false, runs: 5 }],
    ['shuffled, 100 runs: two merge passes', shuffled(base, 3), { runBytes: 24 * 50 }, { sorted: false, runs: 100 }],
    ['duplicates and shared prefixes', shuffled(withDuplicates, 4), { runBytes: 24 * 700 }, { sorted: false }],
    ['empty', [], {}, { sorted: true }],
    ['one record', [base[0]], {}, { sorted: true }],
  ];
  for (const [name, records, options, expected] of cases) {
    const reference = Buffer.from(writeStore(records, { hashType: 'sha1', ...identity }));
    const streamed = await streamStore(records, { hashType: 'sha1', ...identity, ...options }, `${name.replace(/\W+/g, '-')}.bgs`);
    assert.equal(streamed.sorted, expected.sorted, name);
    // The in-order start of the input is one more run, kept where it was written.
    if (expected.runs !== undefined) assert.ok([expected.runs, expected.runs + 1].includes(streamed.runs), `${name}: ${streamed.runs} runs`);
    assert.equal(streamed.bytes.length, reference.length, `${name}: length`);
    assert.ok(streamed.bytes.equals(reference), `${name}: same bytes as writeStore`);
  }
  // URL stores (SHA-256, 36-byte records) go through the same path.
  const urls = Array.from({ length: 3000 }, (_, i) => ({ hash: sha256(`u${i}`), count: 1 }));
  const reference = Buffer.from(writeStore(urls, { hashType: 'sha256' }));
  const streamed = await streamStore(shuffled(urls), { hashType: 'sha256', runBytes: 36 * 256 }, 'urls.bgs');
  assert.ok(streamed.bytes.equals(reference), 'sha256 store');
});

function temporaries() {
  return readdirSync(dir).filter((entry) => entry.includes('.tmp-'));
}

test('build --store streams: sorted and shuffled dumps give writeStore\'s bytes, runs and merge on disk, progress per phase', () => {
  const rows = Array.from({ length: 3000 }, (_, i) => ({ hash: sha1(`pw-${i}`), count: (i * 31) % 500 }));
  const line = ({ hash, count }) => `${hash.toString('hex').toUpperCase()}:${count}`;
  const ordered = [...rows].sort((a, b) => Buffer.compare(a.hash, b.hash));
  writeFileSync(join(dir, 'ordered.txt'), `${ordered.map(line).join('\r\n')}\r\n`);
  // Shuffled, with duplicates: a row again with a higher count, one with a lower.
  const mixed = [...shuffled(rows, 7), { hash: rows[5].hash, count: 100000 }, { hash: rows[6].hash, count: 0 }];
  writeFileSync(join(dir, 'mixed.txt'), `${mixed.map(line).join('\n')}`);
  const listId = '5a'.repeat(16);
  const identity = { hashType: 'sha1', listId, generation: 4, minCount: 1 };
  const kept = (list) => list.filter((r) => r.count >= 1);
  for (const [name, source, runBytes] of [['ordered', ordered, undefined], ['mixed', mixed, 24 * 256], ['mixed-one-run', mixed, undefined]]) {
    const input = name.startsWith('mixed') ? 'mixed.txt' : 'ordered.txt';
    const env = runBytes ? { BLOOMGATE_STORE_RUN_BYTES: String(runBytes) } : {};
    const built = run(['build', input, '--format', 'hibp', '-o', `${name}.bgf`, '--store', `${name}.bgs`, '--list-id', listId, '--generation', '4', '--progress'], { env });
    assert.equal(built.status, 0, built.stderr);
    const expected = Buffer.from(writeStore(kept(source), identity));
    assert.ok(readFileSync(join(dir, `${name}.bgs`)).equals(expected), `${name}: the bytes of writeStore`);
    assert.equal(statSync(join(dir, `${name}.bgs`)).mode & 0o777, statSync(join(dir, `${name}.bgf`)).mode & 0o777, 'the store gets the filter\'s permissions');
    assert.deepEqual(temporaries(), []);
    const phases = built.stderr.replace(/\r/g, '\n');
    assert.match(phases, /^counting/m);
    assert.match(phases, /^adding/m);
    assert.match(phases, /^writing/m);
    if (name === 'mixed') {
      assert.match(phases, /sorting run 12/, 'the 12 runs of 256 records are announced');
      assert.match(phases, /^merging/m);
    }
    if (name === 'ordered') assert.doesNotMatch(phases, /merging|sorting run/, 'sorted input needs no sort');
  }

  // A bad line after runs were written: exit 65, no outputs, no run files.
  writeFileSync(join(dir, 'late-bad.txt'), `${mixed.map(line).join('\n')}\nnot a row\n`);
  const failed = run(['build', 'late-bad.txt', '--format', 'hibp', '--capacity', '5000', '-o', 'late.bgf', '--store', 'late.bgs'], { env: { BLOOMGATE_STORE_RUN_BYTES: String(24 * 256) } });
  assert.equal(failed.status, 65, failed.stderr);
  assert.match(failed.stderr, /line 3003: expected SHA1HEX:COUNT/);
  assert.deepEqual(readdirSync(dir).filter((entry) => entry.startsWith('late.bg')), []);
  assert.deepEqual(temporaries(), []);

  // URL stores too: the expressions' SHA-256, any input order.
  const expressions = Array.from({ length: 700 }, (_, i) => `host${i}.example/`);
  writeFileSync(join(dir, 'many-urls.txt'), `${shuffled(expressions, 3).join('\n')}\n`);
  const urls = run(['build', 'many-urls.txt', '--format', 'urls', '-o', 'mu.bgf', '--store', 'mu.bgs', '--list-id', listId, '-q'], { env: { BLOOMGATE_STORE_RUN_BYTES: String(36 * 100) } });
  assert.equal(urls.status, 0, urls.stderr);
  const expected = Buffer.from(writeStore(expressions.map((e) => ({ hash: sha256(e), count: 1 })), { hashType: 'sha256', listId }));
  assert.ok(readFileSync(join(dir, 'mu.bgs')).equals(expected), 'url store: the bytes of writeStore');
  assert.deepEqual(temporaries(), []);
});

// ---------------------------------------------------------------------------
// Stores crafted with a valid checksum: order and buckets are checked too.

/** Records of a store as [offset, size] and its index, for crafting. */
function layout(bytes) {
  const buf = Buffer.from(bytes);
  const headerSize = buf.readUInt16LE(16) === 1 ? 64 : 128;
  const indexBits = buf[19];
  const recordSize = buf.readUInt32LE(20);
  const count = Number(buf.readBigUInt64LE(24));
  const recordsOffset = Number(buf.readBigUInt64LE(40));
  const at = (i) => recordsOffset + i * recordSize;
  const index = (b) => Number(buf.readBigUInt64LE(headerSize + b * 8));
  const setIndex = (b, value) => buf.writeBigUInt64LE(BigInt(value), headerSize + b * 8);
  return { buf, indexBits, recordSize, count, at, index, setIndex };
}

function swapRecords(l, i, j) {
  const a = Buffer.from(l.buf.subarray(l.at(i), l.at(i) + l.recordSize));
  l.buf.copy(l.buf, l.at(i), l.at(j), l.at(j) + l.recordSize);
  a.copy(l.buf, l.at(j));
}

test('stores with a valid checksum but unsorted, repeated or misplaced records are rejected (E_ORDER, E_INDEX)', async () => {
  // 200,000 records: more than one 4 MiB piece of the checksum pass (174,762 records of 24 bytes).
  const records = Array.from({ length: 200000 }, (_, i) => ({ hash: sha1(`crafted-${i}`), count: i + 1 }));
  const good = writeStore(records, { hashType: 'sha1', listId: '77'.repeat(16) });
  const clean = await openStore(good, 'clean.bgs');
  assert.equal(clean.count, 200000);
  await clean.close();
  const piece = Math.floor((1 << 22) / 24);

  const crafted = [];
  const craft = (name, edit, code, pattern) => {
    const l = layout(good);
    edit(l);
    crafted.push([name, resum(l.buf), code, pattern]);
  };
  // Two neighbours in one bucket swapped.
  craft('swapped', (l) => {
    let b = 0;
    while (l.index(b + 1) - l.index(b) < 2) b++;
    swapRecords(l, l.index(b), l.index(b) + 1);
  }, 'E_ORDER', /is below the one before it/);
  // Swapped across the boundary between two pieces of the pass (and two buckets, so the bucket check alone would see it too).
  craft('swapped across pieces', (l) => swapRecords(l, piece - 1, piece), null, null);
  // A hash repeated: the record after it overwritten with it (counts differ).
  craft('duplicate', (l) => {
    l.buf.copy(l.buf, l.at(10), l.at(9), l.at(9) + 20);
  }, 'E_ORDER', /repeats the hash before it/);
  // Repeated across the piece boundary: its predecessor is in the previous piece.
  craft('duplicate across pieces', (l) => {
    l.buf.copy(l.buf, l.at(piece), l.at(piece - 1), l.at(piece - 1) + 20);
  }, 'E_ORDER', /record 174762 repeats the hash before it/);
  // Sorted, but the index moved one record into the bucket before its own.
  craft('misplaced by the index', (l) => {
    let b = 1;
    while (l.index(b + 1) - l.index(b) < 1) b++;
    l.setIndex(b, l.index(b) + 1);
  }, 'E_INDEX', /is not in index bucket/);
  // Sorted and the index intact, but the last hash of a bucket edited to just below the first hash
  // of the next bucket: still in order, now in the wrong bucket.
  craft('hash outside its bucket', (l) => {
    let b = 0;
    while (!(l.index(b + 1) - l.index(b) >= 2 && l.index(b + 2) - l.index(b + 1) >= 1)) b++;
    const last = l.index(b + 1) - 1;
    const next = l.buf.subarray(l.at(last + 1), l.at(last + 1) + 20);
    const edited = Buffer.from(next);
    for (let k = 19; k >= 3; k--) {
      if (next[k] > 0) {
        edited.set(next.subarray(0, k), 0);
        edited[k] = next[k] - 1;
        edited.fill(0xff, k + 1, 20);
        break;
      }
    }
    edited.copy(l.buf, l.at(last));
  }, 'E_INDEX', /is not in index bucket/);

  for (const [name, bytes, code, pattern] of crafted) {
    await assert.rejects(openStore(bytes, 'crafted.bgs'), (error) => {
      assert.ok(code === null ? ['E_ORDER', 'E_INDEX'].includes(error.code) : error.code === code, `${name}: ${error.code} ${error.message}`);
      if (pattern) assert.match(error.message, pattern, name);
      return true;
    }, name);
  }
  // A flipped bit without a new checksum is still a checksum error, whatever else it breaks.
  const l = layout(good);
  swapRecords(l, 5, 6);
  await assert.rejects(openStore(l.buf, 'crafted.bgs'), (error) => error.code === 'E_CHECKSUM');

  // The CLI reports them as data errors (exit 65), not internal ones.
  const [, unsorted] = crafted[0];
  writeFileSync(join(dir, 'unsorted.bgs'), unsorted);
  const exported = run(['export-ranges', 'unsorted.bgs', '-o', 'unsorted-export']);
  assert.equal(exported.status, 65, exported.stderr);
  assert.match(exported.stderr, /\(E_ORDER\)\n$/);
  const served = run(['serve', '--password-store', 'unsorted.bgs', '--port', '0']);
  assert.equal(served.status, 65, served.stderr);
  assert.match(served.stderr, /\(E_ORDER\)\n$/);
});
