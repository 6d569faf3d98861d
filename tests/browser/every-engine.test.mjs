/**
 * The same scenarios, with the same assertions, in three engines (issue 21 items 1 and 2):
 * Chromium (Debian `chromium`, playwright-core), Firefox (Debian `firefox-esr`, puppeteer-core
 * over WebDriver BiDi) and WebKit, Safari's engine (WebKitGTK's `WebKitWebDriver` under
 * `xvfb-run`, plain W3C WebDriver). The adapter is tests/browser/engines/.
 *
 *   a page              BloomFilter create/add/mightContain, byte-identical to Node's; from()
 *                       of its bytes; loadFilter with integrity (and E_INTEGRITY for a wrong
 *                       digest); 2,000 probes answered exactly as Node answers them
 *   a module worker     the library imported in a { type: 'module' } worker: loadFilter with
 *                       integrity, create/add, the same answers
 *   a strict CSP        script-src 'self' 'wasm-unsafe-eval' (no inline script, no eval: both
 *                       checked refused), the library from a module file answers
 *   escalation          checkPassword and checkUrl against the reference server (js/server.js)
 *                       on another 127.0.0.1 origin (CORS): filters loaded from it, a listed
 *                       password and URL confirmed, clean ones settled, only prefixes sent
 *   no IndexedDB        a frame sandboxed without allow-same-origin (opaque origin): openFilter
 *                       answers from memory, each open reports E_STORAGE naming the SecurityError
 *   openFilter, signed  pinned Ed25519 keys (2 of 3) verified by the engine's own WebCrypto;
 *                       the copy kept in IndexedDB; the site down, a reload opens from it; the
 *                       next generation arrives as a delta (.bgd requested, no .bgf); the
 *                       browser restarted on its profile still has it (WebKit: the automation
 *                       session is ephemeral, so it does not)
 *   private storage     Chromium's off-the-record context (incognito), Firefox private browsing
 *                       (browser.privatebrowsing.autostart), WebKit's ephemeral session:
 *                       openFilter persists within the session, a reload opens from it, and
 *                       after the browser restarts nothing is left
 *
 * A failure in any engine fails the file. A browser that is not installed is skipped with the
 * reason, unless BLOOMGATE_REQUIRE_BROWSERS=1 (as .ci/run sets): then it fails. Pages come
 * from 127.0.0.1 only.
 *
 * Run: node --test tests/browser/every-engine.test.mjs    (some engines: BG_ENGINES=firefox,webkit)
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { BloomFilter } from '../../js/index.js';
import { ADDED, LISTED, LIST, buildKit, listedUrl } from '../js/helpers/mirror.mjs';
import { ENGINES, launchEngine, skipUnless } from './engines/index.mjs';
import { chosenEngines, startLibraryServer } from './helpers/each-engine.mjs';
import { listedHosts, startExampleSite } from './helpers/example-site.mjs';
import { listenLocal } from './helpers/listen.mjs';

const STRICT = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; object-src 'none'; base-uri 'none'";
const WORDS = Array.from({ length: 300 }, (_, i) => `word-${i}`);
const PROBES = Array.from({ length: 2000 }, (_, i) => `probe-${i * 7919}`);
const CREATE = { capacity: 1000, errorRate: 0.001, seed: 7, listId: 'e0e1e2e3'.repeat(4), generation: 1 };
const chosen = chosenEngines();

const sha256Hex = (bytes) => createHash('sha256').update(bytes).digest('hex');
const sri = (bytes) => `sha256-${createHash('sha256').update(bytes).digest('base64')}`;

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>engines</title><link rel="icon" href="data:,">
<script type="module">
  import * as bloomgate from '/bloomgate/js/index.js';
  window.bloomgate = bloomgate;
  window.sha256 = async (bytes) => [...new Uint8Array(await crypto.subtle.digest('SHA-256', bytes))].map((b) => b.toString(16).padStart(2, '0')).join('');
  document.documentElement.dataset.ready = 'yes';
</script></head><body><p>engines test page</p></body></html>
`;

/** The worker: answers one message with what the library did inside it. */
const WORKER = `import { BloomFilter, loadFilter } from '/bloomgate/js/index.js';

self.onmessage = async ({ data }) => {
  try {
    const loaded = await loadFilter('/words.bgf', { integrity: data.integrity });
    const made = await BloomFilter.create(data.create);
    made.addAll(data.words);
    self.postMessage({
      ok: true,
      inWorker: typeof WorkerGlobalScope !== 'undefined' && self instanceof WorkerGlobalScope && typeof document === 'undefined',
      loadedWords: data.words.filter((word) => loaded.mightContain(word)).length,
      loadedProbes: data.probes.map((probe) => loaded.mightContain(probe)),
      madeWords: data.words.filter((word) => made.mightContain(word)).length,
    });
  } catch (error) {
    self.postMessage({ ok: false, name: error.name, code: error.code, message: error.message });
  }
};
`;

