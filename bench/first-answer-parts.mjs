#!/usr/bin/env node
// node bench/first-answer-parts.mjs [--engines chromium,firefox,webkit] [--rounds N]
//
// Where a fresh page's first answer spends its time, one part after the other (nothing
// overlapped, so each part is timed alone), in each engine: import() of the single file
// (download, parse, evaluate; its module starts compiling), the module ready (init()),
// fetch().arrayBuffer() of the 1M-key filter, crypto.subtle.digest of it, loadFilter(bytes)
// without and with integrity (the first and a second time: the first runs the core's
// checksum in the engine's first wasm tier), and, in a second page, loadFilter(url,
// { integrity }) alone beside a plain fetch. ms, median of rounds (a fresh page each).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { build } from 'esbuild';

import { BloomFilter } from '../js/index.js';
import { bundleSource } from '../scripts/build-bundle.mjs';
import { ENGINES, launchEngine } from '../tests/browser/engines/index.mjs';
import { keyAt } from './keys.mjs';

const { values } = parseArgs({
  options: { engines: { type: 'string', default: ENGINES.join(',') }, rounds: { type: 'string', default: '5' }, page: { type: 'string', default: 'parts' } },
});

const KEY_LINE = `const KEY = ${JSON.stringify(keyAt(0))};`;
const PARTS = `
const marks = {};
let t = performance.now();
const lap = (name) => { const now = performance.now(); marks[name] = now - t; t = now; };
const lib = await import('./bundle.mjs');
lap('import');
await lib.init();
lap('moduleReady');
const bytes = new Uint8Array(await (await fetch('./f1M.bgf')).arrayBuffer());
lap('fetch');
const digest = await crypto.subtle.digest('SHA-256', bytes);
lap('subtleDigest');
const f1 = await lib.loadFilter(bytes);
lap('loadBytes1');
const f2 = await lib.loadFilter(bytes);
lap('loadBytes2');
const f3 = await lib.loadFilter(bytes, { integrity: INTEGRITY });
lap('loadBytesIntegrity');
const answer = f1.mightContain(KEY) && f2.mightContain(KEY) && f3.mightContain(KEY) && digest.byteLength === 32;
window.__done = { marks, answer };
`;

// The same fresh page, the module ready first: reading the body (arrayBuffer, a reader loop)
// and loadFilter(url) with and without integrity, one after the other.
const STREAM = `
const marks = {};
let t = performance.now();
const lap = (name) => { const now = performance.now(); marks[name] = now - t; t = now; };
const lib = await import('./bundle.mjs');
await lib.init();
lap('importReady');
let response = await fetch('./f1M.bgf?a');
lap('A headers');
const a = await response.arrayBuffer();
lap('A arrayBuffer');
response = await fetch('./f1M.bgf?b');
lap('B headers');
const reader = response.body.getReader();
let chunks = 0;
let bytes = 0;
for (;;) {
  const step = await reader.read();
  if (step.done) break;
  chunks++;
  bytes += step.value.byteLength;
}
lap('B readerLoop');
marks.chunks = chunks;
const f1 = await lib.loadFilter('./f1M.bgf?c');
lap('C loadFilter(url)');
const f2 = await lib.loadFilter('./f1M.bgf?d', { integrity: INTEGRITY });
lap('D loadFilter(url, integrity)');
const f3 = await lib.loadFilter(await fetch('./f1M.bgf?e'), { integrity: INTEGRITY });
lap('E loadFilter(response, integrity)');
window.__done = { marks, answer: a.byteLength === bytes && f1.mightContain(KEY) && f2.mightContain(KEY) && f3.mightContain(KEY) };
`;

// import() alone, then init(), of one file: the single file, the same library cut to
// loadFilter and BloomFilter (esbuild, the module inline), the base64 module alone, and a
// one-line module.
const IMPORT = (file) => `
const marks = {};
let t = performance.now();
const lap = (name) => { const now = performance.now(); marks[name] = now - t; t = now; };
const lib = await import('./${file}');
lap('import');
if (lib.init) await lib.init();
lap('init');
window.__done = { marks, answer: true };
`;

const page = (body, integrity) => `<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,">
<script type="module">
const INTEGRITY = ${JSON.stringify(integrity)};
${KEY_LINE}
try {
${body}
} catch (error) {
  window.__done = { error: String(error?.name) + ': ' + String(error?.message) + ' ' + String(error?.code) + ' ' + String(error?.stack) };
}
</script></head><body></body></html>`;

