/**
 * End-to-end in Chromium, Firefox and WebKit (tests/browser/engines/), each meeting the same
 * assertions: the library without a bundler on pages under a strict
 * Content-Security-Policy, and in a module worker.
 *
 *   script-src 'self' 'wasm-unsafe-eval'   a module script file importing
 *       js/index.js (or js/inline.js) by relative path answers queries; an
 *       inline import map is refused (script-src 'self' blocks inline
 *       scripts), so 'bloomgate' as a bare name does not resolve
 *   script-src 'self'                      compiling WebAssembly is refused:
 *       loadFilter rejects with BloomgateError E_CSP naming 'wasm-unsafe-eval'
 *   module worker                          the worker's own response carries
 *       the policy; the same two outcomes inside it
 *
 * Each page's first script is the adapter's capture (PAGE_CAPTURE, a same-origin file the
 * policy allows): it records uncaught errors and the policy's violations
 * (securitypolicyviolation events) from the page's start in every engine, where the console's
 * wording of a refusal is each engine's own.
 *
 * The MV3 extension service worker is tested in extension.test.mjs.
 * Run: node --test tests/browser/csp.test.mjs (see tests/browser/engines/index.mjs for the browsers).
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { writeInlineModule } from '../../scripts/build-inline.mjs';
import { ENGINES, PAGE_CAPTURE, PAGE_CAPTURE_PATH, launchEngine, skipUnless } from './engines/index.mjs';
import { root, wordFilter } from './helpers/packed.mjs';
import { ABSENT, STRICT, capturedPage, openReport, presenceReport, reportingApp, startStrictSite } from './helpers/strict-pages.mjs';

const NO_WASM = "default-src 'self'; script-src 'self'; object-src 'none'; base-uri 'none'";
const WORDS = ['alpha', 'bravo', 'charlie'];

const page = (head = '') => capturedPage('strict CSP', head);

/** The page's module: load the filter, ask it, report on #out (data-state, data-result). */
const appModule = (entry) => reportingApp(entry, presenceReport(WORDS));

const workerPage = `const out = document.getElementById('out');
const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
worker.onmessage = ({ data }) => {
  out.dataset.result = JSON.stringify(data);
  out.dataset.state = data.error ? 'error' : 'ready';
};
worker.onerror = (event) => {
  out.dataset.result = JSON.stringify({ message: event.message });
  out.dataset.state = 'error';
};
worker.postMessage(${JSON.stringify([...WORDS, ...ABSENT])});
`;

const workerModule = `import { loadFilter } from '../lib/js/index.js';

const filter = loadFilter('/words.bgf');
self.onmessage = async ({ data: words }) => {
  try {
    const f = await filter;
    self.postMessage({ maybe: words.filter((word) => f.mightContain(word)) });
  } catch (error) {
    self.postMessage({ error: true, name: error.name, code: error.code, message: error.message });
  }
};
`;

/** Directory -> { csp, files }; /lib/ is the repository's js/ and wasm/, as vendored. */
function site(filterBytes) {
  return {
    '/strict/': { csp: STRICT, files: { 'index.html': page(), 'app.js': appModule('../lib/js/index.js') } },
    '/strict-inline/': { csp: STRICT, files: { 'index.html': page(), 'app.js': appModule('../lib/js/inline.js') } },
    '/import-map/': {
      csp: STRICT,
      files: {
        'index.html': page('<script type="importmap">{"imports":{"bloomgate":"/lib/js/index.js"}}</script>'),
        'app.js': appModule('bloomgate'),
      },
    },
    '/no-wasm-eval/': { csp: NO_WASM, files: { 'index.html': page(), 'app.js': appModule('../lib/js/index.js') } },
    '/no-wasm-eval-inline/': { csp: NO_WASM, files: { 'index.html': page(), 'app.js': appModule('../lib/js/inline.js') } },
    '/worker/': { csp: STRICT, files: { 'index.html': page(), 'app.js': workerPage, 'worker.js': workerModule } },
    '/worker-no-wasm-eval/': { csp: NO_WASM, files: { 'index.html': page(), 'app.js': workerPage, 'worker.js': workerModule } },
    '/': { csp: STRICT, files: { 'words.bgf': filterBytes, [PAGE_CAPTURE_PATH.slice(1)]: PAGE_CAPTURE } },
  };
}

/** A site of `dirs`; /lib/ is the repository's js/ and wasm/, as vendored (no policy of their own). */
function startSite(dirs) {
  return startStrictSite(async (path) => {
    for (const [mount, dir] of [['/lib/js/', join(root, 'js')], ['/lib/wasm/', join(root, 'wasm')]]) {
      if (!path.startsWith(mount)) continue;
      const file = resolve(dir, `.${path.slice(mount.length - 1)}`);
      if (!file.startsWith(dir + sep)) return undefined;
      return readFile(file).then((body) => ({ body }), () => undefined);
    }
    const slash = path.lastIndexOf('/') + 1;
    const dir = dirs[path.slice(0, slash)];
    const body = dir?.files[path.slice(slash) || 'index.html'];
    return body === undefined ? undefined : { body, csp: dir.csp };
  });
}

