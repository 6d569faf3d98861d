/**
 * A missing API gives a BloomgateError naming what is missing and what still works (issue 21,
 * "Bad input"), never a wrong answer or a bare TypeError:
 *
 *   - no WebAssembly (`node --jitless`, as a browser with it turned off): init(), loadFilter()
 *     and BloomFilter.create() reject with E_UNSUPPORTED (the same in Chromium and WebKit:
 *     tests/browser/safari-fixes.test.mjs);
 *   - no fetch(): loadFilter(url) is E_UNSUPPORTED naming what still works (options.fetch, a
 *     Response, the bytes), and each of those does.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import { BloomgateError, loadFilter } from '../../js/index.js';

const CHILD = fileURLToPath(new URL('./helpers/fresh-module.mjs', import.meta.url));
const GOLDEN = new URL('../golden/classic.bgf', import.meta.url);

describe('missing APIs', () => {
  it('no WebAssembly: init, loadFilter and BloomFilter.create are E_UNSUPPORTED saying what still works', async () => {
    const out = await new Promise((resolve, reject) => {
      execFile(process.execPath, ['--jitless', CHILD, 'no-wasm'], { timeout: 20000 }, (error, stdout, stderr) => {
        if (error) reject(new Error(`${error.message}\n${stderr}`));
        else resolve(JSON.parse(stdout.trim().split('\n').pop()));
      });
    });
    assert.equal(out.hasWebAssembly, false, 'node --jitless has no WebAssembly');
    for (const step of [out.init, out.load, out.create]) {
      assert.equal(step?.name, 'BloomgateError', JSON.stringify(step));
      assert.equal(step.code, 'E_UNSUPPORTED');
      assert.match(step.message, /no WebAssembly/);
      assert.match(step.message, /What still works/);
    }
  });

  it('no fetch(): loadFilter(url) is E_UNSUPPORTED; options.fetch, a Response and the bytes still work', async () => {
    const bytes = new Uint8Array(await readFile(GOLDEN));
    const saved = globalThis.fetch;
    globalThis.fetch = /** @type {any} */ (undefined);
    try {
      const error = await loadFilter('https://cdn.example/classic.bgf').then(() => null, (e) => e);
      assert.ok(error instanceof BloomgateError, String(error));
      assert.equal(error.code, 'E_UNSUPPORTED');
      assert.match(error.message, /no fetch\(\)/);
      assert.match(error.message, /options\.fetch, a Response, or the file's bytes/);
      const viaOption = await loadFilter('https://cdn.example/classic.bgf', { fetch: async () => new Response(bytes) });
      const viaResponse = await loadFilter(new Response(bytes));
      const viaBytes = await loadFilter(bytes);
      for (const filter of [viaOption, viaResponse, viaBytes]) {
        assert.deepEqual(filter.serialize(), bytes);
        filter.free();
      }
    } finally {
      globalThis.fetch = saved;
    }
  });
});
