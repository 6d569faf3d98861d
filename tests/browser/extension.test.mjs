/**
 * End-to-end: the example MV3 extension (examples/extension) in Debian's
 * headless Chromium, loaded with --load-extension. A local site on 127.0.0.1
 * stands in for the web; the bundled list holds the expression 127.0.0.1/phish/.
 *
 * Run: node --test tests/browser/extension.test.mjs (needs /usr/bin/chromium,
 * or BG_CHROMIUM). Writes docs/images/extension-warning.png.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import { CHROMIUM, launch } from './browser.mjs';
import { buildExtension, buildUrlFilter, parseList } from '../../examples/extension/build.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const hasChromium = existsSync(CHROMIUM);
const SCREENSHOT = join(root, 'docs', 'images', 'extension-warning.png');

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

  before(async () => {
    buildDir = await mkdtemp(join(tmpdir(), 'bloomgate-extension-'));
    await buildExtension({ out: buildDir });
    // Generation 2 of the same list adds /phish2/; a corrupt copy must be refused.
    const list = parseList(await readFile(join(root, 'examples', 'extension', 'blocklist.txt'), 'utf8'));
    const v2 = await buildUrlFilter([...list, '127.0.0.1/phish2/'], { generation: 2 });
    const corrupt = Uint8Array.from(v2);
    corrupt[corrupt.length - 1] ^= 0xff;
    const bgf = (bytes) => ({ type: 'application/octet-stream', body: Buffer.from(bytes) });
    site = await startSite({
      '/clean/': page('Clean page'),
      '/phish/login.html': page('Listed page'),
      '/phish2/': page('Newly listed page'),
      '/filters/v2.bgf': bgf(v2),
      '/filters/corrupt.bgf': bgf(corrupt),
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
    await mkdir(dirname(SCREENSHOT), { recursive: true });
    await tab.screenshot({ path: SCREENSHOT });
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

  it('updates to a newer generation from the configured URL', async () => {
    await openPopup();
    await popup.fill('#update-url', `${site.origin}/filters/v2.bgf`);
    await popup.click('#settings button[type="submit"]');
    await popup.waitForSelector('#settings-message:text("Saved.")');
    await popup.click('#update');
    await popup.waitForFunction(() => document.getElementById('generation').textContent === '2', null, { timeout: 10000 });
    assert.match(await popup.textContent('#last-update'), /now using generation 2/);
    assert.equal(await popup.textContent('#source'), `${site.origin}/filters/v2.bgf`);
    const listed = `${site.origin}/phish2/`;
    await visit(listed);
    await expectWarning(listed, '127.0.0.1/phish2/');
  });

  it('keeps the last good filter when an update is corrupt or fails to download', async () => {
    for (const [path, code] of [['/filters/corrupt.bgf', /E_CHECKSUM|E_TRUNCATED|E_PAYLOAD/], ['/filters/missing.bgf', /E_FETCH/]]) {
      await openPopup();
      await popup.fill('#update-url', `${site.origin}${path}`);
      await popup.click('#settings button[type="submit"]');
      await popup.waitForSelector('#settings-message:text("Saved.")');
      await popup.click('#update');
      await popup.waitForFunction(() => /failed/.test(document.getElementById('last-update').textContent), null, { timeout: 10000 });
      const message = await popup.textContent('#last-update');
      assert.match(message, code);
      assert.match(message, /last good filter/);
      assert.equal(await popup.textContent('#generation'), '2');
    }
    await visit(`${site.origin}/clean/`);
    await expectStays(`${site.origin}/clean/`, 'Clean page');
    const listed = `${site.origin}/phish2/`;
    await visit(listed);
    await expectWarning(listed, '127.0.0.1/phish2/');
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
});
