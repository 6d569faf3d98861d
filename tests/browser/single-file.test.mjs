/**
 * 'bloomgate/bundle' (js/bundle.mjs, built by scripts/build-bundle.mjs): the
 * whole library and its wasm module in one ES module file.
 *
 *   - a page without a bundler, under script-src 'self' 'wasm-unsafe-eval',
 *     imports a copy of the one file by relative path (nothing else of the
 *     package is served) and answers from a filter: its only requests are the
 *     page, its script, the file and the filter;
 *   - the same from a module worker;
 *   - where the key staging takes the browsers' loop limit, string keys are
 *     exactly their UTF-8 bytes (non-ASCII at, before and past the limit, lone
 *     surrogates, long keys), single and in batches;
 *   - the file imports nothing, and Node can import it by path and answer.
 *
 * The page tests run in Chromium, Firefox and WebKit (tests/browser/engines/), each meeting
 * the same assertions. Each page's first script is the adapter's error capture
 * (PAGE_CAPTURE_PATH, left out of the request lists), so WebKit sees errors from the start.
 *
 * Run: node --test tests/browser/single-file.test.mjs (needs esbuild, a devDependency; the
 * browsers: tests/browser/engines/index.mjs).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';

import { BUNDLE, writeBundle } from '../../scripts/build-bundle.mjs';
import { ENGINES, PAGE_CAPTURE, PAGE_CAPTURE_PATH, launchEngine, skipUnless } from './engines/index.mjs';
import { wordFilter } from './helpers/packed.mjs';
import { ABSENT, STRICT, capturedPage, openReport, presenceReport, reportingApp, startStrictSite } from './helpers/strict-pages.mjs';

const WORDS = ['alpha', 'bravo', 'charlie', 'delta'];

const page = capturedPage('single file');

const report = presenceReport(WORDS);

const app = reportingApp('./vendor/bloomgate.mjs', report);

const workerApp = `const out = document.getElementById('out');
const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
worker.onmessage = ({ data }) => {
  out.dataset.result = JSON.stringify(data);
  out.dataset.state = data.error ? 'error' : 'ready';
};
`;

const workerModule = `import { loadFilter } from './vendor/bloomgate.mjs';

loadFilter('/words.bgf').then((filter) => self.postMessage((${report})(filter)),
  (error) => self.postMessage({ error: true, code: error.code, message: error.message }));
`;

let server;
let bundle;
let filterBytes;

before(async () => {
  const built = writeBundle();
  bundle = readFileSync(BUNDLE);
  filterBytes = await wordFilter(WORDS);
  const files = {
    '/page/': page,
    '/page/app.js': app,
    '/page/vendor/bloomgate.mjs': bundle,
    '/worker/': page,
    '/worker/app.js': workerApp,
    '/worker/worker.js': workerModule,
    '/worker/vendor/bloomgate.mjs': bundle,
    '/keys/': `<!doctype html><meta charset="utf-8"><script src="${PAGE_CAPTURE_PATH}"></script><title>keys</title>`,
    '/keys/vendor/bloomgate.mjs': bundle,
    '/words.bgf': filterBytes,
    [PAGE_CAPTURE_PATH]: PAGE_CAPTURE,
  };
  server = await startStrictSite((path) => (files[path] === undefined ? undefined : { body: files[path], csp: STRICT }));
  process.stderr.write(`# js/bundle.mjs: ${built.bytes} bytes, ${built.gzip} gzip -9\n`);
});

after(async () => {
  await server?.close();
});

function assertAnswers({ state, result, errors }) {
  assert.equal(state, 'ready', JSON.stringify(result));
  assert.deepEqual(result.present, WORDS);
  assert.ok(result.absent.length >= ABSENT.length - 1, `definite negatives: ${result.absent.length}`);
  assert.deepEqual(errors, []);
}

/** Requests a page made, less the favicon and the test's own capture script. */
const pageRequests = (requests) => requests.filter((path) => path !== '/favicon.ico' && path !== PAGE_CAPTURE_PATH);

