#!/usr/bin/env node
// node bench/kinds.mjs [--quick] [--n 1000000,10000000] [--peer-n N] [--probes N] [--rounds R] [--min-ms MS] [--out FILE.md]
//
// Every filter kind side by side (issue 5, item 7): for each kind, at a
// requested error rate of 1% and 0.1%, for 1M and 10M keys (--quick: 1M only):
//
//   bits per key      serialized .bgf bytes × 8 / n (header and all: what a client downloads)
//   measured error    non-member probes answered "maybe" / probes (1,000,000 probes; counts shown)
//   build ns per key  one timed build: create + addAll(strings) (+ the first query, which
//                     builds a static fuse filter), divided by n
//   query ns          non-member keys, median of interleaved rounds (bench/timing.mjs):
//                     `mightContain(string)` one call per key, and `mightContainMany(strings)`
//                     in batches of 1,000 (time includes reading the answers)
//   file bytes        `serialize().length`
//
// Kinds: classic, blocked, fuse (errorRate 0.01 -> fuse8, 0.001 -> fuse16: fuse rates are
// natural, 2^-8 and 2^-16), counting, scalable (built to its capacity), cuckoo (an insert that
// cannot be placed raises E_FULL: reported in the table, never hidden).
//
// Peers, on the same keys:
// - `bloomfilter` (npm): `new BloomFilter(m, k)` with classic's m and k, at the full n.
// - `bloom-filters` (npm) BloomFilter.create(n, ε), CuckooFilter.create(n, ε),
//   XorFilter.create(keys, 8 | 16): about 100× slower, so they are built on the first
//   --peer-n keys (100,000; 20,000 in --quick), their error rate is measured on --peer-n
//   probes, and queries are timed on 2,000-key subsets. Their "bits per key" is the in-memory
//   structure (Bloom: m; Cuckoo: slots × fingerprint; Xor: slots × fingerprint bits); the file
//   is their `saveAsJSON()` as JSON text.
//
// The floor is the information-theoretic minimum log2(1/ε) bits per key for a static
// approximate-membership structure with false-positive rate ε (classic Bloom needs 1.44× it).
//
// Output: Markdown on stdout and in bench/results/kinds.md, the raw numbers in
// bench/results/kinds.json (read by bench/plot.mjs, which draws docs/images/bits-per-key.svg).
// Query loops are compiled per case (new Function) so each call site sees one filter and one
// method. Progress on stderr. Keys come from bench/keys.mjs (38-byte URL-shaped keys); at 10M members
// every 7-digit index is a member, so the probes are keyAt(10^7 + i): 39 bytes, same shape.
import os from 'node:os';
import fs from 'node:fs';
import path from 'node:path';
import v8 from 'node:v8';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

import { BloomFilter as Bloomfilter } from 'bloomfilter';
import bloomFiltersPackage from 'bloom-filters';

import { BloomFilter } from '../js/index.js';
import { keyAt, makeKeys, batches } from './keys.mjs';
import { runRounds, sink } from './timing.mjs';

const benchDir = path.dirname(fileURLToPath(import.meta.url));
const root = path.dirname(benchDir);
const packageVersion = (name) =>
  JSON.parse(fs.readFileSync(path.join(root, 'node_modules', name, 'package.json'), 'utf8')).version;

const KINDS = ['classic', 'blocked', 'fuse', 'fuse4', 'counting', 'scalable', 'cuckoo'];
const RATES = [0.01, 0.001];
const BATCH = 1000;

