// node bench/blocked.mjs — the speed targets of the `blocked` kind (issue 5, item 1), measured
// side by side in one run:
//   1. in wasm batch mode, non-member queries at least 1.5x faster than `classic`;
//   2. in wasm, within 1.5x of the same C core compiled natively.
//
// "wasm batch mode" is bg_filter_contains_many in wasm/bloomgate.wasm, instantiated here directly
// and called on keys already packed in its memory (bench/raw-wasm.mjs), so the figure is the C
// core's and not the JavaScript marshalling around it (bench/run.mjs reports that separately).
// "Native" is bench/native_bench.c built by bench/build-native.sh (cc -O3 -march=x86-64-v2) and
// run with --kind, on the same keys: members "https://example.com/posts/%07u.html" for
// 0 <= i < n, probes the same pattern from index n on (8 digits, 39 bytes, past 10^7).
//
// Options: --n 1000000,10000000  --error-rate 0.01  --rounds 7  --min-ms 200  --quick
// Prints a Markdown report and writes bench/results/blocked.md. Exits 0 when targets fail (it is a
// measurement); non-zero only on a crash or wrong answers.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { keyAt, makeKeys } from './keys.mjs';
import { rawCore } from './raw-wasm.mjs';
import { runRounds, sink } from './timing.mjs';

const benchDir = path.dirname(fileURLToPath(import.meta.url));
const root = path.dirname(benchDir);
const KINDS = { classic: 1, blocked: 2 };
const BATCH = 1000;
const PROBES = 1_000_000;

function parseArgs(argv) {
  const config = { ns: [1_000_000, 10_000_000], errorRate: 0.01, rounds: 7, minMs: 200 };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    if (flag === '--quick') Object.assign(config, { rounds: 3, minMs: 100 });
    else if (flag === '--n') config.ns = argv[++i].split(',').map(Number);
    else if (flag === '--error-rate') config.errorRate = Number(argv[++i]);
    else if (flag === '--rounds') config.rounds = Number(argv[++i]);
    else if (flag === '--min-ms') config.minMs = Number(argv[++i]);
    else throw new Error(`unknown option ${flag}`);
  }
  for (const n of config.ns) if (!(Number.isInteger(n) && n >= 1000 && n <= 10 ** 7)) throw new RangeError('--n values must be integers in [1000, 10^7]');
  return config;
}

/** Keys first .. first+count-1 packed back to back (any index; makeKeys stops at 10^7). */
function packKeys(first, count) {
  if (first + count <= 10 ** 7) return makeKeys(first, count);
  const parts = [];
  const offsets = new Uint32Array(count + 1);
  let at = 0;
  for (let i = 0; i < count; i++) {
    const key = Buffer.from(keyAt(first + i), 'latin1');
    parts.push(key);
    at += key.length;
    offsets[i + 1] = at;
  }
  const bytes = new Uint8Array(Buffer.concat(parts, at));
  return { bytes, offsets };
}

function native(kind, n, config) {
  const build = spawnSync('sh', [path.join(benchDir, 'build-native.sh')], { encoding: 'utf8' });
  if (build.status !== 0) throw new Error(`native build failed (exit ${build.status}):\n${build.stderr}`);
  const binary = build.stdout.trim().split('\n').pop();
  const args = ['--kind', kind, '--n', n, '--batch', BATCH, '--rounds', config.rounds, '--min-ms', config.minMs,
    '--error-rate', config.errorRate];
  const run = spawnSync(binary, args.map(String), { encoding: 'utf8', maxBuffer: 1 << 20 });
  if (run.status !== 0) throw new Error(`native_bench --kind ${kind} failed (exit ${run.status}):\n${run.stderr}`);
  return JSON.parse(run.stdout);
}

async function wasmCase(kind, n, members, probes, config) {
  const raw = await rawCore(path.join(root, 'wasm', 'bloomgate.wasm'), members, probes,
    { n, errorRate: config.errorRate, kind: KINDS[kind] });
  // Every member must answer "maybe" (the batch path included).
  let missing = 0;
  const heap = raw.heap();
  for (let i = 0; i < n; i += BATCH) {
    const count = Math.min(BATCH, n - i);
    if (raw.containsMany(raw.filter, raw.members.items, raw.members.offs + 4 * i, count, raw.results) < 0) throw new Error('contains_many failed');
    for (let j = 0; j < count; j++) missing += heap[raw.results + j] !== 1;
  }
  if (missing) throw new Error(`${kind}: ${missing} false negatives in wasm`);
  return {
    id: `${kind}.wasm`,
    pass() {
      const heap = raw.heap();
      let hits = 0;
      for (let i = 0; i < PROBES; i += BATCH) {
        raw.containsMany(raw.filter, raw.probes.items, raw.probes.offs + 4 * i, BATCH, raw.results);
        for (let j = 0; j < BATCH; j++) hits += heap[raw.results + j];
      }
      sink.value += hits;
      return PROBES;
    },
  };
}

