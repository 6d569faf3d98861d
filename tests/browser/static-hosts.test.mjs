/**
 * End-to-end (issue 9, item 3): `bloomgate export-ranges` output served by
 * ordinary static hosts works out of the box, in each engine of
 * tests/browser/engines/ (Chromium, Firefox and WebKit, the same assertions in
 * each), from a page that imports the library and calls checkPassword /
 * checkUrl with default options:
 *
 *   - Debian nginx, its default configuration plus the snippet export-ranges
 *     wrote (bloomgate-nginx.conf), page on another origin;
 *   - stock `python3 -m http.server` (no CORS headers, extension-less files as
 *     application/octet-stream): same origin works; from another origin every
 *     check is an E_ESCALATION error, never "clean";
 *   - a CORS-only host (adds only Access-Control-Allow-Origin: *, answers no
 *     preflight), page on another origin.
 *
 * For each host: listed passwords are breached with their counts; clean
 * passwords the filter says "maybe" for are not breached (believed because
 * the manifest names the filter's list); a padded export answers without
 * Add-Padding and so without a preflight; an export without its manifest (cut
 * short) and an empty or missing directory are E_ESCALATION errors; a URL
 * export answers listed and clean URLs (a missing file is 404 = none, believed
 * only because its manifest says notFound 'empty').
 *
 * The lists come from `bloomgate build --store` and `bloomgate export-ranges`
 * (2^20 range files, once in `before`, on tmpfs when /dev/shm is one: about
 * 30 s there, 1-5 min on a loaded disk); the hosts start once and serve every
 * engine. What reached a host is read from its own log (nginx's access log,
 * python's stderr, the node servers' records), never from the browser.
 *
 * Run: node --test tests/browser/static-hosts.test.mjs (some engines:
 * BG_ENGINES=firefox,webkit). nginx at /usr/sbin/nginx or BG_NGINX and python3
 * or BG_PYTHON, each skipped with a reason when absent; a browser that is not
 * installed is skipped with the reason unless BLOOMGATE_REQUIRE_BROWSERS=1.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, statfsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';

import { storeManifest } from '../../js/endpoint.js';
import { startReferenceServer } from '../../js/server.js';
import { parseHexPrefix, rangeReply, StoreReader } from '../../js/store.js';
import { ENGINES, launchEngine, skipUnless } from './engines/index.mjs';
import { buildLists, candidatePrefixes, root, runCli, sha1Hex } from './helpers/fixtures.mjs';
import { hasNginx, hasPython, startCorsOnly, startNginx, startPython } from './helpers/hosts.mjs';
import { check, libraryMounts, loadTestPage, PAGE_HTML } from './helpers/page.mjs';

const chosen = (process.env.BG_ENGINES ?? ENGINES.join(',')).split(',').map((name) => name.trim()).filter(Boolean);
const python = await hasPython();
const TMPFS_MAGIC = 0x01021994;

/** tmpfs when there is one: a million small files are written and removed there in seconds. */
function scratchRoot() {
  try {
    if (statfsSync('/dev/shm').type === TMPFS_MAGIC) return '/dev/shm';
  } catch {
    // no /dev/shm
  }
  return tmpdir();
}

let base;
let lists;
let pageServer;
let nginx = null;
let pythonHost = null;
let corsOnly = null;
/** The 8-hex prefixes the clean URL escalates with, and the listed URL's. */
let cleanUrlPrefixes;

const state = { pageOrigin: null };

