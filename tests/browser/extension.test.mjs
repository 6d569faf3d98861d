/**
 * End-to-end: the example MV3 extension (examples/extension) in Debian's
 * headless Chromium, loaded with --load-extension. A local site on 127.0.0.1
 * stands in for the web; the bundled list holds the expression 127.0.0.1/phish/.
 * A filter site (bench/fresh-site.mjs, on another port) publishes later
 * generations of the list with their deltas and manifest.json, as
 * `bloomgate publish` does; the worker follows it with openFilter(), keeps the
 * copy in IndexedDB, and answers its first check after a restart from it.
 *
 * Run: node --test tests/browser/extension.test.mjs (needs /usr/bin/chromium,
 * or BG_CHROMIUM). Writes extension-warning.png to build/screenshots/, or to
 * docs/images/ with BLOOMGATE_REFRESH_IMAGES=1 (tests/browser/helpers/screenshots.mjs).
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import { CHROMIUM, launch } from './browser.mjs';
import { screenshotPath } from './helpers/screenshots.mjs';
import { FilterSite, sri } from '../../bench/fresh-site.mjs';
import { LIST_ID, buildExtension, buildUrlFilter, parseList } from '../../examples/extension/build.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const hasChromium = existsSync(CHROMIUM);

/**
 * An HTTP server on 127.0.0.1 answering from a route table (path -> handler or
 * { status, type, body }); every request is recorded in `requests`.
 */
