/**
 * 'bloomgate/lite' (js/lite.mjs, built by scripts/build-bundle.mjs): only what a first answer
 * needs (loadFilter, BloomFilter, sizeFor, init, BloomgateError) and the wasm module, in one
 * ES module file; README's recipe for the fastest first answer.
 *
 *   - the file imports nothing, carries the current module, exports those five names, and Node
 *     resolves 'bloomgate/lite' to it and answers from bytes, with the usual E_* errors;
 *   - in each engine (Chromium, Firefox, WebKit: tests/browser/engines/), the recipe's page:
 *     <link rel="modulepreload"> for the file, fetch(filter) first, import(), then
 *     loadFilter(response, { integrity }): it answers (no false negatives), requests only the
 *     page, the file and the filter (no .wasm), and a wrong integrity is E_INTEGRITY; the
 *     same file imported statically with loadFilter(url, { integrity }) answers too.
 *
 * Run: node --test tests/browser/lite.test.mjs (BG_ENGINES=webkit for one engine).
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';

import { LITE, writeBundle } from '../../scripts/build-bundle.mjs';
import { launchEngine } from './engines/index.mjs';
import { eachEngine, startLibraryServer } from './helpers/each-engine.mjs';
import { wordFilter } from './helpers/packed.mjs';

const WORDS = Array.from({ length: 60 }, (_, i) => `word-${i}`);
const ABSENT = Array.from({ length: 200 }, (_, i) => `absent-${i}`);

let pages;
let filterBytes;
let integrity;

// The page reports { present, absent, error } in <html data-result> and sets data-ready.
const report = `
const done = (result) => {
  document.documentElement.dataset.result = JSON.stringify(result);
  document.documentElement.dataset.ready = 'yes';
};
const answer = (filter) => ({ present: WORDS.filter((w) => filter.mightContain(w)).length, absent: ABSENT.filter((w) => !filter.mightContain(w)).length });
`;

const recipePage = (sri) => `<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,">
<link rel="modulepreload" href="/bloomgate/js/lite.mjs">
<script type="module">
const WORDS = ${JSON.stringify(WORDS)};
const ABSENT = ${JSON.stringify(ABSENT)};
${report}
const filtering = fetch('/words.bgf');
try {
  const { loadFilter } = await import('/bloomgate/js/lite.mjs');
  const filter = await loadFilter(await filtering, { integrity: ${JSON.stringify(sri)} });
  done(answer(filter));
} catch (error) {
  done({ error: error.code ?? String(error) });
}
</script></head><body></body></html>`;

const staticPage = (sri) => `<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,">
<script type="module">
import { loadFilter, BloomFilter, sizeFor, init, BloomgateError } from '/bloomgate/js/lite.mjs';
const WORDS = ${JSON.stringify(WORDS)};
const ABSENT = ${JSON.stringify(ABSENT)};
${report}
try {
  await init();
  const filter = await loadFilter('/words.bgf', { integrity: ${JSON.stringify(sri)} });
  const made = await BloomFilter.create({ capacity: 10, errorRate: 0.01 });
  made.add('x');
  let bad = null;
  try {
    await loadFilter(new Uint8Array(200));
  } catch (error) {
    bad = error instanceof BloomgateError ? error.code : String(error);
  }
  done({ ...answer(filter), made: made.mightContain('x'), bits: sizeFor({ capacity: 1000, errorRate: 0.01 }).m, bad });
} catch (error) {
  done({ error: error.code ?? String(error) });
}
</script></head><body></body></html>`;

before(async () => {
  writeBundle();
  filterBytes = await wordFilter(WORDS);
  integrity = `sha256-${createHash('sha256').update(filterBytes).digest('base64')}`;
  const wrong = `sha256-${createHash('sha256').update('not the filter').digest('base64')}`;
  pages = await startLibraryServer({
    '/recipe/': recipePage(integrity),
    '/wrong/': recipePage(wrong),
    '/static/': staticPage(integrity),
    '/words.bgf': () => ({ type: 'application/octet-stream', body: filterBytes }),
  });
});

after(async () => {
  await pages?.close();
});

describe("'bloomgate/lite': one file, the first answer's part of the library", () => {
  it('imports nothing, carries the current module, and exports what a first answer needs', async () => {
    const text = readFileSync(LITE, 'utf8');
    const imports = text.match(/(?:^|[;}\n])import\s*[{*"'\w]|\bimport\s*\(|[}\s]from\s*["'][^"']*["']\s*;|["']node:/g);
    assert.equal(imports, null, 'the file is self-contained');
    assert.ok(text.includes(readFileSync(new URL('../../wasm/bloomgate.wasm', import.meta.url)).toString('base64')),
      'it carries the current wasm/bloomgate.wasm');
    const lib = await import(pathToFileURL(LITE).href);
    assert.deepEqual(Object.keys(lib).sort(), ['BloomFilter', 'BloomgateError', 'init', 'loadFilter', 'sizeFor']);
  });

  it("Node resolves 'bloomgate/lite' to it and answers from bytes; bad bytes and a wrong integrity fail with their codes", async () => {
    assert.equal(import.meta.resolve('bloomgate/lite'), pathToFileURL(LITE).href);
    const { loadFilter } = await import(pathToFileURL(LITE).href);
    const filter = await loadFilter(filterBytes, { integrity });
    assert.equal(WORDS.filter((w) => filter.mightContain(w)).length, WORDS.length);
    filter.free();
    await assert.rejects(loadFilter(new Uint8Array(200)), { code: 'E_MAGIC' });
    await assert.rejects(loadFilter(filterBytes, { integrity: `sha256-${createHash('sha256').update('x').digest('base64')}` }), { code: 'E_INTEGRITY' });
  });
});

eachEngine("'bloomgate/lite', README's first-answer recipe", { timeout: 300000 }, (name) => {
  let engine;

  before(async () => {
    engine = await launchEngine(name);
  });

  after(async () => {
    await engine?.close();
  });

  async function open(path) {
    const from = pages.requests.length;
    const page = await engine.newPage();
    try {
      await page.goto(`${pages.origin}${path}`);
      await page.waitFor(() => document.documentElement.dataset.ready === 'yes');
      const result = await page.evaluate(() => JSON.parse(document.documentElement.dataset.result));
      return { result, requests: pages.requests.slice(from).map((r) => r.path).filter((p) => p !== '/favicon.ico') };
    } finally {
      await page.close();
    }
  }

  it('modulepreload, fetch first, import(), loadFilter(response, { integrity }): answers; only the page, the file and the filter are requested', async () => {
    const { result, requests } = await open('/recipe/');
    assert.deepEqual(result, { present: WORDS.length, absent: result.absent });
    assert.ok(result.absent >= ABSENT.length - 10, `definite negatives: ${result.absent}`);
    assert.deepEqual([...new Set(requests)].sort(), ['/bloomgate/js/lite.mjs', '/recipe/', '/words.bgf']);
  });

  it('a wrong integrity is E_INTEGRITY', async () => {
    const { result } = await open('/wrong/');
    assert.deepEqual(result, { error: 'E_INTEGRITY' });
  });

  it('a static import and loadFilter(url, { integrity }) answer; BloomFilter, sizeFor and BloomgateError work', async () => {
    const { result } = await open('/static/');
    assert.equal(result.error, undefined, JSON.stringify(result));
    assert.equal(result.present, WORDS.length);
    assert.ok(result.absent >= ABSENT.length - 10);
    assert.equal(result.made, true);
    assert.equal(result.bits, 9586, 'sizeFor: m for (1000, 0.01)');
    assert.equal(result.bad, 'E_MAGIC');
  });
});
