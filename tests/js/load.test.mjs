// loadFilter: bytes, Responses and URLs served by a local HTTP server — streaming,
// progress, integrity, abort, HTTP and length errors, early header checks.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { readFileSync } from 'node:fs';

import { BloomFilter, BloomgateError, loadFilter } from '../../js/index.js';
import { heapSize } from '../../js/wasm/index.js';
import { registerStreamingSha256 } from '../../js/load.js';
import { createSha256 } from '../../js/sha256-node.js';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function keys(prefix, count) {
  return Array.from({ length: count }, (_, i) => `${prefix}${i}`);
}

function isCode(code) {
  return (error) => {
    assert.ok(error instanceof BloomgateError, `expected a BloomgateError, got ${error && error.stack}`);
    assert.equal(error.code, code, error.message);
    return true;
  };
}

function sri(bytes) {
  return `sha256-${createHash('sha256').update(bytes).digest('base64')}`;
}

let fileBytes; // a serialized 60,000-item filter (~70 KB)
let members;
let probes;
let expected; // its answers for probes
let server;
let base; // http://127.0.0.1:port
const stalled = new Set(); // responses a route keeps open on purpose
let requests = 0;

async function writeSlowly(res, bytes, pieces, delayMs) {
  const size = Math.ceil(bytes.length / pieces);
  for (let at = 0; at < bytes.length; at += size) {
    if (res.destroyed) return;
    res.write(bytes.subarray(at, at + size));
    await sleep(delayMs);
  }
  res.end();
}

function route(req, res) {
  requests++;
  const url = new URL(req.url, base);
  const bytes = fileBytes;
  switch (url.pathname) {
    case '/file':
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': bytes.length });
      res.end(bytes);
      return;
    case '/chunked': // no Content-Length: the loader grows its buffer as bytes arrive
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      writeSlowly(res, bytes, 12, 5);
      return;
    case '/slow-with-length':
      res.writeHead(200, { 'content-length': bytes.length });
      writeSlowly(res, bytes, 8, 5);
      return;
    case '/tiny-chunks': // chunks smaller than the header
      res.writeHead(200);
      writeSlowly(res, bytes.subarray(0, 2000), 2000 / 50, 0).then(() => {});
      return;
    case '/gzip': {
      const packed = gzipSync(bytes);
      res.writeHead(200, { 'content-encoding': 'gzip', 'content-length': packed.length });
      res.end(packed);
      return;
    }
    case '/wasm':
      res.writeHead(200, { 'content-type': 'application/wasm' });
      res.end(readFileSync(new URL('../../wasm/bloomgate.wasm', import.meta.url)));
      return;
    case '/404':
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
      return;
    case '/500':
      res.writeHead(500);
      res.end('boom');
      return;
    case '/truncated': // no Content-Length, ends early
      res.writeHead(200);
      writeSlowly(res, bytes.subarray(0, bytes.length - 100), 4, 2);
      return;
    case '/truncated-in-header':
      res.writeHead(200);
      res.end(bytes.subarray(0, 50));
      return;
    case '/truncated-length': // a Content-Length that disagrees with the header
      res.writeHead(200, { 'content-length': bytes.length - 100 });
      res.end(bytes.subarray(0, bytes.length - 100));
      return;
    case '/trailing':
      res.writeHead(200);
      writeSlowly(res, Buffer.concat([bytes, Buffer.from('extra bytes')]), 4, 2);
      return;
    case '/trailing-length':
      res.writeHead(200, { 'content-length': bytes.length + 11 });
      res.end(Buffer.concat([bytes, Buffer.from('extra bytes')]));
      return;
    case '/html-then-stall': // a wrong URL whose body never ends
      stalled.add(res);
      res.writeHead(200, { 'content-type': 'text/html' });
      res.write(`<!doctype html><html><head><title>Not the filter</title></head><body>${'x'.repeat(300)}`);
      return;
    case '/version-2-then-stall': {
      stalled.add(res);
      const copy = Buffer.from(bytes.subarray(0, 1024));
      copy.writeUInt16LE(2, 16);
      res.writeHead(200);
      res.write(copy);
      return;
    }
    case '/header-then-stall': // for abort mid-stream
      stalled.add(res);
      res.writeHead(200, { 'content-length': bytes.length });
      res.write(bytes.subarray(0, 4096));
      return;
    default:
      res.writeHead(400);
      res.end();
  }
}

