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
 *   await page.close();                             // (WebKit: the session's first window is
 *                                                   //   blanked and reused, never closed: closing
 *                                                   //   the last window would end the session)
 *   const fresh = await engine.freshPage();         // a page in a new context (Chromium: a new browser
 *                                                   //   context; Firefox: a new user context; WebKit: a
 *                                                   //   new tab); close() disposes of the context
 *   await engine.restart();                         // the browser ends and starts again: what a
 *                                                   //   profile keeps survives, a private session's
 *                                                   //   storage does not (pages are gone)
 *   await engine.close();
 *
 * Input is each engine's real input (Chromium: playwright; Firefox: puppeteer over BiDi
 * `input.performActions`; WebKit: the WebDriver element commands), never a synthetic event:
 *
 *   await page.type('#password', 'hunter2', { delay: 40 }); // focus, then key by key (WebDriver
 *                                                   //   Element Send Keys: no delay between keys)
 *   await page.keys('text');                        // key by key into whatever has focus
 *   await page.fill('#word', 'text');               // the field emptied, then the text entered
 *   await page.click('#ask button');                // a mouse click at the element's centre
 *   await page.tap('#email');                       // a touch tap (launched with a mobile viewport)
 *   await page.text('#status');                     // textContent, null when nothing matches
 *   await page.attribute('#status', 'data-state');  // getAttribute, null when nothing matches
 *   await page.url();                               // the current document's URL
 *   await page.screenshot(path, { fullPage });      // a PNG (WebKit: the viewport only, always)
 *   await page.errors();                            // what the page threw and console.error said,
 *                                                   //   as 'Name: message' strings (below; not
 *                                                   //   the browser's own network messages)
 *
 * Every selector method first waits (20 s) for the selector to match.
 *
 * errors(): Chromium and Firefox report them through the protocol (playwright's and puppeteer's
 * 'pageerror' and 'console' events) from the page's creation. WebKitWebDriver has no events:
 * a page that loads PAGE_CAPTURE as its first classic script (the test's server serves it at
 * PAGE_CAPTURE_PATH) records uncaught errors, unhandled rejections, console.error and CSP
 * violations from its start in every engine (window.__bgCapture = { errors, violations }); in
 * WebKit errors() reads it, and goto() installs it after the load where the page has none
 * (so a WebKit page without the script reports only what happens after its load).
 *
 * Launch options, besides `private`:
 *   viewport: { width, height, deviceScaleFactor = 1, mobile = false }
 *     Chromium: playwright's device emulation (isMobile: the meta viewport rules; hasTouch).
 *     Firefox: puppeteer setViewport (width, height, devicePixelRatio) on each page, the headless
 *       screen the viewport's size; mobile sets the prefs for touch events, maxTouchPoints and a
 *       coarse pointer. Not the meta viewport rules (dom.meta-viewport.enabled hangs the headless
 *       browser's first page): a page is laid out at the viewport's width, meta or not.
 *     WebKit: the window sized (Set Window Rect) so the page's innerWidth and innerHeight are
 *       the viewport's; the Xvfb screen that wide; deviceScaleFactor through GDK_SCALE (an
 *       integer). WebKitGTK applies no meta viewport and has no touch screen to fake: tap() is a
 *       WebDriver touch action, which it delivers as a mouse click (no touch events), and
 *       navigator.maxTouchPoints is 0, (pointer: coarse) false.
 *   proxy: 'http://127.0.0.1:PORT'   every request but 127.0.0.1's goes through it (https as CONNECT;
 *                                     Chromium --proxy-server, Firefox network.proxy prefs, WebKit
 *                                     http(s)_proxy in GLib's environment)
 *   acceptInsecureCerts: true         certificates are not checked (a test's own TLS server)
 *
 * `private: true`: Chromium, an off-the-record context (what incognito windows use);
 * Firefox, permanent private browsing (browser.privatebrowsing.autostart); WebKit, the
 * automation session, whose data store is always ephemeral. `engine.version` is what the
 * browser reports.
 *
 * requireBrowsers(): BLOOMGATE_REQUIRE_BROWSERS=1 (set by .ci/run) turns "missing" into a
 * failure instead of a skip.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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

/** Where a test's server serves PAGE_CAPTURE (any same-origin path works; this one is the convention). */
export const PAGE_CAPTURE_PATH = '/__bloomgate-capture.js';

/**
 * A classic script, the page's first, that records from the page's start (see errors() above):
 * window.__bgCapture = { errors: ['Name: message', ...], violations: [{ directive, blocked, sample }] }.
 */
export const PAGE_CAPTURE = `(() => {
  if (window.__bgCapture) return;
  const errors = [];
  const violations = [];
  window.__bgCapture = { errors, violations };
  const describe = (value) => (value && typeof value === 'object' && 'message' in value
    ? \`\${value.name ?? 'Error'}: \${value.message}\` : String(value));
  window.addEventListener('error', (event) => { errors.push(event.error !== undefined && event.error !== null ? describe(event.error) : String(event.message)); });
  window.addEventListener('unhandledrejection', (event) => { errors.push(describe(event.reason)); });
  const consoleError = console.error;
  console.error = function (...args) { errors.push(args.map(describe).join(' ')); return consoleError.apply(this, args); };
  document.addEventListener('securitypolicyviolation', (event) => {
    violations.push({ directive: event.effectiveDirective || event.violatedDirective, blocked: event.blockedURI, sample: event.sample ?? '' });
  });
})();
`;

/** 'Name: message' of an error the protocol reported. */
function describeError(error) {
  const name = error?.name ?? 'Error';
  const message = String(error?.message ?? error);
  return message.startsWith(`${name}: `) ? message : `${name}: ${message}`; // puppeteer's message carries the name
}

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

/** Wait until `selector` matches an element of the page. */
function present(waitFor, selector) {
  return waitFor((sel) => document.querySelector(sel) !== null, selector);
}

/** The selector methods over evaluate (the same in every engine). */
function reading(evaluate) {
  return {
    text: (selector) => evaluate((sel) => document.querySelector(sel)?.textContent ?? null, selector),
    attribute: (selector, name) => evaluate(({ sel, name: attr }) => document.querySelector(sel)?.getAttribute(attr) ?? null,
      { sel: selector, name }),
  };
}

/**
 * A page of a playwright (Chromium) or puppeteer (Firefox) tab: both take evaluate(fn, arg),
 * goto(url, { waitUntil }), type, click, tap, keyboard.type, screenshot and url().
 */
function wrapPage(engine, page, { viewport = null } = {}) {
  const evaluate = async (fn, arg = null) => {
    try {
      return asJson(await page.evaluate(fn, arg));
    } catch (error) {
      throw pageError(engine, error);
    }
  };
  const waitFor = poller(engine, evaluate);
  const errors = [];
  page.on('pageerror', (error) => errors.push(describeError(error)));
  page.on('console', (message) => {
    // console.error calls. Chromium also logs its own network failures ("Failed to load
    // resource: ... 404", a favicon's say) as console errors, which no other engine reports
    // there: they are left out, so every engine's errors() means the same.
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource:')) errors.push(message.text());
  });
  let ready = Promise.resolve();
  if (viewport && engine === 'firefox') {
    const { width, height, deviceScaleFactor = 1 } = viewport;
    ready = page.setViewport({ width, height, deviceScaleFactor });
  }
  return {
    raw: page,
    goto: async (url) => {
      await ready;
      await page.goto(url, { waitUntil: 'load' });
    },
    evaluate,
    waitFor,
    ...reading(evaluate),
    async type(selector, text, { delay = 0 } = {}) {
      await present(waitFor, selector);
      await page.type(selector, text, { delay });
    },
    keys: (text, { delay = 0 } = {}) => page.keyboard.type(text, { delay }),
    async fill(selector, text) {
      await present(waitFor, selector);
      if (engine === 'chromium') await page.fill(selector, text);
      else await page.locator(selector).fill(text);
    },
    async click(selector) {
      await present(waitFor, selector);
      await page.click(selector);
    },
    async tap(selector) {
      await present(waitFor, selector);
      await page.tap(selector);
    },
    url: async () => page.url(),
    screenshot: async (path, { fullPage = false } = {}) => { await page.screenshot({ path, fullPage }); },
    errors: async () => [...errors],
    close: () => page.close(),
  };
}

async function launchChromium({ private: ephemeral = false, args = [], viewport = null, proxy = null, acceptInsecureCerts = false } = {}) {
  const { chromium } = await import('playwright-core');
  const flags = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
    '--disable-component-update', '--no-first-run', ...(proxy ? [`--proxy-server=${proxy}`] : []), ...args];
  const contextOptions = {
    ...(viewport ? {
      viewport: { width: viewport.width, height: viewport.height },
      deviceScaleFactor: viewport.deviceScaleFactor ?? 1,
      isMobile: Boolean(viewport.mobile),
      hasTouch: Boolean(viewport.mobile),
    } : {}),
    ...(acceptInsecureCerts ? { ignoreHTTPSErrors: true } : {}),
  };
  const options = { executablePath: CHROMIUM, headless: true, args: flags };
  const profile = ephemeral ? null : mkdtempSync(join(tmpdir(), 'bloomgate-chromium-'));
  // Private: a context of a launched browser is off the record, as an incognito window is.
  // Otherwise: a persistent context on a fresh profile directory.
  const browser = ephemeral ? await chromium.launch(options) : null;
  const open = async () => {
    const context = ephemeral ? await browser.newContext(contextOptions)
      : await chromium.launchPersistentContext(profile, { ...options, ...contextOptions });
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
      const fresh = await host.newContext(contextOptions);
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

/** Firefox prefs for a launch option (see the top of this file). */
function firefoxPrefs({ viewport, proxy }) {
  const prefs = {};
  if (viewport?.mobile) {
    Object.assign(prefs, {
      'dom.w3c_touch_events.enabled': 1,
      'dom.maxtouchpoints.testing.value': 5,
      'ui.primaryPointerCapabilities': 1, // coarse, no hover
      'ui.allPointerCapabilities': 1,
    });
  }
  if (proxy) {
    const { hostname, port } = new URL(proxy);
    Object.assign(prefs, {
      'network.proxy.type': 1,
      'network.proxy.http': hostname,
      'network.proxy.http_port': Number(port),
      'network.proxy.ssl': hostname,
      'network.proxy.ssl_port': Number(port),
      'network.proxy.no_proxies_on': '127.0.0.1,localhost',
    });
  }
  return prefs;
}

async function launchFirefox({ private: ephemeral = false, prefs = {}, dumpio = false, viewport = null, proxy = null, acceptInsecureCerts = false } = {}) {
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
    acceptInsecureCerts,
    // The headless screen: screen.width and height are the viewport's, as on a phone.
    ...(viewport ? { env: { ...process.env, MOZ_HEADLESS_WIDTH: String(viewport.width), MOZ_HEADLESS_HEIGHT: String(viewport.height) } } : {}),
    extraPrefsFirefox: {
      'browser.privatebrowsing.autostart': ephemeral,
      'app.update.enabled': false,
      'extensions.update.enabled': false,
      ...firefoxPrefs({ viewport, proxy }),
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
    newPage: async () => wrapPage('firefox', await browser.newPage(), { viewport }),
    async freshPage() {
      const fresh = await browser.createBrowserContext();
      return { ...wrapPage('firefox', await fresh.newPage(), { viewport }), close: () => fresh.close() };
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

/** The W3C reference to an element: `selector`'s first match, once there is one. */
async function webkitElement(page, waitFor, selector) {
  await present(waitFor, selector);
  return page.command('POST', '/element', { using: 'css selector', value: selector });
}

/** The id inside a W3C element reference (WebKitGTK names its key with an older UUID than the spec's). */
const elementId = (ref) => Object.values(ref)[0];

/** WebKitWebDriver's page: the W3C commands for input, the screenshot and the URL. */
function wrapWebKitPage(page, { viewport = null } = {}) {
  const evaluate = async (fn, arg = null) => {
    try {
      return asJson(await page.run(String(fn), arg));
    } catch (error) {
      throw pageError('webkit', error);
    }
  };
  const waitFor = poller('webkit', evaluate);
  const element = (selector) => webkitElement(page, waitFor, selector);
  let sized = null;
  /** The window made `viewport.width` x `viewport.height` inside (the rect is the outer size). */
  const size = () => (sized ??= (async () => {
    if (!viewport) return;
    const { width, height } = viewport;
    await page.command('POST', '/window/rect', { width, height });
    const inner = await evaluate(() => ({ width: window.innerWidth, height: window.innerHeight }));
    if (inner.width !== width || inner.height !== height) {
      await page.command('POST', '/window/rect', { width: 2 * width - inner.width, height: 2 * height - inner.height });
    }
  })());
  const sendKeys = async (ref, text) => page.command('POST', `/element/${elementId(ref)}/value`, { text });
  return {
    raw: page,
    async goto(url) {
      await size();
      await page.open(url);
      await page.run(`() => { ${PAGE_CAPTURE} }`).catch(() => {}); // a no-op where the page has it
    },
    evaluate,
    waitFor,
    ...reading(evaluate),
    // WebDriver dispatches the keys one by one; it has no delay between them.
    type: async (selector, text) => sendKeys(await element(selector), text),
    keys: async (text) => sendKeys(await page.command('GET', '/element/active'), text),
    async fill(selector, text) {
      const ref = await element(selector);
      await page.command('POST', `/element/${elementId(ref)}/clear`, {});
      if (text !== '') await sendKeys(ref, text);
    },
    click: async (selector) => { await page.command('POST', `/element/${elementId(await element(selector))}/click`, {}); },
    async tap(selector) {
      const ref = await element(selector);
      await page.command('POST', '/actions', { actions: [{
        type: 'pointer', id: 'finger', parameters: { pointerType: 'touch' },
        actions: [
          { type: 'pointerMove', origin: ref, x: 0, y: 0 },
          { type: 'pointerDown', button: 0 },
          { type: 'pointerUp', button: 0 },
        ],
      }] });
      await page.command('DELETE', '/actions');
    },
    url: () => page.command('GET', '/url'),
    async screenshot(path) {
      writeFileSync(path, Buffer.from(await page.command('GET', '/screenshot'), 'base64'));
    },
    errors: () => evaluate(() => [...(window.__bgCapture?.errors ?? [])]),
    close: () => page.close(),
  };
}

/**
 * MiniBrowser's toolbar keeps its window at least 447 px wide. A GTK stylesheet (in an
 * XDG_CONFIG_HOME of its own) shrinks the toolbar's widgets, never the page, so the window
 * can be a phone's width.
 */
function narrowToolbarConfig() {
  const dir = mkdtempSync(join(tmpdir(), 'bloomgate-webkit-gtk-'));
  mkdirSync(join(dir, 'gtk-3.0'));
  writeFileSync(join(dir, 'gtk-3.0', 'gtk.css'),
    'headerbar, toolbar, toolbar *, entry, button, box, label { min-width: 0; min-height: 0; padding: 0; margin: 0; font-size: 1px; }\n');
  return dir;
}

async function launchWebKit({ viewport = null, proxy = null, acceptInsecureCerts = false } = {}) {
  const scale = Math.round(viewport?.deviceScaleFactor ?? 1);
  const config = viewport ? narrowToolbarConfig() : null;
  const options = {
    capabilities: acceptInsecureCerts ? { acceptInsecureCerts: true } : {},
    env: {
      // WebKitWebDriver accepts the W3C proxy capability and leaves requests unproxied; GLib's
      // proxy resolver reads the environment.
      ...(proxy ? { http_proxy: proxy, https_proxy: proxy, no_proxy: '127.0.0.1,localhost', GIO_USE_PROXY_RESOLVER: 'environment' } : {}),
      ...(viewport ? { GDK_SCALE: String(scale), XDG_CONFIG_HOME: config } : {}),
    },
    ...(viewport ? { screen: { width: viewport.width * scale, height: (viewport.height + 100) * scale } } : {}),
  };
  let session = await startWebKit(options);
  return {
    name: 'webkit',
    version: session.version,
    private: true, // the automation session's data store is ephemeral
    get raw() { return session; },
    newPage: async () => wrapWebKitPage(await session.newWindow(), { viewport }),
    freshPage() {
      return this.newPage();
    },
    /** A new automation session (its data store is a new ephemeral one). */
    async restart() {
      await session.close();
      session = await startWebKit(options);
    },
    async close() {
      await session.close();
      if (config) rmSync(config, { recursive: true, force: true });
    },
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