before(async () => {
  base = await mkdtemp(join(scratchRoot(), 'bloomgate-static-hosts-'));
  chmodSync(base, 0o755); // nginx workers run as www-data
  lists = await buildLists(join(base, 'lists'));
  const { files } = lists;

  // The exports, as a user makes them.
  const pw = join(base, 'pw');
  const urls = join(base, 'urls');
  await runCli(['export-ranges', files.passwordStore, '-o', pw, '-q']);
  await runCli(['export-ranges', files.urlStore, '-o', urls, '-q']);
  const manifest = JSON.parse(await readFile(join(pw, 'range', 'manifest.json'), 'utf8'));
  assert.equal(manifest.listId, lists.listIds.passwords, 'the build pairs the filter and the store by list id');
  assert.equal(manifest.padding, 'none');

  // Beside them, the broken deployments: an export cut short (files, no
  // manifest: it is written last), an empty directory (none: "nothing" is never made).
  const queried = [...lists.listedPasswords.map((l) => l.password), ...Object.values(lists.cleanPasswords)]
    .map((password) => sha1Hex(password).slice(0, 5));
  await mkdir(join(pw, 'half', 'range'), { recursive: true });
  for (const prefix of queried) await copyFile(join(pw, 'range', prefix), join(pw, 'half', 'range', prefix));
  await mkdir(join(pw, 'empty'));
  await mkdir(join(urls, 'half', 'hashes'), { recursive: true });
  cleanUrlPrefixes = await candidatePrefixes(lists.cleanUrl, files.urlFilter);
  const listedUrlPrefixes = await candidatePrefixes(lists.listedUrl.url, files.urlFilter);
  for (const prefix of [...cleanUrlPrefixes, ...listedUrlPrefixes]) {
    if (existsSync(join(urls, 'hashes', prefix))) await copyFile(join(urls, 'hashes', prefix), join(urls, 'half', 'hashes', prefix));
  }
  // The clean URL's prefixes hold no listed hash, so their files are missing: the 404 path is what gets tested.
  for (const prefix of cleanUrlPrefixes) assert.equal(existsSync(join(urls, 'hashes', prefix)), false, prefix);
  await mkdir(join(urls, 'empty'));

  // What `export-ranges --pad` writes for the prefixes the tests ask: the same
  // rangeReply(records, true) per file and its manifest (padding 'static').
  // The full padded export is ~37 GB (2^20 files of 800-1,000 rows), so only
  // these files are written; no other prefix is requested.
  await mkdir(join(pw, 'padded', 'range'), { recursive: true });
  const store = await StoreReader.open(files.passwordStore);
  try {
    for (const prefix of queried) {
      const { prefix: bytes, bits } = parseHexPrefix(prefix, 5);
      await writeFile(join(pw, 'padded', 'range', prefix), rangeReply(await store.lookup(bytes, bits), true));
    }
    const padded = storeManifest(store, { protocol: 'range', padding: 'static', notFound: 'error' });
    assert.deepEqual({ ...padded, padding: 'none' }, manifest, 'the padded manifest differs from the real one only in padding');
    await writeFile(join(pw, 'padded', 'range', 'manifest.json'), `${JSON.stringify(padded, null, 2)}\n`);
  } finally {
    await store.close();
  }

  // A site for the hosts that also serve the page (python) or just files (CORS-only).
  const site = join(base, 'site');
  await mkdir(join(site, 'bloomgate'), { recursive: true });
  await mkdir(join(site, 'filters'));
  await mkdir(join(site, 'page'));
  await symlink(pw, join(site, 'pw'));
  await symlink(urls, join(site, 'urls'));
  await symlink(join(root, 'js'), join(site, 'bloomgate', 'js'));
  await symlink(join(root, 'wasm'), join(site, 'bloomgate', 'wasm'));
  await copyFile(files.passwordFilter, join(site, 'filters', 'passwords.bgf'));
  await copyFile(files.urlFilter, join(site, 'filters', 'urls.bgf'));
  await writeFile(join(site, 'page', 'index.html'), PAGE_HTML);

  // The page's own origin (the "app"), different from every host's.
  const pageDir = join(base, 'page');
  await mkdir(pageDir);
  await writeFile(join(pageDir, 'index.html'), PAGE_HTML);
  ({ url: state.pageOrigin, server: pageServer } = await startReferenceServer({
    filters: { passwords: files.passwordFilter, urls: files.urlFilter },
    staticDir: [{ prefix: '/', dir: pageDir }, ...libraryMounts()],
  }));

  if (hasNginx()) {
    nginx = await startNginx(join(base, 'nginx'), [
      { root: pw, include: join(pw, 'bloomgate-nginx.conf') },
      { root: urls, include: join(urls, 'bloomgate-nginx.conf') },
    ]);
  }
  if (python) pythonHost = await startPython(site);
  corsOnly = await startCorsOnly(site);
}, { timeout: 420000 });

after(async () => {
  await nginx?.close();
  await pythonHost?.close();
  await corsOnly?.close();
  if (pageServer?.listening) await new Promise((resolve) => { pageServer.closeAllConnections(); pageServer.close(resolve); });
  // A million files: rm(1) deletes them in ~25 s on a loaded machine, fs.rm's recursion in ~160 s.
  if (base) {
    await promisify(execFile)('rm', ['-rf', base], { timeout: 300000 })
      .catch(() => rm(base, { recursive: true, force: true }));
  }
});

/** Endpoints of a host that serves the password export at `pwBase` and the URL export at `urlBase`. */
function endpointsOf(pwBase, urlBase) {
  return {
    range: `${pwBase}/range`,
    rangeHalf: `${pwBase}/half/range`,
    rangePadded: `${pwBase}/padded/range`,
    rangeEmpty: `${pwBase}/empty/range`,
    rangeMissing: `${pwBase}/nothing/range`,
    hashes: `${urlBase}/hashes`,
    hashesHalf: `${urlBase}/half/hashes`,
    hashesEmpty: `${urlBase}/empty/hashes`,
    hashesMissing: `${urlBase}/nothing/hashes`,
  };
}

