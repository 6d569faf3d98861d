#!/usr/bin/env node
// node bench/first-answer.mjs [--rounds N] [--engines chromium,firefox,webkit] [--keys N] [--out FILE]
//                            [--variants fetch,bundle,lite,...] [--compare OTHER-BUNDLE.mjs]
//                            [--link RTT_MS,MBIT_S]
//
// The first answer in a fresh page (issue 21 item 5), in Chromium, Firefox ESR and WebKitGTK
// through the browser tests' layer (tests/browser/engines/), each page fresh (Chromium: a new
// browser context; Firefox: a new user context; WebKit: a new window of the session). A 1M-key
// classic filter (p = 0.01) served from 127.0.0.1; three pages, opened in
// interleaved rounds (the order rotates each round), each under a path of its own so that no
// cache of any engine serves it twice:
//
//   fetch   — a module script that does `fetch(url).arrayBuffer()` of the filter: the reference
//   bundle  — a module script importing the single file (`bloomgate/bundle`, js/bundle.mjs,
//             wasm inline), then loadFilter(url, { integrity }) and one mightContain
//   preload — README's recipe: the same, the page's <head> carrying <link rel="modulepreload">
//             for the single file and <link rel="preload" as="fetch" crossorigin> for the filter
//   fetchFirst — <link rel="modulepreload"> for the single file; the module script (no static
//             import) starts fetch(filter) at once, then import()s the single file and hands
//             loadFilter the Response
//   lite    — as bundle, with 'bloomgate/lite' (js/lite.mjs: loadFilter, BloomFilter, init and
//             the module, 70 KB less script)
//   litePreload — as lite, the <head> carrying <link rel="modulepreload"> for js/lite.mjs
//   liteFirst — as fetchFirst, with 'bloomgate/lite'
//   liteEarly — lite, static import; a classic script right after the clock's starts
//             fetch(filter) and the module hands loadFilter that Response
//
// --link RTT_MS,MBIT_S shapes every response at the server, as a real link would: each one's
// first byte waits RTT_MS (the request's round trip), then its body is written in 16 KiB slices
// paced at MBIT_S, every response sharing that one link's bandwidth (a page's script and its filter
// compete, as they do on a phone's connection). Without it, 127.0.0.1 serves at memory speed.
//
// Clock: from a classic script placed just before the page's module script ("from the module
// script's start", the issue's point) to the answer; also from the HTML's first byte
// (navigation responseStart). Reports medians and the median of paired ratios over the
// reference page opened beside each page. Writes bench/results/first-answer.md.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { BloomFilter } from '../js/index.js';
import { bundleSource, liteSource } from '../scripts/build-bundle.mjs';
import { engineMissing, launchEngine } from '../tests/browser/engines/index.mjs';
import { keyAt } from './keys.mjs';

const benchDir = path.dirname(fileURLToPath(import.meta.url));

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '15' },
    engines: { type: 'string', default: 'chromium,firefox,webkit' },
    keys: { type: 'string', default: '1000000' },
    out: { type: 'string', default: path.join(benchDir, 'results', 'first-answer.md') },
    variants: { type: 'string' },
    // Another build of the single file (say, of an earlier commit), timed as the page 'compare'.
    compare: { type: 'string' },
    link: { type: 'string' },
  },
});
const LINK = (() => {
  if (values.link === undefined) return null;
  const [rtt, mbit] = values.link.split(',').map(Number);
  if (!(rtt >= 0) || !(mbit > 0)) throw new RangeError('--link takes RTT_MS,MBIT_S (say 40,20)');
  return { rtt, bytesPerMs: (mbit * 1e6) / 8 / 1000 };
})();
const ROUNDS = Number(values.rounds);
const KEYS = Number(values.keys);
const ENGINES = values.engines.split(',').filter(Boolean);
const t0 = Date.now();
const log = (text) => process.stderr.write(`first-answer [${((Date.now() - t0) / 1000).toFixed(1).padStart(5)} s] ${text}\n`);

