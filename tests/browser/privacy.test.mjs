/**
 * End-to-end (issue 9 item 4, issue 21 item 1): what an escalation sends, captured
 * server-side, in Chromium, Firefox and WebKit (tests/browser/engines/), the same assertions
 * in each.
 *
 * The app origin serves a signup page at /signup/?email=alice%40example.com
 * behind HTTP Basic auth (realm over /signup/), sets an HttpOnly session
 * cookie, and the page adds one of its own with document.cookie. The range and
 * hashes endpoints are the reference server (js/server.js, with
 * Cache-Control: public, max-age=3600 on their replies) mounted under the
 * same directory (/signup/range, /signup/hashes), so an ordinary same-origin
 * fetch there carries the cookies, the full page URL as Referer and the
 * Authorization header; the tests show that (a control), then that the
 * library's requests carry none of them and nothing of the hash past the
 * prefix. A cross-origin redirect is not followed (the other origin, which
 * would answer correctly, receives nothing) and is an E_ESCALATION error.
 * Repeats reach the server every time although the browser would have
 * answered them from its cache (control: an ordinary fetch of the same URL is
 * answered from the cache the second time), and the library's requests leave
 * nothing in the cache either.
 *
 * Every request that reaches a test server is recorded (method, URL, all
 * headers). The browser's own /favicon.ico requests (Firefox and WebKit ask for one after a
 * text/plain document) are left out of what the assertions count: the library never makes them.
 *
 * Run: node --test tests/browser/privacy.test.mjs   (some engines: BG_ENGINES=firefox,webkit)
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';

import { urlExpressions } from '../../js/index.js';
import { createReferenceServer } from '../../js/server.js';
import { launchEngine } from './engines/index.mjs';
import { eachEngine, openReady } from './helpers/each-engine.mjs';
import { buildLists, candidatePrefixes, sha1Hex, sha256Hex } from './helpers/fixtures.mjs';
import { startRecorder } from './helpers/hosts.mjs';
import { check, libraryMounts, PAGE_HTML } from './helpers/page.mjs';

const USER = 'alice';
const PASS = 'basic-auth-secret-4711';
const AUTHORIZATION = `Basic ${Buffer.from(`${USER}:${PASS}`).toString('base64')}`;
const SESSION = 'session-7f3a9c1e5b2d';
const PAGE_COOKIE = 'prefs-theme-dark-42';
const PAGE_PATH = '/signup/?email=alice%40example.com';

let base;
let lists;
let ref;
let app;
let elsewhere;
let crossOrigin;

/** app: the signup page and the endpoints under /signup/; everything else is the reference server. */
function appRoute(req, res) {
  const url = new URL(req.url, 'http://x');
  const path = url.pathname;
  if (path === '/signup/' || path === '/signup/echo') {
    if (req.headers.authorization !== AUTHORIZATION) {
      res.writeHead(401, { 'www-authenticate': 'Basic realm="signup"', 'content-type': 'text/plain', 'cache-control': 'no-store' });
      return res.end('sign in\n');
    }
    if (path === '/signup/echo') {
      res.writeHead(200, { 'content-type': 'text/plain', 'cache-control': 'no-store' });
      return res.end('ok\n');
    }
    res.writeHead(200, {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'set-cookie': `session=${SESSION}; Path=/; HttpOnly; SameSite=Lax`,
    });
    return res.end(PAGE_HTML.replace('<meta charset="utf-8">', '<meta charset="utf-8">\n  <link rel="icon" href="data:,">'));
  }
  let match;
  if ((match = /^\/signup(\/(?:range|hashes)\/.*)$/.exec(path))) {
    req.url = `${match[1]}${url.search}`;
    return ref.emit('request', req, res);
  }
  // /moved/: the manifest is served, every other file is a redirect to another origin.
  if ((match = /^\/moved(\/(?:range|hashes)\/manifest\.json)$/.exec(path))) {
    req.url = match[1];
    return ref.emit('request', req, res);
  }
  if ((match = /^\/moved(\/(?:range|hashes)\/.+)$/.exec(path))) {
    res.writeHead(302, { location: `${elsewhere.origin}${match[1]}`, 'access-control-allow-origin': '*', 'cache-control': 'no-store' });
    return res.end();
  }
  // /moved-all/: the manifest too (a 307, which keeps method and headers).
  if ((match = /^\/moved-all(\/(?:range|hashes)\/.+)$/.exec(path))) {
    res.writeHead(307, { location: `${elsewhere.origin}${match[1]}`, 'access-control-allow-origin': '*', 'cache-control': 'no-store' });
    return res.end();
  }
  return ref.emit('request', req, res);
}

