#!/usr/bin/env node
/**
 * bench/fresh.mjs (npm run bench:fresh): filters that stay fresh, 1M keys.
 *
 * Two generations of a classic filter for 1,000,000 keys at p = 0.01 (same
 * geometry, seed and list id): generation 2 removes 1% of generation 1's keys
 * and adds 1% new ones. A filter site on 127.0.0.1 (bench/fresh-site.mjs)
 * serves both files, the delta 1 -> 2 and manifest.json. Each target is a
 * ratio of two cases timed side by side in one run, in rounds that alternate
 * which case goes first; medians are reported. In Node and in Debian's
 * headless Chromium (a page importing js/index.js by path, the site on
 * another origin with CORS).
 *
 *   (a) update by delta vs full download, both from 127.0.0.1:
 *       delta  = openFilter's refresh() from generation 1: the manifest (with
 *                If-None-Match), the delta, its SRI digest, applyDelta in the
 *                core (checked against the target checksum) and the new filter
 *       full   = loadFilter(filter-2.bgf, { integrity }) (streamed into wasm
 *                memory, SHA-256, checksum)
 *       target: delta / full <= 1
 *   (b) first query after a reload with the site stopped:
 *       persisted = openFilter() from the persisted copy (IndexedDB in
 *                   Chromium, a directory in Node), then one query; the copy's
 *                   check is due, so the open also starts a (failing) check
 *       memory    = BloomFilter.from(the same bytes, already in memory), then
 *                   one query
 *       both after the wasm module is instantiated (timed apart);
 *       in Chromium each sample is a fresh page load.
 *       target: persisted / memory <= 2
 *
 * Options: --rounds N (default 15), --quick (5 rounds), --no-browser, --keys N
 * (default 1000000). Run with node --expose-gc (npm run bench:fresh does):
 * each Node sample then starts from a collected heap. Writes
 * bench/results/fresh.md.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, extname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { BloomFilter, directoryStorage, loadFilter, openFilter } from '../js/index.js';
import { applyDelta } from '../js/wasm/index.js';
import { FilterSite, buildGenerations, checksumOf, sri } from './fresh-site.mjs';
import { median } from './timing.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const CHROMIUM = process.env.BG_CHROMIUM ?? '/usr/bin/chromium';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string' },
    quick: { type: 'boolean' },
    'no-browser': { type: 'boolean' },
    keys: { type: 'string' },
  },
});
const ROUNDS = values.rounds ? Number(values.rounds) : values.quick ? 5 : 15;
const KEYS = values.keys ? Number(values.keys) : 1_000_000;
const SHIFT = Math.round(KEYS / 100);
const log = (text) => process.stderr.write(`${text}\n`);
const ms = (value) => `${value.toFixed(2)} ms`;

// Each sample starts from a collected heap (run with --expose-gc, as `npm run bench:fresh` does):
// a start-up reads its filter once, so garbage left by the previous sample must not be billed to it.
const collect = typeof globalThis.gc === 'function' ? globalThis.gc : () => {};

/** Run each case once per round, the order rotated each round; medians in ms. */
async function rounds(cases, count) {
  const samples = new Map(cases.map((c) => [c.id, []]));
  for (let r = 0; r < count; r++) {
    for (let j = 0; j < cases.length; j++) {
      const c = cases[(j + r) % cases.length];
      collect();
      const result = await c.run();
      if (typeof result === 'number') {
        samples.get(c.id).push(result);
      } else {
        samples.get(c.id).push(result.t);
        for (const [id, value] of Object.entries(result.extra)) {
          if (!samples.has(id)) samples.set(id, []);
          samples.get(id).push(value);
        }
      }
    }
  }
  return new Map([...samples].map(([id, list]) => [id, { median: median(list), min: Math.min(...list), samples: list }]));
}

/** A storage adapter in memory holding one copy (what a page would have persisted). */
function memoryStorage(bytes, meta) {
  return {
    kind: 'memory',
    get: async () => ({ bytes, meta }),
    set: async () => {},
    setMeta: async () => {},
    delete: async () => {},
  };
}

