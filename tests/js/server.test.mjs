import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, writeFile, mkdir, symlink, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { BloomFilter, loadFilter } from '../../js/index.js';
import { checkPassword } from '../../js/password.js';
import { StoreReader, writeStore } from '../../js/store.js';
import { startReferenceServer } from '../../js/server.js';

const sha1 = (text) => createHash('sha1').update(text).digest();
const sha256 = (text) => createHash('sha256').update(text).digest();
const PASSWORDS = new Map([['password', 9659365], ['123456', 37359195], ['qwerty', 10556095], ['dragon', 1], ['monkey', 12]]);
const LIST_ID = 'a11ce000000000000000000000000001';

let dir;
let server;
let base;
let filterBytes;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'bloomgate-server-'));
  const filter = await BloomFilter.create({ capacity: 100, errorRate: 0.001, keyEncoding: 'sha1', listId: LIST_ID, generation: 3 });
  for (const pw of PASSWORDS.keys()) filter.add(pw);
  filterBytes = filter.serialize();
  filter.free();
  await writeFile(join(dir, 'passwords.bgf'), filterBytes);
  await writeFile(join(dir, 'passwords.bgs'), writeStore([...PASSWORDS].map(([pw, count]) => ({ hash: sha1(pw), count })), { hashType: 'sha1', listId: LIST_ID, generation: 3 }));
  await writeFile(join(dir, 'urls.bgs'), writeStore(['evil.example/', 'bad.example/login'].map((e) => ({ hash: sha256(e), count: 1 })), { hashType: 'sha256' }));
  await mkdir(join(dir, 'site'));
  await writeFile(join(dir, 'site', 'index.html'), '<h1>demo</h1>');
  await writeFile(join(dir, 'secret.txt'), 'outside the static root');
  await symlink(join(dir, 'secret.txt'), join(dir, 'site', 'escape.txt'));
  ({ server, url: base } = await startReferenceServer({
    filters: { passwords: join(dir, 'passwords.bgf') },
    passwordStore: join(dir, 'passwords.bgs'),
    urlStore: join(dir, 'urls.bgs'),
    staticDir: join(dir, 'site'),
    onError: () => {},
  }));
});

after(async () => {
  await new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); });
  await rm(dir, { recursive: true, force: true });
});

test('binds 127.0.0.1 by default', () => {
  assert.equal(server.address().address, '127.0.0.1');
});

test('filters: ETag, If-None-Match, Cache-Control and CORS; loadFilter reads them', async () => {
  const first = await fetch(`${base}/filters/passwords.bgf`);
  assert.equal(first.status, 200);
  const etag = first.headers.get('etag');
  assert.match(etag, /^"[A-Za-z0-9_-]{43}"$/);
  assert.match(first.headers.get('cache-control'), /max-age=\d+/);
  assert.equal(first.headers.get('access-control-allow-origin'), '*');
  assert.deepEqual(new Uint8Array(await first.arrayBuffer()), new Uint8Array(filterBytes));
  const again = await fetch(`${base}/filters/passwords.bgf`, { headers: { 'If-None-Match': `W/"x", ${etag}` } });
  assert.equal(again.status, 304);
  assert.equal((await again.arrayBuffer()).byteLength, 0);
  const changed = await fetch(`${base}/filters/passwords.bgf`, { headers: { 'If-None-Match': '"other"' } });
  assert.equal(changed.status, 200);
  await changed.arrayBuffer();
  const filter = await loadFilter(`${base}/filters/passwords.bgf`);
  assert.equal(filter.mightContain('dragon'), true);
  filter.free();
  assert.equal((await fetch(`${base}/filters/nope.bgf`)).status, 404);
});