let server;

before(async () => {
  writeInlineModule(); // js/inline.js imports the generated js/inline-module.js
  server = await startSite(site(await wordFilter(WORDS)));
});

after(async () => {
  await server?.close();
});

for (const name of ENGINES) {
  describe(`strict CSP pages and module workers, no bundler, in ${name}`, { skip: skipUnless(name), timeout: 300000 }, () => {
    let engine;

    before(async () => {
      engine = await launchEngine(name);
    });

    after(async () => {
      await engine?.close();
    });

    /** What the page's capture recorded: uncaught errors (with the protocol's, see errors()) and the policy's violations. */
    async function captured(tab) {
      const { violations } = await tab.evaluate(() => window.__bgCapture ?? { violations: null });
      assert.ok(violations, 'the capture script ran first');
      return { errors: await tab.errors(), violations };
    }

    /** Open a page; resolve with its report, what it threw and what the policy refused. */
    function open(path) {
      return openReport(engine, server, path, captured);
    }

    function assertAnswers(report) {
      assert.equal(report.state, 'ready', JSON.stringify(report.result));
      assert.deepEqual(report.result.present, WORDS);
      assert.ok(report.result.absent.length >= ABSENT.length - 1, `definite negatives: ${report.result.absent.length}`);
      assert.deepEqual(report.errors, []);
      assert.deepEqual(report.violations, [], 'no CSP violation');
    }

    function assertCspError(result) {
      assert.equal(result.name, 'BloomgateError', JSON.stringify(result));
      assert.equal(result.code, 'E_CSP');
      assert.match(result.message, /add 'wasm-unsafe-eval' to its script-src/);
    }

    it("script-src 'self' 'wasm-unsafe-eval': a module script importing js/index.js by path answers", async () => {
      const report = await open('/strict/');
      assertAnswers(report);
      assert.ok(report.requests.includes('/lib/wasm/bloomgate.wasm'), `requests: ${report.requests.join(', ')}`);
    });

    it("script-src 'self' 'wasm-unsafe-eval': js/inline.js answers and fetches no .wasm", async () => {
      const report = await open('/strict-inline/');
      assertAnswers(report);
      assert.ok(report.requests.includes('/lib/js/inline-module.js'));
      assert.deepEqual(report.requests.filter((path) => path.endsWith('.wasm')), []);
    });

    it('an inline import map is refused by the same policy: a bare specifier does not resolve', async (t) => {
      const tab = await engine.newPage();
      try {
        await tab.goto(`${server.origin}/import-map/`);
        // Both are reported by the time the page has loaded; waited for, not slept on.
        await tab.waitFor(() => window.__bgCapture.violations.length > 0 && window.__bgCapture.errors.length > 0);
        const { errors, violations } = await captured(tab);
        assert.equal(await tab.attribute('#out', 'data-state'), null, 'the app never ran');
        assert.ok(violations.some((v) => /^script-src/.test(v.directive) && v.blocked === 'inline'), JSON.stringify(violations));
        // Each engine words it its own way ("Failed to resolve module specifier", "was a bare
        // specifier, but was not remapped", "does not resolve to a valid URL"): a TypeError naming it.
        assert.ok(errors.some((text) => /TypeError/.test(text) && /["“'‘]bloomgate["”'’]/.test(text)), errors.join('\n'));
        t.diagnostic(`${name}: ${JSON.stringify(violations[0])}; ${errors.join(' | ')}`);
      } finally {
        await tab.close();
      }
    });

    it("script-src 'self' without 'wasm-unsafe-eval': E_CSP naming 'wasm-unsafe-eval' (index.js and inline.js)", async () => {
      for (const path of ['/no-wasm-eval/', '/no-wasm-eval-inline/']) {
        const report = await open(path);
        assert.equal(report.state, 'error', path);
        assertCspError(report.result);
      }
    });

    it("a module worker under script-src 'self' 'wasm-unsafe-eval' answers", async () => {
      const report = await open('/worker/');
      assert.equal(report.state, 'ready', JSON.stringify(report.result));
      assert.deepEqual(report.result.maybe.filter((word) => WORDS.includes(word)), WORDS);
      assert.ok(report.result.maybe.length <= WORDS.length + 1, `maybe: ${report.result.maybe.join(', ')}`);
      assert.ok(report.requests.includes('/worker/worker.js'));
    });

    it("a module worker whose policy lacks 'wasm-unsafe-eval' reports E_CSP", async () => {
      const report = await open('/worker-no-wasm-eval/');
      assert.equal(report.state, 'error');
      assertCspError(report.result);
    });
  });
}
