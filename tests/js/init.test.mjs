/**
 * init(): failures say what was tried and how to fix it (E_FETCH names the
 * path or URL; bytes that are not WebAssembly are E_WASM; a CSP refusal is
 * E_CSP naming 'wasm-unsafe-eval'), a failed init can be retried, and
 * 'bloomgate/inline' carries the current module. Each test file runs in its
 * own process, so the module is not yet instantiated when this one starts.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import { writeInlineModule } from '../../scripts/build-inline.mjs';
import { BloomgateError, init } from '../../js/index.js';
import { instantiationError } from '../../js/errors.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

function fixes(message) {
  assert.match(message, /wasm\/bloomgate\.wasm/);
  assert.match(message, /init\(bytes\)/);
  assert.match(message, /'bloomgate\/inline'/);
}

describe('init() failures', () => {
  it('a missing file is E_FETCH naming the path and the fixes', async () => {
    const path = join(root, 'no-such-dir', 'bloomgate.wasm');
    const error = await init(path).then(() => null, (e) => e);
    assert.ok(error instanceof BloomgateError, String(error));
    assert.equal(error.code, 'E_FETCH');
    assert.ok(error.message.includes(path), error.message);
    assert.match(error.message, /no such file/);
    fixes(error.message);
  });

  it('an HTTP error Response is E_FETCH naming its URL', async () => {
    const response = new Response('not found', { status: 404 });
    Object.defineProperty(response, 'url', { value: 'https://cdn.example/app/bloomgate.wasm' });
    const error = await init(response).then(() => null, (e) => e);
    assert.equal(error.code, 'E_FETCH');
    assert.match(error.message, /https:\/\/cdn\.example\/app\/bloomgate\.wasm: HTTP 404/);
    fixes(error.message);
  });

  it('an HTML page where the module should be is E_WASM, saying what came', async () => {
    const response = new Response('<!doctype html><title>app</title>', { headers: { 'content-type': 'text/html' } });
    Object.defineProperty(response, 'url', { value: 'http://127.0.0.1:5173/wasm/bloomgate.wasm' });
    const error = await init(response).then(() => null, (e) => e);
    assert.equal(error.code, 'E_WASM');
    assert.match(error.message, /http:\/\/127\.0\.0\.1:5173\/wasm\/bloomgate\.wasm is not WebAssembly/);
    assert.match(error.message, /starting "<!doctype html><"/);
    assert.match(error.message, /content type text\/html/);
  });

  it('bytes that do not compile are E_WASM with the engine\'s reason as the cause', async () => {
    const error = await init(new Uint8Array([0, 0x61, 0x73, 0x6d, 9, 9, 9, 9])).then(() => null, (e) => e);
    assert.equal(error.code, 'E_WASM');
    assert.ok(error.cause instanceof WebAssembly.CompileError);
  });

  it('a CSP refusal (as Chromium, Firefox and Safari word it) is E_CSP naming wasm-unsafe-eval', () => {
    const refusals = [
      new WebAssembly.CompileError("WebAssembly.instantiate(): Refused to compile or instantiate WebAssembly module because 'unsafe-eval' is not an allowed source of script in the following Content Security Policy directive: \"script-src 'self'\""),
      new WebAssembly.CompileError('call to WebAssembly.instantiate() blocked by CSP'),
      new EvalError("Refused to create a WebAssembly object because 'unsafe-eval' or 'wasm-unsafe-eval' is not an allowed source of script in the following Content Security Policy directive: \"script-src 'self'\""),
    ];
    for (const refusal of refusals) {
      const error = instantiationError(refusal);
      assert.ok(error instanceof BloomgateError);
      assert.equal(error.code, 'E_CSP');
      assert.match(error.message, /add 'wasm-unsafe-eval' to its script-src/);
      assert.equal(error.cause, refusal);
    }
    const other = new TypeError('x');
    assert.equal(instantiationError(other), other, 'other errors pass through');
  });

  it('after the failures, init() from the default location succeeds', async () => {
    await init();
    const { BloomFilter } = await import('../../js/index.js');
    const filter = await BloomFilter.create({ capacity: 10, errorRate: 0.01 });
    filter.add('x');
    assert.equal(filter.mightContain('x'), true);
    filter.free();
  });
});

describe("'bloomgate/inline' in Node", () => {
  it('carries the current wasm/bloomgate.wasm and answers queries', async () => {
    writeInlineModule();
    const { wasmBytes } = await import('../../js/wasm-bytes-inline.js');
    const bytes = wasmBytes();
    assert.ok(bytes instanceof Uint8Array);
    assert.deepEqual(Buffer.from(bytes), await readFile(join(root, 'wasm', 'bloomgate.wasm')));
    const inline = await import('bloomgate/inline');
    const filter = await inline.BloomFilter.create({ capacity: 10, errorRate: 0.01 });
    filter.add('inline');
    assert.equal(filter.mightContain('inline'), true);
    filter.free();
  });
});
