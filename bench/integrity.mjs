// What `integrity` costs loadFilter(url), in Node and in headless Chromium, on
// loopback and over links paced to 1 Gbit/s and 100 Mbit/s (issue 11).
//
//   npm run bench:integrity                 # all three links, both runtimes
//   node bench/integrity.mjs --rounds 5 --links loopback,1g
//
// One 10M-key filter file (p = 0.01, ~12 MB) served from 127.0.0.1 by this
// process, whose server writes 64 KiB pieces on a schedule for a paced link.
// Cases take turns within each round; each ratio is the median of the
// per-round ratios to the same round's load without integrity.
//   Node: the default digest (node:crypto, fed as chunks land) and
//         SubtleCrypto (one digest of the finished file, what Node did before).
//   Chromium: the default (SubtleCrypto) and a page without crypto.subtle, as
//         a plain-http page is (the wasm digest, fed as chunks land).
// Results go to stdout and bench/results/integrity.md (--out to change).
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { chromium } from 'playwright-core';

import { BloomFilter, loadFilter } from '../js/index.js';
import { registerStreamingSha256 } from '../js/load.js';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const LINKS = { loopback: 0, '1g': 125_000, '100m': 12_500 }; // bytes per millisecond; 0 = as fast as it goes
const LINK_LABEL = { loopback: 'loopback', '1g': '1 Gbit/s', '100m': '100 Mbit/s' };
const ROUNDS = { loopback: 9, '1g': 5, '100m': 3 };
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--no-first-run'];

