#!/usr/bin/env node
// node bench/floor.mjs [--n 1e4,1e6,1e8] [--rates LIST] [--values 0,3] [--probes N] [--tiny-probes N]
//                      [--member-sample N] [--out FILE.md]
//
// How near the floor fuse4 is (issue 22): for each n, requested rate p and value width r, one
// fuse4 filter built in WebAssembly from n keys, its file measured and probed:
//
//   bits/key   the whole .bgf file (header, payload header, cells) x 8 / n: what a client downloads
//   ε          false positives among never-inserted probes / probes (--probes, 10^6; --tiny-probes,
//              10^7, where p < 2^-12)
//   floor      log2(1/ε) + r bits per key: no structure answering with rate ε and storing r bits
//              a key does better
//   ratio      bits/key ÷ floor. Targets: <= 1.08 at n >= 10^6, <= 1.15 at n = 10^4 (with values
//              the issue sets only the n >= 10^6 bound; 1.15 is shown at 10^4 for reference)
//
// Every member must answer "maybe" with its exact value (all of them up to 10^7 keys; at 10^8
// every 100th). Keys are bench/keys.mjs's (member i: "https://example.com/posts/%07u.html"),
// probes "https://example.org/miss/<i>" (never members); member i's value is valueAt(i, r)
// (bench/floor-cases.mjs).
//
// Above 2^24 keys the filter is sharded exactly as `bloomgate build` shards it
// (js/cli/fuse-shards.js): every key is hashed once (h1, h2 with the filter's seed), its h1
// kept in shard h2 >> (64 - b); each shard built in this process's wasm instance from its h1
// values (bg_filter_add_h1, with the values), the file written by writeFuseFile, then loaded
// whole with BloomFilter.from and probed like the others.
//
// Writes bench/results/floor.md (the table) and bench/results/floor.json (every number).
import os from 'node:os';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { BloomFilter } from '../js/index.js';
import * as wasm from '../js/wasm/index.js';
import { KIND_IDS } from '../js/names.js';
import { defaultShards, shardOfFile, writeFuseFile } from '../js/cli/fuse-shards.js';
import { AtomicOutput } from '../js/cli/output.js';
import { valueAt } from './floor-cases.mjs';

const benchDir = path.dirname(fileURLToPath(import.meta.url));
const root = path.dirname(benchDir);
const t0 = Date.now();
const log = (text) => process.stderr.write(`floor [${((Date.now() - t0) / 1000).toFixed(1).padStart(6)} s] ${text}\n`);
const load = () => os.loadavg().map((x) => x.toFixed(2)).join(' ');

const RATES = ['0.1', '0.01', '0.001', '0.0001', '2^-4', '2^-8', '2^-10', '2^-16', '2^-20'];

function parseRate(text) {
  const power = /^2\^(-[0-9]+)$/.exec(text);
  const value = power ? 2 ** Number(power[1]) : Number(text);
  if (!(value > 0 && value < 1)) throw new RangeError(`bad rate ${text}`);
  return value;
}

function parseArgs(argv) {
  const config = { ns: [1e4, 1e6, 1e8], rates: RATES, values: [0, 3], probes: 1_000_000, tinyProbes: 10_000_000, memberSample: 100,
    out: path.join(benchDir, 'results', 'floor.md') };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const list = () => String(argv[++i]).split(',');
    if (arg === '--n') config.ns = list().map(Number);
    else if (arg === '--rates') config.rates = list();
    else if (arg === '--values') config.values = list().map(Number);
    else if (arg === '--probes') config.probes = Number(argv[++i]);
    else if (arg === '--tiny-probes') config.tinyProbes = Number(argv[++i]);
    else if (arg === '--member-sample') config.memberSample = Number(argv[++i]);
    else if (arg === '--out') config.out = path.resolve(argv[++i]);
    else throw new RangeError(`unknown option ${arg}`);
  }
  for (const n of config.ns) if (!(Number.isSafeInteger(n) && n >= 1 && n <= 1e9)) throw new RangeError(`bad n ${n}`);
  return config;
}

/* ---- keys ---- */

const MEMBER_PREFIX = 'https://example.com/posts/';

/** Member i as bench/keys.mjs makes it (7 digits, more past 10^7). */
const memberAt = (i) => `${MEMBER_PREFIX}${String(i).padStart(7, '0')}.html`;
const probeAt = (i) => `https://example.org/miss/${i}`;

/** Member i's key bytes, written into `buffer` (reused); returns the view of its length. */
function memberBytes(buffer, i) {
  const text = memberAt(i);
  for (let j = 0; j < text.length; j++) buffer[j] = text.charCodeAt(j);
  return buffer.subarray(0, text.length);
}

/* ---- one filter ---- */

