#!/usr/bin/env node
// node bench/floor-speed.mjs [--quick] [--rounds R] [--min-ms MS] [--query-n N] [--build-n N]
//                            [--build-rounds R] [--no-browser] [--no-build] [--no-query] [--out FILE.md]
//
// fuse4's speed targets (issue 22), as ratios measured side by side in one run:
//
//   query   mightContain(string) and mightContainMany(strings) of fuse4 against fuse8, both at
//           p = 2^-8 on the same --query-n (10^6) keys, in Node and in headless Chromium (the same
//           cases, bench/floor-cases.mjs); also fuse4 with 3 value bits (and its valueOf) and
//           fuse4 at p = 0.001. Target: fuse4 <= 1.2 x fuse8's time.
//   build   create + add --build-n (10^7) keys + seal + serialize of fuse4 (and fuse8 for
//           reference), the wasm build (a Node child process: packed keys through addAll, 4,096
//           a call, with values addAll(keys, values)) against the native build of the same kind (bench/floor_build.c: the same
//           keys through bg_filter_add_many), each in its own process, rounds interleaved; the
//           two files must be byte-identical. Target: wasm >= 0.5 x native speed.
//
// The machine is shared: the 1-minute load average is printed with every round, and each
// ratio is taken within a round (median over rounds; the best round beside it).
import os from 'node:os';
import fs from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

import { BloomFilter } from '../js/index.js';
import { createFloorBench, valueAt } from './floor-cases.mjs';
import { makeKeys } from './browser-cases.mjs';
import { median } from './timing.mjs';

const benchDir = path.dirname(fileURLToPath(import.meta.url));
const root = path.dirname(benchDir);
const t0 = Date.now();
const log = (text) => process.stderr.write(`floor-speed [${((Date.now() - t0) / 1000).toFixed(1).padStart(6)} s] ${text}\n`);
const load = () => os.loadavg().map((x) => x.toFixed(2)).join(' ');

/* ---- the wasm build, in a child process (as the native build is) ---- */

if (process.argv[2] === '--wasm-build-child') {
  const [kind, n, errorRate, valueBits] = process.argv.slice(3).map((x, i) => (i === 0 ? x : Number(x)));
  const { bytes, offsets } = packKeys(n);
  const batches = [];
  for (let i = 0; i < n; i += 4096) {
    const end = Math.min(n, i + 4096);
    batches.push({ bytes: bytes.subarray(offsets[i], offsets[end]), offsets: offsets.slice(i, end + 1).map((x) => x - offsets[i]) });
  }
  const values = valueBits > 0 ? Uint8Array.from({ length: n }, (_, i) => valueAt(i, valueBits)) : null;
  await BloomFilter.create({ capacity: 1, errorRate: 0.5 }).then((f) => f.free()); // instantiate the module outside the clock
  const start = performance.now();
  const filter = await BloomFilter.create({ capacity: n, errorRate, kind, ...(valueBits > 0 && { valueBits }) });
  if (values) batches.forEach((batch, b) => filter.addAll(batch, values.subarray(4096 * b, 4096 * b + batch.offsets.length - 1)));
  else for (const batch of batches) filter.addAll(batch);
  const added = performance.now();
  const file = filter.serialize(); // seals first
  const done = performance.now();
  filter.free();
  process.stdout.write(`${JSON.stringify({
    kind, n, errorRate, valueBits, bytes: file.length,
    seconds: { add: (added - start) / 1000, sealAndSerialize: (done - added) / 1000, total: (done - start) / 1000 },
    sha256: createHash('sha256').update(file).digest('hex'),
  })}\n`);
  process.exit(0);
}

/** Keys 0 .. n-1 of bench/keys.mjs, packed (38 bytes each below 10^7). */
function packKeys(n) {
  const length = 38;
  const bytes = new Uint8Array(length * n);
  const template = Buffer.from('https://example.com/posts/0000000.html', 'latin1');
  const offsets = new Uint32Array(n + 1);
  for (let i = 0; i < n; i++) {
    const at = i * length;
    bytes.set(template, at);
    for (let d = 32, value = i; value > 0; d--, value = Math.floor(value / 10)) bytes[at + d] = 48 + (value % 10);
    offsets[i] = at;
  }
  offsets[n] = length * n;
  return { bytes, offsets };
}