test('range endpoint: exact rows, and padding only when asked', async () => {
  const hex = sha1('password').toString('hex').toUpperCase();
  const plain = await (await fetch(`${base}/range/${hex.slice(0, 5)}`)).text();
  assert.equal(plain, `${hex.slice(5)}:9659365`);
  const response = await fetch(`${base}/range/${hex.slice(0, 5).toLowerCase()}`, { headers: { 'Add-Padding': 'true' } });
  assert.equal(response.headers.get('content-type'), 'text/plain');
  const rows = (await response.text()).split('\r\n');
  assert.ok(rows.length >= 800 && rows.length <= 1000, `padded to ${rows.length} rows`);
  assert.ok(rows.includes(`${hex.slice(5)}:9659365`));
  assert.equal(rows.filter((r) => !r.endsWith(':0')).length, 1);
  for (const row of rows) assert.match(row, /^[0-9A-F]{35}:\d+$/);
});

test('range replies carry their Content-Length (not chunked), HEAD the same with no body', async () => {
  const hex = sha1('password').toString('hex').toUpperCase().slice(0, 5);
  for (const headers of [{}, { 'Add-Padding': 'true' }]) {
    const get = await fetch(`${base}/range/${hex}`, { headers });
    const body = Buffer.from(await get.arrayBuffer());
    assert.equal(get.headers.get('content-length'), String(body.length));
    assert.equal(get.headers.get('transfer-encoding'), null);
    const head = await fetch(`${base}/range/${hex}`, { method: 'HEAD', headers });
    assert.equal((await head.arrayBuffer()).byteLength, 0);
    if (!headers['Add-Padding']) assert.equal(head.headers.get('content-length'), String(body.length));
    else assert.ok(Number(head.headers.get('content-length')) >= 800 * 39 - 2);
  }
});

test('checkPassword works unchanged against the reference server', async () => {
  const filter = await BloomFilter.from(filterBytes);
  assert.deepEqual(await checkPassword('qwerty', { filter, rangeUrl: `${base}/range` }), { breached: true, count: 10556095, escalated: true, confirmed: true, minCount: 1 });
  const clean = await checkPassword('a very unusual passphrase', { filter, rangeUrl: `${base}/range` });
  assert.equal(clean.breached, false);
  filter.free();
});

test('padded replies: every row a 35-hex suffix, sorted, the real rows among fresh random padding', async () => {
  const { rangeReply } = await import('../../js/store.js');
  const records = ['21BD10000000000000000000000000000000000A', '21BD18888888888888888888888888888888888F', '21BD1FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF']
    .map((hex, i) => ({ hash: Buffer.from(hex, 'hex'), count: i + 1 }));
  const firstDigits = new Array(16).fill(0);
  let previous = null;
  for (let reply = 0; reply < 200; reply++) {
    const text = rangeReply(records, true);
    assert.ok(!text.endsWith('\r\n'));
    const rows = text.split('\r\n');
    assert.ok(rows.length >= 800 && rows.length <= 1000);
    assert.ok(rows.every((row) => /^[0-9A-F]{35}:\d+$/.test(row)));
    assert.deepEqual(rows, [...rows].sort(), 'sorted, real rows in place');
    assert.deepEqual(rows.filter((row) => !row.endsWith(':0')), ['0000000000000000000000000000000000A:1', '8888888888888888888888888888888888F:2', 'FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF:3']);
    const padding = rows.filter((row) => row.endsWith(':0'));
    for (const row of padding) firstDigits[parseInt(row[0], 16)]++;
    if (previous) assert.equal(padding.filter((row) => previous.has(row)).length, 0, 'fresh padding every reply');
    previous = new Set(padding);
  }
  // Uniform first digits: each of 16 near 1/16 of ~180,000 rows (chi-square far below any plausible bias).
  const total = firstDigits.reduce((a, b) => a + b, 0);
  const chi = firstDigits.reduce((sum, n) => sum + (n - total / 16) ** 2 / (total / 16), 0);
  assert.ok(chi < 60, `chi-square ${chi.toFixed(1)} over 15 degrees of freedom`);
});