const filter = await BloomFilter.create({ capacity: 1_000_000, errorRate: 0.01 });
for (let i = 0; i < 1_000_000; i++) filter.add(keyAt(i));
const bytes = Buffer.from(filter.serialize());
filter.free();
const integrity = `sha256-${createHash('sha256').update(bytes).digest('base64')}`;
const bundle = Buffer.from(bundleSource());
const root = new URL('..', import.meta.url);
const lite = Buffer.from((await build({
  stdin: {
    contents: "import './js/entry.js';\nimport { init } from './js/wasm/index.js';\nimport { wasmBytes } from './js/wasm-bytes-inline.js';\n" +
      "init(wasmBytes()).catch(() => {});\nexport { init };\nexport { loadFilter } from './js/load.js';\nexport { BloomFilter } from './js/filter.js';\n",
    resolveDir: fileURLToPath(root), loader: 'js',
  },
  bundle: true, format: 'esm', platform: 'browser', minify: true, write: false, logLevel: 'silent',
})).outputFiles[0].contents);
const inlineOnly = readFileSync(new URL('js/inline-module.js', root));
const server = createServer((req, res) => {
  const m = /^\/p\/\w+\/([\w.-]+)$/.exec(new URL(req.url, 'http://x').pathname);
  const name = m?.[1];
  let body;
  let type = 'application/octet-stream';
  if (name === 'parts.html') [body, type] = [page(PARTS, integrity), 'text/html'];
  else if (name === 'stream.html') [body, type] = [page(STREAM, integrity), 'text/html'];
  else if (name === 'import-bundle.html') [body, type] = [page(IMPORT('bundle.mjs'), integrity), 'text/html'];
  else if (name === 'import-lite.html') [body, type] = [page(IMPORT('lite.mjs'), integrity), 'text/html'];
  else if (name === 'import-inline.html') [body, type] = [page(IMPORT('inline-module.js'), integrity), 'text/html'];
  else if (name === 'import-tiny.html') [body, type] = [page(IMPORT('tiny.mjs'), integrity), 'text/html'];
  else if (name === 'tiny.mjs') [body, type] = ['export const tiny = 1;\n', 'text/javascript'];
  else if (name === 'lite.mjs') [body, type] = [lite, 'text/javascript'];
  else if (name === 'inline-module.js') [body, type] = [inlineOnly, 'text/javascript'];
  else if (name === 'bundle.mjs') [body, type] = [bundle, 'text/javascript'];
  else if (name === 'f1M.bgf') body = bytes;
  if (body === undefined) return res.writeHead(404).end();
  res.writeHead(200, { 'content-type': type, 'cache-control': 'max-age=3600' }).end(body);
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const origin = `http://127.0.0.1:${server.address().port}`;
const median = (v) => { const s = [...v].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
console.log(`# first-answer parts, ${new Date().toISOString()}, load ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}; ${values.rounds} fresh pages an engine; ms, median (min)`);
let token = 0;
console.log(`single file ${bundle.length} B, cut to loadFilter and BloomFilter ${lite.length} B, the base64 module alone ${inlineOnly.length} B`);
const pages = values.page.split(',');
for (const name of values.engines.split(',')) {
  const engine = await launchEngine(name);
  const rows = Object.fromEntries(pages.map((p) => [p, []]));
  try {
    for (let r = 0; r < Number(values.rounds) + 1; r++) {
      for (let j = 0; j < pages.length; j++) {
        const which = pages[(j + r) % pages.length];
        const tab = await engine.freshPage();
        try {
          await tab.goto(`${origin}/p/t${token++}/${which}.html`);
          const done = await tab.waitFor(() => window.__done ?? null, null, { timeout: 60000 });
          if (done.error) throw new Error(`${name}: ${done.error}`);
          if (done.answer !== true) throw new Error(`${name}: wrong answer`);
          if (r > 0) rows[which].push(done.marks); // the first round warms the server and the engine's caches
        } finally {
          await tab.close();
        }
      }
    }
  } finally {
    await engine.close();
  }
  console.log(`\n## ${name} ${engine.version ?? ''}, load ${os.loadavg()[0].toFixed(2)}`);
  for (const which of pages) {
    for (const part of Object.keys(rows[which][0])) {
      const list = rows[which].map((row) => row[part]);
      console.log(`${`${which}: ${part}`.padEnd(40)} ${median(list).toFixed(1).padStart(8)} (${Math.min(...list).toFixed(1)})`);
    }
  }
}
server.close();
