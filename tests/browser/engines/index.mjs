/**
 * One interface over three browser engines, so one scenario file meets each with the same
 * assertions (issue 21):
 *
 *   chromium  Debian's `chromium`, driven by playwright-core (CDP)
 *   firefox   Debian's `firefox-esr`, driven by puppeteer-core over WebDriver BiDi (no geckodriver)
 *   webkit    WebKitGTK (Safari's engine): `WebKitWebDriver` (webkit2gtk-driver) under `xvfb-run`,
 *             spoken to over plain W3C WebDriver HTTP (./webkit.mjs, no npm package)
 *
 * Nothing is ever downloaded: each engine is the system's binary or it is missing.
 *
 *   const missing = engineMissing('firefox');       // null, or why it cannot run here
 *   const engine = await launchEngine('firefox', { private: true });
 *   const page = await engine.newPage();
 *   await page.goto(url);                           // resolves once the page has loaded
 *   await page.evaluate((arg) => ..., arg);         // a self-contained function run in the page;
 *                                                   //   resolves to its (awaited) value as JSON
 *   await page.waitFor((arg) => ..., arg);          // polls until the function returns truthy
 *   await page.close();
 *   const fresh = await engine.freshPage();         // a page in a new context (Chromium: a new browser
 *                                                   //   context; Firefox: a new user context; WebKit: a
 *                                                   //   new tab); close() disposes of the context
 *   await engine.restart();                         // the browser ends and starts again: what a
 *                                                   //   profile keeps survives, a private session's
 *                                                   //   storage does not (pages are gone)
 *   await engine.close();
 *
 * `private: true`: Chromium, an off-the-record context (what incognito windows use);
 * Firefox, permanent private browsing (browser.privatebrowsing.autostart); WebKit, the
 * automation session, whose data store is always ephemeral. `engine.version` is what the
 * browser reports.
 *
 * requireBrowsers(): BLOOMGATE_REQUIRE_BROWSERS=1 (set by .ci/run) turns "missing" into a
 * failure instead of a skip.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { MINIBROWSER, WEBKIT_DRIVER, XVFB_RUN, startWebKit } from './webkit.mjs';

export const ENGINES = ['chromium', 'firefox', 'webkit'];
export const CHROMIUM = process.env.BG_CHROMIUM ?? '/usr/bin/chromium';
export const FIREFOX = process.env.BG_FIREFOX ?? '/usr/bin/firefox-esr';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether a missing browser fails the run (CI) rather than skipping (a contributor's machine). */
export const requireBrowsers = () => process.env.BLOOMGATE_REQUIRE_BROWSERS === '1';

/** null when `name` can run here; otherwise which files are missing and the Debian packages that hold them. */
export function engineMissing(name) {
  const needs = {
    chromium: [[CHROMIUM], 'chromium'],
    firefox: [[FIREFOX], 'firefox-esr'],
    webkit: [[WEBKIT_DRIVER, MINIBROWSER, XVFB_RUN, '/usr/bin/xauth'], 'webkit2gtk-driver xvfb xauth'],
  }[name];
  if (!needs) throw new Error(`unknown engine ${name}; known: ${ENGINES.join(', ')}`);
  const absent = needs[0].filter((path) => !existsSync(path));
  return absent.length === 0 ? null : `${name}: no ${absent.join(', ')} (Debian: apt-get install ${needs[1]})`;
}

/**
 * The `skip` option for a describe() of `name`: false when it can run; the reason when it cannot
 * and browsers are optional; with BLOOMGATE_REQUIRE_BROWSERS=1 a missing engine is not skipped
 * (so launching it fails the test and the run).
 */
export function skipUnless(name) {
  const missing = engineMissing(name);
  if (missing === null || requireBrowsers()) return false;
  return `${missing}; set BLOOMGATE_REQUIRE_BROWSERS=1 to fail instead`;
}

/** A thrown error from the page, named with the engine. */
function pageError(engine, error) {
  const wrapped = new Error(`in ${engine}: ${error?.message ?? error}`);
  wrapped.cause = error;
  return wrapped;
}

/** A value as JSON would carry it (undefined becomes null), so every engine returns the same shapes. */
const asJson = (value) => (value === undefined ? null : JSON.parse(JSON.stringify(value)));

/** waitFor over an evaluate(fn, arg): poll until truthy, or fail naming what was awaited. */
function poller(engine, evaluate) {
  return async (fn, arg = null, { timeout = 20000, interval = 25 } = {}) => {
    const until = Date.now() + timeout;
    for (;;) {
      const value = await evaluate(fn, arg);
      if (value) return value;
      if (Date.now() > until) throw new Error(`${engine}: timed out after ${timeout} ms waiting for ${String(fn).slice(0, 200)}`);
      await sleep(interval);
    }
  };
}