test('padded replies order rows by the whole suffix when their first 40 bits tie (drawn to tie on purpose)', async () => {
  const { rangeReply, rangeReplyBytes } = await import('../../js/store.js');
  const record = { hash: Buffer.from('21BD1ABCDEF012345678000000000000000000AA', 'hex'), count: 7 };
  // Every padding row starts with the record's first 40 suffix bits, so the order rests on the rest.
  let state = 1;
  const tied = (n) => {
    const bytes = Buffer.alloc(n);
    for (let i = 0; i < n; i++) {
      state = (state * 1103515245 + 12345) >>> 0;
      bytes[i] = state >>> 24;
    }
    if (n > 2) for (let i = 0; i < n; i += 18) bytes.set([0xab, 0xcd, 0xef, 0x01, 0x23], i);
    return bytes;
  };
  const rows = rangeReplyBytes([record], true, tied).latin1Slice().split('\r\n');
  assert.ok(rows.length >= 800 && rows.length <= 1000);
  assert.ok(rows.every((row) => /^ABCDEF0123[0-9A-F]{25}:\d+$/.test(row)), 'every row shares the first 40 bits');
  assert.deepEqual(rows, [...rows].sort(), 'sorted by the whole suffix');
  assert.ok(rows.includes('ABCDEF012345678000000000000000000AA:7'));
  // One padding row tied with the record alone: the fast path compares the two whole suffixes.
  for (const fill of [0x00, 0xff]) {
    const one = (n) => {
      const bytes = tied(n);
      if (n > 2) {
        for (let i = 18; i < n; i += 18) bytes[i] = 0x10 + (i % 0xe0); // the others apart
        bytes.fill(fill, 5, 18); // below or above the record
      }
      return bytes;
    };
    const got = rangeReplyBytes([record], true, one).latin1Slice().split('\r\n');
    assert.deepEqual(got, [...got].sort(), `sorted with the tied row ${fill ? 'after' : 'before'} the record`);
    assert.ok(got.includes('ABCDEF012345678000000000000000000AA:7'));
  }
  // Unpadded replies are the records alone, as before.
  assert.equal(rangeReply([record], false), 'ABCDEF012345678000000000000000000AA:7');
});

test('each endpoint serves its manifest: the list id, generation, records and threshold of its store', async () => {
  const range = await fetch(`${base}/range/manifest.json`);
  assert.equal(range.status, 200);
  assert.equal(range.headers.get('x-content-type-options'), 'nosniff');
  assert.deepEqual(await range.json(), {
    format: 'bloomgate-escalation', version: 1, protocol: 'range', hashType: 'sha1', listId: LIST_ID,
    generation: 3, records: PASSWORDS.size, minCount: 0, padding: 'request', notFound: 'error',
  });
  const hashes = await (await fetch(`${base}/hashes/manifest.json`)).json();
  assert.equal(hashes.protocol, 'hashes');
  assert.equal(hashes.hashType, 'sha256');
  assert.equal(hashes.records, 2);
  assert.equal(hashes.listId, '0'.repeat(32), 'a store written without a list id is unnamed');
});

test('range replies: Vary: Add-Padding, nosniff everywhere, NTLM mode refused', async () => {
  const prefix = sha1('password').toString('hex').toUpperCase().slice(0, 5);
  const reply = await fetch(`${base}/range/${prefix}`);
  assert.equal(reply.headers.get('vary'), 'Add-Padding');
  assert.equal(reply.headers.get('x-content-type-options'), 'nosniff');
  await reply.text();
  for (const path of [`/range/${prefix}?mode=ntlm`, `/range/${prefix}?mode=NTLM`]) {
    const ntlm = await fetch(base + path);
    assert.equal(ntlm.status, 400, path);
    assert.match(await ntlm.text(), /SHA-1/);
  }
  const sha1Mode = await fetch(`${base}/range/${prefix}?mode=sha1`);
  assert.equal(sha1Mode.status, 200);
  assert.match(await sha1Mode.text(), /:9659365/);
  for (const path of ['/nowhere', '/filters/none.bgf', '/hashes/zz']) {
    const r = await fetch(base + path);
    assert.equal(r.headers.get('x-content-type-options'), 'nosniff', path);
    await r.text();
  }
});

