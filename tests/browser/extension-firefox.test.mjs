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
 *   - then the scenarios Chromium's file and WebKit's file run, with the same assertions
 *     (tests/browser/helpers/extension-scenarios.mjs): the popup shows the bundled filter; a
 *     clean URL loads; a listed URL gets the warning page naming the listed expression, "go
 *     back" returns to the last safe page, "continue anyway" opens it and remembers the
 *     allowance; a filter site (bench/fresh-site.mjs) configured in the popup gives generation 2
 *     as the full file, then generation 3 as a delta (.bgd requested, the .bgf not); a corrupt
 *     delta or a site that is down keeps the last good filter; the gate's counters
 *   - `web-ext lint` of the extension's source directory: no errors, warnings or notices (this
 *     one needs no browser and always runs)
 *
 * A missing Firefox skips the rest, unless BLOOMGATE_REQUIRE_BROWSERS=1 (as .ci/run sets).
 * Run: node --test tests/browser/extension-firefox.test.mjs
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { launchEngine, skipUnless } from './engines/index.mjs';
import { extensionScenarios, startExtensionFixtures } from './helpers/extension-scenarios.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const manifest = JSON.parse(await readFile(join(root, 'examples', 'extension', 'manifest.json'), 'utf8'));
const ADDON_ID = manifest.browser_specific_settings.gecko.id;
/** The moz-extension:// host Firefox gives the add-on (fixed by a pref, so the test knows it). */
const UUID = '6c1f7b4e-2f0a-4d5e-9a51-3b0c2e9d1a77';
const EXTENSION_ORIGIN = `moz-extension://${UUID}`;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the example extension in Firefox, installed over WebDriver BiDi', { skip: skipUnless('firefox'), timeout: 240000 }, () => {
  let fixtures;
  let engine;
  let tab;
  let popup;
  let driver;

  before(async () => {
    fixtures = await startExtensionFixtures();
    engine = await launchEngine('firefox', { prefs: { 'extensions.webextensions.uuids': JSON.stringify({ [ADDON_ID]: UUID }) } });
    tab = await engine.raw.newPage();
  }, { timeout: 120000 });

  after(async () => {
    await engine?.close();
    await fixtures?.close();
  });

  /** The location of a tab as the page itself has it (puppeteer's url() lags an extension's redirect). */
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
  async function visit(target, url) {
    await target.goto(url).catch((error) => {
      if (!/NS_BINDING_ABORTED|NS_ERROR_ABORT|navigation|detached/i.test(error.message)) throw error;
    });
  }

  async function popupWaitFor(fn, arg = null) {
    const deadline = Date.now() + 30000;
    for (;;) {
      const value = await popup.evaluate(fn, arg).catch(() => false);
      if (value) return value;
      if (Date.now() > deadline) assert.fail(`the popup never met ${String(fn)}; last update: ${await popup.evaluate(() => document.getElementById('last-update')?.textContent).catch(() => '?')}`);
      await sleep(50);
    }
  }

  it('installs as shipped (webExtension.install); the background script checks navigations', async (t) => {
    const { site } = fixtures;
    const id = await engine.raw.installExtension(fixtures.buildDir);
    assert.equal(id, ADDON_ID);
    t.diagnostic(`Firefox ${engine.version}, add-on ${id}`);
    // The popup tab reaches the extension through a warning page (see the top of the file).
    const listed = `${site.origin}/phish/login.html?popup`;
    popup = await engine.raw.newPage();
    await visit(popup, listed);
    const at = await waitForUrl(popup, (url) => url.startsWith(`${EXTENSION_ORIGIN}/warning.html`), 'the warning page in the popup tab');
    assert.equal(new URL(at).searchParams.get('url'), listed);
    driver = {
      extensionUrl: (path) => `${EXTENSION_ORIGIN}/${path}`,
      visit: (url) => visit(tab, url),
      location: () => where(tab),
      waitForLocation: (matches, what) => waitForUrl(tab, matches, what),
      warningShown: () => tab.evaluate(() => ({ h1: document.querySelector('h1').textContent, expression: document.getElementById('expression').textContent })),
      title: () => tab.title(),
      settle: () => sleep(700), // a late redirect would come within this
      clickWarning: (id) => tab.evaluate((which) => document.getElementById(which).click(), id),
      /** (Re)load popup.html in the popup tab, from the extension page it is on; resolves once it rendered. */
      async openPopup() {
        await popup.evaluate(() => {
          window.stale = true;
          location.href = '/popup.html';
        });
        await popupWaitFor(() => !window.stale && document.body?.dataset.ready === 'true');
      },
      popupText: (id) => popup.evaluate((which) => document.getElementById(which).textContent, id),
      popupWaitFor,
      popupEvaluate: (fn, arg) => popup.evaluate(fn, arg ?? null),
    };
  });

  extensionScenarios(() => ({ driver, site: fixtures.site, filterSite: fixtures.filterSite }));
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
