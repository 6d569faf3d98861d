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
 *   warningPrivacy()            the warning page's sentence on what left the browser
 *   screenshot?(name)           optional: the tab as an image
 *
 * The fixtures, made with the real commands: a publisher key and an attacker's key (`bloomgate
 * keygen`); the extension built with the publisher's key and the list id (`build.mjs --out DIR
 * --key ed25519:... --list-id HEX32`), and once without a key; a web site on 127.0.0.1 (the
 * bundled list holds the expression 127.0.0.1/phish/); and a filter site, signed with
 * `bloomgate publish --sign`: generations 2, 3 and 4 of the list (adding /phish2/, /phish3/,
 * /phish4/) with deltas and manifest.json. Besides it, two forgeries of the same list id (a
 * generation 5 that lists nothing of ours): published unsigned, and signed by the attacker's
 * key. A FilterSite (bench/fresh-site.mjs) serves whichever the scenario picks, on one URL, and
 * records every request. And a hash-prefix endpoint of generation 3 (`bloomgate build --store`,
 * `export-ranges --sign`), on a port of its own.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import { promisify } from 'node:util';

import { FilterSite } from '../../../bench/fresh-site.mjs';
import { LIST_ID, buildUrlFilter, parseList } from '../../../examples/extension/build.mjs';
import { listenLocal } from './listen.mjs';
import { root, serveDir } from './packed.mjs';

const CLI = join(root, 'js', 'cli.js');
const BUILD = join(root, 'examples', 'extension', 'build.mjs');

/** `node SCRIPT ...args` in `cwd`; its stdout. */
async function run(cwd, script, args) {
  const { stdout } = await promisify(execFile)(process.execPath, [script, ...args], { cwd, timeout: 60000 }).catch((error) => {
    throw new Error(`${script} ${args.join(' ')} failed: ${error.stderr || error.message}`, { cause: error });
  });
  return stdout;
}

/** A site folder's files as FilterSite serves them: Map('/name' -> bytes). */
async function snapshot(dir) {
  const files = new Map();
  for (const name of await readdir(dir)) {
    if (!name.startsWith('.')) files.set(`/${name}`, new Uint8Array(await readFile(join(dir, name))));
  }
  return files;
}

const page = (title) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body><h1>${title}</h1></body></html>`;
const ROUTES = {
  '/clean/': page('Clean page'),
  '/phish/login.html': page('Listed page'),
  '/phish2/': page('Newly listed page'),
  '/phish3/': page('Listed in generation 3'),
};

/**
 * Keys, builds and sites as described at the top; the web site and the filter site started.
 * `serve(files)` makes the filter site serve one of `sites` (genuine[2..4], unsigned, foreign).
 * @returns {Promise<{ buildDir: string, keylessDir: string, publisher: { key: string, listId: string },
 *   sites: { genuine: Map<string, Uint8Array>[], unsigned: Map<string, Uint8Array>, foreign: Map<string, Uint8Array> },
 *   serve: (files: Map<string, Uint8Array>) => void, site: { origin: string }, filterSite: FilterSite,
 *   hashes: { url: string, requests: { path: string }[] }, close: () => Promise<void> }>}
 */
