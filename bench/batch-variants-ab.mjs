#!/usr/bin/env node
// node bench/batch-variants-ab.mjs --old DIR [--engines webkit,firefox] [--rounds N] [--min-ms MS] [--keys N] [--ballast N]
//
// Batches against one call a key, for two versions of the library in ONE page:
// this tree's js/ and wasm/ ("new") and DIR's ("old": a copy of the tree at
// another commit, e.g. `git archive <commit> | tar -x -C DIR`), each its own
// module and wasm instance, taking turns in alternating order. On a busy
// machine, runs minutes apart disagree by more than a change is worth; this
// divides times taken seconds apart in the same page. ns per key.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { launchEngine } from '../tests/browser/engines/index.mjs';

const args = process.argv.slice(2);
const opt = (n, d) => { const i = args.indexOf(n); return i < 0 ? d : args[i + 1]; };
if (opt('--old', '') === '') {
  console.error('usage: node bench/batch-variants-ab.mjs --old DIR [--engines webkit] [--rounds 9] [--min-ms 60] [--keys 200000] [--ballast 0]');
  process.exit(64);
}
const roots = { '': path.dirname(path.dirname(fileURLToPath(import.meta.url))), '/old': path.resolve(opt('--old', '')) };
const rounds = Number(opt('--rounds', 9)), keys = Number(opt('--keys', 200000)), minMs = Number(opt('--min-ms', 60)), ballast = Number(opt('--ballast', 0));
const engines = opt('--engines', 'webkit').split(',');
const PAGE = `<!doctype html><script type="module">
import * as A from '/js/index.js';
import * as B from '/old/js/index.js';
import { makeKeys } from '/bench/browser-cases.mjs';
window.run = async (cfg) => {
  window.__ballast = Array.from({ length: cfg.ballast }, (_, i) => ({ i, s: String(i) }));
  const k = makeKeys(0, cfg.keys);
  const probes = makeKeys(cfg.keys, cfg.keys).strings;
  const groups = (xs) => { const g = []; for (let i = 0; i < xs.length; i += 1000) g.push(xs.slice(i, i + 1000)); return g; };
  const mg = groups(k.strings), pg = groups(probes);
  const fa = await A.BloomFilter.create({ capacity: 1000000, errorRate: 0.01 });
  const fb = await B.BloomFilter.create({ capacity: 1000000, errorRate: 0.01 });
  for (const s of k.strings) { fa.add(s); fb.add(s); }
  let sink = 0;
  const single = (f, gs) => () => { let n = 0; for (const g of gs) for (let i = 0; i < g.length; i++) if (f.mightContain(g[i])) n++; sink += n; return gs.length * 1000; };
  const many = (f, gs) => () => { let n = 0; for (const g of gs) { const a = f.mightContainMany(g); for (let i = 0; i < a.length; i++) if (a[i]) n++; } sink += n; return gs.length * 1000; };
  for (let i = 0; i < 3000; i++) if (fa.mightContainMany([probes[i]])[0] !== fb.mightContain(probes[i])) throw new Error('disagree');
  const cases = { newSingleM: single(fa, mg), newManyM: many(fa, mg), oldSingleM: single(fb, mg), oldManyM: many(fb, mg),
    newSingleN: single(fa, pg), newManyN: many(fa, pg), oldSingleN: single(fb, pg), oldManyN: many(fb, pg) };
  const res = Object.fromEntries(Object.keys(cases).map((n) => [n, []]));
  for (let r = 0; r < cfg.rounds; r++) {
    const names = Object.keys(cases);
    const order = r % 2 ? names.reverse() : names;
    for (const name of order) {
      let el = 0, ops = 0;
      do { const t = performance.now(); ops += cases[name](); el += performance.now() - t; } while (el < cfg.minMs);
      res[name].push(el * 1e6 / ops);
    }
  }
  return { res, sink };
};
document.documentElement.dataset.ready = 'yes';
</script>`;
const server = createServer((req, res) => {
  const p = new URL(req.url, 'http://x').pathname;
  if (p === '/page.html') return res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
  const old = p.startsWith('/old/');
  const rel = old ? p.slice(4) : p;
  if (!/^\/(js|wasm|bench)\/[\w./-]+$/.test(rel) || rel.includes('..')) return res.writeHead(404).end();
  let body; try { body = readFileSync(path.join(old ? roots['/old'] : roots[''], rel)); } catch { return res.writeHead(404).end(); }
  res.writeHead(200, { 'content-type': rel.endsWith('.wasm') ? 'application/wasm' : 'text/javascript', 'cache-control': 'no-store' }).end(body);
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const med = (v) => { const s = [...v].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
console.log(`# A/B ${args.join(' ')}; ${new Date().toISOString()}; load ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
for (const name of engines) {
  const engine = await launchEngine(name);
  try {
    const page = await engine.newPage();
    await page.goto(`http://127.0.0.1:${server.address().port}/page.html`);
    await page.waitFor(() => document.documentElement.dataset.ready === 'yes');
    const { res } = await page.evaluate((cfg) => window.run(cfg), { rounds, keys, minMs, ballast });
    console.log(`## ${name}, load ${os.loadavg()[0].toFixed(2)}`);
    for (const [n, v] of Object.entries(res)) console.log(`${n.padEnd(12)} median ${med(v).toFixed(1).padStart(7)}  min ${Math.min(...v).toFixed(1).padStart(7)}`);
    for (const side of ['new', 'old']) for (const m of ['M', 'N']) {
      const ratios = res[`${side}Many${m}`].map((v, r) => v / res[`${side}Single${m}`][r]);
      console.log(`${side} many/single ${m === 'M' ? 'member' : 'non-member'}: median of rounds ${med(ratios).toFixed(2)}x, best ${Math.min(...ratios).toFixed(2)}x`);
    }
  } finally { await engine.close(); }
}
server.close();