/* ------------------------------------------------------------------------ */

log(`building two generations of ${KEYS.toLocaleString('en')} keys (1% out, 1% in)…`);
const generations = await buildGenerations({ count: 2, size: KEYS, shift: SHIFT, capacity: KEYS, errorRate: 0.01, prefix: 'https://example.com/posts/' });
const [, g1, g2] = generations.files;
const site = new FilterSite(generations);
// minRefreshSeconds 0: in (b) the persisted copy's check is due at every open (the worst case).
const manifest = site.publish(2, { deltasFrom: [1], minRefreshSeconds: 0 });
// The same generation offered without its delta: openFilter's full-file path, for a like-for-like update.
site.files.set('/manifest-full.json', JSON.stringify({ ...manifest, deltas: [] }));
const fullManifestUrl = () => `${site.origin}/manifest-full.json`;
const delta = site.delta(1, 2);
await site.start();
const fullUrl = `${site.origin}/filter-2.bgf`;
const fullIntegrity = sri(g2);
log(`filter ${g2.length.toLocaleString('en')} bytes, delta ${delta.length.toLocaleString('en')} bytes (${(100 * delta.length / g2.length).toFixed(2)}%)`);
// A copy of generation 1 as a client holds it: its check is not due, its ETag is of an older manifest.
const g1Meta = () => ({ checksum: checksumOf(g1), etag: '"an-older-manifest"', lastCheck: Date.now(), minRefreshSeconds: 3600 });

const results = {};

/* ---- Node (a) ---- */
log('Node (a): delta refresh vs loadFilter of the full file…');
{
  let live = null;
  const cases = [
    {
      id: 'delta',
      run: async () => {
        live = await openFilter(site.manifestUrl, { storage: memoryStorage(g1, g1Meta()) });
        const t0 = performance.now();
        const outcome = await live.refresh({ force: true });
        const t = performance.now() - t0;
        if (outcome.source !== 'delta' || live.generation !== 2) throw new Error(`the delta refresh did not update: ${JSON.stringify(outcome)}`);
        live.close();
        return { t, extra: { 'delta step': outcome.timings.updateMs } };
      },
    },
    {
      id: 'full',
      run: async () => {
        const t0 = performance.now();
        const filter = await loadFilter(fullUrl, { integrity: fullIntegrity });
        const t = performance.now() - t0;
        if (filter.generation !== 2) throw new Error('loadFilter gave another generation');
        filter.free();
        return t;
      },
    },
    {
      id: 'full (refresh)',
      run: async () => {
        live = await openFilter(fullManifestUrl(), { storage: memoryStorage(g1, g1Meta()) });
        const t0 = performance.now();
        const outcome = await live.refresh({ force: true });
        const t = performance.now() - t0;
        if (outcome.source !== 'full' || live.generation !== 2) throw new Error(`the full refresh did not update: ${JSON.stringify(outcome)}`);
        live.close();
        return t;
      },
    },
    {
      id: 'apply',
      run: async () => {
        const t0 = performance.now();
        const filter = await BloomFilter.from(applyDelta(g1, delta));
        const t = performance.now() - t0;
        filter.free();
        return t;
      },
    },
  ];
  for (const c of cases) await c.run(); // warm-up
  results.nodeA = await rounds(cases, ROUNDS);
}