/** A fuse4 filter of members 0 .. n-1 built in one wasm filter; its file. */
async function buildDirect(n, errorRate, valueBits) {
  const filter = await BloomFilter.create({ kind: 'fuse4', capacity: n, errorRate, ...(valueBits > 0 && { valueBits }) });
  try {
    const chunk = 65536;
    for (let first = 0; first < n; first += chunk) {
      const end = Math.min(n, first + chunk);
      if (valueBits > 0) for (let i = first; i < end; i++) filter.add(memberAt(i), valueAt(i, valueBits));
      else filter.addAll(Array.from({ length: end - first }, (_, j) => memberAt(first + j)));
    }
    return filter.serialize();
  } finally {
    filter.free();
  }
}

/** Every key hashed once into its shard: h1 (lo, hi words) and the key's index, per shard. */
function hashIntoShards(n, shards) {
  const bits = Math.log2(shards);
  const expected = Math.ceil(n / shards * 1.01) + 4096;
  const h1 = Array.from({ length: shards }, () => new Uint32Array(2 * expected));
  const index = Array.from({ length: shards }, () => new Uint32Array(expected));
  const used = new Uint32Array(shards);
  const words = new Uint32Array(4);
  const buffer = new Uint8Array(64);
  for (let i = 0; i < n; i++) {
    wasm.hashWords(memberBytes(buffer, i), 0, 0, words);
    const shard = bits === 0 ? 0 : words[3] >>> (32 - bits);
    const at = used[shard]++;
    if (at === index[shard].length) throw new Error(`shard ${shard} holds more than ${at} keys: raise the reserve`);
    h1[shard][2 * at] = words[0];
    h1[shard][2 * at + 1] = words[1];
    index[shard][at] = i;
    if (i % 10_000_000 === 0 && i > 0) log(`  hashed ${i / 1e6}M keys`);
  }
  return { shards, h1, index, used };
}

/** The same filter through the sharded writer of `bloomgate build` (fuse-shards.js); its file. */
async function buildSharded(n, errorRate, valueBits, hashed) {
  const template = await BloomFilter.create({ kind: 'fuse4', capacity: n, errorRate, ...(valueBits > 0 && { valueBits }) });
  const templateBytes = template.serialize();
  template.free();
  const kind = /** @type {number} */ (KIND_IDS.get('fuse4'));
  const shards = (async function* built() {
    for (let s = 0; s < hashed.shards; s++) {
      const count = hashed.used[s];
      const filter = createShardFilter(kind, count, errorRate, valueBits);
      try {
        const records = new Uint8Array(hashed.h1[s].buffer, 0, 8 * count);
        if (valueBits > 0) {
          const values = new Uint8Array(count);
          for (let j = 0; j < count; j++) values[j] = valueAt(hashed.index[s][j], valueBits);
          wasm.filterAddH1(filter, records, values);
        } else wasm.filterAddH1(filter, records);
        wasm.filterSeal(filter);
        yield shardOfFile(wasm.filterSerialize(filter), count);
      } finally {
        wasm.filterFree(filter);
      }
    }
  })();
  const file = path.join(os.tmpdir(), `bloomgate-floor-${process.pid}.bgf`);
  const output = await AtomicOutput.create(file);
  try {
    await writeFuseFile(output, templateBytes, hashed.shards, shards, null);
    await output.commit();
    return new Uint8Array(fs.readFileSync(file));
  } catch (error) {
    await output.abort();
    throw error;
  } finally {
    fs.rmSync(file, { force: true });
  }
}

/** One shard's filter, as the CLI's worker makes it (js/cli/fuse-worker.js). */
function createShardFilter(kind, count, errorRate, valueBits) {
  return wasm.filterCreate(kind, Math.max(1, Math.min(count, 2 ** 24)), errorRate, 0, 0, 0, valueBits);
}

/** Load the file, check members (all, or every `sample`-th), count false positives among probes. */
async function measure(bytes, n, valueBits, probes, sample) {
  const filter = await BloomFilter.from(bytes);
  try {
    let wrong = 0;
    const step = n > 1e7 ? sample : 1;
    for (let i = 0; i < n; i += step) {
      const key = memberAt(i);
      if (!filter.mightContain(key)) wrong++;
      else if (valueBits > 0 && filter.valueOf(key) !== valueAt(i, valueBits)) wrong++;
    }
    if (wrong > 0) throw new Error(`${wrong} members answered no or a wrong value`);
    let positives = 0;
    const batch = 4096;
    const keys = new Array(batch);
    for (let first = 0; first < probes; first += batch) {
      const count = Math.min(batch, probes - first);
      for (let j = 0; j < count; j++) keys[j] = probeAt(first + j);
      const answers = filter.mightContainMany(count === batch ? keys : keys.slice(0, count));
      for (let j = 0; j < count; j++) if (answers[j]) positives++;
    }
    return { checked: Math.ceil(n / step), positives, stats: filter.stats() };
  } finally {
    filter.free();
  }
}

/* ---- the table ---- */