/** A frame sandboxed without allow-same-origin (an opaque origin: no IndexedDB): it reports openFilter's state to its parent. */
const SANDBOXED_FRAME = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>sandboxed</title>
<script type="module">
  import { openFilter } from '/bloomgate/js/index.js';
  window.addEventListener('message', async ({ data }) => {
    const errors = [];
    try {
      const live = await openFilter(data.url, { keys: data.keys, threshold: 2, listId: data.listId, onError: (error) => errors.push({ code: error.code, message: error.message }) });
      const stats = live.stats();
      parent.postMessage({ origin: String(self.origin), storage: stats.storage, source: stats.source, signed: stats.signed, errors,
        missed: live.mightContainMany(data.listed).filter((answer) => !answer).length }, '*');
    } catch (error) {
      parent.postMessage({ origin: String(self.origin), failed: { name: error.name, code: error.code, message: error.message }, errors }, '*');
    }
  });
  parent.postMessage('ready', '*');
</script></head><body>sandboxed frame</body></html>
`;

const CSP_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>strict CSP</title><link rel="icon" href="data:,">
<script>document.documentElement.dataset.inline = 'ran';</script>
<script type="module" src="/csp/app.js"></script></head><body><p id="out">loading</p></body></html>
`;

const cspApp = (integrity) => `import { loadFilter } from '/bloomgate/js/index.js';

const out = document.getElementById('out');
let evalRefused = false;
try {
  (0, eval)('1');
} catch {
  evalRefused = true;
}
loadFilter('/words.bgf', { integrity: ${JSON.stringify(integrity)} }).then((filter) => {
  out.dataset.result = JSON.stringify({
    evalRefused,
    present: ${JSON.stringify(WORDS)}.filter((word) => filter.mightContain(word)).length,
    probes: ${JSON.stringify(PROBES)}.map((probe) => filter.mightContain(probe)),
  });
}, (error) => {
  out.dataset.result = JSON.stringify({ evalRefused, error: { name: error.name, code: error.code, message: error.message } });
});
`;

/** The page origin: the test pages, the worker, the filter, and the library's js/ and wasm/ by path (with CORS: the sandboxed frame's origin is opaque). */
async function startPageServer(words) {
  const integrity = sri(words);
  const csp = { 'content-security-policy': STRICT };
  const pages = await startLibraryServer({
    '/': PAGE,
    '/worker.js': WORKER,
    '/csp/': () => ({ type: 'text/html; charset=utf-8', body: CSP_PAGE, headers: csp }),
    '/csp/app.js': () => ({ type: 'text/javascript; charset=utf-8', body: cspApp(integrity), headers: csp }),
    '/words.bgf': () => ({ type: 'application/octet-stream', body: words }),
    '/sandboxed.html': SANDBOXED_FRAME,
  }, { headers: { 'access-control-allow-origin': '*' } });
  return { ...pages, integrity };
}

/**
 * The publisher's signed site (tests/js/helpers/mirror.mjs builds it with the real CLI), on one
 * port for the whole run: `serve(snapshot)` changes what it publishes, `down = true` drops every
 * connection (a network error, as a site that is down gives), `requests` records paths.
 */
class SignedSite {
  files = new Map();
  down = false;
  requests = [];