before(async () => {
  base = await mkdtemp(join(tmpdir(), 'bloomgate-privacy-'));
  lists = await buildLists(join(base, 'lists'));
  const { files } = lists;
  ref = await createReferenceServer({
    filters: { passwords: files.passwordFilter, urls: files.urlFilter },
    passwordStore: files.passwordStore,
    urlStore: files.urlStore,
    staticDir: libraryMounts(),
    maxAge: 3600,
    // Replies a browser may cache (the server's default, 'public, no-cache', revalidates): the
    // library must still never answer from the HTTP cache.
    answerCacheControl: 'public, max-age=3600',
  });
  app = await startRecorder(appRoute);
  // Both would answer every request correctly (they are the same reference server): a request there is a leak, not a failure.
  elsewhere = await startRecorder((req, res) => ref.emit('request', req, res));
  crossOrigin = await startRecorder((req, res) => ref.emit('request', req, res));
}, { timeout: 240000 });

after(async () => {
  await app?.close();
  await elsewhere?.close();
  await crossOrigin?.close();
  await ref?.stores.passwordStore?.close();
  await ref?.stores.urlStore?.close();
  if (base) await rm(base, { recursive: true, force: true });
});

/**
 * Sign in: Basic auth primed by a visit with the credentials in the URL; the reply sets the
 * server's HttpOnly session cookie.
 */
async function signIn(page) {
  const withCredentials = new URL('/signup/echo', app.origin);
  withCredentials.username = USER;
  withCredentials.password = PASS;
  const start = app.requests.length;
  await page.goto(withCredentials.href);
  assert.equal(await page.evaluate(() => document.body.textContent.trim()), 'ok', 'signed in');
  assert.ok(since(app, start).some((r) => r.url === '/signup/echo' && r.headers.authorization === AUTHORIZATION), 'the credentials were sent');
}

/** The signup page, signed in, loaded afresh in `page` (nothing of the library survives), with a cookie the page sets. */
async function loadSignup(page) {
  await openReady(page, `${app.origin}${PAGE_PATH}`);
  await page.evaluate((value) => { document.cookie = `prefs=${value}; Path=/; SameSite=Lax`; }, PAGE_COOKIE);
  assert.equal(await page.evaluate(() => location.href), `${app.origin}${PAGE_PATH}`);
  return page;
}

/**
 * Whether the engine, as launched here, answers an ordinary fetch() from its HTTP cache.
 * WebKit's automation session is an ephemeral data store: it has no network (disk) cache, and
 * its memory cache does not serve fetch(), so there the controls that show the cache holding a
 * reply see the request twice; what the library must do (reach the server every time, with
 * Cache-Control and Pragma no-cache) is asserted alike in every engine.
 */
const FETCH_CACHED = { chromium: true, firefox: true, webkit: false };

/** What reached `recorder` after its first `count` requests, the browser's own favicon requests left out. */
const since = (recorder, count) => recorder.requests.slice(count).filter((r) => r.url !== '/favicon.ico');

/** An ordinary fetch from the page (default credentials, referrer policy and cache mode). */
function plainFetch(page, url, headers = {}) {
  return page.evaluate(async ({ url, headers }) => {
    const response = await fetch(url, { headers });
    return { status: response.status, text: await response.text() };
  }, { url, headers });
}

const ALLOWED_HEADERS = /^(host|connection|user-agent|accept|accept-encoding|accept-language|pragma|cache-control|add-padding|priority|origin|sec-fetch-(site|mode|dest)|sec-ch-ua(-mobile|-platform)?)$/;

/** Everything the request carries, lowercased: a secret found here has left the page. */
function wire(request) {
  return [`${request.method} ${request.url}`, ...Object.entries(request.headers).map(([name, value]) => `${name}: ${value}`)]
    .join('\n').toLowerCase();
}

/**
 * Assert a recorded escalation request is private: the path is the endpoint's
 * prefix or manifest and nothing else, no Cookie / Referer / Authorization, no
 * header outside the browser's ordinary set, and none of `secrets` anywhere.
 */
