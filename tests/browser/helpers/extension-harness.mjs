/**
 * extension-harness.mjs — the example extension's own files (a build of examples/extension) as
 * plain pages of one 127.0.0.1 origin, for an engine that cannot load an extension (WebKitGTK:
 * tests/browser/extension-webkit.test.mjs), and a driver that plays the browser's part.
 *
 *   /__harness/background.html   chrome-shim.js, then the extension's background.js as a module
 *   /popup.html, /warning.html   the extension's pages, chrome-shim.js first in <head>
 *   everything else              the build's files as they are (vendor/js, vendor/wasm, filters)
 *
 * Every HTML reply carries the manifest's extension_pages CSP, so the pages run under the policy
 * they ship with ('wasm-unsafe-eval', no inline script). What the harness stands in for: the
 * chrome.* calls (helpers/extension-harness/chrome-shim.js) and the browser's firing of
 * webNavigation events and following of chrome.tabs.update. What is real: the extension's
 * code, the library, its WebAssembly, IndexedDB, fetch, the pages' DOM.
 */
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { dirname, extname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

import { listenLocal } from './listen.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const SHIM = join(here, 'extension-harness', 'chrome-shim.js');
const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.wasm': 'application/wasm',
};
const BACKGROUND_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>background (harness)</title>
<script src="/__harness/chrome-shim.js"></script>
<script type="module" src="/background.js"></script>
</head><body><p>the extension's background script, as a page</p></body></html>
`;

/**
 * Serve the extension build in `dir` as described above.
 * @returns {Promise<{ origin: string, requests: string[], close: () => Promise<void> }>}
 */
export async function serveExtension(dir) {
  const top = resolve(dir);
  const manifest = JSON.parse(await readFile(join(top, 'manifest.json'), 'utf8'));
  const csp = manifest.content_security_policy.extension_pages;
  const requests = [];
  const server = createServer(async (req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://127.0.0.1').pathname);
    requests.push(path);
    const send = (status, type, body) => {
      const headers = { 'content-type': type, 'cache-control': 'no-store' };
      if (type.startsWith('text/html')) headers['content-security-policy'] = csp;
      res.writeHead(status, headers).end(body);
    };
    if (path === '/__harness/background.html') return send(200, TYPES['.html'], BACKGROUND_HTML);
    if (path === '/__harness/chrome-shim.js') return send(200, TYPES['.js'], await readFile(SHIM));
    const file = resolve(top, `.${path}`);
    if (!file.startsWith(top + sep)) return send(404, 'text/plain', 'not found');
    let body;
    try {
      body = await readFile(file);
    } catch {
      return send(404, 'text/plain', 'not found');
    }
    const type = TYPES[extname(file)] ?? 'application/octet-stream';
    if (type.startsWith('text/html')) {
      body = body.toString('utf8').replace('<head>', '<head>\n  <script src="/__harness/chrome-shim.js"></script>');
    }
    send(200, type, body);
  });
  return listenLocal(server, { requests });
}

const sleep = (ms) => new Promise((resolvePromise) => setTimeout(resolvePromise, ms));

/**
 * The extension driver (the interface tests/browser/helpers/extension-scenarios.mjs drives) over
 * three pages of an engine: the background page, a tab and a popup. The driver is the browser:
 * it fires webNavigation.onBeforeNavigate before a navigation and onCommitted once it committed,
 * waits until the extension has answered each (the gate counted the check and has nothing in
 * flight: what is left of the listener then is microtasks, done before the next WebDriver
 * command), and follows a chrome.tabs.update to the warning page as the browser would.
 */
export async function harnessDriver(engine, origin) {
  const background = await engine.newPage();
  const tab = await engine.newPage();
  const popup = await engine.newPage();
  await background.goto(`${origin}/__harness/background.html`);
  const status = () => background.evaluate(() => window.harness.message({ type: 'status' }));
  await background.waitFor(async () => (await window.harness.message({ type: 'status' }))?.ok === true, null, { timeout: 60000 });
  await background.evaluate(() => window.harness.fire('runtime.onInstalled', { reason: 'install' }));
  let updatesSeen = 0;
  const TAB = 1;

  /** Fire `event` for `url` in the tab; resolves to the warning URL the extension sent the tab to, or null. */
  async function navigationEvent(event, url) {
    const { gate } = await status();
    await background.evaluate(({ event, details }) => window.harness.fire(event, details),
      { event, details: { tabId: TAB, frameId: 0, url, documentLifecycle: 'active', timeStamp: Date.now() } });
    await background.waitFor(async (checks) => {
      const { gate: now } = await window.harness.message({ type: 'status' });
      return now.checks > checks && now.inFlight === 0;
    }, gate.checks, { timeout: 30000 });
    const updates = await background.evaluate(() => window.harness.tabUpdates);
    const fresh = updates.slice(updatesSeen);
    updatesSeen = updates.length;
    if (fresh.length > 1) throw new Error(`the extension updated the tab ${fresh.length} times for one event: ${JSON.stringify(fresh)}`);
    return fresh.length === 1 ? fresh[0].url : null;
  }

  /** A navigation of the tab to `url`, begun by the test (goto) or by the page itself (already under way). */
  async function navigate(url, { begun = false } = {}) {
    // A navigation the page began itself (warning.js's location.replace) is seen once it landed;
    // the events the browser fired at its start are fired then.
    if (begun) await waitForLocation((at) => at === url, url);
    const warning = await navigationEvent('webNavigation.onBeforeNavigate', url);
    if (warning) return tab.goto(warning); // the navigation is replaced before it commits
    if (!begun) await tab.goto(url);
    const late = await navigationEvent('webNavigation.onCommitted', url);
    if (late) await tab.goto(late);
  }

  /** The tab's location once its document has loaded (null between documents). */
  async function location() {
    try {
      return await tab.evaluate(() => (document.readyState === 'complete' ? window.location.href : null));
    } catch {
      return null;
    }
  }

  async function waitForLocation(matches, what) {
    const deadline = Date.now() + 20000;
    for (;;) {
      const at = await location();
      if (at !== null && matches(at)) return at;
      if (Date.now() > deadline) throw new Error(`expected ${what}, the tab is at ${at}`);
      await sleep(50);
    }
  }

  const popupText = (id) => popup.evaluate((which) => document.getElementById(which).textContent, id);

  return {
    engine: engine.name,
    extensionUrl: (path) => `${origin}/${path}`,
    visit: (url) => navigate(url),
    location,
    waitForLocation,
    async warningShown() {
      return tab.evaluate(() => ({ h1: document.querySelector('h1').textContent, expression: document.getElementById('expression').textContent }));
    },
    title: () => tab.evaluate(() => document.title),
    /** Nothing is pending: every event was answered before visit() returned. */
    settle: async () => {},
    async clickWarning(button) {
      const at = new URL(await location());
      const target = button === 'continue' ? at.searchParams.get('url') : at.searchParams.get('from');
      await tab.evaluate((id) => { document.getElementById(id).click(); }, button);
      await navigate(target, { begun: true }); // warning.js replaces the page: the browser fires its events
    },
    async openPopup() {
      await popup.goto(`${origin}/popup.html`);
      await popup.waitFor(() => document.body.dataset.ready === 'true', null, { timeout: 20000 });
    },
    popupText,
    async popupWaitFor(fn, arg) {
      return popup.waitFor(fn, arg, { timeout: 30000 });
    },
    popupEvaluate: (fn, arg) => popup.evaluate(fn, arg),
    status,
    /** The background page loaded again: what a stopped worker's next start is (the same origin's IndexedDB). */
    async restartBackground() {
      await background.goto(`${origin}/__harness/background.html`);
      await background.waitFor(async () => (await window.harness.message({ type: 'status' }))?.ok === true, null, { timeout: 60000 });
      updatesSeen = 0;
    },
  };
}
