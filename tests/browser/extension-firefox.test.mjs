/**
 * End-to-end: the example extension (examples/extension) as shipped, in Debian's headless
 * Firefox ESR, installed over WebDriver BiDi (`webExtension.install`, through puppeteer-core's
 * installExtension) as a temporary add-on. The same manifest loads in Chromium as a service
 * worker (tests/browser/extension.test.mjs); Firefox runs background.js as a module background
 * script (`background.scripts`, `browser_specific_settings.gecko.id`).
 *
 * BiDi may not navigate a tab to a moz-extension:// page, so the test reaches the extension's
 * pages the way a person does: a listed URL sends the tab to warning.html, and from there the
 * tab opens popup.html (an extension page may navigate to its own pages).
 *
 *   - the add-on installs from the shipped manifest (no warning about service_worker matters:
 *     Firefox takes background.scripts), and its background script checks navigations
 *   - a clean URL loads; a listed URL gets the warning page naming the listed expression;
 *     "continue anyway" opens it
 *   - the popup shows the bundled filter; a filter site (bench/fresh-site.mjs) configured in it
 *     gives generation 2 as the full file, then generation 3 as a delta (.bgd requested, the
 *     .bgf not), and the newly listed URL gets the warning page
 *   - `web-ext lint` of the extension's source directory: no errors, warnings or notices (this
 *     one needs no browser and always runs)
 *
 * A missing Firefox skips the rest, unless BLOOMGATE_REQUIRE_BROWSERS=1 (as .ci/run sets).
 * Run: node --test tests/browser/extension-firefox.test.mjs
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { FilterSite } from '../../bench/fresh-site.mjs';
import { LIST_ID, buildExtension, buildUrlFilter, parseList } from '../../examples/extension/build.mjs';
import { launchEngine, skipUnless } from './engines/index.mjs';
import { listenLocal } from './helpers/listen.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const manifest = JSON.parse(await readFile(join(root, 'examples', 'extension', 'manifest.json'), 'utf8'));
const ADDON_ID = manifest.browser_specific_settings.gecko.id;
/** The moz-extension:// host Firefox gives the add-on (fixed by a pref, so the test knows it). */
const UUID = '6c1f7b4e-2f0a-4d5e-9a51-3b0c2e9d1a77';
const EXTENSION_ORIGIN = `moz-extension://${UUID}`;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const page = (title) => ({ body: `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body><h1>${title}</h1></body></html>` });

/** A web site on 127.0.0.1 answering from a route table. */
function startSite(routes) {
  return listenLocal(createServer((req, res) => {
    const route = routes[new URL(req.url, 'http://127.0.0.1').pathname];
    if (!route) return res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(route.body);
  }));
}

