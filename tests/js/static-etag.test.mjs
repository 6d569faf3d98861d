// `bloomgate serve --static`: ETags name the content, not the mtime. A rewrite in place that puts
// the mtime back (same size, same inode, same second) must answer 200 with a new ETag, never 304.
// Issue 19, item 4. A real `bloomgate serve` process on 127.0.0.1.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, openSync, rmSync, statSync, utimesSync, writeFileSync, writeSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI } from './helpers/cli.mjs';

let dir;
let server;
let base;
let bigWritten;

const MTIME = 1_700_000_000; // whole seconds: put back exactly, to the nanosecond

/** Overwrite `text` at `offset` in place (no truncation, no new inode), then restore the mtime. */
function rewriteInPlace(path, text, offset = 0) {
  const fd = openSync(path, 'r+');
  writeSync(fd, text, offset);
  closeSync(fd);
  utimesSync(path, MTIME, MTIME);
}

/** What the old validator (size-mtime-inode) was made of. */
function oldValidator(path) {
  const info = statSync(path);
  return `${info.size}-${Math.floor(info.mtimeMs)}-${info.ino}`;
}

const sha256Tag = (bytes) => `"${createHash('sha256').update(bytes).digest('base64url')}"`;

async function get(path, headers = {}, method = 'GET') {
  const res = await fetch(`${base}${path}`, { headers, method });
  const body = new Uint8Array(await res.arrayBuffer());
  return { status: res.status, etag: res.headers.get('etag'), body };
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bg-static-etag-'));
  // Over the server's whole-read size, so its digest goes through the (size, mtime, ctime, inode) cache.
  const big = Buffer.alloc(3 * 1024 * 1024);
  for (let i = 0; i < big.length; i++) big[i] = (i * 2654435761) >>> 24;
  writeFileSync(join(dir, 'filter-1.bgf'), big);
  utimesSync(join(dir, 'filter-1.bgf'), MTIME, MTIME);
  bigWritten = Date.now();
  writeFileSync(join(dir, 'manifest.json'), '{"generation":1,"full":"filter-1.bgf"}\n');
  utimesSync(join(dir, 'manifest.json'), MTIME, MTIME);
  server = spawn(process.execPath, [CLI, 'serve', '--static', dir, '--port', '0'], { stdio: ['ignore', 'ignore', 'pipe'] });
  base = await new Promise((resolve, reject) => {
    let err = '';
    server.stderr.on('data', (chunk) => {
      err += chunk;
      const found = /serving on (http:\/\/127\.0\.0\.1:\d+)/.exec(err);
      if (found) resolve(found[1]);
    });
    server.once('exit', (code) => reject(new Error(`serve exited ${code}: ${err}`)));
  });
});

after(() => {
  server?.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
});

test('a small file rewritten in place with its mtime put back: 200 and a new ETag, not 304', async () => {
  const path = join(dir, 'manifest.json');
  const first = await get('/manifest.json');
  assert.equal(first.status, 200);
  assert.equal(first.etag, sha256Tag(first.body), 'the ETag is the SHA-256 of the body');
  assert.equal((await get('/manifest.json', { 'if-none-match': first.etag })).status, 304, 'unchanged: 304');
  assert.equal((await get('/manifest.json', { 'if-none-match': `W/${first.etag}` })).status, 304, 'weak comparison');

  const validatorBefore = oldValidator(path);
  rewriteInPlace(path, '{"generation":2,"full":"filter-2.bgf"}\n');
  assert.equal(oldValidator(path), validatorBefore, 'size, mtime and inode are what they were: an mtime ETag would not move');

  const second = await get('/manifest.json', { 'if-none-match': first.etag });
  assert.equal(second.status, 200, 'changed content must not be a 304');
  assert.notEqual(second.etag, first.etag);
  assert.equal(new TextDecoder().decode(second.body), '{"generation":2,"full":"filter-2.bgf"}\n');
  assert.equal(second.etag, sha256Tag(second.body));
  assert.equal((await get('/manifest.json', { 'if-none-match': second.etag })).status, 304);
  const head = await get('/manifest.json', {}, 'HEAD');
  assert.equal(head.status, 200);
  assert.equal(head.etag, second.etag, 'HEAD gives the same validator');
});

test('a large (cached) file rewritten in place with its mtime put back: 200 and a new ETag', async () => {
  const path = join(dir, 'filter-1.bgf');
  // The digest is cached only for a file whose ctime is 2 s old; wait for that so the cache is exercised.
  const wait = bigWritten + 2300 - Date.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));

  const first = await get('/filter-1.bgf');
  assert.equal(first.status, 200);
  assert.equal(first.body.length, 3 * 1024 * 1024);
  assert.equal(first.etag, sha256Tag(first.body));
  // Served from the cached digest now.
  const again = await get('/filter-1.bgf', { 'if-none-match': first.etag });
  assert.equal(again.status, 304);
  assert.equal(again.etag, first.etag);

  const ctimeBefore = statSync(path, { bigint: true }).ctimeNs;
  const validatorBefore = oldValidator(path);
  rewriteInPlace(path, 'changed in place', 1024 * 1024);
  assert.equal(oldValidator(path), validatorBefore, 'size, mtime and inode are what they were');
  assert.notEqual(statSync(path, { bigint: true }).ctimeNs, ctimeBefore, 'on this filesystem ctime moves even when the mtime is put back');

  const second = await get('/filter-1.bgf', { 'if-none-match': first.etag });
  assert.equal(second.status, 200, 'changed content must not be a 304');
  assert.notEqual(second.etag, first.etag);
  assert.equal(second.etag, sha256Tag(second.body), 'the new ETag names the new bytes');
  assert.equal(new TextDecoder().decode(second.body.subarray(1024 * 1024, 1024 * 1024 + 16)), 'changed in place');
  // Freshly changed (racy): hashed again on every request, and still a 304 when it matches.
  assert.equal((await get('/filter-1.bgf', { 'if-none-match': second.etag })).status, 304);
  assert.equal((await get('/filter-1.bgf', { 'if-none-match': first.etag })).status, 200);
});

test('same bytes, same ETag; a missing file is 404', async () => {
  writeFileSync(join(dir, 'copy.json'), '{"generation":2,"full":"filter-2.bgf"}\n');
  const a = await get('/manifest.json');
  const b = await get('/copy.json');
  assert.equal(a.etag, b.etag, 'the validator depends on the bytes only');
  assert.equal((await get('/gone.json')).status, 404);
});