const fmt = (x) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));

async function main() {
  const config = parseArgs(process.argv.slice(2));
  const log = (msg) => process.stderr.write(`blocked-bench: ${msg}\n`);
  const rows = [];
  for (const n of config.ns) {
    log(`n = ${n.toLocaleString('en-US')}: native`);
    const nat = { classic: native('classic', n, config), blocked: native('blocked', n, config) };
    log(`n = ${n.toLocaleString('en-US')}: wasm`);
    const members = makeKeys(0, n);
    const probes = packKeys(n, PROBES);
    const cases = [await wasmCase('classic', n, members, probes, config), await wasmCase('blocked', n, members, probes, config)];
    const timed = await runRounds(cases, { rounds: config.rounds, minMs: config.minMs });
    rows.push({
      n,
      classic: { wasm: timed.get('classic.wasm'), native: nat.classic.contains_many_nonmember_ns, nativeMin: nat.classic.contains_many_nonmember_min_ns },
      blocked: { wasm: timed.get('blocked.wasm'), native: nat.blocked.contains_many_nonmember_ns, nativeMin: nat.blocked.contains_many_nonmember_min_ns },
    });
  }
  const lines = [];
  const load = os.loadavg()[0].toFixed(2);
  lines.push('# `blocked` speed targets (issue 5, item 1)', '');
  lines.push(`- Date: ${new Date().toISOString()}; Node ${process.versions.node}; ${os.cpus()[0]?.model ?? 'cpu'} × ${os.cpus().length}; 1-minute load average ${load} at the end`);
  lines.push(`- Command: \`node bench/blocked.mjs${process.argv.length > 2 ? ' ' + process.argv.slice(2).join(' ') : ''}\` (method at the top of [bench/blocked.mjs](../blocked.mjs))`);
  lines.push(`- Non-member queries, ns per key, batches of ${BATCH} (\`bg_filter_contains_many\`), p = ${config.errorRate}, ${PROBES.toLocaleString('en-US')} probes; median of ${config.rounds} rounds (fastest round in parentheses)`, '');
  lines.push('| keys | classic native | blocked native | classic wasm | blocked wasm | blocked vs classic, wasm | blocked wasm / native |');
  lines.push('|---:|---:|---:|---:|---:|---:|---:|');
  const verdicts = [];
  for (const r of rows) {
    const speedup = r.classic.wasm.median / r.blocked.wasm.median;
    const ratio = r.blocked.wasm.median / r.blocked.native;
    lines.push(`| ${r.n.toLocaleString('en-US')} | ${fmt(r.classic.native)} (${fmt(r.classic.nativeMin)}) | ${fmt(r.blocked.native)} (${fmt(r.blocked.nativeMin)}) | ${fmt(r.classic.wasm.median)} (${fmt(r.classic.wasm.min)}) | ${fmt(r.blocked.wasm.median)} (${fmt(r.blocked.wasm.min)}) | ${speedup.toFixed(2)}× faster | ${ratio.toFixed(2)}× |`);
    if (r.n === 10_000_000 || config.ns.length === 1) {
      verdicts.push([`${r.n.toLocaleString('en-US')} keys: blocked at least 1.5× faster than classic (wasm batch)`, speedup, speedup >= 1.5]);
      verdicts.push([`${r.n.toLocaleString('en-US')} keys: blocked wasm within 1.5× of native`, ratio, ratio <= 1.5]);
    }
  }
  lines.push('', '| Target | measured | result |', '|:---|---:|:---|');
  for (const [what, value, ok] of verdicts) lines.push(`| ${what} | ${value.toFixed(2)}× | ${ok ? 'PASS' : '**FAIL**'} |`);
  lines.push('', `Checksum of all answers: ${sink.value}.`);
  const report = lines.join('\n') + '\n';
  process.stdout.write(report);
  fs.mkdirSync(path.join(benchDir, 'results'), { recursive: true });
  fs.writeFileSync(path.join(benchDir, 'results', 'blocked.md'), report);
}

main().catch((error) => {
  process.stderr.write(`blocked-bench: ${error.stack ?? error}\n`);
  process.exit(1);
});
