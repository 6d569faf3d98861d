// What `integrity` costs loadFilter(url), in Node and in each browser engine (Chromium, Firefox
// ESR, WebKitGTK, through tests/browser/engines/), on loopback and over links paced to 1 Gbit/s
// and 100 Mbit/s (issues 11 and 21; target: with integrity ≤ 1.3× without, in every engine).
//
//   npm run bench:integrity                          # all three links, Node and every engine
//   node bench/integrity.mjs --links loopback        # loopback only (a few minutes)
//   node bench/integrity.mjs --engines firefox,webkit --no-node --rounds 5 --loads 2
//   node bench/integrity.mjs --no-bare --out bench/results/integrity-engines.md
//
// One 10M-key filter file (p = 0.01, ~12 MB, 1M keys in it) served from 127.0.0.1 by this
// process, whose server writes 64 KiB pieces on a schedule for a paced link; every request has a
// URL of its own and `cache-control: no-store`, so nothing is served from a cache.
//
// Cases, in each runtime:
//   Node: without integrity; with it (the default digest: node:crypto, fed as chunks land); and
//     SubtleCrypto (one digest of the finished file, what Node did before).
//   Each browser engine, in one page: without integrity; with it (the default there:
//     SubtleCrypto over the finished file). In a second page whose first classic script hides
//     crypto.subtle, as a plain-http page has none (--no-bare drops it): without integrity; with
//     it (the wasm digest, fed as chunks land).
//
// Rounds: after a warm-up load of every case, each round runs `loads` loads of every case of a
// page, the cases taking turns (the order alternates from one turn to the next and from one
// round to the next), all of a page's loads in one evaluate call timed inside the page
// (performance.now around loadFilter, one mightContain checked, free()). A round's ratio is the
// median of its with-integrity loads ÷ the median of its loads without, in the same page; the
// report gives per runtime and link the median of those per-round ratios, their spread (min–max)
// and the medians over every load in ms. The 1-minute load average is read before each round.
// Node does NODE_LOADS (5; 1 at 100 Mbit/s) times a browser's loads a round (unless --loads is
// given): its loads are short enough for one burst of another process to swing one. Defaults:
// loopback 15 rounds × 3 loads a case, 1 Gbit/s 9 × 3, 100 Mbit/s 5 × 2 (--rounds, --loads to
// change). Runtimes run one after the other (one browser open at a time); loopback alone takes
// ~3 minutes, 1 Gbit/s ~2.5, all three links ~8.
// Results go to stdout and bench/results/integrity.md (--out to change).
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { BloomFilter, loadFilter } from '../js/index.js';
import { registerStreamingSha256 } from '../js/load.js';
import { ENGINES, engineMissing, launchEngine } from '../tests/browser/engines/index.mjs';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const LINKS = { loopback: 0, '1g': 125_000, '100m': 12_500 }; // bytes per millisecond; 0 = as fast as it goes
const LINK_LABEL = { loopback: 'loopback', '1g': '1 Gbit/s', '100m': '100 Mbit/s' };
const ROUNDS = { loopback: 15, '1g': 9, '100m': 5 };
const LOADS = { loopback: 3, '1g': 3, '100m': 2 };
// Node's loads take a tenth of a browser's on loopback (~25 ms, where another process's burst
// swings a single load 2×): it does this many times the loads a case in each round (not at
// 100 Mbit/s, where every load is ~1 s).
const NODE_LOADS = { loopback: 5, '1g': 5, '100m': 1 };
const ENGINE_LABEL = { node: 'Node', chromium: 'Chromium', firefox: 'Firefox', webkit: 'WebKit' };
const TARGET = 1.3;
const PROBE = 'https://example.com/posts/7.html';

const started = Date.now();
const log = (text) => process.stderr.write(`integrity [${((Date.now() - started) / 1000).toFixed(1).padStart(6)} s] ${text}\n`);