function assertEscalationError(outcome, what) {
  assert.equal(outcome.result, undefined, `${what}: answered ${JSON.stringify(outcome.result)} where only an error is right`);
  assert.equal(outcome.error.code, 'E_ESCALATION', `${what}: ${JSON.stringify(outcome.error)}`);
  assert.equal(outcome.error.name, 'BloomgateError');
}

/** A listed password may be answered "breached" or fail; anything else is wrong. */
function assertNotClean(outcome, what) {
  if (outcome.result) assert.equal(outcome.result.breached ?? outcome.result.listed, true, `${what}: ${JSON.stringify(outcome.result)}`);
  else assert.equal(outcome.error.code, 'E_ESCALATION', `${what}: ${JSON.stringify(outcome.error)}`);
}

/**
 * The same tests for every host that serves the exports to the page.
 * `host()` gives { endpoints, pageUrl, log }, `log()` what reached the host as
 * { method, path, addPadding } (addPadding undefined when the host cannot see headers).
 */
function hostTests(host, tabOf) {
  // nginx writes its access log after the reply: read until two reads 100 ms apart agree.
  const settled = async () => {
    let seen = await host().log();
    for (let i = 0; i < 50; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const again = await host().log();
      if (again.length === seen.length) break;
      seen = again;
    }
    return seen;
  };
  /** The engine's one tab, navigated to the page again: a fresh document for each test. */
  const withPage = async (fn) => fn(await loadTestPage(tabOf(), host().pageUrl));

  it('a listed password is breached, with its count', () => withPage(async (page) => {
    for (const { password, count } of lists.listedPasswords) {
      const outcome = await check(page, 'password', password, host().endpoints.range);
      assert.deepEqual(outcome, { result: { breached: true, count, escalated: true, confirmed: true, minCount: 1 } }, password);
    }
  }));

  it('a clean password the filter says "maybe" for is breached: false, believed because the manifest names the list', () => withPage(async (page) => {
    const before = (await settled()).length;
    for (const password of Object.values(lists.cleanPasswords)) {
      const outcome = await check(page, 'password', password, host().endpoints.range);
      assert.deepEqual(outcome, { result: { breached: false, count: 0, escalated: true, confirmed: true, minCount: 1 } }, password);
    }
    const seen = (await settled()).slice(before);
    const path = new URL(host().endpoints.range).pathname;
    assert.deepEqual(seen.filter((r) => r.path === `${path}/manifest.json`).map((r) => r.method), ['GET'], 'the manifest is fetched once per page');
    for (const password of Object.values(lists.cleanPasswords)) {
      const ranges = seen.filter((r) => r.path === `${path}/${sha1Hex(password).slice(0, 5)}`);
      assert.deepEqual(ranges.map((r) => r.method), ['GET'], `${password}: one GET of its range, no preflight`);
      if (ranges[0].addPadding !== undefined) assert.equal(ranges[0].addPadding, '', 'no Add-Padding to an unpadded static export');
    }
    assert.deepEqual(seen.filter((r) => r.method === 'OPTIONS'), []);
  }));

  it('a padded export (manifest padding \'static\') is read without Add-Padding, so without a preflight', () => withPage(async (page) => {
    const before = (await settled()).length;
    for (const { password, count } of lists.listedPasswords) {
      const outcome = await check(page, 'password', password, host().endpoints.rangePadded);
      assert.deepEqual(outcome, { result: { breached: true, count, escalated: true, confirmed: true, minCount: 1 } }, password);
    }
    for (const password of Object.values(lists.cleanPasswords)) {
      const outcome = await check(page, 'password', password, host().endpoints.rangePadded);
      assert.deepEqual(outcome, { result: { breached: false, count: 0, escalated: true, confirmed: true, minCount: 1 } }, password);
    }
    const seen = (await settled()).slice(before);
    assert.deepEqual(seen.filter((r) => r.method !== 'GET'), []);
    for (const request of seen) if (request.addPadding !== undefined) assert.equal(request.addPadding, '', request.path);
  }));

  it('an export whose manifest is missing (cut short) is an E_ESCALATION error for a clean password, never clean', () => withPage(async (page) => {
    for (const password of Object.values(lists.cleanPasswords)) {
      assertEscalationError(await check(page, 'password', password, host().endpoints.rangeHalf), password);
      // Cross-origin, the default's Add-Padding preflight already fails on these hosts; without
      // padding there is no preflight, and the trust rule itself must refuse the reply.
      const unpadded = await check(page, 'password', password, host().endpoints.rangeHalf, { addPadding: false });
      assertEscalationError(unpadded, `${password} with addPadding: false`);
      assert.match(unpadded.error.message, /has no bloomgate manifest/, password);
    }
    for (const { password } of lists.listedPasswords) {
      assertNotClean(await check(page, 'password', password, host().endpoints.rangeHalf), password);
    }
  }));

  it('an empty or non-existent export directory is an E_ESCALATION error, never clean', () => withPage(async (page) => {
    for (const endpoint of [host().endpoints.rangeEmpty, host().endpoints.rangeMissing]) {
      for (const password of Object.values(lists.cleanPasswords)) {
        assertEscalationError(await check(page, 'password', password, endpoint), `${password} at ${endpoint}`);
      }
    }
    for (const endpoint of [host().endpoints.hashesEmpty, host().endpoints.hashesMissing]) {
      assertEscalationError(await check(page, 'url', lists.cleanUrl, endpoint), `${lists.cleanUrl} at ${endpoint}`);
      assertEscalationError(await check(page, 'url', lists.listedUrl.url, endpoint), `${lists.listedUrl.url} at ${endpoint}`);
    }
  }));

  it('a URL export: a listed URL is listed; a clean "maybe" URL is not (its files are 404, believed because the manifest says notFound \'empty\')', () => withPage(async (page) => {
    const listed = await check(page, 'url', lists.listedUrl.url, host().endpoints.hashes);
    assert.deepEqual(listed, { result: { listed: true, expression: lists.listedUrl.expression, escalated: true, confirmed: true } });
    const before = (await settled()).length;
    const clean = await check(page, 'url', lists.cleanUrl, host().endpoints.hashes);
    assert.deepEqual(clean, { result: { listed: false, expression: null, escalated: true, confirmed: true } });
    const path = new URL(host().endpoints.hashes).pathname;
    const seen = (await settled()).slice(before).filter((r) => r.path.startsWith(`${path}/`));
    assert.deepEqual(seen.map((r) => `${r.method} ${r.path}`).sort(), cleanUrlPrefixes.map((p) => `GET ${path}/${p}`).sort(),
      'one GET per candidate prefix (the manifest was fetched for the listed URL already), no preflight');
    for (const request of seen) if (request.status !== undefined) assert.equal(request.status, 404, request.path);
  }));

  it('a URL export without its manifest is an E_ESCALATION error, for clean and listed URLs alike', () => withPage(async (page) => {
    assertEscalationError(await check(page, 'url', lists.cleanUrl, host().endpoints.hashesHalf), lists.cleanUrl);
    assertEscalationError(await check(page, 'url', lists.listedUrl.url, host().endpoints.hashesHalf), lists.listedUrl.url);
  }));
}

