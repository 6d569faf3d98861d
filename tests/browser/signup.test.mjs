// The signup page in headless Chromium: the local answer on every keystroke,
// escalation only on "maybe", only a 5-hex prefix on the wire, and a page that
// stays useful when the server is gone.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { launch } from './browser.mjs';
import { startExampleSite } from './helpers/example-site.mjs';
import { screenshotPath } from './helpers/screenshots.mjs';

let dir;
let site;
let base;
let browser;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'bloomgate-signup-'));
  site = await startExampleSite(dir);
  ({ base } = site);
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await site?.stop();
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

test('a common password shows how many times it was seen, after exactly one range request carrying only a 5-hex prefix', async () => {
  const { page, ranges: requests } = await openSignup();
  await page.type('#password', 'password1', { delay: 40 });
  await page.waitForFunction(() => document.querySelector('#breach-status').textContent.startsWith('Seen '));
  await page.waitForTimeout(600);
  // The store's count is sightings (the demo derives it from the list rank), shown as such, not as breaches.
  const count = site.passwords.length - site.passwords.indexOf('password1');
  const shown = /^Seen ([\d,.\u00a0\u202f ]+) times in breaches — please choose another password\.$/.exec(await page.textContent('#breach-status'));
  assert.ok(shown, await page.textContent('#breach-status'));
  assert.equal(Number(shown[1].replace(/\D/g, '')), count); // in the page's locale's digit grouping
  assert.match(await page.textContent('#counts-source'), /@zxcvbn-ts\/language-common[\s\S]*rank/);
  assert.match(await page.textContent('#strength-text'), /very weak|weak/);
  // The endpoint's manifest once per page (it proves the server holds this filter's list), then the range.
  const manifests = requests.filter((url) => new URL(url).pathname === '/range/manifest.json');
  const ranges = requests.filter((url) => new URL(url).pathname !== '/range/manifest.json');
  assert.ok(manifests.length <= 1, requests.join('\n'));
  assert.equal(ranges.length, 1, requests.join('\n'));
  const prefix = createHash('sha1').update('password1').digest('hex').slice(0, 5).toUpperCase();
  assert.equal(new URL(ranges[0]).pathname, `/range/${prefix}`);
  assert.equal(new URL(ranges[0]).search, '');
  await page.screenshot({ path: screenshotPath('signup-meter.png', { docs: true }) });
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
  await site.stop();
  await page.type('#password', 'letmein', { delay: 40 });
  await page.waitForFunction(() => /couldn.t check/i.test(document.querySelector('#breach-status').textContent));
  assert.match(await page.textContent('#strength-text'), /^Strength: /);
  await page.close();
});
