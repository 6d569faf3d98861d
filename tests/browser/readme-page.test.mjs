/**
 * The README's quick start "In a page", run as written in Chromium, Firefox and WebKit
 * (tests/browser/engines/), each meeting the same assertions:
 * its shell block builds passwords.bgf from a small breach dump (the inputs of
 * tests/js/helpers/snippets.mjs), and its browser block, byte for byte, is the
 * page's module script, with an import map pointing 'bloomgate' at the
 * package's js/index.js (what a bundler would resolve). The public range
 * service the snippet names is answered by the test, with padding as the real
 * one pads: each browser is launched with a proxy on 127.0.0.1 that answers
 * https://api.pwnedpasswords.com from a local TLS server with a throwaway
 * certificate (helpers/intercept.mjs; certificates unchecked), so the page's
 * request leaves each engine's network stack as it would for real.
 *
 *   - a clean password is answered in the page, with no request;
 *   - "password" (in the filter, seen 200 times), settled by leaving the field, is escalated
 *     with its 5-hex prefix only, and the field's validity message says how often it was seen;
 *   - "password-123" typed key by key at 400 ms a key with a 1.5 s pause midway (its
 *     prefixes "password" and "password-12" are in the filter too): no request while typing,
 *     exactly one, for its own prefix, once the field is left (issue 29).
 *
 * Run: node --test tests/browser/readme-page.test.mjs (needs openssl; the
 * browsers: tests/browser/engines/index.mjs).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { extname, join, normalize } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { ROOT, readerDirectory, snippetsOf } from '../js/helpers/snippets.mjs';
import { ENGINES, PAGE_CAPTURE, PAGE_CAPTURE_PATH, launchEngine, skipUnless } from './engines/index.mjs';
import { startInterceptor } from './helpers/intercept.mjs';
import { listenLocal } from './helpers/listen.mjs';

const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const section = README.slice(README.indexOf('### In a page'), README.indexOf('### In an extension'));
const blocks = snippetsOf(section);
const build = blocks.find((block) => block.marker?.kind === 'sh');
const script = blocks.find((block) => block.marker?.kind === 'browser');

const SHA1 = createHash('sha1').update('password').digest('hex').toUpperCase();
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.bgf': 'application/octet-stream' };

const FIELD = 'input[type=password]';
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const page = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>README quick start</title>
<script src="${PAGE_CAPTURE_PATH}"></script>
<script type="importmap">{ "imports": { "bloomgate": "/pkg/js/index.js" } }</script>
<script type="module" src="/app.js"></script></head>
<body><form><label>Password <input type="password" autocomplete="new-password"></label></form></body></html>
`;

/** A padded range reply as the public service sends it: the real rows, then count-0 rows to 900. */
function paddedReply(prefix) {
  const rows = prefix === SHA1.slice(0, 5) ? [`${SHA1.slice(5)}:200`] : [];
  while (rows.length < 900) rows.push(`${randomBytes(18).toString('hex').slice(0, 35).toUpperCase()}:0`);
  return rows.join('\r\n');
}

const rangeRequests = [];
let reader;
let site;
let proxy;

before(async () => {
  assert.ok(build && script, 'the section has a marked sh block and a browser block');
  reader = readerDirectory();
  const made = spawnSync('sh', ['-e', '-c', build.code], { cwd: reader.dir, env: reader.env, encoding: 'utf8' });
  assert.equal(made.status, 0, made.stderr);
  const filterFile = join(reader.dir, 'passwords.bgf');
  site = await listenLocal(createServer((req, res) => {
    const path = new URL(req.url, 'http://x').pathname;
    let file = null;
    let body = null;
    if (path === '/') body = page;
    else if (path === '/app.js') body = script.code;
    else if (path === PAGE_CAPTURE_PATH) body = PAGE_CAPTURE;
    else if (path === '/filters/passwords.bgf') file = filterFile;
    else if (path.startsWith('/pkg/js/') || path === '/pkg/wasm/bloomgate.wasm') {
      file = normalize(join(ROOT, path.slice('/pkg/'.length)));
      if (!file.startsWith(ROOT)) file = null;
    }
    if (body === null && (file === null || !existsSync(file))) {
      res.writeHead(404).end();
      return;
    }
    const type = file !== null ? TYPES[extname(file)] : path === '/' ? TYPES['.html'] : TYPES['.js'];
    res.writeHead(200, { 'Content-Type': type ?? 'text/plain' });
    res.end(body ?? readFileSync(file));
  }));
  proxy = await startInterceptor({
    'api.pwnedpasswords.com': (req, res) => {
      const cors = { 'Access-Control-Allow-Origin': '*', 'Access-Control-Allow-Headers': 'Add-Padding' };
      const path = new URL(req.url, 'https://api.pwnedpasswords.com').pathname;
      if (!path.startsWith('/range/')) return res.writeHead(404, cors).end();
      if (req.method === 'OPTIONS') return res.writeHead(204, cors).end();
      const prefix = path.split('/').pop();
      rangeRequests.push({ prefix, padding: req.headers['add-padding'] ?? null });
      return res.writeHead(200, { ...cors, 'Content-Type': 'text/plain' }).end(paddedReply(prefix));
    },
  });
});

