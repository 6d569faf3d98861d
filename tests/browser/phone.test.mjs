// The example pages on a phone, in Chromium, Firefox and WebKit (tests/browser/engines/), a
// 390 px wide device at device scale 3, with the same assertions in each as far as each engine
// can be a phone:
//   Chromium  playwright's device emulation: the mobile viewport rules (without a viewport meta
//             the page is laid out 980 px wide and scaled down, so these checks fail on a page
//             that lacks one), touch, a coarse pointer; taps are touch events.
//   Firefox   a 390 px viewport at devicePixelRatio 3, a 390 px screen, touch events,
//             maxTouchPoints and a coarse pointer by pref; taps are BiDi touch actions. No
//             mobile viewport rules (their pref hangs headless Firefox): the page is laid out
//             at 390 px, meta or not, so the viewport meta is checked in the DOM only.
//   WebKit    WebKitGTK in a 390 px window on a 390 px screen at GDK_SCALE 3 (devicePixelRatio
//             3). It has no mobile viewport rules and no touch screen to emulate: the device
//             test asserts that (maxTouchPoints 0, no coarse pointer) instead of touch, and a tap
//             is a WebDriver touch action that WebKitGTK delivers as a mouse click. Its
//             screenshots are the viewport only (WebDriver has no full-page screenshot).
// Each page: no horizontal overflow, readable text, its main controls visible, big enough to
// hit, and working when tapped. Screenshots go to build/screenshots/
// (tests/browser/helpers/screenshots.mjs), one set per engine.
import { after, before, describe, it, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { ENGINES, launchEngine, skipUnless } from './engines/index.mjs';
import { listedHosts, startExampleSite } from './helpers/example-site.mjs';
import { DOCS_IMAGES, REFRESH_IMAGES, screenshotPath } from './helpers/screenshots.mjs';

const WIDTH = 390;
const PHONE = { width: WIDTH, height: 844, deviceScaleFactor: 3, mobile: true };
const MIN_TARGET = 44; // CSS px: the smallest comfortable touch target
const MIN_BODY_FONT = 14; // CSS px
const MIN_TEXT_FONT = 12; // CSS px, the smallest text anywhere on the page
/** Engines that emulate a touch screen (see the top of this file). */
const TOUCH = { chromium: true, firefox: true, webkit: false };

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** What the phone shows: layout width, scale and the text sizes the page computes. */
function measure(page) {
  return page.evaluate(() => {
    const sizes = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    while (walker.nextNode()) {
      const node = walker.currentNode;
      const element = node.parentElement;
      if (!node.textContent.trim() || !element || element.getClientRects().length === 0) continue;
      sizes.push({ text: node.textContent.trim().slice(0, 40), size: parseFloat(getComputedStyle(element).fontSize) });
    }
    const smallest = sizes.reduce((a, b) => (b.size < a.size ? b : a), { text: '', size: Infinity });
    return {
      url: location.href,
      viewportMeta: document.querySelector('meta[name="viewport"]')?.getAttribute('content') ?? null,
      scrollWidth: document.documentElement.scrollWidth,
      bodyScrollWidth: document.body.scrollWidth,
      innerWidth: window.innerWidth,
      scale: window.visualViewport.scale,
      bodyFont: parseFloat(getComputedStyle(document.body).fontSize),
      smallest,
    };
  });
}

async function assertFitsPhone(page, when) {
  const m = await measure(page);
  const about = `${m.url} ${when}: ${JSON.stringify(m)}`;
  assert.match(m.viewportMeta ?? '', /width=device-width/, about);
  assert.equal(m.innerWidth, WIDTH, `laid out ${m.innerWidth} px wide, not the phone's ${WIDTH}: ${about}`);
  assert.equal(m.scale, 1, `shown scaled: ${about}`);
  assert.ok(m.scrollWidth <= WIDTH, `horizontal overflow: ${about}`);
  assert.ok(m.bodyScrollWidth <= WIDTH, `horizontal overflow in body: ${about}`);
  assert.ok(m.bodyFont >= MIN_BODY_FONT, `body text ${m.bodyFont} px: ${about}`);
  assert.ok(m.bodyFont * m.scale >= MIN_BODY_FONT, `body text shown at ${m.bodyFont * m.scale} px: ${about}`);
  assert.ok(m.smallest.size >= MIN_TEXT_FONT, `text "${m.smallest.text}" is ${m.smallest.size} px: ${about}`);
}

/** A control is visible, inside the screen's width, big enough to hit, and the topmost element where a finger lands. */
async function assertTappable(page, selector) {
  const seen = await page.evaluate((sel) => {
    const element = document.querySelector(sel);
    if (!element) return null;
    element.scrollIntoView({ block: 'center', inline: 'nearest' });
    const r = element.getBoundingClientRect();
    const style = getComputedStyle(element);
    const top = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    return {
      visible: r.width > 0 && r.height > 0 && style.visibility !== 'hidden' && style.display !== 'none',
      box: { x: r.x, y: r.y, width: r.width, height: r.height },
      hit: top === element || element.contains(top),
    };
  }, selector);
  assert.ok(seen, `${selector} is not on the page`);
  assert.ok(seen.visible, `${selector} is not visible`);
  const { box } = seen;
  const about = `${selector} at ${JSON.stringify(box)}`;
  assert.ok(box.x >= 0 && box.x + box.width <= WIDTH, `${about} is not inside the ${WIDTH} px screen`);
  assert.ok(box.height >= MIN_TARGET && box.width >= MIN_TARGET, `${about} is smaller than ${MIN_TARGET} px`);
  assert.ok(seen.hit, `${about}: another element covers its centre`);
}

/** Poll until the page's document is `url` and loaded (a navigation in flight may refuse a script). */
async function waitForUrl(page, url, timeout = 30000) {
  const until = Date.now() + timeout;
  for (;;) {
    try {
      if ((await page.url()) === url && (await page.evaluate(() => document.readyState)) === 'complete') return;
    } catch {
      // the old document is going
    }
    if (Date.now() > until) throw new Error(`timed out after ${timeout} ms waiting for ${url} (at ${await page.url().catch(() => '?')})`);
    await sleep(100);
  }
}

test('screenshots land outside tracked files unless BLOOMGATE_REFRESH_IMAGES=1 asks for docs/images/', (t) => {
  const path = screenshotPath('signup-meter.png', { docs: true });
  if (REFRESH_IMAGES) return assert.equal(path, join(DOCS_IMAGES, 'signup-meter.png'));
  assert.ok(!path.startsWith(DOCS_IMAGES), path);
  const ignored = spawnSync('git', ['check-ignore', '-q', path], { cwd: DOCS_IMAGES });
  if (ignored.error || ignored.status === 128) return t.skip('not a git checkout');
  if (!process.env.BLOOMGATE_SCREENSHOT_DIR) assert.equal(ignored.status, 0, `${path} is not gitignored`);
});

for (const name of ENGINES) {
  describe(`${name} as a ${WIDTH} px phone`, { skip: skipUnless(name), timeout: 300000 }, () => {
    let dir;
    let site;
    let engine;

    before(async () => {
      dir = await mkdtemp(join(tmpdir(), 'bloomgate-phone-'));
      site = await startExampleSite(dir);
      engine = await launchEngine(name, { viewport: PHONE });
    });

    after(async () => {
      await engine?.close();
      await site?.stop();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    async function open(path, ready) {
      const page = await engine.newPage();
      await page.goto(`${site.base}${path}`);
      if (ready) await page.waitFor(ready, null, { timeout: 60000 });
      return page;
    }

    const shot = (file) => screenshotPath(`${file}-${name}.png`);

    it(`the device is ${WIDTH} px wide at device scale 3${TOUCH[name] ? ', with touch' : ' (WebKitGTK: no touch screen)'}`, async () => {
      const page = await open('/');
      const device = await page.evaluate(() => ({
        width: screen.width, innerWidth: window.innerWidth, dpr: window.devicePixelRatio,
        touch: navigator.maxTouchPoints, coarse: matchMedia('(pointer: coarse)').matches,
      }));
      assert.deepEqual({ width: device.width, innerWidth: device.innerWidth, dpr: device.dpr }, { width: WIDTH, innerWidth: WIDTH, dpr: 3 },
        JSON.stringify(device));
      if (TOUCH[name]) {
        assert.ok(device.touch > 0, JSON.stringify(device));
        assert.equal(device.coarse, true, JSON.stringify(device));
      } else {
        // Stated, not hidden: if WebKitGTK ever reports a touch screen here, this says so.
        assert.deepEqual({ touch: device.touch, coarse: device.coarse }, { touch: 0, coarse: false });
      }
      await page.close();
    });

    it('index page: fits the phone; each example link is a tap target that opens its page', async () => {
      for (const [link, path] of [['a[href="/signup/"]', '/signup/'], ['a[href="/url-checker/"]', '/url-checker/']]) {
        const page = await open('/');
        await assertFitsPhone(page, 'on load');
        await assertTappable(page, link);
        if (path === '/signup/') await page.screenshot(shot('phone-index'), { fullPage: true });
        await page.tap(link);
        await waitForUrl(page, `${site.base}${path}`);
        await page.close();
      }
    });

    it('signup page: fits the phone before and after an answer; the fields and button work by touch', async () => {
      const page = await open('/signup/', () => document.body.dataset.filter === 'ready' && document.body.dataset.strength === 'ready');
      await assertFitsPhone(page, 'on load');
      for (const selector of ['#email', '#password', '#signup button[type="submit"]']) await assertTappable(page, selector);
      await page.tap('#email');
      assert.equal(await page.evaluate(() => document.activeElement?.id), 'email');
      await page.tap('#password');
      assert.equal(await page.evaluate(() => document.activeElement?.id), 'password');
      await page.keys('password1', { delay: 20 });
      await page.tap('#email'); // leaving the field settles the password: only then does a "maybe" escalate
      await page.waitFor(() => document.querySelector('#breach-status').textContent.startsWith('Seen '));
      assert.match(await page.text('#breach-status'), /^Seen [\d,]+ times in breaches/);
      await assertFitsPhone(page, 'showing a breached password');
      await page.screenshot(shot('phone-signup'), { fullPage: true });
      // The form stays on the page: the demo's submit does nothing but must not navigate.
      await page.tap('#signup button[type="submit"]');
      assert.equal(await page.url(), `${site.base}/signup/`);
      await page.close();
    });

    it('URL checker: fits the phone with a long URL\'s expressions shown; the field and button work by touch', async () => {
      const page = await open('/url-checker/');
      await assertFitsPhone(page, 'on load');
      for (const selector of ['#url', '#check button[type="submit"]']) await assertTappable(page, selector);
      await page.tap('#url');
      assert.equal(await page.evaluate(() => document.activeElement?.id), 'url');
      const long = `https://${listedHosts[0]}/account/verify/${'a1b2c3d4e5'.repeat(12)}/index.html?session=${'f'.repeat(90)}&next=/wallet`;
      await page.keys(long);
      await page.tap('#check button[type="submit"]');
      // While typing the page shows its local "possibly listed"; the submit settles the URL, and the server's answer follows.
      await page.waitFor(() => /^Listed: /.test(document.querySelector('#result').textContent));
      assert.match(await page.text('#result'), /^Listed: /);
      assert.ok((await page.evaluate(() => document.querySelectorAll('#details li').length)) > 1);
      await assertFitsPhone(page, 'showing a long URL\'s expressions');
      await page.screenshot(shot('phone-url-checker'), { fullPage: true });

      await page.fill('#url', 'not a url');
      await page.tap('#check button[type="submit"]');
      await page.waitFor(() => /^Not a URL/.test(document.querySelector('#result').textContent));
      await assertFitsPhone(page, 'answering "not a URL"');
      await page.close();
    });
  });
}
