/**
 * extension-scenarios.mjs — one list of scenarios for the example extension (examples/extension),
 * with the same assertions wherever it runs: installed in Chromium (extension.test.mjs, MV3
 * service worker), installed in Firefox over WebDriver BiDi (extension-firefox.test.mjs,
 * background scripts), and its own files as plain pages in WebKit, where no extension can be
 * loaded (extension-webkit.test.mjs).
 *
 * A test file gives a driver for its engine:
 *
 *   extensionUrl(path)          the URL of one of the extension's files
 *   visit(url)                  navigate the tab (the extension may replace it with its warning page)
 *   location()                  the tab's URL once its document loaded, or null between documents
 *   waitForLocation(fn, what)   poll location() until fn(url); fails naming `what`
 *   warningShown()              { h1, expression } as the warning page in the tab shows them
 *   title()                     the tab's document.title
 *   settle()                    resolves once no late redirect can still come
 *   clickWarning(id)            click 'continue' or 'back' on the warning page in the tab
 *   openPopup()                 (re)load popup.html; resolves once it rendered the extension's status
 *   popupText(id), popupWaitFor(fn, arg), popupEvaluate(fn, arg)
 *   screenshot?(name)           optional: the tab as an image
 *
 * The fixtures: a build of the extension, a web site on 127.0.0.1 (the bundled list holds the
 * expression 127.0.0.1/phish/), and a filter site (bench/fresh-site.mjs) that publishes
 * generations 2, 3 and 4 of the list (adding /phish2/, /phish3/, /phish4/) with deltas and
 * manifest.json, as `bloomgate publish` does.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';

import { FilterSite, sri } from '../../../bench/fresh-site.mjs';
import { LIST_ID, buildExtension, buildUrlFilter, parseList } from '../../../examples/extension/build.mjs';
import { listenLocal } from './listen.mjs';
import { root } from './packed.mjs';

const page = (title) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body><h1>${title}</h1></body></html>`;
const ROUTES = {
  '/clean/': page('Clean page'),
  '/phish/login.html': page('Listed page'),
  '/phish2/': page('Newly listed page'),
  '/phish3/': page('Listed in generation 3'),
};

/**
 * Build the extension into a temporary directory and start the web site and the filter site.
 * @returns {Promise<{ buildDir: string, site: { origin: string }, filterSite: FilterSite, close: () => Promise<void> }>}
 */
export async function startExtensionFixtures() {
  const buildDir = await mkdtemp(join(tmpdir(), 'bloomgate-extension-'));
  await buildExtension({ out: buildDir });
  const list = parseList(await readFile(join(root, 'examples', 'extension', 'blocklist.txt'), 'utf8'));
  const files = [null, null];
  for (const g of [2, 3, 4]) {
    const added = [2, 3, 4].filter((n) => n <= g).map((n) => `127.0.0.1/phish${n}/`);
    files.push(await buildUrlFilter([...list, ...added], { generation: g }));
  }
  const filterSite = new FilterSite({ listId: LIST_ID, files });
  await filterSite.start();
  const site = await listenLocal(createServer((req, res) => {
    const body = ROUTES[new URL(req.url, 'http://127.0.0.1').pathname];
    if (!body) return res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(body);
  }));
  return {
    buildDir,
    site,
    filterSite,
    async close() {
      await site.close();
      await filterSite.stop();
      await rm(buildDir, { recursive: true, force: true });
    },
  };
}

export async function expectWarning(driver, listedUrl, expression) {
  const at = await driver.waitForLocation((url) => url.startsWith(driver.extensionUrl('warning.html')), 'the warning page');
  assert.equal(new URL(at).searchParams.get('url'), listedUrl);
  assert.deepEqual(await driver.warningShown(), { h1: 'Deceptive site ahead', expression });
}

/** The tab is at `url` and stays there (no late redirect to the warning page). */
export async function expectStays(driver, url, title) {
  await driver.waitForLocation((current) => current === url, url);
  await driver.settle();
  assert.equal(await driver.location(), url);
  assert.equal(await driver.title(), title);
}

const number = (text) => Number(text.replace(/,/g, ''));

/**
 * The scenarios, in order (each builds on the state the previous left). `get()` gives
 * { driver, site, filterSite } once the file's before() ran.
 */
