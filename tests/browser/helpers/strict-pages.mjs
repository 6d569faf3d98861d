/**
 * strict-pages.mjs — what csp.test.mjs and single-file.test.mjs share: pages under a strict
 * Content-Security-Policy on 127.0.0.1 whose module loads /words.bgf and reports on
 * <p id="out"> (data-state 'ready' or 'error', data-result JSON), and opening one in an engine.
 *
 *   capturedPage(title, head)           the page: the adapter's capture script first, then app.js
 *   presenceReport(words)               source of (filter) => ({ present, absent }) over ABSENT
 *   reportingApp(entry, report)         app.js: import loadFilter from `entry`, report (name, code
 *                                       and message when it rejects)
 *   const site = await startStrictSite((path) => ({ body, csp } | undefined));
 *       every request recorded in site.requests (paths); a page path ending in / is HTML, the
 *       rest typed by extension; `csp` (when given) sent as the policy, with cache-control
 *       no-store; /favicon.ico is 204
 *   await openReport(engine, site, path, more)
 *       { state, result, requests (this page's), ...more(tab) } once #out has a data-state;
 *       more(tab) defaults to { errors: await tab.errors() }
 */
import { createServer } from 'node:http';
import { extname } from 'node:path';

import { PAGE_CAPTURE_PATH } from '../engines/index.mjs';
import { listenLocal } from './listen.mjs';

export const STRICT = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; object-src 'none'; base-uri 'none'";
export const ABSENT = ['granite', 'keyboard', 'velocity', 'harbour', 'pancake', 'quartzite'];

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.wasm': 'application/wasm',
};

export const capturedPage = (title, head = '') => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><script src="${PAGE_CAPTURE_PATH}"></script><title>${title}</title>${head}
<script type="module" src="app.js"></script></head><body><p id="out">loading</p></body></html>
`;

export const presenceReport = (words) => `(filter) => ({
  present: ${JSON.stringify(words)}.filter((word) => filter.mightContain(word)),
  absent: ${JSON.stringify(ABSENT)}.filter((word) => !filter.mightContain(word)),
})`;

export const reportingApp = (entry, report) => `import { loadFilter } from '${entry}';

const out = document.getElementById('out');
loadFilter('/words.bgf').then((filter) => {
  out.dataset.result = JSON.stringify((${report})(filter));
  out.dataset.state = 'ready';
}, (error) => {
  out.dataset.result = JSON.stringify({ name: error.name, code: error.code, message: error.message });
  out.dataset.state = 'error';
});
`;

/** A site on 127.0.0.1: `find(path)` gives { body, csp } (csp optional) or undefined (404). */
export async function startStrictSite(find) {
  const requests = [];
  const server = createServer(async (req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://127.0.0.1').pathname);
    requests.push(path);
    if (path === '/favicon.ico') return res.writeHead(204).end();
    const found = await find(path);
    if (found === undefined) return res.writeHead(404).end();
    const type = path.endsWith('/') ? TYPES['.html'] : TYPES[extname(path)] ?? 'application/octet-stream';
    const policy = found.csp ? { 'content-security-policy': found.csp, 'cache-control': 'no-store' } : {};
    res.writeHead(200, { 'content-type': type, ...policy }).end(found.body);
  });
  return listenLocal(server, { requests });
}

/** Open `path` in a new tab of `engine`; resolve with the page's report once it has one. */
export async function openReport(engine, site, path, more = async (tab) => ({ errors: await tab.errors() })) {
  const tab = await engine.newPage();
  const from = site.requests.length;
  try {
    await tab.goto(`${site.origin}${path}`);
    await tab.waitFor(() => document.querySelector('#out[data-state]') !== null, null, { timeout: 60000 });
    return {
      state: await tab.attribute('#out', 'data-state'),
      result: JSON.parse(await tab.attribute('#out', 'data-result')),
      requests: site.requests.slice(from),
      ...await more(tab),
    };
  } finally {
    await tab.close();
  }
}
