/**
 * init(url) when the server sends the module under the wrong content type (issue 21 item 3):
 * Node's own WebAssembly.instantiateStreaming refuses application/octet-stream and text/plain
 * (checked, on the same URL), so bloomgate compiles those from the bytes; application/wasm is
 * compiled while it downloads. A real server on 127.0.0.1; each case in a fresh child process
 * (tests/js/helpers/fresh-module.mjs), as the module is instantiated once a process. The same
 * in Chromium and WebKit: tests/browser/safari-fixes.test.mjs.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const CHILD = fileURLToPath(new URL('./helpers/fresh-module.mjs', import.meta.url));
const TYPES = ['application/wasm', 'application/octet-stream', 'text/plain; charset=utf-8', null];

function child(...args) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [CHILD, ...args], { timeout: 20000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${args[0]}: ${error.message}\n${stderr}`));
      else resolve(JSON.parse(stdout.trim().split('\n').pop()));
    });
  });
}

describe('init(url) under any content type', { concurrency: true }, () => {
  let server;
  let origin;

  before(async () => {
    const module = await readFile(new URL('../../wasm/bloomgate.wasm', import.meta.url));
    server = createServer((req, res) => {
      const type = new URL(req.url, 'http://x').searchParams.get('type');
      const headers = { 'content-length': module.length };
      if (type !== 'none') headers['content-type'] = type;
      res.writeHead(200, headers).end(module);
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${server.address().port}`;
  });

  after(() => {
    server.closeAllConnections();
    server.close();
  });

  for (const type of TYPES) {
    it(`${type ?? 'no content type'}: ${type === 'application/wasm' ? 'streamed' : 'the engine refuses it, bloomgate compiles the bytes'}; filters answer`, async () => {
      const out = await child('mime', '--url', `${origin}/bloomgate.wasm?type=${encodeURIComponent(type ?? 'none')}`);
      assert.equal(out.present, out.keys);
      if (type === 'application/wasm') {
        assert.equal(out.direct, 'compiled');
        assert.equal(out.streamingCalls, 1);
      } else {
        assert.equal(out.direct, 'TypeError', 'Node itself refuses it');
        assert.equal(out.streamingCalls, 0);
      }
    });
  }
});