function parseArgs(argv) {
  const config = {
    quick: false,
    ns: [1_000_000, 10_000_000],
    peerN: 100_000,
    peerTimeSubset: 2_000,
    fpProbes: 1_000_000,
    timeProbes: 200_000,
    rounds: 5,
    minMs: 150,
    out: path.join(benchDir, 'results', 'kinds.md'),
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const num = () => {
      const v = Number(argv[++i]);
      if (!Number.isFinite(v) || v <= 0) throw new RangeError(`${arg} needs a positive number`);
      return Math.round(v);
    };
    if (arg === '--quick') Object.assign(config, { quick: true, ns: [1_000_000], peerN: 20_000, timeProbes: 100_000, rounds: 3, minMs: 100 });
    else if (arg === '--n') config.ns = argv[++i].split(',').map((s) => Math.round(Number(s)));
    else if (arg === '--peer-n') config.peerN = num();
    else if (arg === '--probes') config.fpProbes = num();
    else if (arg === '--rounds') config.rounds = num();
    else if (arg === '--min-ms') config.minMs = num();
    else if (arg === '--out') config.out = path.resolve(argv[++i]);
    else if (arg === '--help' || arg === '-h') {
      process.stdout.write('usage: node bench/kinds.mjs [--quick] [--n 1000000,10000000] [--peer-n N] [--probes N] [--rounds R] [--min-ms MS] [--out FILE.md]\n');
      process.exit(0);
    } else throw new RangeError(`unknown option ${arg}`);
  }
  for (const n of config.ns) if (!(n >= 1000 && n <= 10_000_000)) throw new RangeError('--n values must be in [1000, 10^7]');
  config.timeProbes = Math.min(config.timeProbes, config.fpProbes);
  config.peerTimeSubset = Math.min(config.peerTimeSubset, config.peerN);
  return config;
}

const t0 = Date.now();
const log = (msg) => process.stderr.write(`kinds [${((Date.now() - t0) / 1000).toFixed(1).padStart(6)} s] ${msg}\n`);
const nowNs = () => process.hrtime.bigint();
const floorBits = (e) => Math.log2(1 / e);

/** Probe strings: never-inserted keys, flat strings (see bench/keys.mjs). */
function makeProbes(n, count) {
  if (n + count <= 10 ** 7) return makeKeys(n, count).strings;
  // Every 7-digit index is a member: use 8-digit indexes, flattened once through a Buffer.
  const out = new Array(count);
  for (let i = 0; i < count; i++) out[i] = Buffer.from(keyAt(10 ** 7 + i), 'latin1').latin1Slice();
  return out;
}

/** Build one bloomgate filter from `members`; returns { filter, buildNs } or { error }. */
async function buildKind(kind, errorRate, members) {
  const n = members.length;
  let filter = null;
  const start = nowNs();
  try {
    filter = await BloomFilter.create({ capacity: n, errorRate, kind });
    for (const chunk of batches(members, 65536)) filter.addAll(chunk);
    sink.value += filter.mightContain(members[0]) ? 1 : 0; // builds a static (fuse) filter
  } catch (error) {
    if (filter) filter.free();
    return { error: { code: error.code ?? error.name, message: error.message }, buildNs: Number(nowNs() - start) / n };
  }
  return { filter, buildNs: Number(nowNs() - start) / n };
}

function countMaybe(filter, keys) {
  let maybe = 0;
  for (const chunk of batches(keys, BATCH)) for (const r of filter.mightContainMany(chunk)) if (r) maybe++;
  return maybe;
}

// Each pass is compiled from its own source text (new Function), so each loop has its own
// type feedback and its call site stays monomorphic: one filter, one method, as in a real app.
function loop(target, method, batched) {
  const body = batched
    ? `let hits = 0;
       for (let j = 0; j < keyBatches.length; j++) {
         const answers = target.${method}(keyBatches[j]);
         for (let i = 0; i < answers.length; i++) if (answers[i]) hits++;
       }
       sink.value += hits;
       return count;`
    : `let hits = 0;
       for (let i = 0; i < keys.length; i++) if (target.${method}(keys[i])) hits++;
       sink.value += hits;
       return count;`;
  // eslint-disable-next-line no-new-func
  return new Function('target', 'keys', 'keyBatches', 'count', 'sink', `return function pass() { ${body} };`);
}