/** A page of a playwright or puppeteer tab: both take evaluate(fn, arg) and goto(url, { waitUntil }). */
function wrapPage(engine, page) {
  const evaluate = async (fn, arg = null) => {
    try {
      return asJson(await page.evaluate(fn, arg));
    } catch (error) {
      throw pageError(engine, error);
    }
  };
  return {
    raw: page,
    goto: async (url) => { await page.goto(url, { waitUntil: 'load' }); },
    evaluate,
    waitFor: poller(engine, evaluate),
    close: () => page.close(),
  };
}

async function launchChromium({ private: ephemeral = false, args = [] } = {}) {
  const { chromium } = await import('playwright-core');
  const flags = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
    '--disable-component-update', '--no-first-run', ...args];
  const options = { executablePath: CHROMIUM, headless: true, args: flags };
  const profile = ephemeral ? null : mkdtempSync(join(tmpdir(), 'bloomgate-chromium-'));
  // Private: a context of a launched browser is off the record, as an incognito window is.
  // Otherwise: a persistent context on a fresh profile directory.
  const browser = ephemeral ? await chromium.launch(options) : null;
  const open = async () => {
    const context = ephemeral ? await browser.newContext() : await chromium.launchPersistentContext(profile, options);
    for (const page of context.pages()) await page.close(); // the persistent context's blank first tab
    return context;
  };
  let context = await open();
  const version = (browser ?? context.browser()).version();
  let freshHost = null; // a launched browser whose contexts freshPage() opens, when this one is persistent
  return {
    name: 'chromium',
    version,
    private: ephemeral,
    get raw() { return context; },
    newPage: async () => wrapPage('chromium', await context.newPage()),
    async freshPage() {
      const host = browser ?? (freshHost ??= await chromium.launch(options));
      const fresh = await host.newContext();
      return { ...wrapPage('chromium', await fresh.newPage()), close: () => fresh.close() };
    },
    /** Private: a new off-the-record context in the same browser. Otherwise: the browser again, on the same profile. */
    async restart() {
      await context.close();
      context = await open();
    },
    async close() {
      await context.close().catch(() => {});
      await browser?.close().catch(() => {});
      await freshHost?.close().catch(() => {});
      if (profile) rmSync(profile, { recursive: true, force: true });
    },
  };
}

async function launchFirefox({ private: ephemeral = false, prefs = {}, dumpio = false } = {}) {
  const { default: puppeteer } = await import('puppeteer-core');
  const profile = mkdtempSync(join(tmpdir(), 'bloomgate-firefox-'));
  const open = () => puppeteer.launch({
    browser: 'firefox',
    executablePath: FIREFOX,
    headless: true,
    protocol: 'webDriverBiDi',
    protocolTimeout: 600000, // a benchmark round is one long evaluate
    userDataDir: profile,
    dumpio,
    extraPrefsFirefox: {
      'browser.privatebrowsing.autostart': ephemeral,
      'app.update.enabled': false,
      'extensions.update.enabled': false,
      ...prefs,
    },
  });
  let browser = await open();
  const version = (await browser.version()).replace(/^firefox\//, '');
  return {
    name: 'firefox',
    version,
    private: ephemeral,
    get raw() { return browser; },
    newPage: async () => wrapPage('firefox', await browser.newPage()),
    async freshPage() {
      const fresh = await browser.createBrowserContext();
      return { ...wrapPage('firefox', await fresh.newPage()), close: () => fresh.close() };
    },
    /** Firefox again on the same profile (in private browsing again when private). */
    async restart() {
      await browser.close();
      browser = await open();
    },
    async close() {
      await browser.close().catch(() => {});
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

async function launchWebKit() {
  let session = await startWebKit();
  return {
    name: 'webkit',
    version: session.version,
    private: true, // the automation session's data store is ephemeral
    get raw() { return session; },
    async newPage() {
      const page = await session.newWindow();
      const evaluate = async (fn, arg = null) => {
        try {
          return asJson(await page.run(String(fn), arg));
        } catch (error) {
          throw pageError('webkit', error);
        }
      };
      return {
        raw: page,
        goto: (url) => page.open(url),
        evaluate,
        waitFor: poller('webkit', evaluate),
        close: () => page.close(),
      };
    },
    freshPage() {
      return this.newPage();
    },
    /** A new automation session (its data store is a new ephemeral one). */
    async restart() {
      await session.close();
      session = await startWebKit();
    },
    close: () => session.close(),
  };
}

/** Launch `name` (see the top of this file). Fails clearly when the browser is not installed. */
export async function launchEngine(name, options = {}) {
  const missing = engineMissing(name);
  if (missing !== null) throw new Error(`cannot launch ${missing}`);
  if (name === 'chromium') return launchChromium(options);
  if (name === 'firefox') return launchFirefox(options);
  return launchWebKit(options);
}