describe("'bloomgate/bundle': one file, imported by path", () => {
  it('imports nothing: no import statements, no dynamic import, no Node built-in', () => {
    const text = bundle.toString('utf8');
    // Minified static imports are `import{…}from"…";`, `import*as x from"…";` or `import"…";` at a statement start.
    const imports = text.match(/(?:^|[;}\n])import\s*[{*"'\w]|\bimport\s*\(|[}\s]from\s*["'][^"']*["']\s*;|["']node:/g);
    assert.equal(imports, null, 'the file is self-contained');
    assert.ok(text.includes(readFileSync(new URL('../../wasm/bloomgate.wasm', import.meta.url)).toString('base64')),
      'it carries the current wasm/bloomgate.wasm');
  });

  it("Node imports the same file by path and answers from bytes; package.json exports it as 'bloomgate/bundle'", async () => {
    assert.equal(import.meta.resolve('bloomgate/bundle'), pathToFileURL(BUNDLE).href);
    const { BloomFilter, loadFilter } = await import(pathToFileURL(BUNDLE).href);
    const filter = await loadFilter(filterBytes);
    // eslint-disable-next-line no-eval -- the page's report function, run from its source as the page runs it
    assertAnswers({ state: 'ready', result: (0, eval)(report)(filter), errors: [] });
    const made = await BloomFilter.create({ capacity: 10, errorRate: 0.01 });
    made.add('x');
    assert.equal(made.mightContain('x'), true);
    filter.free();
    made.free();
  });
});

for (const name of ENGINES) {
  describe(`'bloomgate/bundle' imported by path in ${name}`, { skip: skipUnless(name), timeout: 300000 }, () => {
    let engine;

    before(async () => {
      engine = await launchEngine(name);
    });

    after(async () => {
      await engine?.close();
    });

    async function open(path) {
      const opened = await openReport(engine, server, path);
      return { ...opened, requests: pageRequests(opened.requests) };
    }

    it("a page under script-src 'self' 'wasm-unsafe-eval' imports it by path and answers; nothing else is fetched", async () => {
      const opened = await open('/page/');
      assertAnswers(opened);
      assert.deepEqual(opened.requests, ['/page/', '/page/app.js', '/page/vendor/bloomgate.mjs', '/words.bgf']);
    });

    it('a module worker imports it by path and answers', async () => {
      const opened = await open('/worker/');
      assertAnswers(opened);
      assert.deepEqual(opened.requests.filter((path) => path.endsWith('.wasm')), []);
    });

    it('the key staging: string keys are their UTF-8 bytes, single and in batches', async () => {
      const tab = await engine.newPage();
      try {
        await tab.goto(`${server.origin}/keys/`);
        const result = await tab.evaluate(async () => {
          const { BloomFilter } = await import('./vendor/bloomgate.mjs');
          const utf8 = new TextEncoder();
          const samples = ['', 'a', '\uD800', 'lone low \uDC00', 'pair \uD83C\uDF89', 'ü'.repeat(3000), 'x'.repeat(5000),
            'https://example.com/posts/0000001.html'];
          for (const n of [15, 16, 17, 95, 96, 97, 127, 128, 129, 200]) {
            const ascii = 'k'.repeat(n);
            samples.push(ascii);
            for (const at of [0, n >> 1, n - 1]) {
              for (const unit of ['é', '日', '\uD800', '\x7f', '\x80']) samples.push(ascii.slice(0, at) + unit + ascii.slice(at + 1));
            }
          }
          const options = { capacity: 10_000, errorRate: 0.0001 };
          const [byString, byBytes, byBatch] = await Promise.all([0, 1, 2].map(() => BloomFilter.create(options)));
          for (const s of samples) byString.add(s);
          for (const s of samples) byBytes.add(utf8.encode(s));
          byBatch.addAll(samples);
          const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
          const probes = samples.map((s) => `${s}?`);
          const expected = probes.map((p) => byBytes.mightContain(utf8.encode(p)));
          const mixed = [...samples, utf8.encode('bytes'), ...probes];
          return {
            count: samples.length,
            single: same(byString.serialize(), byBytes.serialize()),
            batch: same(byBatch.serialize(), byBytes.serialize()),
            members: samples.every((s) => byString.mightContain(s)),
            probes: same(probes.map((p) => byString.mightContain(p)), expected),
            many: same(byString.mightContainMany(mixed),
              mixed.map((item) => byBytes.mightContain(typeof item === 'string' ? utf8.encode(item) : item))),
          };
        });
        assert.deepEqual(result, { count: result.count, single: true, batch: true, members: true, probes: true, many: true });
        assert.ok(result.count > 150);
      } finally {
        await tab.close();
      }
    });
  });
}