function queryCases(id, probeSubset, target, single, many) {
  const probeBatches = batches(probeSubset, BATCH);
  const cases = [{ id: `${id}.single`, pass: loop(target, single, false)(target, probeSubset, probeBatches, probeSubset.length, sink) }];
  if (many) cases.push({ id: `${id}.batch`, pass: loop(target, many, true)(target, probeSubset, probeBatches, probeSubset.length, sink) });
  return cases;
}

async function runSize(n, config) {
  log(`n = ${n.toLocaleString('en-US')}: generating keys`);
  const members = makeKeys(0, n).strings;
  const probes = makeProbes(n, config.fpProbes);
  const timeProbes = probes.slice(0, config.timeProbes);
  const rows = [];
  const live = [];
  const cases = [];
  for (const errorRate of RATES) {
    for (const kind of KINDS) {
      log(`n = ${n.toLocaleString('en-US')}: ${kind} at ${errorRate}: build`);
      const built = await buildKind(kind, errorRate, members);
      const row = { impl: 'bloomgate', kind, requested: errorRate, n };
      rows.push(row);
      if (built.error) {
        Object.assign(row, { error: built.error, buildNs: built.buildNs });
        log(`  ${kind}: ${built.error.code}: ${built.error.message}`);
        continue;
      }
      const f = built.filter;
      const stats = f.stats();
      const fileBytes = f.serialize().length;
      let falseNegatives = 0;
      for (let i = 0; i < n; i += 97) if (!f.mightContain(members[i])) falseNegatives++;
      const fp = countMaybe(f, probes);
      Object.assign(row, {
        kindName: f.kind,
        m: stats.m,
        k: stats.k,
        fileBytes,
        bitsPerKey: (fileBytes * 8) / n,
        fp,
        probes: probes.length,
        fpRate: fp / probes.length,
        falseNegatives,
        buildNs: built.buildNs,
      });
      log(`  ${f.kind}: ${row.bitsPerKey.toFixed(2)} bits/key, error ${(row.fpRate * 100).toFixed(4)} %, build ${row.buildNs.toFixed(0)} ns/key`);
      live.push(f);
      cases.push(...queryCases(`${n}.${kind}.${errorRate}`, timeProbes, f, 'mightContain', 'mightContainMany'));
    }
    // bloomfilter (npm) with classic's m and k, at the full n
    const classic = rows.find((r) => r.kind === 'classic' && r.requested === errorRate && r.n === n);
    log(`n = ${n.toLocaleString('en-US')}: bloomfilter at ${errorRate}`);
    const start = nowNs();
    const bf = new Bloomfilter(classic.m, classic.k);
    for (let i = 0; i < n; i++) bf.add(members[i]);
    const buildNs = Number(nowNs() - start) / n;
    let fp = 0;
    for (let i = 0; i < probes.length; i++) if (bf.test(probes[i])) fp++;
    let falseNegatives = 0;
    for (let i = 0; i < n; i += 97) if (!bf.test(members[i])) falseNegatives++;
    const fileBytes = Buffer.byteLength(JSON.stringify([].slice.call(bf.buckets)));
    rows.push({
      impl: 'bloomfilter', kind: `bloomfilter ${packageVersion('bloomfilter')}`, requested: errorRate, n,
      m: bf.m, k: bf.k, bitsPerKey: bf.m / n, fileBytes, fileNote: 'JSON', fp, probes: probes.length,
      fpRate: fp / probes.length, falseNegatives, buildNs,
    });
    cases.push(...queryCases(`${n}.bloomfilter.${errorRate}`, timeProbes, bf, 'test', null));
  }

  log(`n = ${n.toLocaleString('en-US')}: timing queries (${cases.length} cases, ${config.rounds} rounds)`);
  const times = await runRounds(cases, {
    rounds: config.rounds,
    minMs: config.minMs,
    onProgress: (r, total) => log(`  round ${r}/${total}`),
  });
  for (const row of rows) {
    if (row.error) continue;
    const id = `${n}.${row.impl === 'bloomgate' ? row.kind : 'bloomfilter'}.${row.requested}`;
    row.querySingleNs = times.get(`${id}.single`)?.median ?? null;
    row.queryBatchNs = times.get(`${id}.batch`)?.median ?? null;
    row.querySingleBestNs = times.get(`${id}.single`)?.min ?? null;
    row.queryBatchBestNs = times.get(`${id}.batch`)?.min ?? null;
  }
  for (const f of live) f.free();
  return rows;
}

