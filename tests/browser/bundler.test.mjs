/**
 * End-to-end: the Vite example (examples/vite) built with `import { loadFilter }
 * from 'bloomgate'`, served from 127.0.0.1 and opened in Chromium, Firefox and WebKit
 * (tests/browser/engines/), each meeting the same assertions. The built page must fetch the
 * hashed wasm asset and answer from it, typed into and clicked with each engine's real input.
 * The server puts the adapter's error capture (PAGE_CAPTURE) first in the page's head, so
 * WebKit, whose WebDriver has no console events, sees errors from the page's start too.
 *
 * Run: node --test tests/browser/bundler.test.mjs (needs vite, a devDependency, and the
 * browsers; see tests/browser/engines/index.mjs).
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, extname, join, resolve, sep } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import { ENGINES, PAGE_CAPTURE, PAGE_CAPTURE_PATH, launchEngine, skipUnless } from './engines/index.mjs';
import { listenLocal } from './helpers/listen.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const appDir = join(root, 'examples', 'vite');

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

/** Serve a directory on 127.0.0.1; every request path is recorded; HTML gets the error capture first. */
async function serveDir(dir) {
  const requests = [];
  const server = createServer(async (req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://127.0.0.1').pathname);
    requests.push(path);
    if (path === PAGE_CAPTURE_PATH) {
      res.writeHead(200, { 'content-type': TYPES['.js'] }).end(PAGE_CAPTURE);
      return;
    }
    const file = resolve(dir, `.${path.endsWith('/') ? `${path}index.html` : path}`);
    if (!file.startsWith(dir + sep)) {
      res.writeHead(404).end();
      return;
    }
    try {
      let body = await readFile(file);
      if (extname(file) === '.html') body = body.toString('utf8').replace('<head>', `<head><script src="${PAGE_CAPTURE_PATH}"></script>`);
      res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' }).end(body);
    } catch {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    }
  });
  return listenLocal(server, { requests });
}

const skipVite = vite ? false : 'vite is not installed (npm install --save-dev vite)';

let outDir;
let site;

before(async () => {
  if (!vite) return;
  outDir = await mkdtemp(join(tmpdir(), 'bloomgate-vite-'));
  await vite.build({
    configFile: join(appDir, 'vite.config.js'),
    logLevel: 'warn',
    build: { outDir, emptyOutDir: true },
  });
  site = await serveDir(outDir);
});

after(async () => {
  await site?.close();
  if (outDir) await rm(outDir, { recursive: true, force: true });
});

it('emits the wasm module as a hashed asset', { skip: skipVite }, async () => {
  const assets = await readdir(join(outDir, 'assets'));
  assert.ok(assets.some((name) => /^bloomgate-[\w-]+\.wasm$/.test(name)), `assets: ${assets.join(', ')}`);
  const wasm = assets.find((name) => name.endsWith('.wasm'));
  const bytes = await readFile(join(outDir, 'assets', wasm));
  assert.deepEqual([...bytes.subarray(0, 4)], [0x00, 0x61, 0x73, 0x6d]); // "\0asm"
});

for (const name of ENGINES) {
  describe(`Vite app in ${name}`, { skip: skipVite || skipUnless(name), timeout: 300000 }, () => {
    let engine;
    let page;

    before(async () => {
      engine = await launchEngine(name);
      page = await engine.newPage();
    });

    after(async () => {
      await engine?.close();
    });

    it('loads the wasm in the built page and answers queries from the filter', async () => {
      const from = site.requests.length;
      await page.goto(`${site.origin}/`);
      await page.waitFor(() => document.querySelector('#status[data-state="ready"], #status[data-state="error"]') !== null, null, { timeout: 60000 });
      assert.equal(await page.attribute('#status', 'data-state'), 'ready', await page.text('#status'));
      assert.match(await page.text('#status'), /Filter ready: 28 words/);
      const requests = site.requests.slice(from);
      assert.ok(requests.some((path) => /^\/assets\/bloomgate-[\w-]+\.wasm$/.test(path)), `requests: ${requests.join(', ')}`);

      const colors = (await readFile(join(appDir, 'colors.txt'), 'utf8')).split('\n').filter(Boolean);
      for (const word of [colors[0], colors[colors.length - 1], 'Turquoise']) {
        await page.fill('#word', word);
        await page.click('#ask button');
        await page.waitFor((w) => document.getElementById('answer').textContent.includes(`"${w.toLowerCase()}"`), word);
        assert.equal(await page.attribute('#answer', 'data-answer'), 'maybe', `${word} was added`);
      }
      // Words never added: a 0.1% filter answers "no" for (almost) all; allow one false positive.
      let negatives = 0;
      const absent = ['granite', 'keyboard', 'velocity', 'harbour', 'pancake', 'quartzite', 'tundra', 'lantern'];
      for (const word of absent) {
        await page.fill('#word', word);
        await page.click('#ask button');
        await page.waitFor((w) => document.getElementById('answer').textContent.includes(`"${w}"`), word);
        if ((await page.attribute('#answer', 'data-answer')) === 'no') negatives++;
      }
      assert.ok(negatives >= absent.length - 1, `definite negatives: ${negatives} of ${absent.length}`);
      assert.deepEqual(await page.errors(), []);
    });
  });
}