before(async () => {
  const filter = await BloomFilter.create({ capacity: 60_000, errorRate: 0.01, metadata: { source: 'load.test' } });
  members = keys('member-', 60_000);
  probes = keys('member-', 120_000);
  filter.addAll(members);
  expected = filter.mightContainMany(probes);
  fileBytes = Buffer.from(filter.serialize());
  filter.free();
  server = http.createServer(route);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${server.address().port}`;
});

after(async () => {
  for (const res of stalled) res.destroy();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function assertSameFilter(filter) {
  assert.deepEqual(filter.mightContainMany(probes), expected);
  assert.deepEqual(Buffer.from(filter.serialize()), fileBytes);
  assert.deepEqual(filter.metadata, { source: 'load.test' });
}

describe('byte sources', () => {
  test('Uint8Array, ArrayBuffer and a Buffer view', async () => {
    const sources = [
      new Uint8Array(fileBytes),
      new Uint8Array(fileBytes).buffer,
      Buffer.concat([Buffer.from('pad'), fileBytes]).subarray(3),
    ];
    for (const source of sources) {
      const filter = await loadFilter(source);
      assertSameFilter(filter);
      filter.free();
    }
  });

  test('integrity and progress apply to bytes too', async () => {
    const events = [];
    const filter = await loadFilter(fileBytes, { integrity: sri(fileBytes), onProgress: (p) => events.push(p) });
    assertSameFilter(filter);
    filter.free();
    assert.deepEqual(events.at(-1), { loaded: fileBytes.length, total: fileBytes.length });
    await assert.rejects(loadFilter(fileBytes, { integrity: sri(Buffer.from('other')) }), isCode('E_INTEGRITY'));
  });

  test('corrupt bytes are rejected with the core’s code', async () => {
    await assert.rejects(loadFilter(fileBytes.subarray(0, fileBytes.length - 1)), isCode('E_TRUNCATED'));
    const flipped = Buffer.from(fileBytes);
    flipped[flipped.length - 10] ^= 0x10;
    await assert.rejects(loadFilter(flipped), isCode('E_CHECKSUM'));
  });
});

describe('the checksum is computed as the bytes arrive', () => {
  // The loader hashes each piece as it lands (bg_file_hasher) instead of rereading the file; the
  // checksum covers bytes 16.. only, so pieces that end inside the first 16 bytes must not count.
  function streamOf(bytes, sizes) {
    let at = 0;
    let i = 0;
    return new ReadableStream({
      pull(controller) {
        if (at >= bytes.length) return controller.close();
        const size = sizes[Math.min(i++, sizes.length - 1)];
        controller.enqueue(new Uint8Array(bytes.subarray(at, at + size)));
        at += size;
      },
    });
  }

  test('odd piece sizes around byte 16 load the same filter; a flipped late byte is E_CHECKSUM', async () => {
    for (const sizes of [[1], [7, 9, 1000], [15, 2, 13, 4096], [16, 16, 999], [17, 65536]]) {
      const filter = await loadFilter(new Response(streamOf(fileBytes, sizes)));
      assertSameFilter(filter);
      filter.free();
    }
    const flipped = Buffer.from(fileBytes);
    flipped[flipped.length - 3] ^= 0x01;
    await assert.rejects(loadFilter(new Response(streamOf(flipped, [7, 9, 1000]))), isCode('E_CHECKSUM'));
    const early = Buffer.from(fileBytes);
    early[20] ^= 0x80; // inside the header, past the checksum field: covered by the sum
    await assert.rejects(loadFilter(new Response(streamOf(early, [15, 2, 13]))), isCode('E_CHECKSUM'));
  });

  test('a file larger than one copy piece (256 KiB): loads, and a flip in its third piece is E_CHECKSUM', async () => {
    const big = await BloomFilter.create({ capacity: 600_000, errorRate: 0.01 });
    for (let i = 0; i < 1000; i++) big.add(`big-${i}`);
    const bytes = big.serialize();
    assert.ok(bytes.length > 2.5 * 256 * 1024, `file of ${bytes.length} bytes spans three pieces`);
    for (const load of [(b) => BloomFilter.from(b), (b) => loadFilter(b)]) {
      const copy = await load(bytes);
      for (let i = 0; i < 1000; i++) assert.equal(copy.mightContain(`big-${i}`), true);
      copy.free();
      const flipped = bytes.slice();
      flipped[2 * 256 * 1024 + 100] ^= 0x04;
      await assert.rejects(load(flipped), isCode('E_CHECKSUM'));
    }
    big.free();
  });
});

describe('Response sources', () => {
  test('a Response with a streamed body in small chunks', async () => {
    let at = 0;
    const stream = new ReadableStream({
      pull(controller) {
        if (at >= fileBytes.length) {
          controller.close();
          return;
        }
        controller.enqueue(new Uint8Array(fileBytes.subarray(at, at + 1000)));
        at += 1000;
      },
    });
    const events = [];
    const filter = await loadFilter(new Response(stream), { onProgress: (p) => events.push(p) });
    assertSameFilter(filter);
    filter.free();
    assert.ok(events.length > 10);
    assert.deepEqual(events.at(-1), { loaded: fileBytes.length, total: fileBytes.length });
  });

  test('a Response built from bytes; a non-ok Response is E_FETCH; a used body is a TypeError', async () => {
    const filter = await loadFilter(new Response(fileBytes));
    assertSameFilter(filter);
    filter.free();
    await assert.rejects(loadFilter(new Response('missing', { status: 404 })), (error) => {
      isCode('E_FETCH')(error);
      assert.equal(error.status, 404);
      return true;
    });
    const used = new Response(fileBytes);
    await used.arrayBuffer();
    await assert.rejects(loadFilter(used), TypeError);
    await assert.rejects(loadFilter(new Response(null)), isCode('E_TRUNCATED'));
  });

  test('options.fetch is used for URLs', async () => {
    const calls = [];
    const fakeFetch = async (url, init) => {
      calls.push({ url: String(url), init });
      return new Response(fileBytes);
    };
    const controller = new AbortController();
    const filter = await loadFilter('https://filters.example/list.bgf', { fetch: fakeFetch, signal: controller.signal });
    assertSameFilter(filter);
    filter.free();
    assert.equal(calls.length, 1);
    assert.equal(calls[0].url, 'https://filters.example/list.bgf');
    assert.equal(calls[0].init.signal, controller.signal);
  });
});

describe('URLs over HTTP', () => {
  test('with Content-Length, from a string and from a URL object', async () => {
    for (const source of [`${base}/file`, new URL('/file', base)]) {
      const filter = await loadFilter(source);
      assertSameFilter(filter);
      filter.free();
    }
  });

  test('without Content-Length, slow chunks: progress is monotone and ends at total', async () => {
    for (const path of ['/chunked', '/slow-with-length']) {
      const events = [];
      const filter = await loadFilter(`${base}${path}`, { onProgress: (p) => events.push(p) });
      assertSameFilter(filter);
      filter.free();
      assert.ok(events.length >= 2, `${path}: ${events.length} progress events`);
      for (let i = 0; i < events.length; i++) {
        assert.equal(events[i].total, fileBytes.length);
        if (i > 0) assert.ok(events[i].loaded >= events[i - 1].loaded, 'progress went backwards');
      }
      assert.equal(events.at(-1).loaded, fileBytes.length);
    }
  });

  test('a gzip-encoded response (Content-Length is the compressed size) still loads', async () => {
    const filter = await loadFilter(`${base}/gzip`);
    assertSameFilter(filter);
    filter.free();
  });

  test('integrity: a listed digest passes, a wrong one is E_INTEGRITY before the filter is used', async () => {
    const good = sri(fileBytes);
    const bad = sri(Buffer.from('something else'));
    const ok = await loadFilter(`${base}/chunked`, { integrity: good });
    assertSameFilter(ok);
    ok.free();
    const either = await loadFilter(`${base}/file`, { integrity: `${bad} ${good}` });
    either.free();
    await assert.rejects(loadFilter(`${base}/chunked`, { integrity: bad }), isCode('E_INTEGRITY'));
  });

  test('integrity strings that cannot be checked are refused up front', async () => {
    const requestsBefore = requests;
    await assert.rejects(loadFilter(`${base}/file`, { integrity: `sha384-${'A'.repeat(64)}` }), isCode('E_INTEGRITY'));
    await assert.rejects(loadFilter(`${base}/file`, { integrity: 'md5:abc' }), TypeError);
    await assert.rejects(loadFilter(`${base}/file`, { integrity: 'sha256-abcd' }), TypeError);
    await assert.rejects(loadFilter(`${base}/file`, { integrity: '   ' }), TypeError);
    await assert.rejects(loadFilter(`${base}/file`, { integrity: 42 }), TypeError);
    assert.equal(requests, requestsBefore, 'no request should have been made');
  });

  test('HTTP 404 and 500 are E_FETCH with the status', async () => {
    for (const status of [404, 500]) {
      await assert.rejects(loadFilter(`${base}/${status}`), (error) => {
        isCode('E_FETCH')(error);
        assert.equal(error.status, status);
        assert.match(error.message, new RegExp(String(status)));
        return true;
      });
    }
  });

  test('connection refused is E_FETCH', async () => {
    const closed = http.createServer();
    await new Promise((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address();
    await new Promise((resolve) => closed.close(resolve));
    await assert.rejects(loadFilter(`http://127.0.0.1:${port}/file`), isCode('E_FETCH'));
  });

  test('a body that ends early is E_TRUNCATED; extra bytes are E_TRAILING', async () => {
    await assert.rejects(loadFilter(`${base}/truncated`), isCode('E_TRUNCATED'));
    await assert.rejects(loadFilter(`${base}/truncated-in-header`), isCode('E_TRUNCATED'));
    await assert.rejects(loadFilter(`${base}/truncated-length`), isCode('E_TRUNCATED'));
    await assert.rejects(loadFilter(`${base}/trailing`), isCode('E_TRAILING'));
    await assert.rejects(loadFilter(`${base}/trailing-length`), isCode('E_TRAILING'));
  });

  test('chunks smaller than the header are gathered before the header is read', async () => {
    // 2,000 bytes in 50-byte chunks: the header parses, then the body ends early.
    await assert.rejects(loadFilter(`${base}/tiny-chunks`), isCode('E_TRUNCATED'));
  });

  test('a wrong magic or version fails from the first bytes, without waiting for the body to end', { timeout: 5000 }, async () => {
    await assert.rejects(loadFilter(`${base}/html-then-stall`), isCode('E_MAGIC'));
    await assert.rejects(loadFilter(`${base}/version-2-then-stall`), isCode('E_VERSION'));
  });
});