const nginxLine = (line) => {
  const [method, path, padding, , status] = line.split(' ');
  return { method, path, addPadding: padding.slice('add-padding='.length).replace(/^-$/, ''), status: Number(status) };
};
const pythonLine = (line) => {
  const [method, path, status] = line.split(' ');
  return { method, path, status: Number(status) };
};

describe('export-ranges output on ordinary static hosts', { timeout: 900000 }, () => {
  describe('what the hosts send (read by Node, no browser)', () => {
    it('nginx serves the range files as the snippet says: text/plain, CORS, nosniff (stock nginx would send application/octet-stream)', { skip: hasNginx() ? false : 'no nginx (BG_NGINX)' }, async () => {
      const prefix = sha1Hex(lists.listedPasswords[0].password).slice(0, 5);
      const response = await fetch(`${nginx.origins[0]}/range/${prefix}`);
      assert.equal(response.status, 200);
      assert.match(response.headers.get('content-type'), /^text\/plain\b/);
      assert.equal(response.headers.get('access-control-allow-origin'), '*');
      assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
      assert.ok((await response.text()).includes(sha1Hex(lists.listedPasswords[0].password).slice(5)));
      const missing = await fetch(`${nginx.origins[1]}/hashes/${cleanUrlPrefixes[0]}`);
      assert.equal(missing.status, 404);
      assert.equal(missing.headers.get('access-control-allow-origin'), '*', 'a 404 must carry CORS too, or the browser cannot read "none"');
    });

    it('python3 -m http.server sends extension-less files as application/octet-stream with no CORS headers (what the checks read)', { skip: python ? false : 'no python3 (BG_PYTHON)' }, async () => {
      const prefix = sha1Hex(lists.listedPasswords[0].password).slice(0, 5);
      const response = await fetch(`${pythonHost.origin}/pw/range/${prefix}`);
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('content-type'), 'application/octet-stream');
      assert.equal(response.headers.get('access-control-allow-origin'), null);
      await response.body.cancel();
    });

    it('the CORS-only host answers a preflight with 405 and no CORS headers (so any check that needed one would fail)', async () => {
      const response = await fetch(`${corsOnly.origin}/pw/range/manifest.json`, {
        method: 'OPTIONS',
        headers: { origin: state.pageOrigin, 'access-control-request-method': 'GET', 'access-control-request-headers': 'add-padding' },
      });
      assert.equal(response.status, 405);
      assert.equal(response.headers.get('access-control-allow-origin'), null);
      await response.body.cancel();
    });
  });

  for (const name of ENGINES) {
    describe(name, { skip: chosen.includes(name) ? skipUnless(name) : `not in BG_ENGINES=${process.env.BG_ENGINES}` }, () => {
      let engine;
      let tab;
      const tabOf = () => tab;

      before(async () => {
        engine = await launchEngine(name);
        tab = await engine.newPage(); // one tab, navigated for each test: WebDriver ends a WebKit session with its last window
      }, { timeout: 120000 });

      after(async () => {
        await engine?.close();
      });

      describe('Debian nginx: default configuration plus bloomgate-nginx.conf, page on another origin', { skip: hasNginx() ? false : 'no nginx (BG_NGINX)' }, () => {
        hostTests(() => ({
          pageUrl: `${state.pageOrigin}/`,
          endpoints: endpointsOf(nginx.origins[0], nginx.origins[1]),
          log: async () => (await nginx.requests()).map(nginxLine),
        }), tabOf);
      });

      describe('python3 -m http.server, page on the same origin', { skip: python ? false : 'no python3 (BG_PYTHON)' }, () => {
        hostTests(() => ({
          pageUrl: `${pythonHost.origin}/page/`,
          endpoints: endpointsOf(`${pythonHost.origin}/pw`, `${pythonHost.origin}/urls`),
          log: async () => pythonHost.requests().map(pythonLine),
        }), tabOf);
      });

      describe('python3 -m http.server, page on another origin (no CORS headers)', { skip: python ? false : 'no python3 (BG_PYTHON)' }, () => {
        it('every check is an E_ESCALATION error (the browser refuses the replies), never clean', async () => {
          const page = await loadTestPage(tab, `${state.pageOrigin}/`);
          const endpoints = endpointsOf(`${pythonHost.origin}/pw`, `${pythonHost.origin}/urls`);
          const seenBefore = pythonHost.requests().length;
          const items = [
            ...lists.listedPasswords.map((l) => ['password', l.password, endpoints.range]),
            ...Object.values(lists.cleanPasswords).map((p) => ['password', p, endpoints.range]),
            ['password', lists.cleanPasswords.emptyRange, endpoints.rangePadded],
            ['url', lists.listedUrl.url, endpoints.hashes],
            ['url', lists.cleanUrl, endpoints.hashes],
          ];
          for (const [kind, item, endpoint] of items) {
            const outcome = await check(page, kind, item, endpoint);
            assertEscalationError(outcome, `${item} at ${endpoint}`);
            assert.match(outcome.error.message, /manifest request to http:\/\/127\.0\.0\.1:\d+\/.*manifest\.json failed/, item);
          }
          // The requests did reach python and were answered; the browser withheld the replies for want of CORS:
          // the page's own fetch of the same manifest is refused with a TypeError (each engine words it its own way).
          const refused = await page.evaluate(async (url) => {
            try {
              await fetch(url);
              return 'read';
            } catch (error) {
              return error?.name;
            }
          }, `${endpoints.range}/manifest.json`);
          assert.equal(refused, 'TypeError');
          const seen = pythonHost.requests().slice(seenBefore);
          assert.ok(seen.some((line) => line === 'GET /pw/range/manifest.json 200'), seen.join('\n'));
          assert.ok(seen.some((line) => line === 'GET /urls/hashes/manifest.json 200'), seen.join('\n'));
        });
      });

      describe('a CORS-only host (Access-Control-Allow-Origin: * and nothing else, no preflight), page on another origin', () => {
        hostTests(() => ({
          pageUrl: `${state.pageOrigin}/`,
          endpoints: endpointsOf(`${corsOnly.origin}/pw`, `${corsOnly.origin}/urls`),
          log: async () => corsOnly.requests.map((r) => ({ method: r.method, path: new URL(r.url, 'http://x').pathname, addPadding: r.headers['add-padding'] ?? '' })),
        }), tabOf);
      });
    });
  }
});
