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
 *     (tests/browser/helpers/extension-scenarios.mjs), on the build that pins the publisher's
 *     key and list id: the popup shows the bundled filter and the pinned publisher; a clean URL
 *     loads; a listed URL gets the warning page naming the listed expression (and saying the
 *     address was sent nowhere), "go back" returns to the last safe page, "continue anyway"
 *     opens it and remembers the allowance; an unsigned site at the configured manifest URL is
 *     refused and the bundled filter keeps answering; the signed site (`bloomgate publish
 *     --sign`) gives generation 2 as the full file, then generation 3 as a delta (.bgd
 *     requested, the .bgf not); an unsigned or foreign-signed update is refused and generation 3
 *     keeps answering; a "maybe" confirmed at a signed hash-prefix endpoint, and the warning
 *     page saying a 4-byte prefix was sent; a corrupt delta or a site that is down keeps the last good filter; the
 *     gate's counters
 *   - in a Firefox of its own, the build without --key: it asks a configured site nothing and
 *     says updates need a publisher key
 *   - `web-ext lint` of the extension's source directory: no errors, warnings or notices, and
 *     build.mjs's refusals of a malformed key or list id (these need no browser and always run)
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
import { extensionScenarios, keylessScenarios, startExtensionFixtures } from './helpers/extension-scenarios.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const manifest = JSON.parse(await readFile(join(root, 'examples', 'extension', 'manifest.json'), 'utf8'));
const ADDON_ID = manifest.browser_specific_settings.gecko.id;
/** The moz-extension:// host Firefox gives the add-on (fixed by a pref, so the test knows it). */
const UUID = '6c1f7b4e-2f0a-4d5e-9a51-3b0c2e9d1a77';
const EXTENSION_ORIGIN = `moz-extension://${UUID}`;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

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

/**
 * Install the build in `dir` in `engine` (webExtension.install) and give the scenarios' driver.
 * The popup tab reaches the extension through a warning page (see the top of the file).
 */
async function installAndDrive(engine, dir, site) {
  const id = await engine.raw.installExtension(dir);
  assert.equal(id, ADDON_ID);
  const tab = await engine.raw.newPage();
  const popup = await engine.raw.newPage();
  const listed = `${site.origin}/phish/login.html?popup`;
  await visit(popup, listed);
  const at = await waitForUrl(popup, (url) => url.startsWith(`${EXTENSION_ORIGIN}/warning.html`), 'the warning page in the popup tab');
  assert.equal(new URL(at).searchParams.get('url'), listed);
  async function popupWaitFor(fn, arg = null) {
    const deadline = Date.now() + 30000;
    for (;;) {
      const value = await popup.evaluate(fn, arg).catch(() => false);
      if (value) return value;
      if (Date.now() > deadline) assert.fail(`the popup never met ${String(fn)}; last update: ${await popup.evaluate(() => document.getElementById('last-update')?.textContent).catch(() => '?')}`);
      await sleep(50);
    }
  }
  return {
    extensionUrl: (path) => `${EXTENSION_ORIGIN}/${path}`,
    visit: (url) => visit(tab, url),
    location: () => where(tab),
    waitForLocation: (matches, what) => waitForUrl(tab, matches, what),
    warningShown: () => tab.evaluate(() => ({ h1: document.querySelector('h1').textContent, expression: document.getElementById('expression').textContent })),
    warningPrivacy: () => tab.evaluate(() => document.getElementById('privacy').textContent),
    title: () => tab.title(),
    settle: () => sleep(700), // a late redirect would come within this
    clickWarning: (which) => tab.evaluate((button) => document.getElementById(button).click(), which),
    /** (Re)load popup.html in the popup tab, from the extension page it is on; resolves once it rendered. */
    async openPopup() {
      await popup.evaluate(() => {
        window.stale = true;
        location.href = '/popup.html';
      });
      await popupWaitFor(() => !window.stale && document.body?.dataset.ready === 'true');
    },
    popupText: (which) => popup.evaluate((element) => document.getElementById(element).textContent, which),
    popupWaitFor,
    popupEvaluate: (fn, arg) => popup.evaluate(fn, arg ?? null),
  };
}

/** A describe block: a Firefox of its own with the build `dirOf(fixtures)` installed, then `scenarios`. */
function firefoxWith(title, dirOf, scenarios) {
  describe(title, { skip: skipUnless('firefox'), timeout: 240000 }, () => {
    let fixtures;
    let engine;
    let driver;

    before(async () => {
      fixtures = await startExtensionFixtures();
      engine = await launchEngine('firefox', { prefs: { 'extensions.webextensions.uuids': JSON.stringify({ [ADDON_ID]: UUID }) } });
    }, { timeout: 120000 });

    after(async () => {
      await engine?.close();
      await fixtures?.close();
    });

    it('installs as shipped (webExtension.install); the background script checks navigations', async (t) => {
      driver = await installAndDrive(engine, dirOf(fixtures), fixtures.site);
      t.diagnostic(`Firefox ${engine.version}, add-on ${ADDON_ID}`);
    });

    scenarios(() => ({ driver, fixtures }));
  });
}

firefoxWith('the example extension in Firefox, installed over WebDriver BiDi', (fixtures) => fixtures.buildDir, extensionScenarios);
firefoxWith('the example extension built without --key, in Firefox', (fixtures) => fixtures.keylessDir, keylessScenarios);

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

describe('build.mjs refuses a malformed key or list id, saying where the right one is (needs no browser)', () => {
  const build = (args) => promisify(execFile)(process.execPath, [join(root, 'examples', 'extension', 'build.mjs'), '--out', join(root, 'build', 'never'), ...args])
    .then(() => assert.fail('build.mjs succeeded'), (error) => error);
  const KEY = 'ed25519:Sjx_Ast5ddnx0FgpFhW3afQe8qAyp__ROsmAGwjmM5Y';
  it('a key that is not ed25519:... names bloomgate keygen', async () => {
    const error = await build(['--key', 'Sjx_Ast5ddnx0FgpFhW3afQe8qAyp__ROsmAGwjmM5Y', '--list-id', 'ab'.repeat(16)]);
    assert.equal(error.code, 2);
    assert.match(error.stderr, /--key is not an Ed25519 public key .*'bloomgate keygen' prints/);
  });
  it('a list id that is not 32 hex digits, or none with --key, names bloomgate publish\'s "client options"', async () => {
    for (const args of [['--key', KEY, '--list-id', 'phishing'], ['--key', KEY]]) {
      const error = await build(args);
      assert.equal(error.code, 2, args.join(' '));
      assert.match(error.stderr, /--list-id.*'bloomgate publish' prints under "client options"/, args.join(' '));
    }
  });
  it('a threshold above the number of keys', async () => {
    const error = await build(['--key', KEY, '--list-id', 'ab'.repeat(16), '--threshold', '2']);
    assert.equal(error.code, 2);
    assert.match(error.stderr, /threshold must be an integer from 1 to 1/);
  });
});