export function extensionScenarios(get) {
  const configure = async (driver, manifestUrl) => {
    await driver.openPopup();
    await driver.popupEvaluate((url) => {
      document.getElementById('manifest-url').value = url;
      document.getElementById('settings').requestSubmit();
    }, manifestUrl);
    await driver.popupWaitFor(() => document.getElementById('settings-message').textContent === 'Saved.');
  };
  const updateNow = async (driver, until) => {
    await driver.openPopup();
    await driver.popupEvaluate(() => { document.getElementById('update').click(); });
    await driver.popupWaitFor(until);
  };

  it('the popup shows the bundled filter', async () => {
    const { driver } = get();
    await driver.openPopup();
    assert.equal(await driver.popupText('generation'), '1');
    assert.match(await driver.popupText('list-id'), /^[0-9a-f]{32}$/);
    assert.match(await driver.popupText('size'), /KiB|B \(classic/);
    assert.equal(await driver.popupText('source'), 'bundled with the extension');
  });

  it('lets a clean URL load normally', async () => {
    const { driver, site } = get();
    await driver.visit(`${site.origin}/clean/`);
    await expectStays(driver, `${site.origin}/clean/`, 'Clean page');
  });

  it('sends a listed URL to the warning page, and "go back" returns to the last safe page', async () => {
    const { driver, site } = get();
    const listed = `${site.origin}/phish/login.html`;
    await driver.visit(listed);
    await expectWarning(driver, listed, '127.0.0.1/phish/');
    await driver.screenshot?.('extension-warning.png');
    await driver.clickWarning('back');
    await expectStays(driver, `${site.origin}/clean/`, 'Clean page');
  });

  it('"continue anyway" opens the listed page and remembers the allowance', async () => {
    const { driver, site } = get();
    const listed = `${site.origin}/phish/login.html`;
    await driver.visit(listed);
    await expectWarning(driver, listed, '127.0.0.1/phish/');
    await driver.clickWarning('continue');
    await expectStays(driver, listed, 'Listed page');
    // The allowance covers the listed expression: another page under it loads too.
    await driver.visit(`${listed}?again=1`);
    await expectStays(driver, `${listed}?again=1`, 'Listed page');
  });

  it('opens the filter site: the full file of generation 2 the first time', async () => {
    const { driver, site, filterSite } = get();
    filterSite.publish(2);
    filterSite.clearLog();
    await configure(driver, filterSite.manifestUrl);
    await driver.openPopup();
    await driver.popupWaitFor(() => document.getElementById('generation').textContent === '2');
    assert.match(await driver.popupText('last-update'), /now using generation 2 \(the full file/);
    assert.equal(await driver.popupText('source'), `the full file from ${filterSite.manifestUrl}`);
    assert.deepEqual(filterSite.paths(), ['/manifest.json', '/filter-2.bgf']);
    const listed = `${site.origin}/phish2/`;
    await driver.visit(listed);
    await expectWarning(driver, listed, '127.0.0.1/phish2/');
  });

  it('takes generation 3 as a delta: the .bgd is requested, the .bgf is not', async () => {
    const { driver, site, filterSite } = get();
    filterSite.publish(3, { deltasFrom: [2] });
    filterSite.clearLog();
    await updateNow(driver, () => document.getElementById('generation').textContent === '3');
    assert.match(await driver.popupText('last-update'), /now using generation 3 \(a delta/);
    assert.equal(await driver.popupText('source'), `a delta from ${filterSite.manifestUrl}`);
    assert.deepEqual(filterSite.paths(), ['/manifest.json', '/delta-2-3.bgd']);
    await driver.visit(`${site.origin}/clean/`);
    await expectStays(driver, `${site.origin}/clean/`, 'Clean page');
    const listed = `${site.origin}/phish3/`;
    await driver.visit(listed);
    await expectWarning(driver, listed, '127.0.0.1/phish3/');
  });

  it('keeps the last good filter when a delta is corrupt or the site is down', async () => {
    const { driver, site, filterSite } = get();
    const bad = Uint8Array.from(filterSite.delta(3, 4));
    bad[bad.length - 4] ^= 0x33;
    filterSite.publish(4, { deltasFrom: [3] });
    filterSite.files.set('/delta-3-4.bgd', bad);
    filterSite.files.delete('/filter-4.bgf');
    filterSite.setManifest({ ...filterSite.manifest, deltas: [{ from: 3, url: 'delta-3-4.bgd', length: bad.length, integrity: sri(bad) }] });
    filterSite.clearLog();
    await updateNow(driver, () => /failed/.test(document.getElementById('last-update').textContent));
    assert.deepEqual(filterSite.paths(), ['/manifest.json', '/delta-3-4.bgd', '/filter-4.bgf']);
    assert.match(await driver.popupText('last-update'), /E_FETCH/); // the delta was refused, then the full file was missing
    assert.match(await driver.popupText('last-update'), /last good filter/);
    assert.equal(await driver.popupText('generation'), '3');
    await filterSite.stop();
    await driver.popupEvaluate(() => { document.getElementById('last-update').textContent = ''; });
    await updateNow(driver, () => /failed/.test(document.getElementById('last-update').textContent));
    assert.match(await driver.popupText('last-update'), /E_FETCH/);
    assert.equal(await driver.popupText('generation'), '3');
    await driver.visit(`${site.origin}/clean/`);
    await expectStays(driver, `${site.origin}/clean/`, 'Clean page');
    const listed = `${site.origin}/phish3/`;
    await driver.visit(listed);
    await expectWarning(driver, listed, '127.0.0.1/phish3/');
  });

  it("shows the gate's counters in the popup", async () => {
    const { driver } = get();
    await driver.openPopup();
    const checks = number(await driver.popupText('checks'));
    const local = number(await driver.popupText('local'));
    const listed = number(await driver.popupText('confirmed'));
    assert.ok(checks >= 6, `checks: ${checks}`);
    assert.ok(local >= 1, `answered locally: ${local}`);
    assert.ok(listed >= 2, `listed: ${listed}`);
  });
}