function median(list) {
  const sorted = [...list].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

const VARIANTS = {
  fetch: {
    label: 'plain `fetch().arrayBuffer()` of the file (reference)',
    body: () => `const response = await fetch(FILTER);
const bytes = await response.arrayBuffer();
const answer = bytes.byteLength > 0;`,
  },
  bundle: {
    label: 'the single file, `loadFilter(url, { integrity })`, one query',
    body: (integrity) => `import { init, loadFilter } from './bundle.mjs';
init().then(() => { window.__moduleReady = performance.now(); });
const filter = await loadFilter(FILTER, { integrity: ${JSON.stringify(integrity)} });
const answer = filter.mightContain(KEY);`,
  },
  preload: {
    label: 'README\'s recipe: the same, the `<head>` preloading both (`modulepreload` for the single file, `preload as="fetch" crossorigin` for the filter)',
    head: '<link rel="modulepreload" href="./bundle.mjs">\n<link rel="preload" href="./f1M.bgf" as="fetch" crossorigin>',
    body: (integrity) => `import { init, loadFilter } from './bundle.mjs';
init().then(() => { window.__moduleReady = performance.now(); });
const filter = await loadFilter(FILTER, { integrity: ${JSON.stringify(integrity)} });
const answer = filter.mightContain(KEY);`,
  },
  fetchFirst: {
    label: '`modulepreload` for the single file; the module script calls `fetch(filter)` first, then `import()`s the file and hands loadFilter the Response',
    head: '<link rel="modulepreload" href="./bundle.mjs">',
    body: (integrity) => `const filtering = fetch(FILTER);
const { init, loadFilter } = await import('./bundle.mjs');
init().then(() => { window.__moduleReady = performance.now(); });
const filter = await loadFilter(await filtering, { integrity: ${JSON.stringify(integrity)} });
const answer = filter.mightContain(KEY);`,
  },
};

VARIANTS.lite = {
  label: '`bloomgate/lite` (js/lite.mjs), static `import`, `loadFilter(url, { integrity })`, one query',
  body: (integrity) => VARIANTS.bundle.body(integrity).replace('./bundle.mjs', './lite.mjs'),
};
VARIANTS.litePreload = {
  label: '`bloomgate/lite`, static `import`, the `<head>` carrying `modulepreload` for it (no preload of the filter)',
  head: '<link rel="modulepreload" href="./lite.mjs">',
  body: VARIANTS.lite.body,
};
VARIANTS.liteEarly = {
  label: '`bloomgate/lite`, static `import`; a classic script after the clock\'s starts `fetch(filter)`, and the module hands loadFilter that Response',
  pre: '<script>window.__filtering = fetch(\'./f1M.bgf\');</script>',
  body: (integrity) => `import { init, loadFilter } from './lite.mjs';
init().then(() => { window.__moduleReady = performance.now(); });
const filter = await loadFilter(await window.__filtering, { integrity: ${JSON.stringify(integrity)} });
const answer = filter.mightContain(KEY);`,
};
VARIANTS.liteFirst = {
  label: '`modulepreload` for `bloomgate/lite`; the module script calls `fetch(filter)` first, then `import()`s it and hands loadFilter the Response',
  head: VARIANTS.fetchFirst.head.replace('./bundle.mjs', './lite.mjs'),
  body: (integrity) => VARIANTS.fetchFirst.body(integrity).replace('./bundle.mjs', './lite.mjs'),
};

if (values.compare) {
  VARIANTS.compare = {
    label: `the single file as built in ${values.compare}, as \`bundle\``,
    body: (integrity) => VARIANTS.bundle.body(integrity).replace('./bundle.mjs', './compare.mjs'),
  };
}

const page = (variant, integrity) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>first answer</title>
${VARIANTS[variant].head ?? ''}
<script>window.__scriptStart = performance.now();</script>
${VARIANTS[variant].pre ?? ''}
<script type="module">
const KEY = ${JSON.stringify(keyAt(0))};
const FILTER = new URL('./f1M.bgf', import.meta.url).href;
const moduleStart = performance.now();
${VARIANTS[variant].body(integrity)}
const t = performance.now();
const s0 = window.__scriptStart;
const html = performance.getEntriesByType('navigation')[0].responseStart;
const timings = performance.getEntriesByType('resource').map((e) => ({ name: e.name.split('/').pop(),
  start: Math.round(e.startTime - s0), end: Math.round(e.responseEnd - s0) }));
window.__done = { fromScript: t - s0, fromHtml: t - html, moduleStart: moduleStart - s0, answer, timings,
  moduleReady: window.__moduleReady === undefined ? null : window.__moduleReady - s0 };
</script></head><body></body></html>
`;

// One shared link: the time at which it is next free, so concurrent responses share its bandwidth.
let linkFreeAt = 0;
const SLICE = 16 * 1024;

function sendOverLink(res, body) {
  const sendFrom = (offset) => {
    if (res.destroyed) return;
    if (offset >= body.length) {
      res.end();
      return;
    }
    const slice = body.subarray(offset, offset + SLICE);
    const now = performance.now();
    linkFreeAt = Math.max(linkFreeAt, now) + slice.length / LINK.bytesPerMs;
    res.write(slice);
    setTimeout(() => sendFrom(offset + slice.length), Math.max(0, linkFreeAt - now));
  };
  setTimeout(() => sendFrom(0), LINK.rtt);
}

async function startServer(filter, integrity, bundle, lite) {
  const requests = new Map();
  const server = createServer((req, res) => {
    // /p/<token>/<variant>.html, /p/<token>/bundle.mjs, /p/<token>/f1M.bgf
    const match = /^\/p\/\w+\/(\w+)\.(html|mjs|bgf)$/.exec(new URL(req.url, 'http://x').pathname);
    let body;
    let type;
    if (match?.[2] === 'html' && VARIANTS[match[1]]) [body, type] = [Buffer.from(page(match[1], integrity)), 'text/html; charset=utf-8'];
    else if (match?.[1] === 'bundle' && match[2] === 'mjs') [body, type] = [bundle, 'text/javascript'];
    else if (match?.[1] === 'lite' && match[2] === 'mjs') [body, type] = [lite, 'text/javascript'];
    else if (match?.[1] === 'compare' && match[2] === 'mjs' && values.compare) [body, type] = [readFileSync(values.compare), 'text/javascript'];
    else if (match?.[1] === 'f1M' && match[2] === 'bgf') [body, type] = [filter, 'application/octet-stream'];
    if (body === undefined) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    requests.set(req.url, (requests.get(req.url) ?? 0) + 1);
    // Each page has paths of its own, so nothing is reused from one page to the next; the files are
    // cacheable as a CDN serves them, which WebKit needs to hand a preloaded response to fetch().
    res.writeHead(200, { 'content-type': type, 'content-length': body.length, 'cache-control': 'max-age=3600' });
    if (LINK === null) res.end(body);
    else sendOverLink(res, body);
  });
  server.keepAliveTimeout = 120_000;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${server.address().port}`, requests, close: () => { server.closeAllConnections(); server.close(); } };
}

