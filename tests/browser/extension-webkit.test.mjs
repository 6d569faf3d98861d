/**
 * The example extension (examples/extension) in WebKit, Safari's engine, as far as WebKit can
 * run it here.
 *
 * Why not installed: WebKitGTK has no web-extension support a test can reach. WebKitWebDriver
 * (webkit2gtk-driver) implements no "install extension" command (W3C WebDriver has none; BiDi's
 * webExtension.install is Firefox's), WebKit's WebExtension support is built for Apple's
 * platforms only (WebKitGTK 2.50 and its MiniBrowser load none; its "web process extensions"
 * are native libraries, another thing), and Safari's extensions need Safari on macOS, an
 * Xcode-built app and `safaridriver`. So there is
 * no WebKit run of the installed extension (tests/browser/extension.test.mjs installs it in
 * Chromium, tests/browser/extension-firefox.test.mjs in Firefox).
 *
 * What is tested instead: the extension's own files, unchanged, as plain pages of one 127.0.0.1
 * origin under the manifest's extension_pages CSP (tests/browser/helpers/extension-harness.mjs):
 * background.js with its library, WebAssembly, IndexedDB copy and openFilter updates; the
 * warning page; the popup. The harness stands in for chrome.* (storage, messages between the
 * pages, alarms) and plays the browser's part: it fires webNavigation events around each
 * navigation of the tab and follows chrome.tabs.update to the warning page. The scenarios and
 * their assertions are the ones the Chromium and Firefox files run
 * (tests/browser/helpers/extension-scenarios.mjs: the build pins the publisher's key and list id
 * and follows a site `bloomgate publish --sign` wrote, refusing unsigned and foreign-signed
 * ones); then, as Chromium's file does after stopping the worker, background.js starts again and
 * answers from its IndexedDB copy (in the automation session's ephemeral data store). Last, the
 * build without --key, served on an origin of its own: it follows no filter site.
 *
 * A missing WebKit is skipped with the reason, unless BLOOMGATE_REQUIRE_BROWSERS=1.
 * Run: node --test tests/browser/extension-webkit.test.mjs
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { launchEngine, skipUnless } from './engines/index.mjs';
import { harnessDriver, serveExtension } from './helpers/extension-harness.mjs';
import { expectStays, expectWarning, extensionScenarios, keylessScenarios, startExtensionFixtures } from './helpers/extension-scenarios.mjs';

/**
 * The harness's driver, plus warningPrivacy(): the warning page the tab is on, loaded again in a
 * page of its own (the harness reads only its heading and expression).
 */
async function driverFor(engine, origin) {
  const driver = await harnessDriver(engine, origin);
  const spare = await engine.newPage();
  return {
    ...driver,
    async warningPrivacy() {
      await spare.goto(await driver.location());
      await spare.waitFor(() => document.getElementById('privacy')?.textContent !== '', null, { timeout: 10000 });
      return spare.evaluate(() => document.getElementById('privacy').textContent);
    },
  };
}

describe('the example extension\'s files as pages in WebKit, built with the publisher\'s key and list id (no WebKit can load the extension: see the top of the file)', { skip: skipUnless('webkit'), timeout: 300000 }, () => {
  let fixtures;
  let served;
  let engine;
  let driver;

  before(async () => {
    fixtures = await startExtensionFixtures();
    served = await serveExtension(fixtures.buildDir);
    engine = await launchEngine('webkit');
    driver = await driverFor(engine, served.origin);
  }, { timeout: 180000 });

  after(async () => {
    await engine?.close();
    await served?.close();
    await fixtures?.close();
  });

  it('background.js starts as a page under the extension CSP: the module compiled, the bundled filter loaded', async (t) => {
    const state = await driver.status();
    t.diagnostic(`WebKit ${engine.version}`);
    assert.equal(state.ok, true, JSON.stringify(state));
    assert.equal(state.filter.source, 'bundled');
    assert.equal(state.filter.generation, 1);
    assert.equal(state.coldStart.source, 'bundled');
    assert.ok(state.coldStart.wasmMs > 0 && state.coldStart.readyMs >= state.coldStart.wasmMs, JSON.stringify(state.coldStart));
    assert.ok(served.requests.includes('/vendor/wasm/bloomgate.wasm') && served.requests.includes('/filters/urls.bgf'), served.requests.join('\n'));
  });

  extensionScenarios(() => ({ driver, fixtures }));

  it('background.js started again answers its first navigation from the IndexedDB copy, site still down', async () => {
    const before = await driver.status();
    await driver.restartBackground();
    const { site } = fixtures;
    await driver.visit(`${site.origin}/clean/`);
    await expectStays(driver, `${site.origin}/clean/`, 'Clean page');
    await driver.visit(`${site.origin}/phish3/`);
    await expectWarning(driver, `${site.origin}/phish3/`, '127.0.0.1/phish3/');
    const state = await driver.status();
    assert.ok(state.coldStart.startedAt >= before.coldStart.startedAt, 'a new start of the background script');
    assert.notEqual(state.coldStart.scriptMs, before.coldStart.scriptMs);
    assert.equal(state.filter.generation, 3);
    assert.equal(state.filter.source, 'persisted');
    assert.equal(state.coldStart.source, 'persisted');
    assert.ok(state.coldStart.readyMs > 0 && state.coldStart.firstCheckMs >= state.coldStart.readyMs, JSON.stringify(state.coldStart));
    await driver.openPopup();
    assert.equal(await driver.popupText('source'), `the copy in IndexedDB of ${fixtures.filterSite.manifestUrl}`);
  });
});

describe('the example extension built without --key, as pages in WebKit', { skip: skipUnless('webkit'), timeout: 180000 }, () => {
  let fixtures;
  let served;
  let engine;
  let driver;

  before(async () => {
    fixtures = await startExtensionFixtures();
    served = await serveExtension(fixtures.keylessDir);
    engine = await launchEngine('webkit');
    driver = await driverFor(engine, served.origin);
  }, { timeout: 180000 });

  after(async () => {
    await engine?.close();
    await served?.close();
    await fixtures?.close();
  });

  keylessScenarios(() => ({ driver, fixtures }));
});