/* ---- Node (b) ---- */
log('Node (b): persisted copy (directory) vs BloomFilter.from(bytes), site stopped…');
const dir = await mkdtemp(join(tmpdir(), 'bloomgate-fresh-'));
{
  const storage = directoryStorage(dir);
  (await openFilter(site.manifestUrl, { storage })).close(); // persists generation 2
  await site.stop();
  const probe = generations.keysOf(2)[123];
  const cases = [
    {
      id: 'persisted',
      run: async () => {
        const t0 = performance.now();
        const live = await openFilter(site.manifestUrl, { storage: directoryStorage(dir), refreshSeconds: 0 });
        const answer = live.mightContain(probe);
        const t = performance.now() - t0;
        if (!answer || live.stats().source !== 'persisted') throw new Error('the persisted copy did not answer');
        live.close();
        return t;
      },
    },
    {
      id: 'memory',
      run: async () => {
        const t0 = performance.now();
        const filter = await BloomFilter.from(g2);
        const answer = filter.mightContain(probe);
        const t = performance.now() - t0;
        if (!answer) throw new Error('false negative');
        filter.free();
        return t;
      },
    },
  ];
  for (const c of cases) await c.run();
  results.nodeB = await rounds(cases, ROUNDS);
  await site.start();
}
await rm(dir, { recursive: true, force: true });

/* ---- Chromium ---- */
const PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>bench fresh</title>
<script type="module">
  import * as bloomgate from '/bloomgate/js/index.js';
  window.bloomgate = bloomgate;
  document.documentElement.dataset.ready = 'yes';
</script></head><body></body></html>`;

async function startPageServer() {
  const TYPES = { '.js': 'text/javascript; charset=utf-8', '.wasm': 'application/wasm' };
  const server = createServer(async (req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://127.0.0.1').pathname);
    if (path === '/') return res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(PAGE);
    if (path === '/gen1.bgf') return res.writeHead(200).end(Buffer.from(g1));
    if (path === '/gen2.bgf') return res.writeHead(200).end(Buffer.from(g2));
    for (const mount of ['js', 'wasm']) {
      if (!path.startsWith(`/bloomgate/${mount}/`)) continue;
      const base = resolve(root, mount);
      const file = resolve(base, `.${path.slice(`/bloomgate/${mount}`.length)}`);
      if (!file.startsWith(base + sep)) break;
      try {
        return res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' }).end(await readFile(file));
      } catch {
        break;
      }
    }
    res.writeHead(404).end('not found');
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  return { origin: `http://127.0.0.1:${server.address().port}`, close: () => { server.closeAllConnections(); server.close(); } };
}