function assertPrivate(request, { path, pageOrigin = null, secrets }) {
  const where = `${request.method} ${request.url}\n${JSON.stringify(request.headers, null, 2)}`;
  assert.match(request.url, path, where);
  for (const name of ['cookie', 'referer', 'authorization']) assert.equal(request.headers[name], undefined, `${name} sent:\n${where}`);
  for (const name of Object.keys(request.headers)) assert.match(name, ALLOWED_HEADERS, `unexpected header ${name}:\n${where}`);
  // Same origin: no Origin header. Cross origin: the origin alone (CORS needs it), never a path.
  assert.equal(request.headers.origin, pageOrigin ?? undefined, where);
  const text = wire(request);
  for (const secret of secrets) assert.equal(text.includes(secret.toLowerCase()), false, `'${secret}' left the page:\n${where}`);
}

/** What must never leave with a password check: the password, its hash past 5 hex digits, the page's secrets. */
function passwordSecrets(passwords) {
  const secrets = [SESSION, PAGE_COOKIE, PASS, AUTHORIZATION.slice(6), 'alice', 'example.com', 'signup/?'];
  for (const password of passwords) {
    const hash = sha1Hex(password);
    secrets.push(password, hash.slice(0, 6), hash.slice(5));
  }
  return secrets;
}

/** Likewise for URLs: the URL, its hosts, any expression's SHA-256 past 8 hex digits. */
function urlSecrets(urls) {
  const secrets = [SESSION, PAGE_COOKIE, PASS, AUTHORIZATION.slice(6), 'alice', 'example.com', 'signup/?', 'bob'];
  for (const url of urls) {
    secrets.push(new URL(url).hostname);
    for (const expression of urlExpressions(url)) {
      const hash = sha256Hex(expression);
      secrets.push(hash.slice(0, 9), hash.slice(8));
    }
  }
  return secrets;
}