function parseArgs(argv) {
  const config = { rounds: 7, minMs: 200, queryN: 1_000_000, buildN: 10_000_000, buildRounds: 3, browser: true, build: true, query: true, batch: 1000,
    out: path.join(benchDir, 'results', 'floor-speed.md') };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const num = () => Number(argv[++i]);
    if (arg === '--quick') Object.assign(config, { rounds: 3, minMs: 100, buildRounds: 1 });
    else if (arg === '--rounds') config.rounds = num();
    else if (arg === '--min-ms') config.minMs = num();
    else if (arg === '--query-n') config.queryN = num();
    else if (arg === '--build-n') config.buildN = num();
    else if (arg === '--build-rounds') config.buildRounds = num();
    else if (arg === '--no-browser') config.browser = false;
    else if (arg === '--no-build') config.build = false;
    else if (arg === '--no-query') config.query = false;
    else if (arg === '--out') config.out = path.resolve(argv[++i]);
    else throw new RangeError(`unknown option ${arg}`);
  }
  return config;
}

/* ---- query ---- */

const QUERY_FILTERS = [
  { name: 'fuse8', kind: 'fuse8', errorRate: 2 ** -8, valueBits: 0 },
  { name: 'fuse4', kind: 'fuse4', errorRate: 2 ** -8, valueBits: 0 },
  { name: 'fuse4+3', kind: 'fuse4', errorRate: 2 ** -8, valueBits: 3 },
  { name: 'fuse4@0.001', kind: 'fuse4', errorRate: 0.001, valueBits: 0 },
];

async function buildQueryFiles(n) {
  const { strings } = makeKeys(0, n);
  const files = {};
  for (const spec of QUERY_FILTERS) {
    const filter = await BloomFilter.create({ capacity: n, errorRate: spec.errorRate, kind: spec.kind, ...(spec.valueBits > 0 && { valueBits: spec.valueBits }) });
    if (spec.valueBits > 0) for (let i = 0; i < n; i++) filter.add(strings[i], valueAt(i, spec.valueBits));
    else for (let i = 0; i < n; i += 65536) filter.addAll(strings.slice(i, i + 65536));
    files[spec.name] = { bytes: filter.serialize(), valueBits: spec.valueBits, n };
    filter.free();
    log(`${spec.name}: ${files[spec.name].bytes.length} bytes`);
  }
  return files;
}

const PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>floor</title>
<script type="module">
import { BloomFilter } from '/js/index.js';
import { createFloorBench } from '/bench/floor-cases.mjs';
window.startFloor = async (names, meta, config) => {
  const files = {};
  for (const name of names) files[name] = { ...meta[name], bytes: new Uint8Array(await (await fetch('/filters/' + encodeURIComponent(name) + '.bgf')).arrayBuffer()) };
  window.floor = await createFloorBench({ BloomFilter, files, config });
  return { ids: window.floor.ids, agent: navigator.userAgent };
};
document.documentElement.dataset.ready = 'yes';
</script></head><body>floor</body></html>`;

async function startServer(files) {
  const server = createServer((req, res) => {
    const pathname = decodeURIComponent(new URL(req.url, 'http://127.0.0.1').pathname);
    let body;
    let type = 'text/javascript';
    if (pathname === '/floor.html') [body, type] = [Buffer.from(PAGE), 'text/html; charset=utf-8'];
    else if (pathname.startsWith('/filters/')) [body, type] = [Buffer.from(files[pathname.slice(9, -4)]?.bytes ?? ''), 'application/octet-stream'];
    else if (/^\/(js|wasm)\/[\w./-]+$/.test(pathname) && !pathname.includes('..') || ['/bench/floor-cases.mjs', '/bench/browser-cases.mjs', '/bench/keys.mjs'].includes(pathname)) {
      try {
        body = fs.readFileSync(path.join(root, pathname));
        if (pathname.endsWith('.wasm')) type = 'application/wasm';
      } catch {
        body = undefined;
      }
    }
    if (!body) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': type, 'content-length': body.length, 'cache-control': 'no-store' }).end(body);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }) };
}

async function queryBench(config) {
  const files = await buildQueryFiles(config.queryN);
  const benchConfig = { probes: 200_000, minMs: config.minMs, batch: config.batch };
  const node = await createFloorBench({ BloomFilter, files, config: benchConfig, log: (t) => log(`node: ${t}`) });
  let chromium = null;
  let server = null;
  let engine = null;
  let agent = null;
  if (config.browser) {
    const { engineMissing, launchEngine } = await import('../tests/browser/engines/index.mjs');
    const missing = engineMissing('chromium');
    if (missing) log(`chromium skipped: ${missing}`);
    else {
      server = await startServer(files);
      engine = await launchEngine('chromium');
      const page = await engine.newPage();
      await page.goto(`${server.origin}/floor.html`);
      await page.waitFor(() => document.documentElement.dataset.ready === 'yes');
      const meta = Object.fromEntries(Object.entries(files).map(([name, file]) => [name, { valueBits: file.valueBits, n: file.n }]));
      ({ agent } = await page.evaluate(([names, m, c]) => window.startFloor(names, m, c), [Object.keys(files), meta, benchConfig]));
      chromium = { round: (r) => page.evaluate((round) => window.floor.round(round), r) };
      log(`chromium: ${agent}`);
    }
  }
  const rounds = { node: [], chromium: [] };
  const loads = [load()];
  for (let r = 0; r < config.rounds; r++) {
    // Runtimes alternate which goes first.
    const order = r % 2 === 0 ? ['node', 'chromium'] : ['chromium', 'node'];
    for (const runtime of order) {
      if (runtime === 'node') rounds.node.push(node.round(r));
      else if (chromium) rounds.chromium.push(await chromium.round(r));
    }
    loads.push(load());
    log(`query round ${r + 1}/${config.rounds} (load ${load()})`);
  }
  node.free();
  await engine?.close();
  await server?.close();
  return { files, rounds, loads, agent, ids: node.ids };
}

/* ---- build ---- */

function nativeBuilder() {
  const build = spawnSync('sh', [path.join(benchDir, 'build-native.sh'), 'floor_build'], { encoding: 'utf8' });
  if (build.status !== 0) throw new Error(`native build failed:\n${build.stderr}`);
  return build.stdout.trim().split('\n').pop();
}

function runJson(command, args) {
  const run = spawnSync(command, args.map(String), { encoding: 'utf8', maxBuffer: 1 << 20 });
  if (run.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (${run.status}):\n${run.stderr}`);
  return JSON.parse(run.stdout);
}

