// The signup page in headless Chromium: the local answer on every keystroke,
// escalation only on "maybe", only a 5-hex prefix on the wire, and a page that
// stays useful when the server is gone.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { BloomFilter } from '../../js/index.js';
import { startReferenceServer } from '../../js/server.js';
import { writeStore } from '../../js/store.js';
import { commonPasswords, root, siteMounts } from '../../examples/site.mjs';
import { launch } from './browser.mjs';

let dir;
let server;
let base;
let browser;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'bloomgate-signup-'));
  const passwords = await commonPasswords();
  // One list id for the filter and its store: the server's manifest must name the filter's list.
  const listId = createHash('sha256').update('signup test list').digest('hex').slice(0, 32);
  const filter = await BloomFilter.create({ capacity: passwords.length, errorRate: 0.001, keyEncoding: 'sha1', listId });
  const records = passwords.map((password, rank) => {
    const hash = createHash('sha1').update(password).digest();
    filter.addKey(hash);
    return { hash, count: passwords.length - rank };
  });
  await writeFile(join(dir, 'passwords.bgf'), filter.serialize());
  filter.free();
  await writeFile(join(dir, 'passwords.bgs'), writeStore(records, { hashType: 'sha1', listId }));
  ({ server, url: base } = await startReferenceServer({
    filters: { passwords: join(dir, 'passwords.bgf') },
    passwordStore: join(dir, 'passwords.bgs'),
    staticDir: siteMounts(),
  }));
  browser = await launch();
});

after(async () => {
  await browser?.close();
  if (server.listening) await new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); });
  await rm(dir, { recursive: true, force: true });
});

async function openSignup() {
  const page = await browser.context.newPage();
  const ranges = [];
  page.on('request', (request) => {
    if (new URL(request.url()).pathname.startsWith('/range/')) ranges.push(request.url());
  });
  await page.goto(`${base}/signup/`);
  await page.waitForFunction(() => document.body.dataset.filter === 'ready' && document.body.dataset.strength === 'ready');
  return { page, ranges };
}

test('a long clean password, typed key by key, shows "not found" and sends no range request', async () => {
  const { page, ranges } = await openSignup();
  await page.type('#password', 'violet-harbor-quartz-lantern-8812', { delay: 40 });
  await page.waitForFunction(() => document.querySelector('#breach-status').textContent.includes('Not found'));
  await page.waitForTimeout(600); // past the debounce: nothing may be pending
  assert.equal(await page.textContent('#breach-status'), 'Not found in known breaches.');
  assert.match(await page.textContent('#strength-text'), /^Strength: (strong|very strong)$/);
  assert.deepEqual(ranges, []);
  await page.close();
});

test('a common password shows "found" after exactly one range request carrying only a 5-hex prefix', async () => {
  const { page, ranges: requests } = await openSignup();
  await page.type('#password', 'password1', { delay: 40 });
  await page.waitForFunction(() => document.querySelector('#breach-status').textContent.startsWith('Found in'));
  await page.waitForTimeout(600);
  assert.match(await page.textContent('#breach-status'), /^Found in [\d,]+ breaches/);
  assert.match(await page.textContent('#strength-text'), /very weak|weak/);
  // The endpoint's manifest once per page (it proves the server holds this filter's list), then the range.
  const manifests = requests.filter((url) => new URL(url).pathname === '/range/manifest.json');
  const ranges = requests.filter((url) => new URL(url).pathname !== '/range/manifest.json');
  assert.ok(manifests.length <= 1, requests.join('\n'));
  assert.equal(ranges.length, 1, requests.join('\n'));
  const prefix = createHash('sha1').update('password1').digest('hex').slice(0, 5).toUpperCase();
  assert.equal(new URL(ranges[0]).pathname, `/range/${prefix}`);
  assert.equal(new URL(ranges[0]).search, '');
  await page.screenshot({ path: join(root, 'docs', 'images', 'signup-meter.png') });
  await page.close();
});

test('a filter that fails to download or verify leaves the page usable and says why', async () => {
  for (const fault of ['corrupt', 'network']) {
    const page = await browser.context.newPage();
    await page.route('**/filters/passwords.bgf', async (route) => {
      if (fault === 'network') return route.abort('connectionrefused');
      const response = await route.fetch();
      const body = Buffer.from(await response.body());
      body[body.length - 1] ^= 0xff; // one flipped payload byte: the checksum must catch it
      return route.fulfill({ response, body });
    });
    await page.goto(`${base}/signup/`);
    await page.waitForFunction(() => document.body.dataset.filter === 'failed' && document.body.dataset.strength);
    await page.type('#password', 'hunter2', { delay: 20 });
    await page.waitForFunction(() => /couldn.t check/i.test(document.querySelector('#breach-status').textContent));
    assert.match(await page.textContent('#breach-status'), /did not load/);
    await page.close();
  }
});

test('with the server stopped, the page says it could not check and still shows strength', async () => {
  const { page } = await openSignup();
  await new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); });
  await page.type('#password', 'letmein', { delay: 40 });
  await page.waitForFunction(() => /couldn.t check/i.test(document.querySelector('#breach-status').textContent));
  assert.match(await page.textContent('#strength-text'), /^Strength: /);
  await page.close();
});