describe('abort', () => {
  test('aborting mid-stream rejects with the signal’s reason', { timeout: 5000 }, async () => {
    const controller = new AbortController();
    const reason = new Error('user navigated away');
    const events = [];
    await assert.rejects(
      loadFilter(`${base}/header-then-stall`, {
        signal: controller.signal,
        onProgress: (p) => {
          events.push(p);
          controller.abort(reason);
        },
      }),
      (error) => error === reason,
    );
    assert.ok(events.length >= 1);
    assert.ok(events[0].loaded < events[0].total);
  });

  test('a plain abort() rejects with an AbortError', { timeout: 5000 }, async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    await assert.rejects(loadFilter(`${base}/header-then-stall`, { signal: controller.signal }), { name: 'AbortError' });
  });

  test('an already-aborted signal rejects before any request', async () => {
    const requestsBefore = requests;
    const reason = new Error('already');
    await assert.rejects(loadFilter(`${base}/file`, { signal: AbortSignal.abort(reason) }), (error) => error === reason);
    await assert.rejects(loadFilter(fileBytes, { signal: AbortSignal.abort(reason) }), (error) => error === reason);
    assert.equal(requests, requestsBefore);
  });

  test('aborting a Response source cancels its stream', { timeout: 5000 }, async () => {
    const controller = new AbortController();
    let cancelled = false;
    const stream = new ReadableStream({
      start(c) {
        c.enqueue(new Uint8Array(fileBytes.subarray(0, 1000)));
      },
      cancel() {
        cancelled = true;
      },
    });
    setTimeout(() => controller.abort(), 20);
    await assert.rejects(loadFilter(new Response(stream), { signal: controller.signal }), { name: 'AbortError' });
    assert.equal(cancelled, true);
  });
});

