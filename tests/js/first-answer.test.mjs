/**
 * The first answer in parallel (issue 21 item 5): loadFilter(url) sends its request before the
 * module is instantiated and reads the body while the module compiles, so the download and the
 * compile overlap; the early chunks wait in JavaScript (at most 8 MiB) and are copied into wasm
 * memory once it is ready. Each scenario runs in a child process whose module is held back by
 * init(a promise) (tests/js/helpers/fresh-module.mjs), the body a stream that records each read.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import { BloomFilter } from '../../js/index.js';

const CHILD = fileURLToPath(new URL('./helpers/fresh-module.mjs', import.meta.url));
const GOLDEN = fileURLToPath(new URL('../golden/classic.bgf', import.meta.url));

function child(...args) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [CHILD, ...args], { timeout: 20000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${args[0]}: ${error.message}\n${stderr}`));
      else resolve(JSON.parse(stdout.trim().split('\n').pop()));
    });
  });
}

describe('loadFilter(url) reads the download while the module compiles', { concurrency: true }, () => {
  let dir;
  let big;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'bg-first-answer-'));
    // 10.8 MB: more than the 8 MiB read ahead.
    const filter = await BloomFilter.create({ capacity: 9_000_000, errorRate: 0.01 });
    filter.add('one');
    big = join(dir, 'big.bgf');
    await writeFile(big, filter.serialize());
    filter.free();
  });

  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('the whole body is read before the module is ready; then the filter answers, byte for byte the file', async () => {
    const integrity = `sha256-${createHash('sha256').update(await readFile(GOLDEN)).digest('base64')}`;
    const out = await child('overlap', '--integrity', integrity);
    assert.equal(out.beforeReady.ready, false, 'the module was held back');
    assert.equal(out.beforeReady.done, true, `every chunk was read while the module compiled: ${JSON.stringify(out.beforeReady)}`);
    assert.equal(out.beforeReady.pulledWhileCompiling, (await readFile(GOLDEN)).length);
    assert.ok(out.beforeReady.chunks >= 13, 'in 100-byte chunks');
    assert.equal(out.present, out.keys);
    assert.equal(out.absent, out.absentKeys);
    assert.equal(out.serialized, true);
  });

  it('reading ahead stops near 8 MiB until the module is ready, and the load completes', async () => {
    const out = await child('limit', '--file', big);
    const MiB = 1024 * 1024;
    assert.ok(out.beforeReady.pulled >= 8 * MiB && out.beforeReady.pulled <= 10 * MiB,
      `read ahead ${out.beforeReady.pulled} bytes of ${out.fileSize}`);
    assert.equal(out.beforeReady.done, false);
    assert.equal(out.size, out.fileSize);
  });

  it('a module that fails meanwhile: its error (E_WASM), and the download is stopped', async () => {
    const out = await child('module-fails');
    assert.ok(out.pulledBefore > 0, 'the body was being read');
    assert.equal(out.error?.code, 'E_WASM', JSON.stringify(out.error));
    assert.match(out.error.message, /could not be instantiated/);
    assert.equal(out.cancelled, true);
  });

  it('an abort while the module compiles rejects with its reason and cancels the body; a later load works', async () => {
    const out = await child('abort');
    assert.equal(out.error?.name, 'AbortError', JSON.stringify(out.error));
    assert.equal(out.cancelled, true);
    assert.equal(out.ready, false, 'it did not wait for the module');
    assert.equal(out.afterwards, true);
  });

  it('an HTTP error is E_FETCH at once, without waiting for the module', async () => {
    const out = await child('http-error');
    assert.equal(out.error?.code, 'E_FETCH');
    assert.match(out.error.message, /HTTP 404/);
    assert.equal(out.ready, false);
  });

  it('a page where the filter should be is still E_MAGIC, from bytes read ahead', async () => {
    const out = await child('wrong-file');
    assert.equal(out.error?.code, 'E_MAGIC', JSON.stringify(out.error));
  });
});

const EARLY = fileURLToPath(new URL('./helpers/early-digest.mjs', import.meta.url));
const early = (scenario) => new Promise((resolve, reject) => {
  execFile(process.execPath, [EARLY, scenario], { timeout: 20000 }, (error, stdout, stderr) => {
    if (error) reject(new Error(`${scenario}: ${error.message}\n${stderr}`));
    else resolve(JSON.parse(stdout.trim().split('\n').pop()));
  });
});

describe('integrity with SubtleCrypto starts as soon as the whole file is in (as on a page)', { concurrency: true }, () => {
  it('a body read before the module is ready is digested before the module is ready; the filter is the file', async () => {
    const out = await early('held');
    const size = (await readFile(GOLDEN)).length;
    assert.deepEqual(out.beforeReady, [{ bytes: size, ready: false }]);
    assert.equal(out.members, out.keys, 'no false negatives');
    assert.equal(out.wrongIntegrity, 'E_INTEGRITY');
  });

  it('a whole body in one chunk before the module is ready is digested once', async () => {
    const out = await early('held-one-chunk');
    const size = (await readFile(GOLDEN)).length;
    assert.deepEqual(out.digests, [{ bytes: size, ready: false }]);
    assert.equal(out.members, out.keys, 'no false negatives');
  });

  it('a file in one chunk is digested from that chunk; mismatches, bad checksums and trailing bytes fail as before', async () => {
    const out = await early('one-chunk');
    assert.equal(out.digestGotTheChunk, true);
    assert.equal(out.members, out.keys, 'no false negatives');
    assert.equal(out.wrongIntegrity, 'E_INTEGRITY');
    assert.equal(out.corruptOwnIntegrity, 'E_CHECKSUM', 'integrity that matches a corrupt file does not excuse its checksum');
    assert.equal(out.corruptGoodIntegrity, 'E_INTEGRITY', 'the mismatch wins over the checksum, as before');
    assert.equal(out.trailing, 'E_TRAILING');
    assert.equal(out.goodAgain, null);
  });
});
