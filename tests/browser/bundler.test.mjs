/**
 * End-to-end: the Vite example (examples/vite) built with `import { loadFilter }
 * from 'bloomgate'`, served from 127.0.0.1 and opened in Debian's headless
 * Chromium. The built page must fetch the hashed wasm asset and answer from it.
 *
 * Run: node --test tests/browser/bundler.test.mjs (needs vite, a devDependency,
 * and /usr/bin/chromium or BG_CHROMIUM).
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, extname, join, resolve, sep } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import { CHROMIUM, launch } from './browser.mjs';
import { listenLocal } from './helpers/listen.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const appDir = join(root, 'examples', 'vite');
const hasChromium = existsSync(CHROMIUM);

let vite = null;
try {
  vite = await import('vite');
} catch {
  // reported as a skip below
}

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.wasm': 'application/wasm',
  '.bgf': 'application/octet-stream',
};

/** Serve a directory on 127.0.0.1; every request path is recorded. */
async function serveDir(dir) {
  const requests = [];
  const server = createServer(async (req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://127.0.0.1').pathname);
    requests.push(path);
    const file = resolve(dir, `.${path.endsWith('/') ? `${path}index.html` : path}`);
    if (!file.startsWith(dir + sep)) {
      res.writeHead(404).end();
      return;
    }
    try {
      const body = await readFile(file);
      res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' }).end(body);
    } catch {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    }
  });
  return listenLocal(server, { requests });
}

const skip = !vite ? 'vite is not installed (npm install --save-dev vite)' : !hasChromium ? `no Chromium at ${CHROMIUM}` : false;

describe('Vite app in headless Chromium', { skip, timeout: 120000 }, () => {
  let outDir;
  let site;
  let browser;
  let page;

  before(async () => {
    outDir = await mkdtemp(join(tmpdir(), 'bloomgate-vite-'));
    await vite.build({
      configFile: join(appDir, 'vite.config.js'),
      logLevel: 'warn',
      build: { outDir, emptyOutDir: true },
    });
    site = await serveDir(outDir);
    browser = await launch();
    page = await browser.context.newPage();
  });

  after(async () => {
    await browser?.close();
    await site?.close();
    if (outDir) await rm(outDir, { recursive: true, force: true });
  });

  it('emits the wasm module as a hashed asset', async () => {
    const assets = await readdir(join(outDir, 'assets'));
    assert.ok(assets.some((name) => /^bloomgate-[\w-]+\.wasm$/.test(name)), `assets: ${assets.join(', ')}`);
    const wasm = assets.find((name) => name.endsWith('.wasm'));
    const bytes = await readFile(join(outDir, 'assets', wasm));
    assert.deepEqual([...bytes.subarray(0, 4)], [0x00, 0x61, 0x73, 0x6d]); // "\0asm"
  });

  it('loads the wasm in the built page and answers queries from the filter', async () => {
    const errors = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(`${site.origin}/`);
    await page.waitForSelector('#status[data-state="ready"], #status[data-state="error"]', { timeout: 15000 });
    assert.equal(await page.getAttribute('#status', 'data-state'), 'ready', await page.textContent('#status'));
    assert.match(await page.textContent('#status'), /Filter ready: 28 words/);
    assert.ok(site.requests.some((path) => /^\/assets\/bloomgate-[\w-]+\.wasm$/.test(path)), `requests: ${site.requests.join(', ')}`);

    const colors = (await readFile(join(appDir, 'colors.txt'), 'utf8')).split('\n').filter(Boolean);
    for (const word of [colors[0], colors[colors.length - 1], 'Turquoise']) {
      await page.fill('#word', word);
      await page.click('#ask button');
      await page.waitForFunction((w) => document.getElementById('answer').textContent.includes(`"${w.toLowerCase()}"`), word);
      assert.equal(await page.getAttribute('#answer', 'data-answer'), 'maybe', `${word} was added`);
    }
    // Words never added: a 0.1% filter answers "no" for (almost) all; allow one false positive.
    let negatives = 0;
    const absent = ['granite', 'keyboard', 'velocity', 'harbour', 'pancake', 'quartzite', 'tundra', 'lantern'];
    for (const word of absent) {
      await page.fill('#word', word);
      await page.click('#ask button');
      await page.waitForFunction((w) => document.getElementById('answer').textContent.includes(`"${w}"`), word);
      if ((await page.getAttribute('#answer', 'data-answer')) === 'no') negatives++;
    }
    assert.ok(negatives >= absent.length - 1, `definite negatives: ${negatives} of ${absent.length}`);
    assert.deepEqual(errors, []);
  });
});