describe('the example extension in Firefox, installed over WebDriver BiDi', { skip: skipUnless('firefox'), timeout: 180000 }, () => {
  let buildDir;
  let site;
  let filterSite;
  let engine;
  let tab;
  let popup;

  before(async () => {
    buildDir = await mkdtemp(join(tmpdir(), 'bloomgate-extension-firefox-'));
    await buildExtension({ out: buildDir });
    const list = parseList(await readFile(join(root, 'examples', 'extension', 'blocklist.txt'), 'utf8'));
    const files = [null, null];
    for (const g of [2, 3]) {
      const added = [2, 3].filter((n) => n <= g).map((n) => `127.0.0.1/phish${n}/`);
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
    engine = await launchEngine('firefox', { prefs: { 'extensions.webextensions.uuids': JSON.stringify({ [ADDON_ID]: UUID }) } });
    tab = await engine.raw.newPage();
  });

  after(async () => {
    await engine?.close();
    await site?.close();
    await filterSite?.stop();
    if (buildDir) await rm(buildDir, { recursive: true, force: true });
  });

  /** The tab's location as the page itself has it (puppeteer's url() lags an extension's redirect). */
  async function where(target) {
    try {
      return await target.evaluate(() => (document.readyState === 'complete' ? location.href : null));
    } catch {
      return null; // between documents
    }
  }

  async function waitForUrl(target, matches, what) {
    const deadline = Date.now() + 15000;
    for (;;) {
      const url = await where(target);
      if (url !== null && matches(url)) return url;
      if (Date.now() > deadline) assert.fail(`expected ${what}, the tab is at ${url}`);
      await sleep(50);
    }
  }

  /** Navigate; the extension may replace the navigation with its warning page. */
  async function visit(url) {
    await tab.goto(url).catch((error) => {
      if (!/NS_BINDING_ABORTED|NS_ERROR_ABORT|navigation|detached/i.test(error.message)) throw error;
    });
  }

  async function expectWarning(listedUrl, expression) {
    const at = await waitForUrl(tab, (url) => url.startsWith(`${EXTENSION_ORIGIN}/warning.html`), 'the warning page');
    assert.equal(new URL(at).searchParams.get('url'), listedUrl);
    const shown = await tab.evaluate(() => ({ h1: document.querySelector('h1').textContent, expression: document.getElementById('expression').textContent }));
    assert.deepEqual(shown, { h1: 'Deceptive site ahead', expression });
  }

  async function expectStays(url, title) {
    await waitForUrl(tab, (current) => current === url, url);
    await sleep(700); // no late redirect to the warning page
    assert.equal(await where(tab), url);
    assert.equal(await tab.title(), title);
  }

  /** (Re)load popup.html in the popup tab, from the extension page it is on; resolves once it rendered. */
  async function openPopup() {
    await popup.evaluate(() => {
      window.stale = true;
      location.href = '/popup.html';
    });
    const deadline = Date.now() + 15000;
    for (;;) {
      const ready = await popup.evaluate(() => !window.stale && document.body?.dataset.ready === 'true').catch(() => false);
      if (ready) return;
      if (Date.now() > deadline) assert.fail('the popup did not render');
      await sleep(50);
    }
  }

  const text = (id) => popup.evaluate((which) => document.getElementById(which).textContent, id);

  it('installs as shipped (webExtension.install); the background script checks navigations', async (t) => {
    const id = await engine.raw.installExtension(buildDir);
    assert.equal(id, ADDON_ID);
    t.diagnostic(`Firefox ${engine.version}, add-on ${id}`);
    await visit(`${site.origin}/clean/`);
    await expectStays(`${site.origin}/clean/`, 'Clean page');
  });

  it('sends a listed URL to the warning page; the popup shows the bundled filter; "continue anyway" opens it', async () => {
    const listed = `${site.origin}/phish/login.html`;
    await visit(listed);
    await expectWarning(listed, '127.0.0.1/phish/');
    // The popup tab reaches the extension through a warning page too (see the top of the file).
    popup = await engine.raw.newPage();
    await popup.goto(`${listed}?popup`).catch(() => {});
    await waitForUrl(popup, (url) => url.startsWith(`${EXTENSION_ORIGIN}/warning.html`), 'the warning page in the popup tab');
    await openPopup();
    assert.equal(await text('generation'), '1');
    assert.match(await text('list-id'), /^[0-9a-f]{32}$/);
    assert.equal(await text('source'), 'bundled with the extension');

    await tab.evaluate(() => document.getElementById('continue').click());
    await expectStays(listed, 'Listed page');
  });

  it('opens the filter site: generation 2 as the full file, then generation 3 as a delta', async () => {
    filterSite.publish(2);
    filterSite.clearLog();
    await popup.evaluate((url) => {
      document.getElementById('manifest-url').value = url;
      document.getElementById('settings').requestSubmit();
    }, filterSite.manifestUrl);
    const saved = Date.now() + 15000;
    while (await text('settings-message') !== 'Saved.') {
      if (Date.now() > saved) assert.fail(`settings: ${await text('settings-message')}`);
      await sleep(50);
    }
    await openPopup();
    assert.equal(await text('generation'), '2');
    assert.match(await text('last-update'), /now using generation 2 \(the full file/);
    assert.deepEqual(filterSite.paths(), ['/manifest.json', '/filter-2.bgf']);
    await visit(`${site.origin}/phish2/`);
    await expectWarning(`${site.origin}/phish2/`, '127.0.0.1/phish2/');

    filterSite.publish(3, { deltasFrom: [2] });
    filterSite.clearLog();
    await popup.evaluate(() => document.getElementById('update').click());
    const updated = Date.now() + 15000;
    while (await text('generation') !== '3') {
      if (Date.now() > updated) assert.fail(`update: ${await text('last-update')}`);
      await sleep(50);
    }
    assert.match(await text('last-update'), /now using generation 3 \(a delta/);
    assert.equal(await text('source'), `a delta from ${filterSite.manifestUrl}`);
    assert.deepEqual(filterSite.paths(), ['/manifest.json', '/delta-2-3.bgd'], 'the delta, not the full file');
    await visit(`${site.origin}/clean/`);
    await expectStays(`${site.origin}/clean/`, 'Clean page');
    await visit(`${site.origin}/phish3/`);
    await expectWarning(`${site.origin}/phish3/`, '127.0.0.1/phish3/');
  });
});

describe('web-ext lint of examples/extension (needs no browser)', () => {
  it('web-ext lint: no errors, warnings or notices', async () => {
    const webExt = join(root, 'node_modules', 'web-ext', 'bin', 'web-ext.js');
    const { stdout } = await promisify(execFile)(process.execPath,
      [webExt, 'lint', '--source-dir', join(root, 'examples', 'extension'), '--output', 'json', '--no-config-discovery'],
      { timeout: 120000, maxBuffer: 16 << 20 }).catch((error) => error);
    const report = JSON.parse(stdout);
    const found = ['errors', 'warnings', 'notices'].flatMap((kind) => report[kind].map((entry) => `${kind}: ${entry.code} ${entry.message}`));
    assert.deepEqual(found, []);
    assert.deepEqual(report.summary, { errors: 0, notices: 0, warnings: 0 });
  });
});