describe('failure paths free their wasm memory', () => {
  test('repeated failing loads of a 4 MB filter do not grow wasm memory', async () => {
    const big = await BloomFilter.create({ capacity: 3_000_000, errorRate: 0.01 });
    const bytes = big.serialize();
    big.free();
    const corrupt = Buffer.from(bytes);
    corrupt[corrupt.length - 1] ^= 1;
    const wrongDigest = sri(Buffer.from('x'));
    // Warm up once so the allocator has its arenas.
    await assert.rejects(loadFilter(corrupt), isCode('E_CHECKSUM'));
    const start = heapSize();
    for (let i = 0; i < 12; i++) {
      await assert.rejects(loadFilter(corrupt), isCode('E_CHECKSUM'));
      await assert.rejects(loadFilter(bytes, { integrity: wrongDigest }), isCode('E_INTEGRITY'));
      await assert.rejects(loadFilter(new Response(Buffer.concat([bytes, Buffer.from('!')]))), isCode('E_TRAILING'));
    }
    const grown = heapSize() - start;
    assert.ok(grown <= 2 * bytes.length, `wasm memory grew by ${grown} bytes over 36 failed loads of ${bytes.length} bytes`);
  });
});

describe('argument validation', () => {
  test('bad sources and options are TypeErrors', async () => {
    for (const source of [42, null, undefined, {}, [1, 2, 3]]) {
      await assert.rejects(loadFilter(source), TypeError);
    }
    await assert.rejects(loadFilter(fileBytes, 'options'), TypeError);
    await assert.rejects(loadFilter(fileBytes, { onProgress: 'no' }), TypeError);
    await assert.rejects(loadFilter(fileBytes, { signal: {} }), TypeError);
    await assert.rejects(loadFilter('http://x.example/', { fetch: 'no' }), TypeError);
  });
});