/** bloom-filters' Bloom, Cuckoo and Xor filters on the first peerN keys. */
async function runPeers(config) {
  const bfs = bloomFiltersPackage;
  const n = config.peerN;
  const members = makeKeys(0, n).strings;
  const probes = makeKeys(n, n).strings;
  const timeProbes = probes.slice(0, config.peerTimeSubset);
  const rows = [];
  const cases = [];
  const makers = [
    ['Bloom', (e) => { const f = bfs.BloomFilter.create(n, e); for (const x of members) f.add(x); return f; },
      (f) => f._size],
    ['Cuckoo', (e) => { const f = bfs.CuckooFilter.create(n, e); for (const x of members) { if (!f.add(x)) throw Object.assign(new Error('add returned false (full)'), { code: 'full' }); } return f; },
      (f) => f._size * f._bucketSize * f._fingerprintLength * 4], // fingerprints are hex digits
    ['Xor', (e) => bfs.XorFilter.create(members, e >= 0.005 ? 8 : 16),
      (f) => f._filter.length * f._bits],
  ];
  for (const errorRate of RATES) {
    for (const [name, make, structureBits] of makers) {
      log(`bloom-filters ${name} at ${errorRate}: ${n.toLocaleString('en-US')} keys`);
      const row = { impl: 'bloom-filters', kind: `bloom-filters ${name}`, requested: errorRate, n };
      rows.push(row);
      const start = nowNs();
      let f;
      try {
        f = make(errorRate);
      } catch (error) {
        row.error = { code: error.code ?? error.name, message: error.message };
        continue;
      }
      const buildNs = Number(nowNs() - start) / n;
      let fp = 0;
      for (let i = 0; i < probes.length; i++) if (f.has(probes[i])) fp++;
      let falseNegatives = 0;
      for (let i = 0; i < n; i += 97) if (!f.has(members[i])) falseNegatives++;
      const fileBytes = Buffer.byteLength(JSON.stringify(f.saveAsJSON()));
      const bits = structureBits(f);
      Object.assign(row, {
        kindName: name === 'Xor' ? `xor${errorRate >= 0.005 ? 8 : 16}` : name, bitsPerKey: bits / n, fileBytes, fileNote: 'JSON',
        fp, probes: probes.length, fpRate: fp / probes.length, falseNegatives, buildNs,
      });
      cases.push(...queryCases(`peer.${name}.${errorRate}`, timeProbes, f, 'has', null));
    }
  }
  log(`bloom-filters: timing queries on ${timeProbes.length.toLocaleString('en-US')}-key subsets`);
  const times = await runRounds(cases, { rounds: 3, minMs: config.minMs });
  for (const row of rows) {
    if (row.error) continue;
    row.querySingleNs = times.get(`peer.${row.kind.split(' ')[1]}.${row.requested}.single`)?.median ?? null;
    row.querySingleBestNs = times.get(`peer.${row.kind.split(' ')[1]}.${row.requested}.single`)?.min ?? null;
    row.queryBatchNs = null;
  }
  return rows;
}