async function startSite(routes) {
  const requests = [];
  const server = createServer((req, res) => {
    const path = new URL(req.url, 'http://127.0.0.1').pathname;
    requests.push(path);
    const route = routes[path];
    if (typeof route === 'function') return route(req, res);
    if (!route) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      return res.end('not found');
    }
    res.writeHead(route.status ?? 200, {
      'content-type': route.type ?? 'text/html; charset=utf-8',
      'access-control-allow-origin': '*',
      'cache-control': 'no-store',
    });
    res.end(route.body);
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  return {
    origin: `http://127.0.0.1:${server.address().port}`,
    requests,
    routes,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

function page(title, text = title) {
  return { body: `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body><h1>${text}</h1></body></html>` };
}

describe('MV3 extension in headless Chromium', { skip: hasChromium ? false : `no Chromium at ${CHROMIUM}`, timeout: 120000 }, () => {
  let buildDir;
  let site;
  let browser;
  let extensionId;
  let tab;
  let popup;
  let filterSite;

  before(async () => {
    buildDir = await mkdtemp(join(tmpdir(), 'bloomgate-extension-'));
    await buildExtension({ out: buildDir });
    // Generations 2, 3 and 4 of the same list add /phish2/, /phish3/ and /phish4/ (same geometry).
    const list = parseList(await readFile(join(root, 'examples', 'extension', 'blocklist.txt'), 'utf8'));
    const files = [null, null];
    for (const g of [2, 3, 4]) {
      const added = [2, 3, 4].filter((n) => n <= g).map((n) => `127.0.0.1/phish${n}/`);
      files.push(await buildUrlFilter([...list, ...added], { generation: g }));
    }
    filterSite = new FilterSite({ listId: LIST_ID, files });
    await filterSite.start();
    site = await startSite({
      '/clean/': page('Clean page'),
      '/phish/login.html': page('Listed page'),
      '/phish2/': page('Newly listed page'),
      '/phish3/': page('Listed in generation 3'),
    });
    browser = await launch([`--disable-extensions-except=${buildDir}`, `--load-extension=${buildDir}`]);
    const context = browser.context;
    const worker = context.serviceWorkers()[0] ?? await context.waitForEvent('serviceworker', { timeout: 15000 });
    extensionId = new URL(worker.url()).host;
    popup = await context.newPage();
    tab = await context.newPage();
  });

  after(async () => {
    await browser?.close();
    await site?.close();
    await filterSite?.stop();
    if (buildDir) await rm(buildDir, { recursive: true, force: true });
  });

  const extensionUrl = (path) => `chrome-extension://${extensionId}/${path}`;

  /** Open the popup page; resolves once the worker answered with the filter's state. */
  async function openPopup() {
    await popup.bringToFront(); // background tabs throttle animation frames, which Playwright waits on
    await popup.goto(extensionUrl('popup.html'));
    await popup.waitForSelector('body[data-ready="true"]', { timeout: 15000 });
    await popup.evaluate(() => { document.querySelector('details').open = true; });
    return popup;
  }

  /** Navigate and tolerate the navigation being replaced by the warning page. */
  async function visit(url) {
    await tab.bringToFront();
    await tab.goto(url).catch((error) => {
      if (!/interrupted|ERR_ABORTED|frame was detached/i.test(error.message)) throw error;
    });
  }

  /** Poll the tab's URL: waitForURL rejects when the navigation it watches is replaced. */
  async function waitForTabUrl(matches, what) {
    const deadline = Date.now() + 10000;
    while (!matches(tab.url())) {
      if (Date.now() > deadline) assert.fail(`expected ${what}, the tab is at ${tab.url()}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await tab.waitForLoadState('load');
  }

  async function expectWarning(listedUrl, expression) {
    await waitForTabUrl((url) => url.startsWith(extensionUrl('warning.html')), 'the warning page');
    const shown = new URL(tab.url()).searchParams;
    assert.equal(shown.get('url'), listedUrl);
    await tab.waitForSelector('#expression');
    assert.equal(await tab.textContent('#expression'), expression);
    assert.equal(await tab.textContent('h1'), 'Deceptive site ahead');
  }

  /** The URL stays put (no late redirect to the warning page). */
  async function expectStays(url, title) {
    await waitForTabUrl((current) => current === url, url);
    await tab.waitForTimeout(700);
    assert.equal(tab.url(), url);
    assert.equal(await tab.title(), title);
  }

  it('loads the bundled filter and shows it in the popup', async () => {
    await openPopup();
    assert.equal(await popup.textContent('#generation'), '1');
    assert.match(await popup.textContent('#list-id'), /^[0-9a-f]{32}$/);
    assert.match(await popup.textContent('#size'), /KiB|B \(classic/);
    assert.equal(await popup.textContent('#source'), 'bundled with the extension');
  });

  it('lets a clean URL load normally', async () => {
    await visit(`${site.origin}/clean/`);
    await expectStays(`${site.origin}/clean/`, 'Clean page');
  });

  it('sends a listed URL to the warning page, and "go back" returns to the last safe page', async () => {
    const listed = `${site.origin}/phish/login.html`;
    await visit(listed);
    await expectWarning(listed, '127.0.0.1/phish/');
    await tab.screenshot({ path: screenshotPath('extension-warning.png', { docs: true }) });
    await tab.click('#back');
    await expectStays(`${site.origin}/clean/`, 'Clean page');
  });

  it('"continue anyway" opens the listed page and remembers the allowance', async () => {
    const listed = `${site.origin}/phish/login.html`;
    await visit(listed);
    await expectWarning(listed, '127.0.0.1/phish/');
    await tab.click('#continue');
    await expectStays(listed, 'Listed page');
    // The allowance covers the listed expression: another page under it loads too.
    await visit(`${site.origin}/phish/login.html?again=1`);
    await expectStays(`${site.origin}/phish/login.html?again=1`, 'Listed page');
  });

  /** Save a manifest URL in the popup's settings (the worker opens it at once). */
  async function configure(manifestUrl) {
    await openPopup();
    await popup.fill('#manifest-url', manifestUrl);
    await popup.click('#settings button[type="submit"]');
    await popup.waitForSelector('#settings-message:text("Saved.")', { timeout: 15000 });
  }

  async function updateNow(until) {
    await openPopup();
    await popup.click('#update');
    await popup.waitForFunction(until, null, { timeout: 15000 });
  }

  it('opens the filter site: the full file of generation 2 the first time', async () => {
    filterSite.publish(2);
    filterSite.clearLog();
    await configure(filterSite.manifestUrl);
    await openPopup();
    await popup.waitForFunction(() => document.getElementById('generation').textContent === '2', null, { timeout: 10000 });
    assert.match(await popup.textContent('#last-update'), /now using generation 2 \(the full file/);
    assert.equal(await popup.textContent('#source'), `the full file from ${filterSite.manifestUrl}`);
    assert.deepEqual(filterSite.paths(), ['/manifest.json', '/filter-2.bgf']);
    const listed = `${site.origin}/phish2/`;
    await visit(listed);
    await expectWarning(listed, '127.0.0.1/phish2/');
  });

  it('takes generation 3 as a delta: the .bgd is requested, the .bgf is not', async () => {
    filterSite.publish(3, { deltasFrom: [2] });
    filterSite.clearLog();
    await updateNow(() => document.getElementById('generation').textContent === '3');
    assert.match(await popup.textContent('#last-update'), /now using generation 3 \(a delta/);
    assert.equal(await popup.textContent('#source'), `a delta from ${filterSite.manifestUrl}`);
    assert.deepEqual(filterSite.paths(), ['/manifest.json', '/delta-2-3.bgd']);
    await visit(`${site.origin}/clean/`);
    await expectStays(`${site.origin}/clean/`, 'Clean page');
    const listed = `${site.origin}/phish3/`;
    await visit(listed);
    await expectWarning(listed, '127.0.0.1/phish3/');
  });

  it('keeps the last good filter when a delta is corrupt or the site is down', async () => {
    const bad = Uint8Array.from(filterSite.delta(3, 4));
    bad[bad.length - 4] ^= 0x33;
    filterSite.publish(4, { deltasFrom: [3] });
    filterSite.files.set('/delta-3-4.bgd', bad);
    filterSite.files.delete('/filter-4.bgf');
    filterSite.setManifest({ ...filterSite.manifest, deltas: [{ from: 3, url: 'delta-3-4.bgd', length: bad.length, integrity: sri(bad) }] });
    filterSite.clearLog();
    await updateNow(() => /failed/.test(document.getElementById('last-update').textContent));
    assert.deepEqual(filterSite.paths(), ['/manifest.json', '/delta-3-4.bgd', '/filter-4.bgf']);
    assert.match(await popup.textContent('#last-update'), /E_FETCH/); // the delta was refused, then the full file was missing
    assert.match(await popup.textContent('#last-update'), /last good filter/);
    assert.equal(await popup.textContent('#generation'), '3');
    await filterSite.stop();
    await popup.evaluate(() => { document.getElementById('last-update').textContent = ''; });
    await updateNow(() => /failed/.test(document.getElementById('last-update').textContent));
    assert.match(await popup.textContent('#last-update'), /E_FETCH/);
    assert.equal(await popup.textContent('#generation'), '3');
    await visit(`${site.origin}/clean/`);
    await expectStays(`${site.origin}/clean/`, 'Clean page');
    const listed = `${site.origin}/phish3/`;
    await visit(listed);
    await expectWarning(listed, '127.0.0.1/phish3/');
  });

  it("shows the gate's counters in the popup", async () => {
    await openPopup();
    const checks = Number((await popup.textContent('#checks')).replace(/,/g, ''));
    const local = Number((await popup.textContent('#local')).replace(/,/g, ''));
    const listed = Number((await popup.textContent('#confirmed')).replace(/,/g, ''));
    assert.ok(checks >= 6, `checks: ${checks}`);
    assert.ok(local >= 1, `answered locally: ${local}`);
    assert.ok(listed >= 2, `listed: ${listed}`);
  });
  it('after the worker stops, answers its first navigation from the IndexedDB copy, site still down (timed)', async (t) => {
    await openPopup();
    const before = await popup.evaluate(() => chrome.runtime.sendMessage({ type: 'status' }));
    await popup.goto('about:blank'); // no extension page keeps the worker alive
    // Stop every service worker (the extension's among them), as Chromium does when one is idle.
    const cdp = await browser.context.newCDPSession(tab);
    await cdp.send('ServiceWorker.enable');
    await cdp.send('ServiceWorker.stopAllWorkers');
    await cdp.detach();
    await visit(`${site.origin}/clean/`); // wakes the worker: the first navigation it checks
    await expectStays(`${site.origin}/clean/`, 'Clean page');
    const listed = `${site.origin}/phish3/`;
    await visit(listed);
    await expectWarning(listed, '127.0.0.1/phish3/');
    await openPopup();
    const state = await popup.evaluate(() => chrome.runtime.sendMessage({ type: 'status' }));
    assert.ok(state.coldStart.startedAt > before.coldStart.startedAt, 'a new start of the worker');
    assert.equal(state.filter.generation, 3);
    assert.equal(state.filter.source, 'persisted');
    assert.equal(state.coldStart.source, 'persisted');
    assert.ok(state.coldStart.readyMs > 0 && state.coldStart.firstCheckMs >= state.coldStart.readyMs, JSON.stringify(state.coldStart));
    assert.equal(await popup.textContent('#source'), `the copy in IndexedDB of ${filterSite.manifestUrl}`);
    t.diagnostic(`extension cold start (${state.filter.serializedBytes}-byte filter from IndexedDB, site down): ` +
      `script evaluated at ${state.coldStart.scriptMs.toFixed(1)} ms, wasm instantiated at ${state.coldStart.wasmMs.toFixed(1)} ms, ` +
      `filter ready at ${state.coldStart.readyMs.toFixed(1)} ms, first navigation answered at ${state.coldStart.firstCheckMs.toFixed(1)} ms after the worker started`);
  });
});