let browserNote = null;
if (!values['no-browser'] && existsSync(CHROMIUM)) {
  const { chromium } = await import('playwright-core');
  const profile = await mkdtemp(join(tmpdir(), 'bloomgate-fresh-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
  });
  const pages = await startPageServer();
  try {
    const page = await context.newPage();
    const load = async () => {
      await page.goto(`${pages.origin}/`);
      await page.waitForFunction(() => document.documentElement.dataset.ready === 'yes');
    };
    browserNote = await (async () => {
      await load();
      return page.evaluate(() => navigator.userAgent);
    })();

    log('Chromium (a): delta refresh vs loadFilter of the full file…');
    results.browserA = await page.evaluate(async ({ manifestUrl, fullManifestUrl, fullUrl: url, integrity, rounds: count, meta }) => {
      const { openFilter, loadFilter, init } = window.bloomgate;
      await init();
      const g1 = new Uint8Array(await (await fetch('/gen1.bgf')).arrayBuffer());
      const storage = { kind: 'memory', get: async () => ({ bytes: g1, meta: { ...meta, lastCheck: Date.now() } }), set: async () => {}, setMeta: async () => {}, delete: async () => {} };
      const cases = [
        ['delta', async () => {
          const live = await openFilter(manifestUrl, { storage });
          const t0 = performance.now();
          const outcome = await live.refresh({ force: true });
          const t = performance.now() - t0;
          if (outcome.source !== 'delta') throw new Error(JSON.stringify(outcome));
          live.close();
          step.push(outcome.timings.updateMs);
          return t;
        }],
        ['full', async () => {
          const t0 = performance.now();
          const filter = await loadFilter(url, { integrity });
          const t = performance.now() - t0;
          filter.free();
          return t;
        }],
        ['full (refresh)', async () => {
          const live = await openFilter(fullManifestUrl, { storage });
          const t0 = performance.now();
          const outcome = await live.refresh({ force: true });
          const t = performance.now() - t0;
          if (outcome.source !== 'full') throw new Error(JSON.stringify(outcome));
          live.close();
          return t;
        }],
      ];
      const step = [];
      for (const [, run] of cases) await run();
      step.length = 0;
      const samples = { delta: [], full: [], 'full (refresh)': [], 'delta step': step };
      for (let r = 0; r < count; r++) {
        for (let j = 0; j < cases.length; j++) {
          const [id, run] = cases[(j + r) % cases.length];
          samples[id].push(await run());
        }
      }
      return samples;
    }, { manifestUrl: site.manifestUrl, fullManifestUrl: fullManifestUrl(), fullUrl, integrity: fullIntegrity, rounds: ROUNDS, meta: g1Meta() });

    log('Chromium (b): reload, persisted copy (IndexedDB) vs BloomFilter.from(bytes), site stopped…');
    await load();
    await page.evaluate(async (url) => (await window.bloomgate.openFilter(url)).close(), site.manifestUrl); // persists generation 2
    await site.stop();
    const probe = generations.keysOf(2)[123];
    // Each sample is a fresh page load. "reload" cases time from the page's first call to the
    // first answer, the module's instantiation included (openFilter overlaps it with the
    // IndexedDB read); the others instantiate the module first, untimed.
    const samples = { 'persisted, reload': [], 'memory, reload': [], persisted: [], memory: [], init: [] };
    const bCases = {
      persisted: async (afterInit) => {
        await load();
        const r = await page.evaluate(async ({ url, key, warm }) => {
          let init = 0;
          if (warm) {
            const t = performance.now();
            await window.bloomgate.init();
            init = performance.now() - t;
          }
          const t1 = performance.now();
          const live = await window.bloomgate.openFilter(url);
          const answer = live.mightContain(key);
          const t2 = performance.now();
          const { source } = live.stats();
          return { t: t2 - t1, init, answer, source };
        }, { url: site.manifestUrl, key: probe, warm: afterInit });
        if (!r.answer || r.source !== 'persisted') throw new Error(`persisted copy: ${JSON.stringify(r)}`);
        samples[afterInit ? 'persisted' : 'persisted, reload'].push(r.t);
        if (afterInit) samples.init.push(r.init);
      },
      memory: async (afterInit) => {
        await load();
        const r = await page.evaluate(async ({ key, warm }) => {
          const bytes = new Uint8Array(await (await fetch('/gen2.bgf')).arrayBuffer());
          if (warm) await window.bloomgate.init();
          const t1 = performance.now();
          const filter = await window.bloomgate.BloomFilter.from(bytes);
          const answer = filter.mightContain(key);
          const t2 = performance.now();
          return { t: t2 - t1, answer };
        }, { key: probe, warm: afterInit });
        if (!r.answer) throw new Error('false negative');
        samples[afterInit ? 'memory' : 'memory, reload'].push(r.t);
      },
    };
    const order = [['persisted', false], ['memory', false], ['persisted', true], ['memory', true]];
    for (const [id, warm] of order) await bCases[id](warm); // warm-up
    for (const list of Object.values(samples)) list.length = 0;
    for (let r = 0; r < ROUNDS; r++) {
      for (let j = 0; j < order.length; j++) {
        const [id, warm] = order[(j + r) % order.length];
        await bCases[id](warm);
      }
    }
    results.browserB = samples;
    await site.start();
  } finally {
    await context.close();
    pages.close();
    await rm(profile, { recursive: true, force: true });
  }
} else if (!values['no-browser']) {
  log(`no Chromium at ${CHROMIUM}: browser cases skipped`);
}
await site.stop();