const BUILD_CASES = [
  { kind: 'fuse4', errorRate: 2 ** -8, valueBits: 0 },
  { kind: 'fuse8', errorRate: 2 ** -8, valueBits: 0 },
  { kind: 'fuse4', errorRate: 2 ** -8, valueBits: 3 },
];

function buildBench(config) {
  const binary = nativeBuilder();
  const results = [];
  for (const spec of BUILD_CASES) {
    const label = `${spec.kind}${spec.valueBits ? `+${spec.valueBits}` : ''}`;
    const rows = [];
    for (let r = 0; r < config.buildRounds; r++) {
      const before = load();
      const pair = {};
      // The two builds alternate which goes first.
      for (const side of r % 2 === 0 ? ['native', 'wasm'] : ['wasm', 'native']) {
        pair[side] = side === 'native'
          ? runJson(binary, ['--kind', spec.kind, '--n', config.buildN, '--error-rate', spec.errorRate, '--value-bits', spec.valueBits])
          : runJson(process.execPath, [fileURLToPath(import.meta.url), '--wasm-build-child', spec.kind, config.buildN, spec.errorRate, spec.valueBits]);
      }
      if (pair.native.sha256 !== pair.wasm.sha256) throw new Error(`${label}: the wasm file differs from the native file (${pair.wasm.sha256} vs ${pair.native.sha256})`);
      rows.push({ ...pair, load: `${before} → ${load()}` });
      log(`build ${label} round ${r + 1}: native ${pair.native.seconds.total.toFixed(2)} s, wasm ${pair.wasm.seconds.total.toFixed(2)} s (load ${load()})`);
    }
    results.push({ spec, label, rows });
  }
  return results;
}

/* ---- report ---- */

const f2 = (x) => x.toFixed(2);

