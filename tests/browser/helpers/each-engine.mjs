/**
 * each-engine.mjs — what the ported scenario files share (issue 21 item 1): one describe per
 * engine of tests/browser/engines/ (Chromium, Firefox, WebKit), the same tests in each, and a
 * page origin on 127.0.0.1 serving the library by path.
 *
 *   eachEngine('openFilter', { timeout }, (name) => { ...before/it/after... });
 *       describe(`${title} in ${name}`) for every engine; BG_ENGINES=firefox,webkit runs some
 *       (the others are skipped, saying so); a missing browser is skipped unless
 *       BLOOMGATE_REQUIRE_BROWSERS=1, when it fails
 *   await openReady(page, url);      goto, then wait for <html data-ready>; anything but 'yes' fails
 *   const pages = await startLibraryServer({ '/': html, '/worker.js': js }, { headers });
 *       the routes given, /bloomgate/js/ and /bloomgate/wasm/ from the working tree; every
 *       request recorded in pages.requests ({ method, path, headers }); `headers` (e.g. CORS)
 *       added to every route's and library file's response
 */
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { extname, resolve, sep } from 'node:path';
import { describe } from 'node:test';

import { ENGINES, skipUnless } from '../engines/index.mjs';
import { listenLocal } from './listen.mjs';
import { root } from './packed.mjs';

export const chosenEngines = () => (process.env.BG_ENGINES ?? ENGINES.join(',')).split(',').map((name) => name.trim()).filter(Boolean);

/** describe(`${title} in ${name}`, options, () => body(name)) for each engine. */
export function eachEngine(title, options, body) {
  const chosen = chosenEngines();
  for (const name of ENGINES) {
    const skip = chosen.includes(name) ? skipUnless(name) : `not in BG_ENGINES=${process.env.BG_ENGINES}`;
    describe(`${title} in ${name}`, { ...options, skip }, () => body(name));
  }
}

/** Navigate and wait until the page's module set <html data-ready>; fail with what it said otherwise. */
export async function openReady(page, url, { timeout = 30000 } = {}) {
  await page.goto(url);
  const ready = await page.waitFor(() => document.documentElement.dataset.ready, null, { timeout });
  if (ready !== 'yes') throw new Error(`page ${url}: ${ready}`);
}

const TYPES = { '.js': 'text/javascript; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8', '.wasm': 'application/wasm' };

/**
 * A page origin: `routes` maps a path to an HTML or JavaScript body (or a function (req, url)
 * returning { type, body, headers? }); the library's js/ and wasm/ under /bloomgate/.
 * `headers` go on every response but a 404.
 */
export async function startLibraryServer(routes, { headers: common = {} } = {}) {
  const requests = [];
  const server = createServer(async (req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    const path = decodeURIComponent(url.pathname);
    requests.push({ method: req.method, path, headers: { ...req.headers } });
    const route = routes[path];
    if (route !== undefined) {
      const { type, body, headers = {} } = typeof route === 'function' ? route(req, url)
        : { type: path.endsWith('.js') ? TYPES['.js'] : 'text/html; charset=utf-8', body: route };
      return res.writeHead(200, { 'content-type': type, 'cache-control': 'no-store', ...common, ...headers }).end(body);
    }
    const mount = path.startsWith('/bloomgate/js/') ? 'js' : path.startsWith('/bloomgate/wasm/') ? 'wasm' : null;
    if (mount !== null) {
      const base = resolve(root, mount);
      const file = resolve(base, `.${path.slice(`/bloomgate/${mount}`.length)}`);
      if (file.startsWith(base + sep)) {
        try {
          const body = await readFile(file);
          return res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', ...common }).end(body);
        } catch {
          // 404 below
        }
      }
    }
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
  });
  return listenLocal(server, { requests });
}