function parseArgs(argv) {
  const options = { links: Object.keys(LINKS), rounds: null, out: path.join(root, 'bench', 'results', 'integrity.md') };
  for (let i = 0; i < argv.length; i++) {
    const value = () => argv[++i] ?? (() => { throw new Error(`${argv[i - 1]} needs a value`); })();
    if (argv[i] === '--links') options.links = value().split(',');
    else if (argv[i] === '--rounds') options.rounds = Number(value());
    else if (argv[i] === '--out') options.out = value();
    else throw new Error(`unknown argument ${argv[i]} (--links loopback,1g,100m --rounds N --out FILE)`);
  }
  for (const link of options.links) if (!(link in LINKS)) throw new Error(`unknown link ${link}`);
  return options;
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

const MIME = { '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.html': 'text/html' };

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
    if (url.pathname === '/page.html') {
      res.writeHead(200, { 'content-type': 'text/html' });
      return res.end('<!doctype html><meta charset="utf-8"><title>integrity</title>');
    }
    const local = path.join(root, path.normalize(url.pathname));
    if (!local.startsWith(path.join(root, 'js')) && !local.startsWith(path.join(root, 'wasm'))) {
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

/** One runtime, one link: rounds of { case: ms }. `load(caseName)` times one load. */
async function measure(cases, rounds, load) {
  const times = Object.fromEntries(cases.map((name) => [name, []]));
  await load(cases[0]); // warm-up: instantiate, JIT, connection
  for (let round = 0; round < rounds; round++) {
    for (const name of cases) times[name].push(await load(name));
  }
  return times;
}

function summarize(times, base) {
  const out = {};
  for (const [name, values] of Object.entries(times)) {
    out[name] = { ms: median(values), ratio: name === base ? 1 : median(values.map((t, i) => t / times[base][i])) };
  }
  return out;
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const filter = await BloomFilter.create({ capacity: 10_000_000, errorRate: 0.01 });
  for (let i = 0; i < 1_000_000; i++) filter.add(`https://example.com/posts/${i}.html`);
  const file = filter.serialize();
  filter.free();
  const integrity = `sha256-${createHash('sha256').update(file).digest('base64')}`;
  const server = await startServer(file);
  const base = `http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (server.address()).port}`;
  const results = [];
  const profile = mkdtempSync(path.join(os.tmpdir(), 'bloomgate-integrity-'));
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGS });
  try {
    const page = await browser.newPage();
    await page.goto(`${base}/page.html`);
    const bare = await browser.newPage();
    await bare.addInitScript(() => Object.defineProperty(globalThis.crypto, 'subtle', { value: undefined }));
    await bare.goto(`${base}/page.html`);
    for (const p of [page, bare]) {
      await p.evaluate(async () => {
        const { loadFilter: load } = await import('/js/index.js');
        /** @type {any} */ (globalThis).timeLoad = async (url, integrity) => {
          const t = performance.now();
          const f = await load(url, integrity ? { integrity } : {});
          const ms = performance.now() - t;
          if (!f.mightContain('https://example.com/posts/7.html')) throw new Error('a member is missing');
          f.free();
          return ms;
        };
      });
    }
    let seq = 0;
    for (const link of options.links) {
      const rounds = options.rounds ?? ROUNDS[link];
      const url = () => `${base}/f.bgf?rate=${LINKS[link]}&n=${seq++}`;
      const node = await measure(['none', 'node:crypto', 'SubtleCrypto'], rounds, async (name) => {
        const previous = registerStreamingSha256(name === 'SubtleCrypto' ? null : undefined);
        try {
          const t = performance.now();
          const f = await loadFilter(url(), name === 'none' ? {} : { integrity });
          const ms = performance.now() - t;
          if (!f.mightContain('https://example.com/posts/7.html')) throw new Error('a member is missing');
          f.free();
          return ms;
        } finally {
          registerStreamingSha256(previous);
        }
      });
      const web = await measure(['none', 'SubtleCrypto', 'wasm (no crypto.subtle)'], rounds, (name) =>
        (name === 'wasm (no crypto.subtle)' ? bare : page).evaluate(([u, i]) => /** @type {any} */ (globalThis).timeLoad(u, i), [url(), name === 'none' ? null : integrity]));
      results.push({ link, rounds, node: summarize(node, 'none'), chromium: summarize(web, 'none') });
      process.stderr.write(`integrity: ${link} done\n`);
    }
  } finally {
    await browser.close();
    server.close();
    rmSync(profile, { recursive: true, force: true });
  }
  const lines = [
    '# What `integrity` costs loadFilter(url)',
    '',
    `- Date: ${new Date().toISOString()}; Node ${process.versions.node}; ${os.cpus()[0]?.model.trim()} × ${os.cpus().length}; 1-minute load average at the end ${os.loadavg()[0].toFixed(2)}`,
    `- Command: \`node bench/integrity.mjs${process.argv.length > 2 ? ` ${process.argv.slice(2).join(' ')}` : ''}\` (method at the top of [bench/integrity.mjs](../integrity.mjs))`,
    `- One ${file.length.toLocaleString('en-US')}-byte file (10M-key capacity, p = 0.01) from 127.0.0.1; ms, median of the rounds; × = median of per-round ratios to the same round's load without integrity`,
    '',
    '| link | rounds | Node: none | node:crypto as chunks land | SubtleCrypto at the end | Chromium: none | SubtleCrypto at the end | wasm digest as chunks land (no crypto.subtle) |',
    '|:---|---:|---:|---:|---:|---:|---:|---:|',
  ];
  const cell = ({ ms, ratio }) => (ratio === 1 ? `${ms.toFixed(1)}` : `${ms.toFixed(1)} (${ratio.toFixed(2)}×)`);
  for (const { link, rounds, node, chromium: web } of results) {
    lines.push(`| ${LINK_LABEL[link]} | ${rounds} | ${cell(node.none)} | ${cell(node['node:crypto'])} | ${cell(node.SubtleCrypto)} | ${cell(web.none)} | ${cell(web.SubtleCrypto)} | ${cell(web['wasm (no crypto.subtle)'])} |`);
  }
  const report = `${lines.join('\n')}\n`;
  process.stdout.write(report);
  mkdirSync(path.dirname(options.out), { recursive: true });
  writeFileSync(options.out, report);
}

await main();