test('a store of another list, or an older generation, is never trusted for "not breached"', async () => {
  const clean = 'a very unusual passphrase';
  const other = await BloomFilter.create({ capacity: 10, errorRate: 0.001, keyEncoding: 'sha1', listId: 'b0b00000000000000000000000000002' });
  const newer = await BloomFilter.create({ capacity: 10, errorRate: 0.001, keyEncoding: 'sha1', listId: LIST_ID, generation: 4 });
  const unnamed = await BloomFilter.create({ capacity: 10, errorRate: 0.001, keyEncoding: 'sha1' });
  for (const f of [other, newer, unnamed]) f.addAll([clean, 'password']); // "maybe"s that must be escalated
  try {
    await assert.rejects(checkPassword(clean, { filter: other, rangeUrl: `${base}/range` }), (e) => e.code === 'E_ESCALATION' && /serves list a11ce/.test(e.message));
    await assert.rejects(checkPassword(clean, { filter: newer, rangeUrl: `${base}/range` }), (e) => e.code === 'E_ESCALATION' && /generation 3 .* older than the filter's 4/.test(e.message));
    await assert.rejects(checkPassword(clean, { filter: unnamed, rangeUrl: `${base}/range` }), (e) => e.code === 'E_ESCALATION' && /no list id/.test(e.message));
    // The endpoint is refused before any range request: even a listed password is an error, not an answer.
    await assert.rejects(checkPassword('password', { filter: other, rangeUrl: `${base}/range` }), { code: 'E_ESCALATION' });
  } finally {
    for (const f of [other, newer, unnamed]) f.free();
  }
});

test('hashes endpoint returns full SHA-256 hashes for a 4-byte prefix', async () => {
  const full = sha256('bad.example/login').toString('hex');
  const body = await (await fetch(`${base}/hashes/${full.slice(0, 8)}`)).text();
  assert.equal(body, full);
  assert.equal(await (await fetch(`${base}/hashes/00000000`)).text(), full.startsWith('00000000') ? full : '');
});

test('malformed prefixes are 400; unknown routes 404; other methods 405; OPTIONS is a CORS preflight', async () => {
  for (const path of ['/range/1234', '/range/123456', '/range/XYZ12', '/range/', '/hashes/1234567', '/hashes/zzzzzzzz', '/range/%00%00%00%00%00']) {
    const r = await fetch(base + path);
    assert.equal(r.status, 400, path);
    await r.text();
  }
  assert.equal((await fetch(`${base}/nothing-here`)).status, 404);
  const post = await fetch(`${base}/range/ABCDE`, { method: 'POST', body: 'x' });
  assert.equal(post.status, 405);
  assert.equal(post.headers.get('allow'), 'GET, HEAD, OPTIONS');
  const preflight = await fetch(`${base}/range/ABCDE`, { method: 'OPTIONS' });
  assert.equal(preflight.status, 204);
  assert.match(preflight.headers.get('access-control-allow-headers'), /Add-Padding/);
});

test('never reads outside its files: traversal, encoded traversal, symlinks', async () => {
  assert.equal(await (await fetch(`${base}/`)).text(), '<h1>demo</h1>');
  for (const path of ['/../secret.txt', '/%2e%2e/secret.txt', '/..%2fsecret.txt', '/escape.txt', '/%2e%2e%2f%2e%2e%2fetc/passwd', '/bad%zz']) {
    const r = await rawGet(path);
    assert.ok(r.status === 404 || r.status === 400, `${path} -> ${r.status}`);
    assert.ok(!r.body.includes('outside the static root'), path);
  }
});

test('stays up under hostile requests', async () => {
  const garbage = [
    'GARBAGE\r\n\r\n',
    `GET /range/ABCDE HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(70000)}\r\n\r\n`,
    'GET / HTTP/1.1\r\nContent-Length: -5\r\n\r\n',
    '\x00\x01\x02\x03',
    `GET /${'a/'.repeat(5000)} HTTP/1.1\r\nHost: x\r\n\r\n`,
  ];
  for (const payload of garbage) await rawSend(payload);
  for (let i = 0; i < 50; i++) await (await fetch(`${base}/range/${randomBytes(3).toString('hex')}`)).text();
  const ok = await fetch(`${base}/range/5BAA6`);
  assert.equal(ok.status, 200);
  await ok.text();
});

test('store: lookups match a brute-force scan; corrupt stores are rejected with codes', async () => {
  const records = Array.from({ length: 3000 }, (_, i) => ({ hash: sha1(`pw${i}`), count: i + 1 }));
  records.push({ hash: sha1('pw7'), count: 99999 }); // duplicate: largest count wins
  const bytes = writeStore(records, { hashType: 'sha1' });
  const path = join(dir, 'big.bgs');
  await writeFile(path, bytes);
  const store = await StoreReader.open(path);
  assert.equal(store.count, 3000);
  for (let i = 0; i < 200; i++) {
    const h = sha1(`pw${i}`);
    const found = await store.lookup(h.subarray(0, 3), 20);
    const expected = records.filter((r) => r.hash.subarray(0, 3).toString('hex').slice(0, 5) === h.subarray(0, 3).toString('hex').slice(0, 5));
    assert.equal(found.length, new Set(expected.map((r) => r.hash.toString('hex'))).size);
    assert.ok(found.some((r) => Buffer.from(r.hash).equals(h)));
  }
  assert.equal((await store.lookup(sha1('pw7').subarray(0, 3), 20)).find((r) => Buffer.from(r.hash).equals(sha1('pw7'))).count, 99999);
  const all = [];
  for await (const r of store.records(100)) all.push(Buffer.from(r.hash).toString('hex'));
  assert.deepEqual(all, [...all].sort());
  await store.close();

  const cases = [
    ['truncated', bytes.subarray(0, bytes.length - 1), 'E_TRUNCATED'],
    ['trailing', Buffer.concat([bytes, Buffer.from([0])]), 'E_TRAILING'],
    ['magic', Buffer.concat([Buffer.from('NOTASTORE'), bytes.subarray(9)]), 'E_MAGIC'],
    ['flipped record', flip(bytes, bytes.length - 3), 'E_CHECKSUM'],
    ['tiny', bytes.subarray(0, 10), 'E_TRUNCATED'],
  ];
  for (const [name, corrupt, code] of cases) {
    const p = join(dir, `${name}.bgs`);
    await writeFile(p, corrupt);
    await assert.rejects(StoreReader.open(p), (e) => e.code === code, name);
  }
});

function flip(bytes, at) {
  const copy = Buffer.from(bytes);
  copy[at] ^= 1;
  return copy;
}

function rawSend(payload) {
  const { port } = server.address();
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(payload));
    socket.on('data', () => {});
    socket.on('error', resolve);
    socket.on('close', resolve);
    socket.setTimeout(2000, () => socket.destroy());
  });
}

/** A GET whose path is sent exactly as written (fetch would normalise dot segments). */
function rawGet(path) {
  const { port } = server.address();
  return new Promise((resolve, reject) => {
    let data = '';
    const socket = connect(port, '127.0.0.1', () => socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`));
    socket.on('data', (chunk) => { data += chunk; });
    socket.on('error', reject);
    socket.on('close', () => resolve({ status: Number(data.split(' ')[1]), body: data }));
  });
}