// ---------------------------------------------------------------- report
const fmtNs = (v) => (v == null ? '–' : v >= 1000 ? Math.round(v).toLocaleString('en-US') : v.toFixed(v >= 100 ? 0 : 1));
const fmtQuery = (median, best) => (median == null ? '–' : `${fmtNs(median)} (${fmtNs(best)})`);
const fmtInt = (v) => (v == null ? '–' : v.toLocaleString('en-US'));
function fmtRate(row) {
  if (row.fpRate == null) return '–';
  const pct = row.fpRate * 100;
  const digits = pct >= 0.1 ? 3 : pct >= 0.001 ? 4 : 5;
  return `${pct.toFixed(digits)} % (${fmtInt(row.fp)})`;
}
function table(header, rows) {
  const lines = [`| ${header.join(' | ')} |`, `|${header.map((_, i) => (i < 2 ? ':---' : '---:')).join('|')}|`];
  for (const row of rows) lines.push(`| ${row.join(' | ')} |`);
  return lines.join('\n');
}
function rowCells(r) {
  const name = r.impl === 'bloomgate' ? `\`${r.kindName ?? r.kind}\`` : r.impl === 'bloom-filters' ? (r.kindName?.startsWith('xor') ? `${r.kind} (${r.kindName})` : r.kind) : r.kind;
  if (r.error) return [name, `${r.requested * 100} %`, `**${r.error.code}**: ${r.error.message}`, '', '', '', '', '', ''];
  return [
    name,
    `${r.requested * 100} %`,
    r.bitsPerKey.toFixed(2),
    r.fp > 0 ? `${(r.bitsPerKey / floorBits(r.fpRate)).toFixed(2)}×` : '–',
    fmtRate(r),
    fmtNs(r.buildNs),
    fmtQuery(r.querySingleNs, r.querySingleBestNs),
    fmtQuery(r.queryBatchNs, r.queryBatchBestNs),
    `${fmtInt(r.fileBytes)}${r.fileNote ? ` (${r.fileNote})` : ''}`,
  ];
}
const HEADER = ['Filter', 'asked ε', 'bits / key', '÷ floor', 'measured error (false positives)', 'build ns / key', 'query ns, single', 'query ns, batch', 'file bytes'];

function render(result) {
  const { config, machine } = result;
  const out = [];
  out.push('# bloomgate kinds benchmark');
  out.push('');
  out.push('Generated by `node bench/kinds.mjs' + (config.quick ? ' --quick' : '') + '` (documentation at the top of [`bench/kinds.mjs`](../kinds.mjs); plot: `node bench/plot.mjs`).');
  out.push('');
  out.push(`- Date: ${machine.date}; Node ${machine.node}; ${machine.cpu} × ${machine.cores} logical cores; 1-minute load average ${machine.loadStart.toFixed(2)} at start, ${machine.loadEnd.toFixed(2)} at end (other work on the machine inflates every time).`);
  out.push(`- Keys: \`${keyAt(0)}\` … (38 bytes); members are indexes 0 … n−1, probes are never-inserted keys of the same shape (at 10M: 8-digit indexes, 39 bytes).`);
  out.push(`- **bits / key** = serialized bytes × 8 / n for bloomgate (the 128-byte header and all); for \`bloomfilter\` its m / n; for \`bloom-filters\` the in-memory structure (their file is JSON, far larger). **÷ floor** divides by log2(1/ε) at the *measured* ε, the information-theoretic minimum.`);
  out.push(`- **measured error**: ${fmtInt(config.fpProbes)} non-member probes for bloomgate and \`bloomfilter\` (false-positive count in parentheses); \`bloom-filters\`: ${fmtInt(config.peerN)} probes.`);
  out.push(`- **build**: one timed build, \`create\` + \`addAll\` (+ the first query, which constructs a fuse filter), ÷ n. Peers: their \`add\` loop (Xor: \`XorFilter.create(keys)\`).`);
  out.push(`- **query**: non-member keys; median of ${config.rounds} interleaved rounds of ≥ ${config.minMs} ms (bench/timing.mjs) over ${fmtInt(config.timeProbes)} probes; single = \`mightContain(string)\`, batch = \`mightContainMany(strings)\` in batches of ${BATCH}. Shown as median (fastest round): on a shared machine the fastest round is the better estimate of the uncontended cost.`);
  out.push(`- \`fuse\` is static with natural rates: asked 1 % → \`fuse8\` (2^-8 ≈ 0.39 %), asked 0.1 % → \`fuse16\` (2^-16 ≈ 0.0015 %). \`scalable\` is built to its capacity (one layer's worth of growth is not exercised here). \`counting\` stores 4-bit counters (publish \`toClassic()\`, the classic row).`);
  out.push('');
  for (const n of config.ns) {
    out.push(`## ${fmtInt(n)} keys`);
    out.push('');
    const rows = result.rows.filter((r) => r.n === n && r.impl !== 'bloom-filters');
    const floorRows = RATES.map((e) => [`floor log2(1/ε)`, `${e * 100} %`, floorBits(e).toFixed(2), '1.00×', '', '', '', '', '']);
    out.push(table(HEADER, [...rows.map(rowCells), ...floorRows]));
    out.push('');
    const fn = rows.filter((r) => r.falseNegatives > 0);
    out.push(fn.length ? `**False negatives** (members checked: every 97th): ${fn.map((r) => `${r.kind} ${r.falseNegatives}`).join(', ')}.` : 'No false negatives (every 97th member checked in each filter).');
    out.push('');
  }
  out.push(`## \`bloom-filters\` ${result.versions.bloomFilters}, on ${fmtInt(config.peerN)} keys`);
  out.push('');
  out.push(`About 100× slower than the others, so built on the first ${fmtInt(config.peerN)} keys, error rate measured on ${fmtInt(config.peerN)} probes, queries timed on ${fmtInt(config.peerTimeSubset)}-key subsets (median of 3 rounds); it has no batch query. Cuckoo: \`CuckooFilter.create(n, ε)\` (buckets of 4; its fingerprints are hex digits, 4 bits each). Xor: \`XorFilter.create(keys, 8)\` for 1 %, \`16\` for 0.1 %.`);
  out.push('');
  out.push(table(HEADER, result.rows.filter((r) => r.impl === 'bloom-filters').map(rowCells)));
  out.push('');
  out.push(`Checksum of all answers (keeps the work observable): ${result.sink}. Total run time ${(result.seconds / 60).toFixed(1)} min.`);
  out.push('');
  return out.join('\n');
}