describe('init: the module from any source (fresh process each, since init is once per process)', () => {
  const index = new URL('../../js/index.js', import.meta.url).href;
  const wasmUrl = new URL('../../wasm/bloomgate.wasm', import.meta.url);

  async function runWith(sourceExpression) {
    const { execFile } = await import('node:child_process');
    const script = `
      import { readFileSync } from 'node:fs';
      import { init, BloomFilter } from ${JSON.stringify(index)};
      const wasmUrl = new URL(${JSON.stringify(wasmUrl.href)});
      const bytes = readFileSync(wasmUrl);
      let first = 'none';
      try { await init(42); } catch (error) { first = error.name; }
      await init(${sourceExpression});
      const filter = await BloomFilter.create({ capacity: 10, errorRate: 0.01 });
      filter.add('x');
      console.log(JSON.stringify({ first, x: filter.mightContain('x'), y: filter.mightContain('y') }));`;
    return new Promise((resolve, reject) => {
      execFile(process.execPath, ['--input-type=module', '-e', script], (error, stdout, stderr) => {
        if (error) reject(new Error(`${sourceExpression}: ${stderr || error.message}`));
        else resolve(JSON.parse(stdout));
      });
    });
  }

  test('Module, bytes, ArrayBuffer, Response (streaming or not), file URL, http URL, default', async () => {
    const sources = [
      'new WebAssembly.Module(bytes)',
      'new Uint8Array(bytes)',
      'bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length)',
      "new Response(bytes, { headers: { 'content-type': 'application/wasm' } })",
      'new Response(bytes)',
      'wasmUrl',
      'wasmUrl.href',
      `${JSON.stringify(`${base}/wasm`)}`,
      'undefined',
      'Promise.resolve(bytes)',
    ];
    for (const source of sources) {
      const result = await runWith(source);
      assert.deepEqual(result, { first: 'TypeError', x: true, y: false }, source);
    }
  });
});