  async start() {
    this.listening = await listenLocal(createServer((req, res) => {
      const path = new URL(req.url, 'http://127.0.0.1').pathname;
      this.requests.push(path);
      if (this.down) return req.socket.destroy();
      const cors = { 'access-control-allow-origin': '*', 'access-control-allow-headers': 'If-None-Match', 'access-control-expose-headers': 'ETag' };
      if (req.method === 'OPTIONS') return res.writeHead(204, cors).end();
      const body = this.files.get(path);
      if (body === undefined) return res.writeHead(404, cors).end();
      res.writeHead(200, { ...cors, 'content-length': body.length, 'cache-control': 'no-store' }).end(body);
    }));
    return this;
  }

  get manifestUrl() {
    return `${this.listening.origin}/manifest.json`;
  }

  serve(files) {
    this.files = files;
    this.down = false;
    this.requests = [];
  }

  stop() {
    return this.listening?.close();
  }
}

let scratch;
let kit;
let words;
let expected;
let pages;
let signed;
let reference;

before(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'bloomgate-engines-'));
  kit = await buildKit(scratch);
  const filter = await BloomFilter.create(CREATE);
  filter.addAll(WORDS);
  words = filter.serialize();
  expected = { digest: sha256Hex(words), probes: PROBES.map((probe) => filter.mightContain(probe)) };
  filter.free();
  assert.ok(expected.probes.includes(false), 'some probes are "definitely not"');
  pages = await startPageServer(words);
  signed = await new SignedSite().start();
  mkdirSync(join(scratch, 'reference'));
  reference = await startExampleSite(join(scratch, 'reference'));
});