async function main() {
  // 10M keys as strings take ~1 GB of heap: give V8 room when its default limit is small.
  if (!process.env.BLOOMGATE_KINDS_CHILD && v8.getHeapStatistics().heap_size_limit < 6 * 2 ** 30) {
    const child = spawnSync(process.execPath, ['--max-old-space-size=8192', fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
      stdio: 'inherit',
      env: { ...process.env, BLOOMGATE_KINDS_CHILD: '1' },
    });
    process.exit(child.status ?? 1);
  }
  const config = parseArgs(process.argv.slice(2));
  const machine = {
    date: new Date().toISOString(),
    node: process.versions.node,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    cpu: os.cpus()[0]?.model ?? 'unknown',
    cores: os.cpus().length,
    loadStart: os.loadavg()[0],
  };
  // Warm up: compile the wasm module and the JS paths of every kind before anything is timed.
  const warmKeys = makeKeys(0, 20_000).strings;
  for (const kind of KINDS) {
    const built = await buildKind(kind, 0.01, warmKeys);
    if (built.filter) { countMaybe(built.filter, warmKeys); built.filter.free(); }
  }
  const rows = [];
  for (const n of config.ns) rows.push(...(await runSize(n, config)));
  rows.push(...(await runPeers(config)));
  machine.loadEnd = os.loadavg()[0];
  const result = {
    config,
    machine,
    versions: { bloomfilter: packageVersion('bloomfilter'), bloomFilters: packageVersion('bloom-filters') },
    rows,
    sink: sink.value,
    seconds: (Date.now() - t0) / 1000,
  };
  const md = render(result);
  fs.mkdirSync(path.dirname(config.out), { recursive: true });
  fs.writeFileSync(config.out, md);
  fs.writeFileSync(config.out.replace(/\.md$/, '.json'), JSON.stringify(result, null, 2) + '\n');
  process.stdout.write(md);
  log(`wrote ${path.relative(root, config.out)} and ${path.relative(root, config.out.replace(/\.md$/, '.json'))}`);
}

main().catch((error) => {
  process.stderr.write(`kinds: ${error.stack ?? error}\n`);
  process.exit(1);
});