const LABELS = { chromium: 'Chromium', firefox: 'Firefox', webkit: 'WebKitGTK' };

/**
 * One engine through the browser tests' layer (tests/browser/engines/): every sample a fresh
 * page (Chromium: a new browser context, its own renderer; Firefox: a new user context; WebKit:
 * a new window of the session), so nothing compiled or cached is reused.
 */
async function startEngine(name) {
  if (!(name in LABELS)) throw new Error(`unknown engine ${name} (chromium, firefox, webkit)`);
  const missing = engineMissing(name);
  if (missing) throw new Error(missing);
  const engine = await launchEngine(name);
  return {
    name: `${LABELS[name]} ${engine.version}`,
    async sample(url) {
      const tab = await engine.freshPage();
      try {
        await tab.goto(url);
        return await tab.waitFor(() => window.__done, undefined, { timeout: 30000 });
      } finally {
        await tab.close();
      }
    },
    close: () => engine.close(),
  };
}

async function main() {
  const bundle = Buffer.from(bundleSource()); // built from js/ as it is now, not written
  const lite = Buffer.from(liteSource());
  log(`building the ${KEYS.toLocaleString('en-US')}-key filter`);
  const filter = await BloomFilter.create({ capacity: KEYS, errorRate: 0.01 });
  for (let i = 0; i < KEYS; i++) filter.add(keyAt(i));
  const bytes = Buffer.from(filter.serialize());
  filter.free();
  const integrity = `sha256-${createHash('sha256').update(bytes).digest('base64')}`;
  const server = await startServer(bytes, integrity, bundle, lite);
  const variants = values.variants ? values.variants.split(',') : Object.keys(VARIANTS);
  if (variants[0] !== 'fetch' || variants.some((v) => !VARIANTS[v])) throw new Error(`--variants: fetch first, then some of ${Object.keys(VARIANTS).join(', ')}`);
  const results = [];
  let token = 0;
  try {
    for (const engineName of ENGINES) {
      const engine = await startEngine(engineName);
      log(`${engine.name}: ${ROUNDS} rounds`);
      const samples = Object.fromEntries(variants.map((v) => [v, []]));
      try {
        for (const variant of variants) await engine.sample(`${server.origin}/p/w${token++}/${variant}.html`); // warm-up, untimed
        for (let r = 0; r < ROUNDS; r++) {
          for (let j = 0; j < variants.length; j++) {
            const variant = variants[(j + r) % variants.length];
            const path = `/p/t${token++}`;
            const done = await engine.sample(`${server.origin}${path}/${variant}.html`);
            done.filterRequests = server.requests.get(`${path}/f1M.bgf`) ?? 0;
            done.filterEnd = Math.max(...done.timings.filter((e) => e.name === 'f1M.bgf').map((e) => e.end));
            done.filterStart = Math.min(...done.timings.filter((e) => e.name === 'f1M.bgf').map((e) => e.start));
            if (done.answer !== true) throw new Error(`${engine.name} ${variant}: expected true, got ${done.answer}`);
            samples[variant].push(done);
          }
        }
      } finally {
        await engine.close();
      }
      const ratio = (variant, clock) => median(samples[variant].map((s, i) => s[clock] / samples.fetch[i][clock]));
      for (const variant of variants) {
        const list = samples[variant];
        const row = {
          engine: engine.name, variant,
          fromScript: median(list.map((s) => s.fromScript)), fromHtml: median(list.map((s) => s.fromHtml)),
          ratioScript: ratio(variant, 'fromScript'), ratioHtml: ratio(variant, 'fromHtml'),
          moduleStart: median(list.map((s) => s.moduleStart)), filterEnd: median(list.map((s) => s.filterEnd)),
          filterStart: median(list.map((s) => s.filterStart)),
          moduleReady: list[0].moduleReady === null ? null : median(list.map((s) => s.moduleReady)),
          filterRequests: Math.max(...list.map((s) => s.filterRequests)),
        };
        results.push(row);
        log(`${engine.name} ${variant}: ${row.fromScript.toFixed(1)} ms from the script (${row.ratioScript.toFixed(2)}×), ${row.fromHtml.toFixed(1)} ms from the HTML (${row.ratioHtml.toFixed(2)}×); ` +
          `module body at ${row.moduleStart.toFixed(0)}, filter downloaded at ${row.filterEnd}, ${row.filterRequests} filter request(s)`);
      }
    }
  } finally {
    server.close();
  }
  const out = [
    '# First answer in a fresh page (bench/first-answer.mjs)',
    '',
    `${new Date().toISOString()}, ${os.cpus()[0]?.model ?? 'unknown CPU'} × ${os.cpus().length}, load ${os.loadavg()[0].toFixed(2)}; ` +
      `${KEYS.toLocaleString('en-US')}-key filter (${bytes.length.toLocaleString('en-US')} B), ${ROUNDS} interleaved rounds, medians; ` +
      (LINK === null ? 'served from 127.0.0.1 at memory speed; '
        : `every response shaped at the server as over one link of ${values.link.split(',')[0]} ms round trip and ${values.link.split(',')[1]} Mbit/s (--link); `) +
      '"÷ fetch" is the median of each page\'s time over the reference page of its round.',
    '',
    '| engine | page | from the module script (ms) | ÷ fetch | from the HTML (ms) | ÷ fetch | module body runs | filter requested | filter downloaded | wasm module ready | filter requests a page |',
    '|:---|:---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...results.map((r) => `| ${r.engine} | ${VARIANTS[r.variant].label} | ${r.fromScript.toFixed(1)} | ${r.ratioScript.toFixed(2)}× | ` +
      `${r.fromHtml.toFixed(1)} | ${r.ratioHtml.toFixed(2)}× | ${r.moduleStart.toFixed(0)} | ${Number.isFinite(r.filterStart) ? r.filterStart.toFixed(0) : '–'} | ` +
      `${Number.isFinite(r.filterEnd) ? r.filterEnd.toFixed(0) : '–'} | ${r.moduleReady === null ? '–' : r.moduleReady.toFixed(0)} | ${r.filterRequests} |`),
    '',
    '"Module body runs", "filter requested" (resource timing\'s startTime), "filter downloaded" (its responseEnd) and "wasm module ready" ' +
      '(init() resolved: compiled and instantiated) are medians in ms from the same classic script; ' +
      'a page that downloads its filter twice (a preload the engine did not hand to fetch()) shows 2 requests.',
    '',
  ].join('\n');
  mkdirSync(path.dirname(values.out), { recursive: true });
  writeFileSync(values.out, out);
  process.stdout.write(out);
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