eachEngine('escalation privacy, captured server-side', { timeout: 240000 }, (name) => {
  let engine;
  let tab;
  /** The signup page loaded afresh in the engine's one tab, signed in. */
  const openSignup = () => loadSignup(tab);
  before(async () => {
    engine = await launchEngine(name);
    tab = await engine.newPage();
    await signIn(tab);
  });
  after(async () => {
    await engine?.close();
  });

  it('same-origin range and manifest requests carry no Cookie, Referer or Authorization, and only the 5-hex prefix', async (t) => {
    const page = await openSignup();
    const rangeUrl = `${app.origin}/signup/range`;
    const [listed] = lists.listedPasswords;
    const passwords = [listed.password, ...Object.values(lists.cleanPasswords)];

    // Control: an ordinary same-origin fetch under /signup/ carries all three.
    const start = app.requests.length;
    assert.equal((await plainFetch(page, `${app.origin}/signup/echo`)).status, 200);
    const control = since(app, start).find((r) => r.url === '/signup/echo');
    assert.match(control.headers.cookie, new RegExp(`session=${SESSION}`));
    assert.match(control.headers.cookie, new RegExp(`prefs=${PAGE_COOKIE}`));
    assert.equal(control.headers.referer, `${app.origin}${PAGE_PATH}`);
    assert.equal(control.headers.authorization, AUTHORIZATION);

    const first = app.requests.length;
    assert.deepEqual(await check(page, 'password', listed.password, rangeUrl),
      { result: { breached: true, count: listed.count, escalated: true, confirmed: true, minCount: 1 } });
    for (const password of Object.values(lists.cleanPasswords)) {
      assert.deepEqual(await check(page, 'password', password, rangeUrl),
        { result: { breached: false, count: 0, escalated: true, confirmed: true, minCount: 1 } }, password);
    }
    const seen = since(app, first);
    assert.deepEqual(seen.map((r) => r.url), [
      '/signup/range/manifest.json',
      ...passwords.map((password) => `/signup/range/${sha1Hex(password).slice(0, 5)}`),
    ], 'the manifest once, then one request per check');
    t.diagnostic(`a range request as the server saw it: ${JSON.stringify(seen[1].headers)}`);
    const secrets = passwordSecrets(passwords);
    for (const request of seen) assertPrivate(request, { path: /^\/signup\/range\/(manifest\.json|[0-9A-F]{5})$/, secrets });
    // The reference server pads on request: 'auto' asks it to, and that header is all the library adds.
    assert.deepEqual(seen.filter((r) => r.url !== '/signup/range/manifest.json').map((r) => r.headers['add-padding']), passwords.map(() => 'true'));
  });

  it('same-origin hashes and manifest requests for checkUrl carry none of them either, and only 8-hex prefixes', async () => {
    const page = await openSignup();
    const hashesUrl = `${app.origin}/signup/hashes`;
    const first = app.requests.length;
    assert.deepEqual(await check(page, 'url', lists.listedUrl.url, hashesUrl),
      { result: { listed: true, expression: lists.listedUrl.expression, escalated: true, confirmed: true } });
    assert.deepEqual(await check(page, 'url', lists.cleanUrl, hashesUrl),
      { result: { listed: false, expression: null, escalated: true, confirmed: true } });
    const seen = since(app, first);
    const prefixes = [
      ...await candidatePrefixes(lists.listedUrl.url, lists.files.urlFilter),
      ...await candidatePrefixes(lists.cleanUrl, lists.files.urlFilter),
    ];
    assert.deepEqual(seen.map((r) => r.url), ['/signup/hashes/manifest.json', ...prefixes.map((p) => `/signup/hashes/${p}`)]);
    const secrets = urlSecrets([lists.listedUrl.url, lists.cleanUrl]);
    for (const request of seen) assertPrivate(request, { path: /^\/signup\/hashes\/(manifest\.json|[0-9a-f]{8})$/, secrets });
    for (const request of seen) assert.equal(request.headers['add-padding'], undefined, 'URL checks send no padding header');
  });

  it('a cross-origin endpoint on the same host (cookies are per host, not per port) gets no cookie and only the page origin', async () => {
    const page = await openSignup();
    const [listed] = lists.listedPasswords;
    const first = crossOrigin.requests.length;
    assert.deepEqual(await check(page, 'password', listed.password, `${crossOrigin.origin}/range`),
      { result: { breached: true, count: listed.count, escalated: true, confirmed: true, minCount: 1 } });
    assert.deepEqual(await check(page, 'url', lists.cleanUrl, `${crossOrigin.origin}/hashes`),
      { result: { listed: false, expression: null, escalated: true, confirmed: true } });
    const seen = since(crossOrigin, first);
    assert.ok(seen.some((r) => r.method === 'OPTIONS'), 'Add-Padding to another origin is preflighted');
    const secrets = [...passwordSecrets([listed.password]), ...urlSecrets([lists.cleanUrl])];
    for (const request of seen) {
      if (request.method === 'OPTIONS') {
        assert.equal(request.headers.cookie, undefined);
        assert.equal(request.headers.referer, undefined, JSON.stringify(request.headers));
        continue;
      }
      assertPrivate(request, { path: /^\/(range\/([0-9A-F]{5}|manifest\.json)|hashes\/([0-9a-f]{8}|manifest\.json))$/, pageOrigin: app.origin, secrets });
    }
  });

  it('a redirect to another origin is not followed: that origin receives nothing and the check is an E_ESCALATION error', async () => {
    const page = await openSignup();
    const [listed] = lists.listedPasswords;
    const cases = [
      ['password', listed.password, `${app.origin}/moved/range`, `/moved/range/${sha1Hex(listed.password).slice(0, 5)}`],
      ['password', lists.cleanPasswords.emptyRange, `${app.origin}/moved-all/range`, '/moved-all/range/manifest.json'],
      ['url', lists.listedUrl.url, `${app.origin}/moved/hashes`, `/moved/hashes/${(await candidatePrefixes(lists.listedUrl.url, lists.files.urlFilter))[0]}`],
      ['url', lists.cleanUrl, `${app.origin}/moved-all/hashes`, '/moved-all/hashes/manifest.json'],
    ];
    for (const [kind, item, endpoint, redirected] of cases) {
      const first = app.requests.length;
      const outcome = await check(page, kind, item, endpoint);
      assert.equal(outcome.result, undefined, `${item}: ${JSON.stringify(outcome.result)}`);
      assert.equal(outcome.error.code, 'E_ESCALATION', JSON.stringify(outcome.error));
      assert.match(outcome.error.message, /redirect/, outcome.error.message);
      assert.equal(since(app, first).at(-1).url, redirected, 'the redirecting request was the last one made');
    }
    await new Promise((resolve) => setTimeout(resolve, 300)); // anything in flight would have arrived
    assert.deepEqual(since(elsewhere, 0), [], 'the redirect target received requests');
  });

  it('repeated checks are never answered from the HTTP cache, though it holds the reply (Cache-Control: public, max-age=3600)', async () => {
    const page = await openSignup();
    const rangeUrl = `${app.origin}/signup/range`;
    const [, listed] = lists.listedPasswords;
    const path = `/signup/range/${sha1Hex(listed.password).slice(0, 5)}`;
    const start = app.requests.length;
    const count = (url) => since(app, start).filter((r) => r.url === url).length;

    // Control: the reply is cacheable, and the browser caches it for an ordinary fetch
    // (same URL, same Add-Padding header the library sends: the reply varies on it).
    const control = await plainFetch(page, `${app.origin}${path}`, { 'Add-Padding': 'true' });
    assert.equal(control.status, 200);
    assert.ok(control.text.includes(sha1Hex(listed.password).slice(5)));
    await plainFetch(page, `${app.origin}${path}`, { 'Add-Padding': 'true' });
    assert.equal(count(path), FETCH_CACHED[name] ? 1 : 2, FETCH_CACHED[name]
      ? 'the second ordinary fetch came from the browser cache' : `${name} answers no fetch() from its cache here`);
    const stored = since(app, start).find((r) => r.url === path);
    assert.ok(stored.headers.cookie, 'the control was an ordinary request (with cookies)');

    // The library: every repeat reaches the server, with cache-busting request headers.
    const first = app.requests.length;
    for (let i = 0; i < 3; i++) {
      assert.deepEqual(await check(page, 'password', listed.password, rangeUrl),
        { result: { breached: true, count: listed.count, escalated: true, confirmed: true, minCount: 1 } });
    }
    const seen = since(app, first);
    assert.deepEqual(seen.map((r) => r.url), ['/signup/range/manifest.json', path, path, path],
      'manifest once (kept in memory for the page), the range on every check');
    for (const request of seen) {
      assert.equal(request.headers['cache-control'], 'no-cache', JSON.stringify(request.headers));
      assert.equal(request.headers.pragma, 'no-cache', JSON.stringify(request.headers));
    }

    // ... and leaves nothing in the cache: after the library's checks of a fresh prefix,
    // an ordinary fetch of it still goes to the server.
    const clean = lists.cleanPasswords.sharedRange;
    const cleanPath = `/signup/range/${sha1Hex(clean).slice(0, 5)}`;
    const before = count(cleanPath);
    for (let i = 0; i < 2; i++) {
      assert.deepEqual(await check(page, 'password', clean, rangeUrl),
        { result: { breached: false, count: 0, escalated: true, confirmed: true, minCount: 1 } });
    }
    assert.equal(count(cleanPath), before + 2);
    await plainFetch(page, `${app.origin}${cleanPath}`, { 'Add-Padding': 'true' });
    assert.equal(count(cleanPath), before + 3, 'the library\'s replies were not stored in the HTTP cache');
  });

  it('repeated checkUrl calls are never answered from the HTTP cache either', async () => {
    const page = await openSignup();
    const hashesUrl = `${app.origin}/signup/hashes`;
    const [prefix] = await candidatePrefixes(lists.listedUrl.url, lists.files.urlFilter);
    const path = `/signup/hashes/${prefix}`;
    const start = app.requests.length;
    const count = (url) => since(app, start).filter((r) => r.url === url).length;
    await plainFetch(page, `${app.origin}${path}`);
    await plainFetch(page, `${app.origin}${path}`);
    assert.equal(count(path), FETCH_CACHED[name] ? 1 : 2, FETCH_CACHED[name]
      ? 'the second ordinary fetch came from the browser cache' : `${name} answers no fetch() from its cache here`);
    const first = app.requests.length;
    for (let i = 0; i < 3; i++) {
      assert.deepEqual(await check(page, 'url', lists.listedUrl.url, hashesUrl),
        { result: { listed: true, expression: lists.listedUrl.expression, escalated: true, confirmed: true } });
    }
    assert.deepEqual(since(app, first).map((r) => r.url), ['/signup/hashes/manifest.json', path, path, path],
      'manifest once (kept in memory for the page), the hashes on every check');
  });
});