export async function startExtensionFixtures() {
  const work = await mkdtemp(join(tmpdir(), 'bloomgate-extension-'));
  const key = (await run(work, CLI, ['keygen', '-q', '-o', 'publisher.key'])).trim();
  await run(work, CLI, ['keygen', '-q', '-o', 'attacker.key']);
  const listId = LIST_ID;
  const buildDir = join(work, 'extension');
  const keylessDir = join(work, 'extension-keyless');
  await run(work, BUILD, ['--out', buildDir, '--key', key, '--list-id', listId]);
  await run(work, BUILD, ['--out', keylessDir]);

  const list = parseList(await readFile(join(root, 'examples', 'extension', 'blocklist.txt'), 'utf8'));
  for (const g of [2, 3, 4]) {
    const added = [2, 3, 4].filter((n) => n <= g).map((n) => `127.0.0.1/phish${n}/`);
    await writeFile(join(work, `g${g}.bgf`), await buildUrlFilter([...list, ...added], { generation: g, listId }));
  }
  // The forgery: the same list id, a later generation, none of the listed URLs.
  await writeFile(join(work, 'forged.bgf'), await buildUrlFilter(['127.0.0.1/harmless/'], { generation: 5, listId }));
  const publish = async (bgf, dir, sign) => {
    await mkdir(join(work, dir), { recursive: true });
    await run(work, CLI, ['publish', bgf, '--dir', dir, '-q', ...(sign ? ['--sign', sign] : [])]);
    return snapshot(join(work, dir));
  };
  const genuine = [null, null];
  for (const g of [2, 3, 4]) genuine.push(await publish(`g${g}.bgf`, 'site', 'publisher.key'));
  const sites = { genuine, unsigned: await publish('forged.bgf', 'unsigned', null), foreign: await publish('forged.bgf', 'foreign', 'attacker.key') };

  // The hash-prefix endpoint: generation 3's exact store, exported and signed.
  await writeFile(join(work, 'g3.txt'), `${[...list, '127.0.0.1/phish2/', '127.0.0.1/phish3/'].join('\n')}\n`);
  await run(work, CLI, ['build', 'g3.txt', '--format', 'urls', '--store', 'g3.bgs', '-o', 'g3-store.bgf', '--list-id', listId, '--generation', '3', '-q']);
  await run(work, CLI, ['export-ranges', 'g3.bgs', '-o', 'hashes-site', '--sign', 'publisher.key', '-q']);
  const hashesSite = await serveDir(join(work, 'hashes-site'), { headers: { 'access-control-allow-origin': '*' } });
  const hashes = { url: `${hashesSite.origin}/hashes`, requests: hashesSite.requests };

  const filterSite = new FilterSite({ listId, files: [] });
  await filterSite.start();
  const serve = (files) => {
    filterSite.files = new Map(files);
  };
  const site = await listenLocal(createServer((req, res) => {
    const body = ROUTES[new URL(req.url, 'http://127.0.0.1').pathname];
    if (!body) return res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(body);
  }));
  return {
    buildDir,
    keylessDir,
    publisher: { key, listId },
    sites,
    serve,
    site,
    filterSite,
    hashes,
    async close() {
      await site.close();
      await hashesSite.close();
      await filterSite.stop();
      await rm(work, { recursive: true, force: true });
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

/** Popup helpers: type settings ({ manifestUrl, hashesUrl }, or a manifest URL) and save; press "Update now" and wait. */
async function configure(driver, values) {
  await driver.openPopup();
  await driver.popupEvaluate((input) => {
    if (input.manifestUrl !== undefined) document.getElementById('manifest-url').value = input.manifestUrl;
    if (input.hashesUrl !== undefined) document.getElementById('hashes-url').value = input.hashesUrl;
    document.getElementById('settings').requestSubmit();
  }, typeof values === 'string' ? { manifestUrl: values } : values);
  await driver.popupWaitFor(() => document.getElementById('settings-message').textContent === 'Saved.');
  await driver.openPopup(); // rendered again: the last update's result
}
async function updateNow(driver, until) {
  await driver.openPopup();
  await driver.popupEvaluate(() => { document.getElementById('update').click(); });
  await driver.popupWaitFor(until);
}
const updateFailed = () => /failed/.test(document.getElementById('last-update').textContent);

/**
 * The scenarios for the build that pins the publisher's key and list id, in order (each builds
 * on the state the previous left). `get()` gives { driver, fixtures } once the file's before() ran.
 */
export function extensionScenarios(get) {
  it('the popup shows the bundled filter, named by the pinned list, and the pinned publisher', async () => {
    const { driver, fixtures } = get();
    await driver.openPopup();
    assert.equal(await driver.popupText('generation'), '1');
    assert.equal(await driver.popupText('list-id'), fixtures.publisher.listId);
    assert.match(await driver.popupText('size'), /KiB|B \(classic/);
    assert.equal(await driver.popupText('source'), 'bundled with the extension');
    assert.equal(await driver.popupText('publisher'),
      `${fixtures.publisher.key.slice(0, 16)}… (1 of 1 must sign), list ${fixtures.publisher.listId}`);
  });

  it('lets a clean URL load normally', async () => {
    const { driver, fixtures: { site } } = get();
    await driver.visit(`${site.origin}/clean/`);
    await expectStays(driver, `${site.origin}/clean/`, 'Clean page');
  });

  it('sends a listed URL to the warning page, and "go back" returns to the last safe page', async () => {
    const { driver, fixtures: { site } } = get();
    const listed = `${site.origin}/phish/login.html`;
    await driver.visit(listed);
    await expectWarning(driver, listed, '127.0.0.1/phish/');
    // No hash-prefix endpoint is configured: the answer was local, and the page says so.
    assert.equal(await driver.warningPrivacy(), 'Checked on this device with a Bloom filter: the address was not sent anywhere.');
    await driver.screenshot?.('extension-warning.png');
    await driver.clickWarning('back');
    await expectStays(driver, `${site.origin}/clean/`, 'Clean page');
  });

  it('refuses an unsigned site at the configured manifest URL: the bundled filter keeps answering', async () => {
    const { driver, fixtures: { site, filterSite, sites, serve } } = get();
    serve(sites.unsigned);
    filterSite.clearLog();
    await configure(driver, filterSite.manifestUrl);
    assert.match(await driver.popupText('last-update'), /failed .*E_SIGNATURE: .*unsigned/);
    assert.deepEqual(filterSite.paths(), ['/manifest.json']); // nothing it names is fetched
    assert.equal(await driver.popupText('generation'), '1');
    assert.equal(await driver.popupText('source'), 'bundled with the extension');
    const listed = `${site.origin}/phish/login.html`;
    await driver.visit(listed);
    await expectWarning(driver, listed, '127.0.0.1/phish/');
    await driver.clickWarning('back');
    await expectStays(driver, `${site.origin}/clean/`, 'Clean page');
  });

  it('"continue anyway" opens the listed page and remembers the allowance', async () => {
    const { driver, fixtures: { site } } = get();
    const listed = `${site.origin}/phish/login.html`;
    await driver.visit(listed);
    await expectWarning(driver, listed, '127.0.0.1/phish/');
    await driver.clickWarning('continue');
    await expectStays(driver, listed, 'Listed page');
    // The allowance covers the listed expression: another page under it loads too.
    await driver.visit(`${listed}?again=1`);
    await expectStays(driver, `${listed}?again=1`, 'Listed page');
  });

  it('opens the signed filter site: the full file of generation 2 the first time', async () => {
    const { driver, fixtures: { site, filterSite, sites, serve } } = get();
    serve(sites.genuine[2]);
    filterSite.clearLog();
    await updateNow(driver, () => document.getElementById('generation').textContent === '2');
    assert.match(await driver.popupText('last-update'), /now using generation 2 \(the full file/);
    assert.equal(await driver.popupText('source'), `the full file from ${filterSite.manifestUrl}`);
    assert.deepEqual(filterSite.paths(), ['/manifest.json', '/filter-2.bgf']);
    const listed = `${site.origin}/phish2/`;
    await driver.visit(listed);
    await expectWarning(driver, listed, '127.0.0.1/phish2/');
  });

  it('takes generation 3 as a delta: the .bgd is requested, the .bgf is not', async () => {
    const { driver, fixtures: { site, filterSite, sites, serve } } = get();
    serve(sites.genuine[3]);
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

  it('refuses an unsigned update and one signed by another key: generation 3 keeps answering', async () => {
    const { driver, fixtures: { site, filterSite, sites, serve } } = get();
    for (const [forgery, why] of [['unsigned', /E_SIGNATURE: .*unsigned/], ['foreign', /E_SIGNATURE: .*not trusted/]]) {
      serve(sites[forgery]);
      filterSite.clearLog();
      await updateNow(driver, updateFailed);
      assert.match(await driver.popupText('last-update'), why, forgery);
      assert.match(await driver.popupText('last-update'), /last good filter/);
      assert.deepEqual(filterSite.paths(), ['/manifest.json'], forgery);
      assert.equal(await driver.popupText('generation'), '3', forgery);
      const listed = `${site.origin}/phish3/`; // the forgery lists nothing of ours
      await driver.visit(listed);
      await expectWarning(driver, listed, '127.0.0.1/phish3/');
    }
    await driver.visit(`${site.origin}/clean/`);
    await expectStays(driver, `${site.origin}/clean/`, 'Clean page');
  });

  it('confirms a "maybe" at the signed hash-prefix endpoint, and the warning page says a 4-byte prefix was sent', async () => {
    const { driver, fixtures: { site, hashes } } = get();
    await configure(driver, { hashesUrl: hashes.url });
    const escalations = number(await driver.popupText('escalations'));
    hashes.requests.length = 0;
    const listed = `${site.origin}/phish3/`;
    await driver.visit(listed);
    await expectWarning(driver, listed, '127.0.0.1/phish3/');
    assert.equal(await driver.warningPrivacy(), `Checked with a Bloom filter on this device, then at ${new URL(hashes.url).host}, ` +
      'which was sent a 4-byte hash prefix of the listed expression (not the address).');
    const paths = hashes.requests.map((request) => request.path);
    assert.ok(paths.includes('/hashes/manifest.json') && paths.some((path) => /^\/hashes\/[0-9a-f]{8}$/.test(path)), paths.join(' '));
    await driver.openPopup();
    assert.ok(number(await driver.popupText('escalations')) > escalations);
    await configure(driver, { hashesUrl: '' }); // the next scenarios answer locally again
  });

  it('keeps the last good filter when a delta is corrupt or the site is down', async () => {
    const { driver, fixtures: { site, filterSite, sites, serve } } = get();
    // Generation 4 as signed, with its delta from 3 damaged in place and its full file missing.
    const files = new Map(sites.genuine[4]);
    const bad = Uint8Array.from(files.get('/delta-3-4.bgd'));
    bad[bad.length - 4] ^= 0x33;
    files.set('/delta-3-4.bgd', bad);
    files.delete('/filter-4.bgf');
    serve(files);
    filterSite.clearLog();
    await updateNow(driver, updateFailed);
    assert.deepEqual(filterSite.paths(), ['/manifest.json', '/delta-3-4.bgd', '/filter-4.bgf']);
    assert.match(await driver.popupText('last-update'), /E_FETCH/); // the delta was refused, then the full file was missing
    assert.match(await driver.popupText('last-update'), /last good filter/);
    assert.equal(await driver.popupText('generation'), '3');
    await filterSite.stop();
    await driver.popupEvaluate(() => { document.getElementById('last-update').textContent = ''; });
    await updateNow(driver, updateFailed);
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

/**
 * The build without --key (fixtures.keylessDir), in a browser of its own: it follows no filter
 * site, whatever is configured, and says an update needs a publisher key.
 */
export function keylessScenarios(get) {
  it('a build without --key: the popup says updates need a publisher key', async () => {
    const { driver } = get();
    await driver.openPopup();
    assert.equal(await driver.popupText('generation'), '1');
    assert.equal(await driver.popupText('source'), 'bundled with the extension');
    assert.match(await driver.popupText('publisher'), /^no key pinned: .*updates need a publisher key \(rebuild with build\.mjs --key/);
  });

  it('follows no filter site: a configured one is asked nothing, the bundled filter keeps answering', async () => {
    const { driver, fixtures: { site, filterSite, sites, serve } } = get();
    serve(sites.genuine[2]);
    filterSite.clearLog();
    await configure(driver, filterSite.manifestUrl);
    assert.match(await driver.popupText('last-update'), /failed .*NO_KEY: .*updates need a publisher key: rebuild with build\.mjs --key/);
    await updateNow(driver, updateFailed);
    assert.match(await driver.popupText('last-update'), /NO_KEY/);
    assert.deepEqual(filterSite.paths(), []);
    assert.equal(await driver.popupText('generation'), '1');
    assert.equal(await driver.popupText('source'), 'bundled with the extension');
    const listed = `${site.origin}/phish/login.html`;
    await driver.visit(listed);
    await expectWarning(driver, listed, '127.0.0.1/phish/');
    await driver.visit(`${site.origin}/phish2/`); // listed in the site's generation 2, which it never took
    await expectStays(driver, `${site.origin}/phish2/`, 'Newly listed page');
  });
}