after(async () => {
  await proxy?.close();
  await site?.close();
  if (reader) rmSync(reader.dir, { recursive: true, force: true });
});

for (const name of ENGINES) {
  describe(`README quick start "In a page", in ${name}`, { skip: skipUnless(name), timeout: 300000 }, () => {
    let engine;
    let tab;

    before(async () => {
      rangeRequests.length = 0;
      engine = await launchEngine(name, { proxy: proxy.url, acceptInsecureCerts: true });
      tab = await engine.newPage();
    });

    after(async () => {
      await engine?.close();
    });

    it('answers a clean password locally and a breached one by its 5-hex prefix; typed key by key, only the settled value escalates', async () => {
      await tab.goto(`${site.origin}/`);
      const message = () => tab.evaluate((selector) => document.querySelector(selector).validationMessage, FIELD);

      // The snippet attaches its listener once the filter has loaded: type until it answers.
      const deadline = Date.now() + 60000;
      for (;;) {
        await tab.fill(FIELD, '');
        await tab.fill(FIELD, 'password');
        await tab.evaluate((selector) => document.querySelector(selector).blur(), FIELD); // settled: change
        const answered = await tab.waitFor((selector) => document.querySelector(selector).validationMessage !== '', FIELD, { timeout: 2000 })
          .then(() => true, () => false);
        if (answered || Date.now() > deadline) break;
      }
      assert.deepEqual(await tab.errors(), []);
      assert.equal(await message(), 'Seen 200 times in data breaches: choose another');
      assert.ok(rangeRequests.length >= 1);
      for (const request of rangeRequests) assert.deepEqual(request, { prefix: SHA1.slice(0, 5), padding: 'true' });

      const before = rangeRequests.length;
      await tab.fill(FIELD, 'correct horse battery staple 42');
      await tab.evaluate((selector) => document.querySelector(selector).blur(), FIELD);
      await tab.waitFor((selector) => document.querySelector(selector).validationMessage === '', FIELD, { timeout: 10000 });
      await sleep(500);
      assert.equal(rangeRequests.length, before, 'a clean password sends no request');
      assert.deepEqual(await tab.errors(), []);

      // Typed at 400 ms a key, with a 1.5 s pause midway: listed prefixes are answered locally.
      await tab.fill(FIELD, '');
      await tab.click(FIELD);
      const typed = 'password-123';
      for (const [i, key] of Array.from(typed).entries()) {
        await tab.keys(key);
        await sleep(i === typed.length / 2 - 1 ? 1500 : 400);
      }
      assert.equal(await tab.evaluate((selector) => document.querySelector(selector).value, FIELD), typed);
      assert.equal(rangeRequests.length, before, 'no request while typing');
      await tab.evaluate((selector) => document.querySelector(selector).blur(), FIELD);
      const deadline2 = Date.now() + 10000;
      while (rangeRequests.length === before && Date.now() < deadline2) await sleep(50);
      await sleep(500);
      const prefix = createHash('sha1').update(typed).digest('hex').toUpperCase().slice(0, 5);
      assert.deepEqual(rangeRequests.slice(before).map((request) => request.prefix), [prefix], 'one request, for the settled value');
      assert.deepEqual(await tab.errors(), []);
    });
  });
}