describe('a size claimed by a header is not reserved before the bytes arrive', () => {
  /** A valid 128-byte header of a classic filter of 2^34 bits (a 2 GiB file), nothing after it. */
  async function hugeHeader() {
    const small = await BloomFilter.create({ capacity: 1000, errorRate: 0.01 });
    const header = Buffer.from(small.serialize().subarray(0, 128));
    small.free();
    const view = new DataView(header.buffer, header.byteOffset, 128);
    const payloadOffset = Number(view.getBigUint64(96, true));
    view.setBigUint64(32, 2n ** 34n, true); // m
    view.setBigUint64(40, 2n ** 34n / 10n, true); // capacity, so m/n stays plausible
    view.setBigUint64(104, 2n ** 31n, true); // payload length
    return { header, total: payloadOffset + 2 ** 31 };
  }

  test('a 128-byte response whose header and Content-Length claim 2 GiB fails without growing wasm memory', async () => {
    const { header, total } = await hugeHeader();
    const start = heapSize();
    for (let i = 0; i < 3; i++) {
      const response = new Response(header, { headers: { 'content-length': String(total) } });
      await assert.rejects(loadFilter(response, { integrity: sri(Buffer.from('x')) }), (e) => e instanceof BloomgateError && ['E_TRUNCATED', 'E_HEADER'].includes(e.code));
    }
    const grown = heapSize() - start;
    assert.ok(grown < 16 * 2 ** 20, `wasm memory grew by ${grown} bytes for three 128-byte responses claiming ${total} bytes`);
  });

  test('maxBytes: a larger file fails at once with E_TOO_LARGE; a file within it loads', async () => {
    const { header } = await hugeHeader();
    await assert.rejects(loadFilter(new Response(header), { maxBytes: 64 * 2 ** 20 }), isCode('E_TOO_LARGE'));
    await assert.rejects(loadFilter(fileBytes, { maxBytes: fileBytes.length - 1 }), isCode('E_TOO_LARGE'));
    const loaded = await loadFilter(new Response(fileBytes), { maxBytes: fileBytes.length });
    assert.deepEqual(Buffer.from(loaded.serialize()), fileBytes);
    loaded.free();
    await assert.rejects(loadFilter(fileBytes, { maxBytes: 12 }), RangeError);
    await assert.rejects(loadFilter(fileBytes, { maxBytes: '1e6' }), RangeError);
  });
});

