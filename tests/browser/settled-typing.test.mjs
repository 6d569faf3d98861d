// Issue 29, item 1: only settled values escalate. The signup and URL checker example pages in
// Chromium, Firefox and WebKit (tests/browser/engines/), typed into with each engine's real input
// at 400 ms a key with a 1.5 s pause midway, then the field left and the form submitted:
//
//   - no escalation for any intermediate string, though the lists hold several of them
//     ('suns', 'sunshin', 'sunshine' while 'sunshine2024!' is typed; 'pass' ... 'password12'
//     while 'password123' is; 'login-wallet.example' while 'login-wallet.example.org' is);
//   - at most one for the final value (change, then submit: one shared escalation), exactly one
//     when its local answer is "maybe";
//   - none when the final value's local answer is "definitely not".
//
// The pages are served through the recording forwarder (helpers/front.mjs), as signup.test.mjs
// serves them: every request the page makes is counted there.
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { BloomFilter, urlExpressions } from '../../js/index.js';
import { launchEngine } from './engines/index.mjs';
import { eachEngine } from './helpers/each-engine.mjs';
import { listedHosts, startExampleSite } from './helpers/example-site.mjs';
import { startFront } from './helpers/front.mjs';

const KEY_MS = 400;
const PAUSE_MS = 1500;
const AFTER_MS = 1000; // after the last event: a request still to come would have started

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const sha1Prefix = (text) => createHash('sha1').update(text).digest('hex').toUpperCase().slice(0, 5);
const sha256Prefix = (text) => createHash('sha256').update(text).digest('hex').slice(0, 8);
const prefixesOf = (text) => Array.from(text, (_, i) => text.slice(0, i + 1));

/** Key by key into the focused field, KEY_MS apart, with a PAUSE_MS pause after the first half. */
async function typeSlowly(page, text) {
  const half = Math.ceil(text.length / 2);
  for (const [i, key] of Array.from(text).entries()) {
    await page.keys(key);
    await sleep(i === half - 1 ? PAUSE_MS : KEY_MS);
  }
}

// Passwords: one listed, one clean, each with listed prefixes.
const PASSWORDS = [
  { typed: 'password123', listedPrefixes: ['pass', 'password', 'password1', 'password12'] },
  { typed: 'sunshine2024!', listedPrefixes: ['suns', 'sunshin', 'sunshine'] },
];
// URLs as typed in the checker (which reads them as http://...): one listed, one clean whose
// intermediate host 'login-wallet.example' is listed.
const URLS = [
  { typed: listedHosts[0], listedPrefixes: [] },
  { typed: `${listedHosts[0]}.org`, listedPrefixes: [listedHosts[0]] },
];

let dir;
let site;
let passwordFilter;
let urlFilter;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'bloomgate-settled-typing-'));
  site = await startExampleSite(dir);
  passwordFilter = await BloomFilter.from(await readFile(join(dir, 'passwords.bgf')));
  urlFilter = await BloomFilter.from(await readFile(join(dir, 'urls.bgf')));
});

after(async () => {
  passwordFilter?.free();
  urlFilter?.free();
  await site?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The filter's local answer for a password: "maybe" (true) or "definitely not". */
const passwordMaybe = (password) => passwordFilter.mightContainKey(createHash('sha1').update(password).digest());
/** The 8-hex prefixes of a URL's expressions the filter answers "maybe" for. */
const urlMaybes = (url) => urlExpressions(url).filter((e) => urlFilter.mightContainKey(createHash('sha256').update(e).digest())).map(sha256Prefix);

eachEngine('typing into the example pages', { timeout: 300000 }, (name) => {
  let front;
  let engine;

  before(async () => {
    front = await startFront(site.base);
    engine = await launchEngine(name);
  });

  after(async () => {
    await engine?.close();
    await front?.close();
  });

  /** Requests to `endpoint` (/range/, /hashes/) from `from` on, the manifest left out. */
  const escalations = (from, endpoint) => front.requests.slice(from)
    .filter((path) => path.startsWith(endpoint) && !path.endsWith('/manifest.json'))
    .map((path) => path.slice(endpoint.length));

  for (const { typed, listedPrefixes } of PASSWORDS) {
    it(`signup: typing ${JSON.stringify(typed)} escalates no intermediate string, the final one once when "maybe", never when "definitely not"`, async () => {
      for (const prefix of listedPrefixes) assert.ok(passwordMaybe(prefix), `${prefix} is listed: typing passes through a "maybe"`);
      const page = await engine.newPage();
      await page.goto(`${front.origin}/signup/`);
      await page.waitFor(() => document.body.dataset.filter === 'ready' && document.body.dataset.strength === 'ready', null, { timeout: 60000 });
      const from = front.requests.length;
      await page.click('#password');
      await typeSlowly(page, typed);
      assert.equal(await page.evaluate(() => document.querySelector('#password').value), typed);
      assert.deepEqual(escalations(from, '/range/'), [], 'no request while typing');
      await page.click('#email'); // change
      await page.click('#signup button[type="submit"]'); // submit: the same value, shared
      const maybe = passwordMaybe(typed);
      if (maybe) await page.waitFor(() => document.querySelector('#breach-status').textContent.startsWith('Seen '));
      else await page.waitFor(() => document.querySelector('#breach-status').textContent === 'Not found in known breaches.');
      await sleep(AFTER_MS);
      const sent = escalations(from, '/range/');
      const intermediate = new Set(prefixesOf(typed).slice(0, -1).map(sha1Prefix));
      intermediate.delete(sha1Prefix(typed));
      assert.deepEqual(sent.filter((prefix) => intermediate.has(prefix)), [], 'no escalation of an intermediate string');
      assert.deepEqual(sent, maybe ? [sha1Prefix(typed)] : [], `${typed}: ${sent.join(' ')}`);
      assert.deepEqual(await page.errors(), []);
      await page.close();
    });
  }

  for (const { typed, listedPrefixes } of URLS) {
    const url = `http://${typed}`;
    it(`URL checker: typing ${JSON.stringify(typed)} escalates no intermediate string, the final one once when "maybe", never when "definitely not"`, async () => {
      for (const prefix of listedPrefixes) assert.ok(urlMaybes(`http://${prefix}`).length > 0, `${prefix} is listed`);
      const page = await engine.newPage();
      await page.goto(`${front.origin}/url-checker/`);
      await page.waitFor(() => document.body.dataset.filter === 'ready', null, { timeout: 60000 });
      const from = front.requests.length;
      await page.click('#url');
      await typeSlowly(page, typed);
      assert.equal(await page.evaluate(() => document.querySelector('#url').value), typed);
      assert.deepEqual(escalations(from, '/hashes/'), [], 'no request while typing');
      await page.click('#check button[type="submit"]'); // change (the field is left), then submit
      const maybes = urlMaybes(url);
      if (maybes.length) await page.waitFor(() => document.querySelector('#result').textContent.startsWith('Listed: '));
      else await page.waitFor(() => document.querySelector('#result').textContent === 'Not listed (answered locally, nothing was sent).');
      await sleep(AFTER_MS);
      const sent = escalations(from, '/hashes/');
      assert.ok(sent.length <= 1, `at most one escalation: ${sent.join(' ')}`);
      assert.deepEqual(sent, maybes.length ? [maybes[0]] : [], `${typed}: ${sent.join(' ')}`);
      assert.deepEqual(await page.errors(), []);
      await page.close();
    });
  }
});