function report(config, query, build) {
  const out = [];
  out.push('# fuse4 speed: queries against fuse8 (Node, Chromium), build wasm against native', '');
  out.push(`Run ${new Date().toISOString()} on ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, Node ${process.version}; load average at start ${query?.loads[0] ?? load()}.`);
  out.push('', `\`node bench/floor-speed.mjs ${process.argv.slice(2).join(' ')}\``.replace(/ `$/, '`'), '');
  if (query) {
    out.push(`## Queries (${config.queryN.toLocaleString('en-US')} keys, 200,000 keys a pass, median of ${config.rounds} rounds, best round in brackets; ns per key)`, '');
    for (const runtime of ['node', 'chromium']) {
      const rounds = query.rounds[runtime];
      if (rounds.length === 0) continue;
      out.push(`### ${runtime === 'node' ? `Node ${process.version}` : `Chromium (${query.agent})`}`, '');
      out.push('| case | ' + Object.keys(query.files).join(' | ') + ' | fuse4 ÷ fuse8 (median of per-round ratios) | target ≤ 1.2 |');
      out.push('|---|' + Object.keys(query.files).map(() => '---:|').join('') + '---:|:---|');
      for (const what of ['miss', 'hit', 'many', 'value']) {
        const cells = Object.keys(query.files).map((name) => {
          const id = `${name}:${what}`;
          if (!(id in rounds[0])) return '–';
          const values = rounds.map((round) => round[id]);
          return `${f2(median(values))} (${f2(Math.min(...values))})`;
        });
        if (cells.every((cell) => cell === '–')) continue;
        const ratios = rounds.filter((round) => `fuse4:${what}` in round).map((round) => round[`fuse4:${what}`] / round[`fuse8:${what}`]);
        const ratio = ratios.length ? median(ratios) : NaN;
        out.push(`| ${what} | ${cells.join(' | ')} | ${Number.isNaN(ratio) ? '–' : `${f2(ratio)} (best round ${f2(Math.min(...ratios))})`} | ${Number.isNaN(ratio) ? '' : ratio <= 1.2 ? 'met' : '**FAIL**'} |`);
      }
      out.push('');
    }
    out.push(`Cases: miss = \`mightContain(string)\` on non-members, hit = on members, many = \`mightContainMany(strings)\` in batches of ${config.batch} on non-members, value = \`valueOf(string)\` on members. Filters: ${QUERY_FILTERS.map((s) => `${s.name} = ${s.kind} at p = ${s.errorRate}${s.valueBits ? `, ${s.valueBits} value bits` : ''} (${query.files[s.name].bytes.length.toLocaleString('en-US')} bytes)`).join('; ')}. Load average per round: ${query.loads.join(' | ')}.`, '');
  }
  if (build) {
    out.push(`## Build from ${config.buildN.toLocaleString('en-US')} keys: wasm (Node ${process.version}) against native (\`bench/floor_build.c\`, cc -O3)`, '');
    out.push('| kind | round | native s (add + seal) | wasm s (add + seal) | wasm speed ÷ native | load before → after | same bytes |');
    out.push('|---|---:|---:|---:|---:|:---|:---|');
    for (const { label, rows } of build) {
      rows.forEach((row, r) => {
        const native = row.native.seconds;
        const wasm = row.wasm.seconds;
        out.push(`| ${label} | ${r + 1} | ${f2(native.total)} (${f2(native.add)} + ${f2(native.seal + native.serialize)}) | ${f2(wasm.total)} (${f2(wasm.add)} + ${f2(wasm.sealAndSerialize)}) | ${f2(native.total / wasm.total)} | ${row.load} | ${row.native.sha256 === row.wasm.sha256 ? 'yes' : 'NO'} |`);
      });
      const ratios = rows.map((row) => row.native.seconds.total / row.wasm.seconds.total);
      const verdict = label.startsWith('fuse4') ? (median(ratios) >= 0.5 ? 'met' : '**FAIL**') : 'reference';
      out.push(`| ${label} | median | | | **${f2(median(ratios))}** (best ${f2(Math.max(...ratios))}) | target ≥ 0.5: ${verdict} | |`);
    }
    out.push('', 'Each build runs in its own process (keys packed before the clock starts; the wasm module instantiated before it). Native keys go in through `bg_filter_add_many` 4,096 a call, wasm keys through `addAll` of packed keys 4,096 a call; with value bits `addAll(keys, values)` (wasm) / `bg_filter_add_many_values` (native), 4,096 a call likewise. "Seal" includes serializing the file.', '');
  }
  out.push(`Load average at the end: ${load()}.`, '');
  return out.join('\n');
}

const config = parseArgs(process.argv.slice(2));
log(`start (load ${load()})`);
const query = config.query ? await queryBench(config) : null;
const build = config.build ? buildBench(config) : null;
const text = report(config, query, build);
process.stdout.write(text);
fs.mkdirSync(path.dirname(config.out), { recursive: true });
fs.writeFileSync(config.out, text);
fs.writeFileSync(config.out.replace(/\.md$/, '.json'), JSON.stringify({ config, query: query && { rounds: query.rounds, loads: query.loads, agent: query.agent }, build }, null, 1));
log(`wrote ${path.relative(root, config.out)}`);
