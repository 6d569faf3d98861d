// The signup page in Chromium, Firefox and WebKit (tests/browser/engines/): the local answer on
// every keystroke, escalation only for the settled password (the field's change: here, leaving it)
// and only on "maybe", only a 5-hex prefix on the wire, and a page that
// stays useful when the filter fails or the server is gone. Each engine meets the same
// assertions. The page is served through a forwarding server on 127.0.0.1
// (helpers/front.mjs) that records every request and breaks the filter's download on demand
// (a flipped byte; a dropped connection), so no engine's request interception is needed.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { ENGINES, launchEngine, skipUnless } from './engines/index.mjs';
import { startExampleSite } from './helpers/example-site.mjs';
import { startFront } from './helpers/front.mjs';
import { screenshotPath } from './helpers/screenshots.mjs';

const SETTLE_MS = 1000; // a request still to come would have started by then

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

for (const name of ENGINES) {
  describe(name, { skip: skipUnless(name), timeout: 300000 }, () => {
    let dir;
    let site;
    let front;
    let engine;

    before(async () => {
      dir = await mkdtemp(join(tmpdir(), 'bloomgate-signup-'));
      site = await startExampleSite(dir);
      // The filter is asked for on every load (not kept fresh in the cache), so a fault reaches the page.
      front = await startFront(site.base, { noStore: ['/filters/passwords.bgf'] });
      engine = await launchEngine(name);
    });

    after(async () => {
      await engine?.close();
      await front?.close();
      await site?.stop();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    /** The requests the page made from `from` on (paths starting with /range/). */
    const rangesSince = (from) => front.requests.slice(from).filter((path) => path.startsWith('/range/'));

    async function openSignup() {
      const page = await engine.newPage();
      const from = front.requests.length;
      await page.goto(`${front.origin}/signup/`);
      await page.waitFor(() => document.body.dataset.filter === 'ready' && document.body.dataset.strength === 'ready', null, { timeout: 60000 });
      return { page, ranges: () => rangesSince(from) };
    }

    it('a long clean password, typed key by key, shows "not found" and sends no range request', async () => {
      const { page, ranges } = await openSignup();
      await page.type('#password', 'violet-harbor-quartz-lantern-8812', { delay: 40 });
      await page.click('#email'); // leaving the field settles the password
      await page.waitFor(() => document.querySelector('#breach-status').textContent.includes('Not found'));
      await sleep(SETTLE_MS);
      assert.equal(await page.text('#breach-status'), 'Not found in known breaches.');
      assert.match(await page.text('#strength-text'), /^Strength: (strong|very strong)$/);
      assert.deepEqual(ranges(), []);
      await page.close();
    });

    it('a common password shows how many times it was seen, after exactly one range request carrying only a 5-hex prefix', async () => {
      const { page, ranges: requested } = await openSignup();
      await page.type('#password', 'password1', { delay: 40 });
      await page.click('#email'); // leaving the field settles the password
      await page.waitFor(() => document.querySelector('#breach-status').textContent.startsWith('Seen '));
      await sleep(SETTLE_MS);
      // The store's count is sightings (the demo derives it from the list rank), shown as such, not as breaches.
      const count = site.passwords.length - site.passwords.indexOf('password1');
      const status = await page.text('#breach-status');
      const shown = /^Seen ([\d,.\u00a0\u202f ]+) times in breaches — please choose another password\.$/.exec(status);
      assert.ok(shown, status);
      assert.equal(Number(shown[1].replace(/\D/g, '')), count); // in the page's locale's digit grouping
      assert.match(await page.text('#counts-source'), /@zxcvbn-ts\/language-common[\s\S]*rank/);
      assert.match(await page.text('#strength-text'), /very weak|weak/);
      // The endpoint's manifest once per page (it proves the server holds this filter's list), then the range.
      const requests = requested();
      const manifests = requests.filter((path) => path === '/range/manifest.json');
      const ranges = requests.filter((path) => path !== '/range/manifest.json');
      assert.ok(manifests.length <= 1, requests.join('\n'));
      assert.equal(ranges.length, 1, requests.join('\n'));
      const prefix = createHash('sha1').update('password1').digest('hex').slice(0, 5).toUpperCase();
      assert.equal(ranges[0], `/range/${prefix}`); // the path, and no query
      // The docs show Chromium's; the other engines' land beside it.
      const shot = name === 'chromium' ? screenshotPath('signup-meter.png', { docs: true }) : screenshotPath(`signup-meter-${name}.png`);
      await page.screenshot(shot);
      assert.ok(statSync(shot).size > 1000, shot);
      await page.close();
    });

    it('a filter that fails to download or verify leaves the page usable and says why', async () => {
      for (const fault of ['corrupt', 'network']) {
        front.faults.set('/filters/passwords.bgf', fault);
        try {
          const page = await engine.newPage();
          await page.goto(`${front.origin}/signup/`);
          await page.waitFor(() => document.body.dataset.filter === 'failed' && document.body.dataset.strength, null, { timeout: 60000 });
          await page.type('#password', 'hunter2', { delay: 20 });
          await page.waitFor(() => /couldn.t check/i.test(document.querySelector('#breach-status').textContent));
          assert.match(await page.text('#breach-status'), /did not load/, fault);
          await page.close();
        } finally {
          front.faults.clear();
        }
      }
    });

    it('with the server stopped, the page says it could not check and still shows strength', async () => {
      const { page } = await openSignup();
      await front.close();
      await site.stop();
      await page.type('#password', 'letmein', { delay: 40 });
      await page.click('#email');
      await page.waitFor(() => /couldn.t check/i.test(document.querySelector('#breach-status').textContent));
      assert.match(await page.text('#strength-text'), /^Strength: /);
      await page.close();
    });
  });
}