function row(result) {
  const { n, rate, errorRate, valueBits, bytes, probes, positives } = result;
  const bitsPerKey = (bytes * 8) / n;
  const epsilon = positives / probes;
  const floor = Math.log2(1 / epsilon) + valueBits;
  const ratio = bitsPerKey / floor;
  const limit = n >= 1e6 ? 1.08 : 1.15;
  // The rate a w-bit fingerprint gives uniform hashes: 2^-w; the ratio at it, beside the measured one.
  const nominal = bitsPerKey / (result.w + valueBits);
  // ε ≤ p, allowing for the probes' sampling error (3 standard deviations of a rate-p count).
  const sigma = Math.sqrt(errorRate * (1 - errorRate) / probes);
  return {
    ...result, bitsPerKey, epsilon, floor, ratio, nominal, limit, met: ratio <= limit,
    withinRate: epsilon <= errorRate + 3 * sigma,
    line: `| ${n.toExponential(0).replace('e+', 'e')} | ${rate} | ${valueBits} | ${bytes.toLocaleString('en-US')} | ${bitsPerKey.toFixed(3)} | ` +
      `${probes.toExponential(0).replace('e+', 'e')} | ${positives.toLocaleString('en-US')} | ${epsilon.toPrecision(4)} | ${floor.toFixed(3)} | ` +
      `**${ratio.toFixed(4)}** | ${result.w} | ${nominal.toFixed(4)} | ≤ ${limit}${valueBits > 0 && n < 1e6 ? ' (ref.)' : ''}: ${ratio <= limit ? 'met' : '**no**'} | ${epsilon <= errorRate + 3 * sigma ? 'yes' : '**no**'} | ${result.buildSeconds.toFixed(2)} | ${result.load} |`,
  };
}

const config = parseArgs(process.argv.slice(2));
await wasm.ready();
const results = [];
log(`start (load ${load()})`);
for (const n of config.ns) {
  const shards = defaultShards(n);
  let hashed = null;
  if (shards > 1) {
    log(`n = ${n}: hashing every key into ${shards} shards`);
    hashed = hashIntoShards(n, shards);
  }
  for (const valueBits of config.values) {
    for (const rate of config.rates) {
      const errorRate = parseRate(rate);
      const probes = errorRate < 2 ** -12 ? config.tinyProbes : config.probes;
      const started = Date.now();
      const before = load();
      const bytes = hashed ? await buildSharded(n, errorRate, valueBits, hashed) : await buildDirect(n, errorRate, valueBits);
      const buildSeconds = (Date.now() - started) / 1000;
      const { positives, checked, stats } = await measure(bytes, n, valueBits, probes, config.memberSample);
      const w = bytes[Number(new DataView(bytes.buffer, bytes.byteOffset + 96, 8).getBigUint64(0, true))]; // payload byte 0
      const result = row({ n, rate, errorRate, valueBits, shards, w, bytes: bytes.length, probes, positives, checked, m: stats.m, buildSeconds, load: `${before.split(' ')[0]}→${load().split(' ')[0]}` });
      results.push(result);
      writeReport();
      log(`n=${n} p=${rate} r=${valueBits}: ${result.bitsPerKey.toFixed(3)} bits/key, ε=${result.epsilon.toPrecision(3)}, ratio ${result.ratio.toFixed(4)} (${buildSeconds.toFixed(1)} s build, load ${load()})`);
    }
  }
}

/** The report so far (written after every row, so a run cut short keeps what it measured). */
function writeReport() {
  const out = [
    '# fuse4 against the floor: bits per key ÷ (log2(1/ε) + r)', '',
    `Run ${new Date().toISOString()} on ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'} (shared), Node ${process.version}, the committed wasm; load average now ${load()}.`, '',
    `\`node bench/floor.mjs ${process.argv.slice(2).join(' ')}\``.replace(' `', '`'), '',
    '| n | p | r | file bytes | bits/key | probes | false pos. | ε measured | log2(1/ε) + r | ratio | w | ratio at ε = 2^-w | target (measured ε) | ε ≤ p (3σ) | build s | load 1-min |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|:---|:---|---:|:---|',
    ...results.map((result) => result.line), '',
    `Every member answered "maybe" with its exact value (${results.some((r) => r.n > 1e7) ? `every ${config.memberSample}th member at n > 10^7, all of them below` : 'all of them'}). Bits per key count the whole file.`,
    `Targets met: ${results.filter((r) => r.met).length} of ${results.length}.`, '',
  ];
  fs.mkdirSync(path.dirname(config.out), { recursive: true });
  fs.writeFileSync(config.out, out.join('\n'));
  fs.writeFileSync(config.out.replace(/\.md$/, '.json'), JSON.stringify({ config, results: results.map(({ line, ...rest }) => rest) }, null, 1));
  return out;
}
const out = writeReport();
process.stdout.write(out.join('\n'));
log(`wrote ${path.relative(root, config.out)}`);