function options() {
  const { values } = parseArgs({
    options: {
      links: { type: 'string', default: Object.keys(LINKS).join(',') },
      engines: { type: 'string', default: ENGINES.join(',') },
      'no-node': { type: 'boolean', default: false },
      'no-bare': { type: 'boolean', default: false },
      rounds: { type: 'string' },
      loads: { type: 'string' },
      out: { type: 'string', default: path.join(root, 'bench', 'results', 'integrity.md') },
    },
  });
  const links = values.links.split(',').filter(Boolean);
  for (const link of links) if (!(link in LINKS)) throw new Error(`unknown link ${link} (known: ${Object.keys(LINKS).join(', ')})`);
  const engines = values.engines.split(',').map((name) => name.trim()).filter(Boolean);
  for (const name of engines) if (!ENGINES.includes(name)) throw new Error(`unknown engine ${name} (known: ${ENGINES.join(', ')})`);
  const count = (text, what) => {
    if (text === undefined) return null;
    const n = Number(text);
    if (!Number.isInteger(n) || n < 1) throw new Error(`--${what} takes a whole number ≥ 1, not ${text}`);
    return n;
  };
  return {
    links, engines, node: !values['no-node'], bare: !values['no-bare'],
    rounds: count(values.rounds, 'rounds'), loads: count(values.loads, 'loads'), out: values.out,
  };
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

const MIME = { '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.html': 'text/html' };

// The page's module: loadFilter from the library by path, and a function that runs one page's
// share of a round (a list of { url, integrity }) and returns each load's ms.
const PAGE_MODULE = `<script type="module">
  import { loadFilter } from '/js/index.js';
  window.runLoads = async (list) => {
    const times = [];
    for (const { url, integrity } of list) {
      const t = performance.now();
      const filter = await loadFilter(url, integrity ? { integrity } : {});
      const ms = performance.now() - t;
      const member = filter.mightContain(${JSON.stringify(PROBE)});
      filter.free();
      if (!member) throw new Error('a member is missing');
      times.push(ms);
    }
    return times;
  };
  document.documentElement.dataset.subtle = String(typeof globalThis.crypto?.subtle?.digest === 'function');
  document.documentElement.dataset.ready = 'yes';
</script>`;
const PAGES = {
  '/page.html': `<!doctype html><meta charset="utf-8"><title>integrity</title><link rel="icon" href="data:,">${PAGE_MODULE}`,
  // What a plain-http page sees: no crypto.subtle, before the library is imported.
  '/bare.html': `<!doctype html><meta charset="utf-8"><title>integrity, no crypto.subtle</title><link rel="icon" href="data:,">
<script>Object.defineProperty(globalThis.crypto, 'subtle', { value: undefined, configurable: true });</script>${PAGE_MODULE}`,
};

function startServer(file) {
  const server = createServer(async (req, res) => {
    const url = new URL(req.url, 'http://x');
    if (url.pathname === '/f.bgf') {
      const rate = Number(url.searchParams.get('rate') || 0);
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': file.length, 'cache-control': 'no-store' });
      if (rate === 0) return res.end(file);
      const start = performance.now();
      for (let at = 0; at < file.length; at += 65536) {
        if (!res.write(file.subarray(at, at + 65536))) await new Promise((resolve) => res.once('drain', resolve));
        const wait = (at + 65536) / rate - (performance.now() - start);
        if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
      }
      return res.end();
    }
    if (url.pathname in PAGES) {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      return res.end(PAGES[url.pathname]);
    }
    const local = path.join(root, path.normalize(url.pathname));
    if (!local.startsWith(path.join(root, 'js') + path.sep) && !local.startsWith(path.join(root, 'wasm') + path.sep)) {
      res.writeHead(404);
      return res.end();
    }
    try {
      const body = readFileSync(local);
      res.writeHead(200, { 'content-type': MIME[path.extname(local)] ?? 'application/octet-stream' });
      res.end(body);
    } catch {
      res.writeHead(404);
      res.end();
    }
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/**
 * One group of cases that share a page (or Node's process): `base` is the case without integrity.
 * `run(list)` does the loads of `list` (case names) in order and returns their ms.
 */
function turnOrder(cases, round, loads) {
  const order = [];
  for (let turn = 0; turn < loads; turn++) {
    const shift = (round + turn) % cases.length;
    order.push(...cases.slice(shift), ...cases.slice(0, shift));
  }
  return order;
}

/**
 * Rounds of one runtime on one link. `groups`: [{ cases, run }], cases[0] the base (no
 * integrity). Returns { case: { ms: [every load], perRound: [round medians] } } and the load
 * averages read before each round.
 */
async function measure(groups, rounds, loads) {
  const times = {};
  for (const { cases, run } of groups) {
    for (const name of cases) times[name] = { all: [], perRound: [] };
    await run(cases); // warm-up: instantiate, JIT, connection
  }
  const loadavg = [];
  for (let round = 0; round < rounds; round++) {
    loadavg.push(os.loadavg()[0]);
    for (const { cases, run } of groups) {
      const order = turnOrder(cases, round, loads);
      const ms = await run(order);
      for (const name of cases) {
        const mine = ms.filter((_, i) => order[i] === name);
        times[name].all.push(...mine);
        times[name].perRound.push(median(mine));
      }
    }
  }
  return { times, loadavg };
}

/** Per case: median ms over every load, and against `base`: per-round ratios (median, min, max). */
function summarize(times, base) {
  const out = {};
  for (const [name, { all, perRound }] of Object.entries(times)) {
    const ratios = perRound.map((t, i) => t / times[base].perRound[i]);
    out[name] = { ms: median(all), ratio: median(ratios), min: Math.min(...ratios), max: Math.max(...ratios), ratios };
  }
  return out;
}

async function main() {
  const opts = options();
  log('building the 10M-key filter (1M keys) ...');
  const filter = await BloomFilter.create({ capacity: 10_000_000, errorRate: 0.01 });
  for (let i = 0; i < 1_000_000; i++) filter.add(`https://example.com/posts/${i}.html`);
  const file = filter.serialize();
  filter.free();
  const integrity = `sha256-${createHash('sha256').update(file).digest('base64')}`;
  const server = await startServer(file);
  const base = `http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (server.address()).port}`;
  let seq = 0;
  const fileUrl = (link) => `${base}/f.bgf?rate=${LINKS[link]}&n=${seq++}`;
  const plan = (link) => ({ rounds: opts.rounds ?? ROUNDS[link], loads: opts.loads ?? LOADS[link] });
  /** @type {{ runtime: string, version: string, link: string, rounds: number, loads: number, main: any, other: any, otherName: string | null, loadavg: number[] }[]} */
  const results = [];
  const notes = [];

  try {
    if (opts.node) {
      const NODE_CASES = ['none', 'node:crypto', 'SubtleCrypto'];
      for (const link of opts.links) {
        const { rounds, loads: browserLoads } = plan(link);
        const loads = opts.loads ?? browserLoads * NODE_LOADS[link];
        log(`Node, ${link}: ${rounds} rounds × ${loads} loads a case ...`);
        const run = async (list) => {
          const ms = [];
          for (const name of list) {
            const previous = registerStreamingSha256(name === 'SubtleCrypto' ? null : undefined);
            try {
              const t = performance.now();
              const f = await loadFilter(fileUrl(link), name === 'none' ? {} : { integrity });
              ms.push(performance.now() - t);
              const member = f.mightContain(PROBE);
              f.free();
              if (!member) throw new Error('a member is missing');
            } finally {
              registerStreamingSha256(previous);
            }
          }
          return ms;
        };
        const { times, loadavg } = await measure([{ cases: NODE_CASES, run }], rounds, loads);
        const s = summarize(times, 'none');
        results.push({ runtime: 'node', version: process.versions.node, link, rounds, loads, main: { none: s.none, with: s['node:crypto'] }, other: s.SubtleCrypto, otherName: 'SubtleCrypto', loadavg });
      }
    }

    for (const name of opts.engines) {
      const missing = engineMissing(name);
      if (missing !== null) {
        log(`skipped: ${missing}`);
        notes.push(`${ENGINE_LABEL[name]} skipped: ${missing}.`);
        continue;
      }
      log(`${ENGINE_LABEL[name]}: launching ...`);
      const engine = await launchEngine(name);
      try {
        const open = async (pagePath) => {
          const page = await engine.newPage();
          await page.goto(`${base}${pagePath}`);
          const ready = await page.waitFor(() => document.documentElement.dataset.ready, null, { timeout: 30000 });
          if (ready !== 'yes') throw new Error(`${name} ${pagePath}: ${ready}`);
          const subtle = await page.evaluate(() => document.documentElement.dataset.subtle);
          return { page, subtle: subtle === 'true' };
        };
        const main = await open('/page.html');
        if (!main.subtle) throw new Error(`${name}: the page on ${base} has no crypto.subtle; the default path cannot be measured`);
        const bare = opts.bare ? await open('/bare.html') : null;
        if (bare?.subtle) throw new Error(`${name}: crypto.subtle could not be hidden`);
        const runner = (page, link) => (list) => page.evaluate((arg) => /** @type {any} */ (window).runLoads(arg),
          list.map((c) => ({ url: fileUrl(link), integrity: c === 'none' || c === 'bare none' ? null : integrity })));
        for (const link of opts.links) {
          const { rounds, loads } = plan(link);
          log(`${ENGINE_LABEL[name]} ${engine.version}, ${link}: ${rounds} rounds × ${loads} loads a case${bare ? ', two pages' : ''} ...`);
          const groups = [{ cases: ['none', 'SubtleCrypto'], run: runner(main.page, link) }];
          if (bare) groups.push({ cases: ['bare none', 'wasm'], run: runner(bare.page, link) });
          const { times, loadavg } = await measure(groups, rounds, loads);
          const s = summarize(Object.fromEntries(['none', 'SubtleCrypto'].map((c) => [c, times[c]])), 'none');
          const b = bare ? summarize({ 'bare none': times['bare none'], wasm: times.wasm }, 'bare none') : null;
          results.push({ runtime: name, version: engine.version, link, rounds, loads, main: { none: s.none, with: s.SubtleCrypto }, other: b && { ...b.wasm, baseMs: b['bare none'].ms }, otherName: b && 'wasm', loadavg });
          const last = results.at(-1);
          log(`  with ÷ without ${last.main.with.ratio.toFixed(3)} (${last.main.with.min.toFixed(2)}–${last.main.with.max.toFixed(2)})`);
        }
        if (bare) await bare.page.close();
        await main.page.close();
      } finally {
        await engine.close();
      }
    }
  } finally {
    server.close();
  }

  const fmt = (ms) => ms.toFixed(1);
  const spread = (c) => `${c.min.toFixed(2)}–${c.max.toFixed(2)}`;
  const loads = (values) => `${median(values).toFixed(2)} (${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)})`;
  const lines = [
    '# What `integrity` costs loadFilter(url), in each engine',
    '',
    `- Date: ${new Date().toISOString()}; ${os.cpus()[0]?.model.trim()} × ${os.cpus().length}; 1-minute load average at the end ${os.loadavg()[0].toFixed(2)}`,
    `- Command: \`node bench/integrity.mjs${process.argv.length > 2 ? ` ${process.argv.slice(2).join(' ')}` : ''}\` (method at the top of [bench/integrity.mjs](../integrity.mjs)); ${((Date.now() - started) / 1000).toFixed(0)} s in all`,
    `- One ${file.length.toLocaleString('en-US')}-byte file (10M-key capacity, p = 0.01) from 127.0.0.1. ms: median over every load of a case. Ratio: a round's median load with integrity ÷ its median load without, in the same page; the median over rounds and the spread (min–max) of those per-round ratios. Load: the 1-minute load average before each round, median (min–max).`,
    ...notes.map((note) => `- ${note}`),
    '',
    `## With integrity (each runtime's default digest) ÷ without — target ≤ ${TARGET}×`,
    '',
    '| runtime | link | rounds × loads a case | without, ms | with, ms | with ÷ without, median | spread | target | load |',
    '|:---|:---|---:|---:|---:|---:|---:|:---:|---:|',
  ];
  for (const r of results) {
    const digest = r.runtime === 'node' ? 'node:crypto as chunks land' : 'SubtleCrypto at the end';
    lines.push(`| ${ENGINE_LABEL[r.runtime]} ${r.version} (${digest}) | ${LINK_LABEL[r.link]} | ${r.rounds} × ${r.loads} | ${fmt(r.main.none.ms)} | ${fmt(r.main.with.ms)} | ${r.main.with.ratio.toFixed(2)}× | ${spread(r.main.with)} | ${r.main.with.ratio <= TARGET ? 'met' : '**not met**'} | ${loads(r.loadavg)} |`);
  }
  const others = results.filter((r) => r.other);
  if (others.length > 0) {
    lines.push('', '## The other digest path', '',
      'Node: SubtleCrypto over the finished file (what Node did before node:crypto), against the same rounds\' loads without integrity. Browsers: a page whose first script hides `crypto.subtle` (as a plain-http page has none), so the wasm digest is fed as chunks land, against that page\'s own loads without integrity.', '',
      '| runtime | link | path | without, ms | with, ms | with ÷ without, median | spread |',
      '|:---|:---|:---|---:|---:|---:|---:|');
    for (const r of others) {
      const without = r.other.baseMs ?? r.main.none.ms;
      const label = r.otherName === 'wasm' ? 'wasm digest as chunks land (no crypto.subtle)' : 'SubtleCrypto at the end';
      lines.push(`| ${ENGINE_LABEL[r.runtime]} | ${LINK_LABEL[r.link]} | ${label} | ${fmt(without)} | ${fmt(r.other.ms)} | ${r.other.ratio.toFixed(2)}× | ${spread(r.other)} |`);
    }
  }
  lines.push('', '## Per-round ratios, with ÷ without, in round order', '');
  for (const r of results) {
    lines.push(`- ${ENGINE_LABEL[r.runtime]}, ${LINK_LABEL[r.link]}: ${r.main.with.ratios.map((x) => x.toFixed(2)).join(' ')}` +
      (r.other ? `; ${r.otherName === 'wasm' ? 'wasm digest' : 'SubtleCrypto'}: ${r.other.ratios.map((x) => x.toFixed(2)).join(' ')}` : ''));
  }
  const report = `${lines.join('\n')}\n`;
  process.stdout.write(report);
  mkdirSync(path.dirname(opts.out), { recursive: true });
  writeFileSync(opts.out, report);
}

await main();