/* ---- report ---- */
const toStats = (samples) => Object.fromEntries(Object.entries(samples).map(([id, list]) => [id, { median: median(list), min: Math.min(...list), samples: list }]));
const get = (r, id) => (r instanceof Map ? r.get(id) : r[id]);
const lines = [];
lines.push('# Filters that stay fresh (bench/fresh.mjs)', '');
lines.push(`${new Date().toISOString().slice(0, 10)}, ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), load average ${loadavg()[0].toFixed(2)}, Node ${process.version}` +
  (browserNote ? `, ${browserNote.match(/(HeadlessChrome|Chrome)\/[\d.]+/)?.[0] ?? 'Chromium'}` : ''), '');
lines.push(`Classic filter, ${KEYS.toLocaleString('en')} keys, p = 0.01: ${g2.length.toLocaleString('en')} bytes. ` +
  `Generation 2 removes ${SHIFT.toLocaleString('en')} keys and adds ${SHIFT.toLocaleString('en')}: ` +
  `delta ${delta.length.toLocaleString('en')} bytes (${(100 * delta.length / g2.length).toFixed(2)}% of the file). ` +
  `Medians of ${ROUNDS} rounds, the cases of a target alternating in each round.`, '');
lines.push('| target | where | case | median | fastest | ratio | target | |', '|---|---|---|---:|---:|---:|---:|---|');
function row(label, where, r, a, b, target, extra = []) {
  const A = get(r, a);
  const B = get(r, b);
  const ratio = A.median / B.median;
  lines.push(`| ${label} | ${where} | ${a} | ${ms(A.median)} | ${ms(A.min)} | ${ratio.toFixed(2)}× | ≤ ${target}× | ${ratio <= target ? 'ok' : '**FAIL**'} |`);
  lines.push(`|  |  | ${b} | ${ms(B.median)} | ${ms(B.min)} |  |  |  |`);
  for (const id of extra) {
    const E = get(r, id);
    lines.push(`|  |  | ${id} | ${ms(E.median)} | ${ms(E.min)} |  |  |  |`);
  }
}
for (const [where, r] of [['Node', results.nodeA], ['Chromium', results.browserA && toStats(results.browserA)]]) {
  if (!r) continue;
  row('(a) update: the delta step', where, r, 'delta step', 'full', 1);
  row('(a) update: refresh()', where, r, 'delta', 'full (refresh)', 1);
  row('(a) update: refresh() vs loadFilter', where, r, 'delta', 'full', 1, where === 'Node' ? ['apply'] : []);
}
row('(b) first query', 'Node', results.nodeB, 'persisted', 'memory', 2);
if (results.browserB) {
  const b = toStats(results.browserB);
  row('(b) first query', 'Chromium', b, 'persisted, reload', 'memory, reload', 2);
  row('(b) first query', 'Chromium', b, 'persisted', 'memory', 2);
}
lines.push('');
lines.push('(a) delta = `refresh()` of a live filter at generation 1: the manifest (If-None-Match), the delta, SHA-256 of the delta, ' +
  '`applyDelta` and the new BloomFilter; delta step = the same refresh() without its manifest request (the update event\'s `timings.updateMs`: ' +
  'the delta\'s download, checks and apply, the swap); full = `loadFilter(filter-2.bgf, { integrity })`; full (refresh) = `refresh()` from a manifest that lists no delta ' +
  '(the manifest, then the full file): the like-for-like update; apply = `BloomFilter.from(applyDelta(g1, delta))` alone, no network.');
lines.push('(b) persisted = `openFilter()` from the persisted copy (Chromium: IndexedDB, each sample after a page reload; Node: a directory) with the site stopped ' +
  'and the copy\'s check due (it starts in the background and fails), then one query; memory = `BloomFilter.from(bytes)` of the same bytes already in memory, then one query. ' +
  '"reload": timed from the first call after the reload, the module\'s instantiation included (openFilter reads IndexedDB while it instantiates); the others: after `init()`' +
  (results.browserB ? ` (median ${ms(median(results.browserB.init))} after a reload), not counted.` : '.'));
const report = `${lines.join('\n')}\n`;
process.stdout.write(report);
await writeFile(join(here, 'results', 'fresh.md'), report);
log('wrote bench/results/fresh.md');
