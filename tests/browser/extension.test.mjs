/**
 * End-to-end: the example MV3 extension (examples/extension) installed in Debian's headless
 * Chromium (--load-extension, launched through tests/browser/engines/), its background.js
 * running as the service worker. It is built with the publisher's key and list id
 * (`build.mjs --key ed25519:... --list-id HEX32`) and follows a filter site `bloomgate publish
 * --sign` wrote; then, in a browser of its own, the build without --key, which follows no site.
 * The scenarios and their assertions are the ones the Firefox file (installed over WebDriver
 * BiDi) and the WebKit file (its files as pages: WebKit cannot load an extension) run:
 * tests/browser/helpers/extension-scenarios.mjs. A local site on 127.0.0.1 stands in for the
 * web; the bundled list holds the expression 127.0.0.1/phish/. The filter site (on another port)
 * serves later generations of the list with their deltas and signed manifest.json, or an
 * unsigned or foreign-signed forgery; the worker follows it with openFilter(), keeps the copy in
 * IndexedDB, and answers its first check after a restart from it (Chromium only: stopping a
 * service worker is a CDP command).
 *
 * Run: node --test tests/browser/extension.test.mjs. Writes extension-warning.png to
 * build/screenshots/, or to docs/images/ with BLOOMGATE_REFRESH_IMAGES=1
 * (tests/browser/helpers/screenshots.mjs). A missing Chromium is skipped with the reason,
 * unless BLOOMGATE_REQUIRE_BROWSERS=1.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { launchEngine, skipUnless } from './engines/index.mjs';
import { expectStays, expectWarning, extensionScenarios, keylessScenarios, startExtensionFixtures } from './helpers/extension-scenarios.mjs';
import { screenshotPath } from './helpers/screenshots.mjs';

/** Chromium with the extension in `dir` loaded, and the scenarios' driver for it. */
async function launchWith(dir) {
  const engine = await launchEngine('chromium', { args: [`--disable-extensions-except=${dir}`, `--load-extension=${dir}`] });
  const context = engine.raw; // playwright's persistent context: service workers and CDP
  const worker = context.serviceWorkers()[0] ?? await context.waitForEvent('serviceworker', { timeout: 30000 });
  const extensionId = new URL(worker.url()).host;
  const popup = await context.newPage();
  const tab = await context.newPage();
  const driver = {
    extensionUrl: (path) => `chrome-extension://${extensionId}/${path}`,
    /** Navigate and tolerate the navigation being replaced by the warning page. */
    async visit(url) {
      await tab.bringToFront();
      await tab.goto(url).catch((error) => {
        if (!/interrupted|ERR_ABORTED|frame was detached/i.test(error.message)) throw error;
      });
    },
    location: async () => tab.url(),
    /** Poll the tab's URL (waitForURL rejects when the navigation it watches is replaced), then its load. */
    async waitForLocation(matches, what) {
      const deadline = Date.now() + 15000;
      while (!matches(tab.url())) {
        if (Date.now() > deadline) assert.fail(`expected ${what}, the tab is at ${tab.url()}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await tab.waitForLoadState('load');
      return tab.url();
    },
    async warningShown() {
      await tab.waitForSelector('#expression');
      return { h1: await tab.textContent('h1'), expression: await tab.textContent('#expression') };
    },
    warningPrivacy: () => tab.textContent('#privacy'),
    title: () => tab.title(),
    settle: () => tab.waitForTimeout(700), // a late redirect would come within this
    clickWarning: (id) => tab.click(`#${id}`),
    async openPopup() {
      await popup.bringToFront(); // background tabs throttle animation frames, which Playwright waits on
      await popup.goto(`chrome-extension://${extensionId}/popup.html`);
      await popup.waitForSelector('body[data-ready="true"]', { timeout: 20000 });
    },
    popupText: (id) => popup.textContent(`#${id}`),
    popupWaitFor: (fn, arg) => popup.waitForFunction(fn, arg, { timeout: 30000 }),
    popupEvaluate: (fn, arg) => popup.evaluate(fn, arg),
    screenshot: (name) => tab.screenshot({ path: screenshotPath(name, { docs: true }) }),
  };
  return { engine, driver, popup, tab };
}

describe('MV3 extension in headless Chromium', { skip: skipUnless('chromium'), timeout: 300000 }, () => {
  let fixtures;
  let engine;
  let tab;
  let popup;
  let driver;

  before(async () => {
    fixtures = await startExtensionFixtures();
    ({ engine, driver, popup, tab } = await launchWith(fixtures.buildDir));
  }, { timeout: 120000 });

  after(async () => {
    await engine?.close();
    await fixtures?.close();
  });

  extensionScenarios(() => ({ driver, fixtures }));

  it('after the worker stops, answers its first navigation from the IndexedDB copy, site still down (timed)', async (t) => {
    const { site, filterSite } = fixtures;
    await driver.openPopup();
    const before = await popup.evaluate(() => chrome.runtime.sendMessage({ type: 'status' }));
    await popup.goto('about:blank'); // no extension page keeps the worker alive
    // Stop every service worker (the extension's among them), as Chromium does when one is idle.
    const cdp = await engine.raw.newCDPSession(tab);
    await cdp.send('ServiceWorker.enable');
    await cdp.send('ServiceWorker.stopAllWorkers');
    await cdp.detach();
    await driver.visit(`${site.origin}/clean/`); // wakes the worker: the first navigation it checks
    await expectStays(driver, `${site.origin}/clean/`, 'Clean page');
    const listed = `${site.origin}/phish3/`;
    await driver.visit(listed);
    await expectWarning(driver, listed, '127.0.0.1/phish3/');
    await driver.openPopup();
    const state = await popup.evaluate(() => chrome.runtime.sendMessage({ type: 'status' }));
    assert.ok(state.coldStart.startedAt > before.coldStart.startedAt, 'a new start of the worker');
    assert.equal(state.filter.generation, 3);
    assert.equal(state.filter.source, 'persisted');
    assert.equal(state.coldStart.source, 'persisted');
    assert.deepEqual(state.publisher, { keys: [fixtures.publisher.key], threshold: 1, listId: fixtures.publisher.listId });
    assert.ok(state.coldStart.readyMs > 0 && state.coldStart.firstCheckMs >= state.coldStart.readyMs, JSON.stringify(state.coldStart));
    assert.equal(await popup.textContent('#source'), `the copy in IndexedDB of ${filterSite.manifestUrl}`);
    t.diagnostic(`Chromium ${engine.version}, extension cold start (${state.filter.serializedBytes}-byte filter from IndexedDB, site down): ` +
      `script evaluated at ${state.coldStart.scriptMs.toFixed(1)} ms, wasm instantiated at ${state.coldStart.wasmMs.toFixed(1)} ms, ` +
      `filter ready at ${state.coldStart.readyMs.toFixed(1)} ms, first navigation answered at ${state.coldStart.firstCheckMs.toFixed(1)} ms after the worker started`);
  });
});

describe('the extension built without --key, in headless Chromium', { skip: skipUnless('chromium'), timeout: 180000 }, () => {
  let fixtures;
  let engine;
  let driver;

  before(async () => {
    fixtures = await startExtensionFixtures();
    ({ engine, driver } = await launchWith(fixtures.keylessDir));
  }, { timeout: 120000 });

  after(async () => {
    await engine?.close();
    await fixtures?.close();
  });

  keylessScenarios(() => ({ driver, fixtures }));
});