describe('Node: a file path or a file: URL is read from disk with the checks of a download', () => {
  test('absolute and relative paths, file: URLs as URL and string; integrity; missing, directory and truncated files', async () => {
    const { mkdtempSync, writeFileSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join, relative } = await import('node:path');
    const { pathToFileURL } = await import('node:url');
    const dir = mkdtempSync(join(tmpdir(), 'bloomgate-local-'));
    try {
      const path = join(dir, 'f.bgf');
      writeFileSync(path, fileBytes);
      for (const source of [path, relative(process.cwd(), path), pathToFileURL(path), pathToFileURL(path).href]) {
        const filter = await loadFilter(source, { integrity: sri(fileBytes) });
        assert.deepEqual(Buffer.from(filter.serialize()), fileBytes, String(source));
        filter.free();
      }
      const progress = [];
      (await loadFilter(path, { onProgress: (p) => progress.push(p.loaded) })).free();
      assert.equal(progress.at(-1), fileBytes.length);
      await assert.rejects(loadFilter(join(dir, 'missing.bgf')), (e) => e.code === 'E_FETCH' && /no such file/.test(e.message));
      await assert.rejects(loadFilter(dir), (e) => e.code === 'E_FETCH' && /not a regular file/.test(e.message));
      writeFileSync(join(dir, 'short.bgf'), fileBytes.subarray(0, fileBytes.length - 10));
      await assert.rejects(loadFilter(join(dir, 'short.bgf')), isCode('E_TRUNCATED'));
      await assert.rejects(loadFilter(path, { integrity: sri(Buffer.from('x')) }), isCode('E_INTEGRITY'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('integrity through each digest: node:crypto as chunks land, SubtleCrypto at the end, the wasm digest', () => {
  /** A Response whose body arrives in pieces of `size` bytes (the header split across pieces). */
  const chunked = (bytes, size) => new Response(new ReadableStream({
    start(controller) {
      for (let at = 0; at < bytes.length; at += size) controller.enqueue(bytes.slice(at, at + size));
      controller.close();
    },
  }));

  for (const [name, digest] of [['node:crypto (the default in Node)', createSha256], ['SubtleCrypto', null]]) {
    test(`${name}: good and listed digests load, a wrong one, a truncated or a longer body fail`, async () => {
      const previous = registerStreamingSha256(digest);
      // With node:crypto, SubtleCrypto must not be asked at all.
      const subtleDigest = globalThis.crypto.subtle.digest;
      if (digest !== null) globalThis.crypto.subtle.digest = () => Promise.reject(new Error('SubtleCrypto was used'));
      try {
        const f = await BloomFilter.create({ capacity: 5000, errorRate: 0.01 });
        for (let i = 0; i < 3000; i++) f.add(`key-${i}`);
        const bytes = f.serialize();
        f.free();
        const good = sri(bytes);
        const bad = sri(Buffer.from('other'));
        for (const size of [1, 7, 127, 128, 129, 4096, bytes.length]) {
          const loaded = await loadFilter(chunked(bytes, size), { integrity: `${bad} ${good}` });
          assert.equal(loaded.mightContain('key-2999'), true, `pieces of ${size}`);
          loaded.free();
          await assert.rejects(loadFilter(chunked(bytes, size), { integrity: bad }), isCode('E_INTEGRITY'), `pieces of ${size}`);
        }
        const fromBytes = await loadFilter(bytes, { integrity: good });
        assert.equal(fromBytes.mightContain('key-0'), true);
        fromBytes.free();
        await assert.rejects(loadFilter(bytes, { integrity: bad }), isCode('E_INTEGRITY'));
        await assert.rejects(loadFilter(chunked(bytes.subarray(0, bytes.length - 1), 1000), { integrity: good }), isCode('E_TRUNCATED'));
        await assert.rejects(loadFilter(chunked(Buffer.concat([bytes, Buffer.from('x')]), 1000), { integrity: good }), isCode('E_TRAILING'));
      } finally {
        registerStreamingSha256(previous);
        globalThis.crypto.subtle.digest = subtleDigest;
      }
    });
  }

  test('a Node without globalThis.crypto checks integrity with the wasm SHA-256, streamed and from bytes', async () => {
    const { spawnSync } = await import('node:child_process');
    const script = `
      import { BloomFilter, loadFilter } from ${JSON.stringify(new URL('../../js/index.js', import.meta.url).href)};
      import { registerStreamingSha256 } from ${JSON.stringify(new URL('../../js/load.js', import.meta.url).href)};
      import { createHash } from 'node:crypto';
      if (globalThis.crypto?.subtle !== undefined) throw new Error('crypto.subtle is still there');
      registerStreamingSha256(null); // as on a page: no node:crypto either
      const f = await BloomFilter.create({ capacity: 1000, errorRate: 0.01 }); f.add('x');
      const bytes = f.serialize();
      const good = 'sha256-' + createHash('sha256').update(bytes).digest('base64');
      const bad = 'sha256-' + createHash('sha256').update('other').digest('base64');
      const results = [];
      for (const source of [() => bytes, () => new Response(bytes)]) {
        results.push((await loadFilter(source(), { integrity: good })).mightContain('x'));
        results.push(await loadFilter(source(), { integrity: bad }).then(() => 'loaded', (e) => e.code));
      }
      console.log(JSON.stringify(results));`;
    // A file, not -e: in -e code a bare `crypto` is the node:crypto module, which has .subtle.
    const { mkdtempSync, writeFileSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = mkdtempSync(join(tmpdir(), 'bloomgate-nosubtle-'));
    writeFileSync(join(dir, 'check.mjs'), script);
    const run = spawnSync(process.execPath, ['--no-experimental-global-webcrypto', join(dir, 'check.mjs')], { encoding: 'utf8' });
    rmSync(dir, { recursive: true, force: true });
    assert.equal(run.status, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout), [true, 'E_INTEGRITY', true, 'E_INTEGRITY']);
  });
});
