// The Node side of the page benchmarks that time parts of the library in each
// engine (bench/batch-variants.mjs, bench/single-parts.mjs): their common
// options, a server for the page and the repository's js/, wasm/ and bench/
// files, and the loop that opens the page in each engine (tests/browser/engines/)
// and hands back what the page's entry function returned.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { ENGINES, engineMissing, launchEngine } from '../tests/browser/engines/index.mjs';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));

/** `--name value` options; the common ones parsed, `opt(name, fallback)` for the rest. */
export function benchOptions({ keys, rounds = 5, minMs = 100 }) {
  const args = process.argv.slice(2);
  const opt = (name, fallback) => {
    const i = args.indexOf(name);
    return i < 0 ? fallback : args[i + 1];
  };
  return {
    opt,
    engines: opt('--engines', ENGINES.join(',')).split(','),
    rounds: Number(opt('--rounds', rounds)),
    minMs: Number(opt('--min-ms', minMs)),
    keys: Number(opt('--keys', keys)),
    only: opt('--only', ''),
  };
}

export const median = (values) => {
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

export const loadAverage = () => os.loadavg().map((x) => x.toFixed(2)).join(' ');

/**
 * Serve `page` as /page.html and the repository's js/, wasm/, bench/ (and `extraDirs`) files;
 * `route(pathname)` may answer other paths with a Buffer. Then, in each engine, open the page,
 * wait for `data-ready`, call `window[entry](config)` and pass its value to
 * `report(engineName, engineVersion, value)`. A missing engine is said and skipped.
 */
export async function runPageInEngines({ page, entry, config, engines, report, route = () => undefined, extraDirs = [] }) {
  const served = new RegExp(`^/(${['js', 'wasm', 'bench', ...extraDirs].join('|')})/[\\w./-]+$`);
  const server = createServer((req, res) => {
    const pathname = new URL(req.url, 'http://x').pathname;
    let body;
    if (pathname === '/page.html') body = Buffer.from(page);
    else if (pathname.includes('..')) body = undefined;
    else body = route(pathname);
    if (body === undefined && served.test(pathname)) {
      try { body = readFileSync(path.join(root, pathname)); } catch { body = undefined; }
    }
    if (!body) return res.writeHead(404).end();
    const type = pathname.endsWith('.wasm') ? 'application/wasm' : pathname.endsWith('.html') ? 'text/html' : 'text/javascript';
    res.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' }).end(body);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${server.address().port}`;
  try {
    for (const name of engines) {
      const missing = engineMissing(name);
      if (missing) {
        console.log(`${name}: missing (${missing})`);
        continue;
      }
      const engine = await launchEngine(name);
      try {
        const tab = await engine.newPage();
        await tab.goto(`${origin}/page.html`);
        await tab.waitFor(() => document.documentElement.dataset.ready === 'yes');
        const value = await tab.evaluate((arg) => window[arg.entry](arg.config), { entry, config });
        report(name, engine.version ?? value?.ua ?? '', value);
      } finally {
        await engine.close();
      }
    }
  } finally {
    server.close();
  }
}