after(async () => {
  await pages?.close();
  await signed?.stop();
  await reference?.stop();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

const urlsOf = (g) => Array.from({ length: LISTED + (g - 1) * ADDED }, (_, i) => listedUrl(i));

async function openReady(engine, path = '/') {
  const page = await engine.newPage();
  await page.goto(`${pages.origin}${path}`);
  await page.waitFor(() => document.documentElement.dataset.ready === 'yes');
  return page;
}

/** In the page: openFilter(url, { keys, threshold: 2 }) with default storage; its state, errors and answers. */
const openSigned = (page, urls) => page.evaluate(async ({ url, keys, listId, listed }) => {
  const errors = [];
  let live;
  try {
    live = await window.bloomgate.openFilter(url, {
      keys, threshold: 2, listId, refreshSeconds: 3600, onError: (error) => errors.push(error.code),
    });
  } catch (error) {
    return { failed: { name: error.name, code: error.code }, errors };
  }
  window.live = live;
  window.liveErrors = errors;
  const stats = live.stats();
  const answers = live.mightContainMany(listed);
  return {
    source: stats.source, storage: stats.storage, signed: stats.signed, verifier: stats.verifier,
    generation: live.generation, listId: live.listId, errors, missed: answers.filter((answer) => !answer).length,
    digest: await window.sha256(live.serialize()),
  };
}, { url: signed.manifestUrl, keys: kit.pinned, listId: LIST, listed: urls });

for (const name of ENGINES) {
  const skip = chosen.includes(name) ? skipUnless(name) : `not in BG_ENGINES=${process.env.BG_ENGINES}`;
  describe(`${name}`, { skip, timeout: 240000 }, () => {
    let engine;
    let page;

    before(async () => {
      engine = await launchEngine(name);
      page = await openReady(engine);
    });

    after(async () => {
      await engine?.close();
    });

    it('a page: create/add/mightContain (the bytes Node makes), from(), loadFilter with integrity', async (t) => {
      t.diagnostic(`${name} ${engine.version}`);
      const result = await page.evaluate(async ({ create, list, probes, integrity }) => {
        const { BloomFilter, loadFilter } = window.bloomgate;
        const made = await BloomFilter.create(create);
        for (const word of list) made.add(word);
        const bytes = made.serialize();
        const again = await BloomFilter.from(bytes);
        const loaded = await loadFilter('/words.bgf', { integrity });
        let wrong;
        try {
          await loadFilter('/words.bgf', { integrity: `sha256-${btoa('x'.repeat(32))}` });
          wrong = 'loaded';
        } catch (error) {
          wrong = { name: error.name, code: error.code };
        }
        return {
          madeDigest: await window.sha256(bytes),
          madeWords: list.filter((word) => made.mightContain(word)).length,
          madeProbes: probes.map((probe) => made.mightContain(probe)),
          againProbes: again.mightContainMany(probes),
          loadedProbes: probes.map((probe) => loaded.mightContain(probe)),
          loadedWords: list.filter((word) => loaded.mightContain(word)).length,
          wrong,
        };
      }, { create: CREATE, list: WORDS, probes: PROBES, integrity: pages.integrity });
      assert.equal(result.madeDigest, expected.digest, 'the filter made in the page is byte-identical to Node\'s');
      assert.equal(result.madeWords, WORDS.length);
      assert.deepEqual(result.madeProbes, expected.probes);
      assert.deepEqual(result.againProbes, expected.probes);
      assert.deepEqual(result.loadedProbes, expected.probes);
      assert.equal(result.loadedWords, WORDS.length);
      assert.deepEqual(result.wrong, { name: 'BloomgateError', code: 'E_INTEGRITY' });
    });

    it('a module worker: loadFilter with integrity and create/add inside it', async () => {
      const result = await page.evaluate((message) => new Promise((resolvePromise) => {
        const worker = new Worker('/worker.js', { type: 'module' });
        worker.onmessage = ({ data }) => {
          worker.terminate();
          resolvePromise(data);
        };
        worker.onerror = (event) => resolvePromise({ ok: false, message: `worker error: ${event.message}` });
        worker.postMessage(message);
      }), { integrity: pages.integrity, create: CREATE, words: WORDS, probes: PROBES });
      assert.equal(result.ok, true, JSON.stringify(result));
      assert.equal(result.inWorker, true);
      assert.equal(result.loadedWords, WORDS.length);
      assert.equal(result.madeWords, WORDS.length);
      assert.deepEqual(result.loadedProbes, expected.probes);
    });

    it("a strict-CSP page (script-src 'self' 'wasm-unsafe-eval'): inline script and eval refused, the library answers", async () => {
      const csp = await engine.newPage();
      await csp.goto(`${pages.origin}/csp/`);
      const raw = await csp.waitFor(() => document.getElementById('out').dataset.result ?? null);
      const state = await csp.evaluate(() => ({ inline: document.documentElement.dataset.inline ?? null }));
      await csp.close();
      const result = JSON.parse(raw);
      assert.equal(result.error, undefined, JSON.stringify(result.error));
      assert.equal(state.inline, null, 'the inline script did not run: the policy is in force');
      assert.equal(result.evalRefused, true, 'eval is refused under the policy');
      assert.equal(result.present, WORDS.length);
      assert.deepEqual(result.probes, expected.probes);
    });

    it('escalation to another origin: checkPassword and checkUrl against the reference server (CORS)', async () => {
      const result = await page.evaluate(async ({ base, listedPassword, listedUrl, cleanUrl }) => {
        const { checkPassword, checkUrl, loadFilter } = window.bloomgate;
        const passwords = await loadFilter(`${base}/filters/passwords.bgf`);
        const urls = await loadFilter(`${base}/filters/urls.bgf`);
        const rangeUrl = `${base}/range`;
        const hashesUrl = `${base}/hashes`;
        const sent = () => performance.getEntriesByType('resource').map((entry) => new URL(entry.name).pathname)
          .filter((path) => path.startsWith('/range/') || path.startsWith('/hashes/'));
        // A clean password the filter says "maybe" for, so the server must settle it.
        let falsePositive = null;
        for (let i = 0; i < 200000 && falsePositive === null; i++) {
          const candidate = `clean-password-${i}-zq`;
          if ((await checkPassword(candidate, { filter: passwords })).breached) falsePositive = candidate;
        }
        return {
          listedPassword: await checkPassword(listedPassword, { filter: passwords, rangeUrl }),
          cleanLocal: await checkPassword('a clean passphrase nobody has used 7f3k', { filter: passwords, rangeUrl }),
          falsePositive: falsePositive === null ? null : await checkPassword(falsePositive, { filter: passwords, rangeUrl }),
          listedUrl: await checkUrl(listedUrl, { filter: urls, hashesUrl }),
          cleanUrl: await checkUrl(cleanUrl, { filter: urls, hashesUrl }),
          sent: sent(),
        };
      }, { base: reference.base, listedPassword: reference.passwords[0], listedUrl: `https://${listedHosts[0]}/account/verify?id=1`, cleanUrl: 'https://clean-site.example/' });
      assert.deepEqual({ breached: result.listedPassword.breached, escalated: result.listedPassword.escalated, confirmed: result.listedPassword.confirmed },
        { breached: true, escalated: true, confirmed: true });
      assert.ok(result.listedPassword.count > 0);
      assert.deepEqual({ breached: result.cleanLocal.breached, escalated: result.cleanLocal.escalated }, { breached: false, escalated: false },
        'a local "definitely not" asks nobody');
      assert.ok(result.falsePositive !== null, 'the filter has a false positive among 200,000 candidates');
      assert.deepEqual({ breached: result.falsePositive.breached, escalated: result.falsePositive.escalated, confirmed: result.falsePositive.confirmed },
        { breached: false, escalated: true, confirmed: true }, 'the server settles the filter\'s false positive');
      assert.deepEqual({ listed: result.listedUrl.listed, expression: result.listedUrl.expression, escalated: result.listedUrl.escalated },
        { listed: true, expression: `${listedHosts[0]}/`, escalated: true });
      assert.equal(result.cleanUrl.listed, false);
      assert.ok(result.sent.length >= 3, JSON.stringify(result.sent));
      for (const path of result.sent) assert.match(path, /^\/(range\/[0-9A-F]{5}|hashes\/[0-9a-f]{8}|range\/manifest\.json|hashes\/manifest\.json)$/i, 'only a prefix is sent');
    });

    it('no IndexedDB (a frame sandboxed without allow-same-origin): openFilter answers from memory, E_STORAGE says why', async () => {
      signed.serve(kit.genuine[2]);
      const run = () => page.evaluate(async ({ url, keys, listId, listed }) => {
        document.querySelector('iframe')?.remove();
        const frame = document.createElement('iframe');
        frame.sandbox = 'allow-scripts';
        const replies = [];
        const done = new Promise((resolvePromise) => {
          window.onmessage = ({ source, data }) => {
            if (source !== frame.contentWindow) return;
            if (data === 'ready') frame.contentWindow.postMessage({ url, keys, listId, listed }, '*');
            else resolvePromise(data);
          };
        });
        frame.src = '/sandboxed.html';
        document.body.append(frame);
        replies.push(await done);
        return replies[0];
      }, { url: signed.manifestUrl, keys: kit.pinned, listId: LIST, listed: urlsOf(2) });
      const first = await run();
      assert.equal(first.failed, undefined, JSON.stringify(first));
      assert.equal(first.origin, 'null', 'an opaque origin');
      assert.equal(first.source, 'full');
      assert.equal(first.signed, true);
      assert.equal(first.missed, 0, 'every listed URL reads "maybe"');
      const again = await run();
      assert.equal(again.source, 'full', 'nothing was kept: the next open downloads again');
      // Every engine lets the frame see indexedDB but refuses open() with a SecurityError: each open
      // says so through E_STORAGE (what is missing, and that the filter is kept in memory only).
      for (const reply of [first, again]) {
        assert.ok(reply.errors.length >= 1, `the refusal is reported: ${JSON.stringify(reply)}`);
        for (const error of reply.errors) {
          assert.equal(error.code, 'E_STORAGE');
          assert.match(error.message, /storage is not allowed here \(the filter is kept in memory only\): SecurityError/);
        }
      }
    });

    it('openFilter, signed: WebCrypto Ed25519, kept in IndexedDB, opened offline after a reload, a delta update', async () => {
      signed.serve(kit.genuine[1]);
      const first = await openSigned(page, urlsOf(1));
      assert.deepEqual(first.errors, []);
      assert.equal(first.source, 'full');
      assert.equal(first.storage, 'indexeddb');
      assert.equal(first.signed, true);
      assert.equal(first.verifier, 'webcrypto', 'the engine\'s own Ed25519 verified the manifest');
      assert.equal(first.generation, 1);
      assert.equal(first.listId, LIST);
      assert.equal(first.missed, 0, 'every listed URL reads "maybe"');
      assert.equal(first.digest, sha256Hex(kit.files.g1));

      // The site is down; a reload opens from the persisted copy.
      signed.down = true;
      await page.goto(`${pages.origin}/`);
      await page.waitFor(() => document.documentElement.dataset.ready === 'yes');
      const offline = await openSigned(page, urlsOf(1));
      assert.equal(offline.source, 'persisted', 'opened from IndexedDB with the site down');
      assert.equal(offline.generation, 1);
      assert.equal(offline.signed, true);
      assert.equal(offline.missed, 0);
      assert.equal(offline.digest, sha256Hex(kit.files.g1));
      assert.ok(offline.errors.every((code) => code === 'E_FETCH'), `only the site being down is reported: ${offline.errors}`);

      // Generation 2 is published with a delta from 1: the update takes it.
      signed.serve(kit.genuine[2]);
      const update = await page.evaluate(async (listed) => {
        const outcome = await window.live.refresh({ force: true });
        const stats = window.live.stats();
        return {
          changed: outcome.changed, code: outcome.error?.code ?? null, source: stats.source, generation: window.live.generation,
          missed: window.live.mightContainMany(listed).filter((answer) => !answer).length, digest: await window.sha256(window.live.serialize()),
        };
      }, urlsOf(2));
      assert.deepEqual({ changed: update.changed, code: update.code, source: update.source, generation: update.generation },
        { changed: true, code: null, source: 'delta', generation: 2 });
      assert.equal(update.missed, 0);
      assert.equal(update.digest, sha256Hex(kit.files.g2), 'the patched filter is the publisher\'s generation 2, byte for byte');
      assert.deepEqual(signed.requests, ['/manifest.json', '/delta-1-2.bgd'], 'a delta, not the full file');

      // The browser ends and starts again: a profile keeps the copy; WebKit's session does not.
      signed.down = true;
      await engine.restart();
      page = await openReady(engine);
      const restarted = await openSigned(page, urlsOf(2));
      if (engine.private) {
        assert.deepEqual(restarted.failed, { name: 'BloomgateError', code: 'E_FETCH' }, 'nothing left after the ephemeral session ended, the site down');
      } else {
        assert.equal(restarted.source, 'persisted', JSON.stringify(restarted));
        assert.equal(restarted.generation, 2);
        assert.equal(restarted.missed, 0);
      }
    });

    it('private storage (Chromium incognito context, Firefox private browsing, WebKit ephemeral session)', async (t) => {
      const ephemeral = name === 'webkit' ? engine : await launchEngine(name, { private: true });
      t.after(() => (ephemeral === engine ? undefined : ephemeral.close()));
      assert.equal(ephemeral.private, true);
      if (name === 'webkit') await engine.restart();
      signed.serve(kit.genuine[3]);
      let tab = await openReady(ephemeral);
      const first = await openSigned(tab, urlsOf(3));
      assert.deepEqual(first.errors, [], 'no storage error in a private session');
      assert.equal(first.storage, 'indexeddb');
      assert.equal(first.source, 'full');
      assert.equal(first.generation, 3);
      assert.equal(first.missed, 0);

      signed.down = true;
      await tab.goto(`${pages.origin}/`);
      await tab.waitFor(() => document.documentElement.dataset.ready === 'yes');
      const reloaded = await openSigned(tab, urlsOf(3));
      assert.equal(reloaded.source, 'persisted', 'within the private session the copy is kept');
      assert.equal(reloaded.generation, 3);
      assert.equal(reloaded.digest, sha256Hex(kit.files.g3));

      // The private session ends: its storage goes with it.
      await ephemeral.restart();
      tab = await openReady(ephemeral);
      signed.serve(kit.genuine[3]);
      const after = await openSigned(tab, urlsOf(3));
      assert.equal(after.source, 'full', 'a new private session starts with nothing stored');
      assert.deepEqual(after.errors, []);
      assert.equal(after.generation, 3);
    });
  });
}
