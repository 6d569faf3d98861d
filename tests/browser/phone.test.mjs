// The example pages on a phone: headless Chromium emulating a 390 px wide
// device (device scale 3, touch, mobile viewport rules), not a narrow desktop
// window. Without a viewport meta such a browser lays a page out 980 px wide
// and scales it down, so these checks fail on a page that lacks one.
// Each page: no horizontal overflow, readable text, its main controls visible,
// big enough to hit, and working when tapped. Screenshots go to
// build/screenshots/ (tests/browser/helpers/screenshots.mjs).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { launch } from './browser.mjs';
import { listedHosts, startExampleSite } from './helpers/example-site.mjs';
import { DOCS_IMAGES, REFRESH_IMAGES, screenshotPath } from './helpers/screenshots.mjs';

const WIDTH = 390;
const PHONE = { viewport: { width: WIDTH, height: 844 }, deviceScaleFactor: 3, isMobile: true, hasTouch: true };
const MIN_TARGET = 44; // CSS px: the smallest comfortable touch target
const MIN_BODY_FONT = 14; // CSS px
const MIN_TEXT_FONT = 12; // CSS px, the smallest text anywhere on the page

let dir;
let site;
let browser;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'bloomgate-phone-'));
  site = await startExampleSite(dir);
  browser = await launch([], PHONE);
});

after(async () => {
  await browser?.close();
  await site?.stop();
  await rm(dir, { recursive: true, force: true });
});

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
  const about = `${page.url()} ${when}: ${JSON.stringify(m)}`;
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
  const control = page.locator(selector);
  await control.scrollIntoViewIfNeeded();
  assert.ok(await control.isVisible(), `${selector} is not visible`);
  const box = await control.boundingBox();
  assert.ok(box, `${selector} has no box`);
  const about = `${selector} at ${JSON.stringify(box)}`;
  assert.ok(box.x >= 0 && box.x + box.width <= WIDTH, `${about} is not inside the ${WIDTH} px screen`);
  assert.ok(box.height >= MIN_TARGET && box.width >= MIN_TARGET, `${about} is smaller than ${MIN_TARGET} px`);
  const hit = await control.evaluate((element) => {
    const r = element.getBoundingClientRect();
    const top = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    return top === element || element.contains(top);
  });
  assert.ok(hit, `${about}: another element covers its centre`);
}

async function open(path, ready) {
  const page = await browser.context.newPage();
  await page.goto(`${site.base}${path}`);
  if (ready) await page.waitForFunction(ready);
  return page;
}

test('screenshots land outside tracked files unless BLOOMGATE_REFRESH_IMAGES=1 asks for docs/images/', (t) => {
  const path = screenshotPath('signup-meter.png', { docs: true });
  if (REFRESH_IMAGES) return assert.equal(path, join(DOCS_IMAGES, 'signup-meter.png'));
  assert.ok(!path.startsWith(DOCS_IMAGES), path);
  const ignored = spawnSync('git', ['check-ignore', '-q', path], { cwd: DOCS_IMAGES });
  if (ignored.error || ignored.status === 128) return t.skip('not a git checkout');
  if (!process.env.BLOOMGATE_SCREENSHOT_DIR) assert.equal(ignored.status, 0, `${path} is not gitignored`);
});

test('the emulated device is a 390 px phone with touch', async () => {
  const page = await open('/');
  const device = await page.evaluate(() => ({
    width: screen.width, dpr: window.devicePixelRatio, touch: navigator.maxTouchPoints, coarse: matchMedia('(pointer: coarse)').matches,
  }));
  assert.deepEqual(device, { width: WIDTH, dpr: 3, touch: device.touch, coarse: true });
  assert.ok(device.touch > 0, JSON.stringify(device));
  await page.close();
});

test('index page: fits the phone; each example link is a tap target that opens its page', async () => {
  for (const [link, path] of [['a[href="/signup/"]', '/signup/'], ['a[href="/url-checker/"]', '/url-checker/']]) {
    const page = await open('/');
    await assertFitsPhone(page, 'on load');
    await assertTappable(page, link);
    if (path === '/signup/') await page.screenshot({ path: screenshotPath('phone-index.png'), fullPage: true });
    await Promise.all([page.waitForURL(`${site.base}${path}`), page.tap(link)]);
    await page.close();
  }
});

test('signup page: fits the phone before and after an answer; the fields and button work by touch', async () => {
  const page = await open('/signup/', () => document.body.dataset.filter === 'ready' && document.body.dataset.strength === 'ready');
  await assertFitsPhone(page, 'on load');
  for (const selector of ['#email', '#password', '#signup button[type="submit"]']) await assertTappable(page, selector);
  await page.tap('#email');
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'email');
  await page.tap('#password');
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'password');
  await page.keyboard.type('password1', { delay: 20 });
  await page.waitForFunction(() => document.querySelector('#breach-status').textContent.startsWith('Seen '));
  assert.match(await page.textContent('#breach-status'), /^Seen [\d,]+ times in breaches/);
  await assertFitsPhone(page, 'showing a breached password');
  await page.screenshot({ path: screenshotPath('phone-signup.png'), fullPage: true });
  // The form stays on the page: the demo's submit does nothing but must not navigate.
  await page.tap('#signup button[type="submit"]');
  assert.equal(page.url(), `${site.base}/signup/`);
  await page.close();
});

test('URL checker: fits the phone with a long URL\'s expressions shown; the field and button work by touch', async () => {
  const page = await open('/url-checker/');
  await assertFitsPhone(page, 'on load');
  for (const selector of ['#url', '#check button[type="submit"]']) await assertTappable(page, selector);
  await page.tap('#url');
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'url');
  const long = `https://${listedHosts[0]}/account/verify/${'a1b2c3d4e5'.repeat(12)}/index.html?session=${'f'.repeat(90)}&next=/wallet`;
  await page.keyboard.type(long);
  await page.tap('#check button[type="submit"]');
  await page.waitForFunction(() => document.querySelector('#result').textContent.length > 0);
  assert.match(await page.textContent('#result'), /^Listed: /);
  assert.ok((await page.locator('#details li').count()) > 1);
  await assertFitsPhone(page, 'showing a long URL\'s expressions');
  await page.screenshot({ path: screenshotPath('phone-url-checker.png'), fullPage: true });

  await page.fill('#url', 'not a url');
  await page.tap('#check button[type="submit"]');
  await page.waitForFunction(() => /^Not a URL/.test(document.querySelector('#result').textContent));
  await assertFitsPhone(page, 'answering "not a URL"');
  await page.close();
});
