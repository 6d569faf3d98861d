#!/usr/bin/env node
// node bench/batch-variants.mjs [--engines chromium,firefox,webkit] [--rounds N] [--min-ms MS]
//
// Where a batch of strings spends its time, per engine: mightContainMany(strings)
// against one mightContain a key, and the parts of the batch path alone (the
// join, one encodeInto of the joined chunk, a charCodeAt loop into wasm memory,
// the wasm call on keys already staged, reading the answers). 1,000 keys of 38
// ASCII characters a batch, as in bench:browser. ns per key, median of rounds.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { ENGINES, engineMissing, launchEngine } from '../tests/browser/engines/index.mjs';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(name);
  return i < 0 ? fallback : args[i + 1];
};
const engines = opt('--engines', ENGINES.join(',')).split(',');
const rounds = Number(opt('--rounds', 5));
const only = opt('--only', '');
const keys = Number(opt('--keys', 100000));
// Objects kept alive in the page, as bench:browser's peers keep theirs (a full collection marks them).
const ballast = Number(opt('--ballast', 0));
const minMs = Number(opt('--min-ms', 100));

const PAGE = `<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,">
<script type="module">
import { BloomFilter } from '/js/index.js';
import * as module from '/js/wasm/module.js';
import * as arenaMod from '/js/wasm/arena.js';
import * as calls from '/js/wasm/calls.js';
import * as staging from '/js/wasm/staging.js';
import { KINDS } from '/js/wasm/contract.js';
import { makeKeys } from '/bench/browser-cases.mjs';
import { variants } from '/bench/batch-variants-page.mjs';
window.runVariants = async (config) => {
  window.__only = config.only;
  window.__ballast = Array.from({ length: config.ballast }, (_, i) => ({ i, s: String(i) }));
  const filter = await BloomFilter.create({ capacity: 1000000, errorRate: 0.01 });
  const members = makeKeys(0, config.keys);
  filter.addAll(members.strings);
  let cases = variants({ filter, module, arenaMod, staging, calls, KINDS, strings: members.strings, packed: members, batch: 1000 });
  if (config.only) cases = Object.fromEntries(config.only.split(',').map((name) => [name, cases[name]]));
  const results = {};
  for (const name of Object.keys(cases)) results[name] = [];
  for (let r = 0; r < config.rounds; r++) {
    const names = Object.keys(cases);
    const order = names.slice(r % names.length).concat(names.slice(0, r % names.length));
    for (const name of order) {
      let elapsed = 0, ops = 0;
      do {
        const t = performance.now();
        ops += cases[name]();
        elapsed += performance.now() - t;
      } while (elapsed < config.minMs);
      results[name].push(elapsed * 1e6 / ops);
    }
  }
  return { results, ua: navigator.userAgent, sink: window.__sink };
};
document.documentElement.dataset.ready = 'yes';
</script></head><body></body></html>`;

const server = createServer((req, res) => {
  const pathname = new URL(req.url, 'http://x').pathname;
  let body;
  if (pathname === '/page.html') body = Buffer.from(PAGE);
  else if (/^\/(js|wasm|bench)\/[\w./-]+$/.test(pathname) && !pathname.includes('..')) {
    try { body = readFileSync(path.join(root, pathname)); } catch { body = undefined; }
  }
  if (!body) return res.writeHead(404).end();
  const type = pathname.endsWith('.wasm') ? 'application/wasm' : pathname.endsWith('.html') ? 'text/html' : 'text/javascript';
  res.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' }).end(body);
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const origin = `http://127.0.0.1:${server.address().port}`;
const median = (v) => { const s = [...v].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
console.log(`# batch variants: ${process.argv.slice(2).join(' ')}`);
console.log(`# batch variants, ${new Date().toISOString()}, load ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}; ${rounds} rounds of >= ${minMs} ms; ns per key (median, min)`);
for (const name of engines) {
  if (engineMissing(name)) { console.log(`${name}: missing`); continue; }
  const engine = await launchEngine(name);
  try {
    const page = await engine.newPage();
    await page.goto(`${origin}/page.html`);
    await page.waitFor(() => document.documentElement.dataset.ready === 'yes');
    const { results, ua } = await page.evaluate((config) => window.runVariants(config), { rounds, minMs, keys, only, ballast });
    console.log(`\n## ${name} (${engine.version ?? ua}), load ${os.loadavg()[0].toFixed(2)}`);
    console.log(`${'variant'.padEnd(36)} ${'median'.padStart(8)} ${'min'.padStart(8)}  ÷ single (median of rounds)`);
    for (const [variant, values] of Object.entries(results)) {
      const ratio = results.single ? median(values.map((v, r) => v / results.single[r])).toFixed(2) + '×' : '';
      console.log(`${variant.padEnd(36)} ${median(values).toFixed(1).padStart(8)} ${Math.min(...values).toFixed(1).padStart(8)}  ${ratio}`);
    }
  } finally {
    await engine.close();
  }
}
server.close();
