// node bench/hash-floor.mjs — the key hash alone, natively and in wasm (bench/hash_floor.c).
//
// Why it exists: the speed targets that compare wasm with the native C core (issue 2's
// batch target, issue 5's blocked target) can be no better than the hash's own wasm/native
// ratio allows, because every query hashes its key first. This measures that ratio with
// nothing else in the loop: the same C file, built natively (cc -O3 -march=x86-64-v2, as
// build-native.sh) and as a standalone wasm module (emcc -O3 -msimd128 -msse2, as the
// shipped module's speed-built files), hashes the same 1,000,000 38-byte keys inside one
// call. Needs cc, emcc (Debian emscripten) and /usr/include/xxhash.h; skips what is missing.
//
// Options: --n 1000000 --rounds 7. Prints Markdown and writes bench/results/hash-floor.md.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const benchDir = path.dirname(fileURLToPath(import.meta.url));
const root = path.dirname(benchDir);
const out = path.join(root, 'build', 'bench');
const HASHES = ['`bg_hash` (XXH3-128, the filters\' scheme)', 'XXH3-64', 'XXH64'];

function parseArgs(argv) {
  const config = { n: 1_000_000, rounds: 7 };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--n') config.n = Number(argv[++i]);
    else if (argv[i] === '--rounds') config.rounds = Number(argv[++i]);
    else throw new Error(`unknown option ${argv[i]}`);
  }
  if (!(Number.isInteger(config.n) && config.n >= 1000 && config.n <= 50_000_000)) throw new RangeError('--n must be an integer in [1000, 5e7]');
  if (!(Number.isInteger(config.rounds) && config.rounds >= 1)) throw new RangeError('--rounds must be a positive integer');
  return config;
}

function build(cmd, args, env) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', env: { ...process.env, ...env } });
  if (r.error?.code === 'ENOENT') return `${cmd} not found`;
  if (r.status !== 0) throw new Error(`${cmd} failed:\n${r.stderr}`);
  return null;
}

function buildNative() {
  const exe = path.join(out, 'hash_floor');
  const why = build(process.env.CC || 'cc', ['-O3', '-std=c11', '-DNDEBUG', ...(os.arch() === 'x64' ? ['-march=x86-64-v2'] : []),
    `-I${path.join(root, 'src')}`, '-o', exe, path.join(benchDir, 'hash_floor.c'), path.join(root, 'src', 'hash.c')]);
  return why ? { skipped: why } : { exe };
}

function buildWasm() {
  // emcc does not search /usr/include; give it xxhash.h alone (as CMakeLists.txt does).
  const inc = path.join(out, 'hash-floor-include');
  fs.mkdirSync(inc, { recursive: true });
  fs.copyFileSync('/usr/include/xxhash.h', path.join(inc, 'xxhash.h'));
  const wasm = path.join(out, 'hash_floor.wasm');
  const why = build('emcc', ['-O3', '-msimd128', '-msse2', '-DNDEBUG', `-I${path.join(root, 'src')}`, `-I${inc}`,
    '--no-entry', '-sSTANDALONE_WASM', '-sALLOW_MEMORY_GROWTH', '-sEXPORTED_FUNCTIONS=_floor_setup,_floor_run',
    '-o', wasm, path.join(benchDir, 'hash_floor.c'), path.join(root, 'src', 'hash.c')], { NODE_PATH: process.env.NODE_PATH || '/usr/share/nodejs' });
  return why ? { skipped: why } : { wasm };
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function main() {
  const config = parseArgs(process.argv.slice(2));
  if (!fs.existsSync('/usr/include/xxhash.h')) {
    process.stderr.write('hash-floor: /usr/include/xxhash.h missing (apt-get install libxxhash-dev); skipped\n');
    return;
  }
  fs.mkdirSync(out, { recursive: true });
  const native = buildNative();
  const wasm = buildWasm();
  if (native.skipped || wasm.skipped) {
    process.stderr.write(`hash-floor: skipped (${native.skipped || wasm.skipped})\n`);
    return;
  }
  // Native: its own process, first, as bench/run.mjs does; then wasm in this one.
  const r = spawnSync(native.exe, [String(config.n), String(config.rounds)], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`hash_floor failed: ${r.stderr}`);
  const lines = r.stdout.trim().split('\n');
  const nativeCheck = lines[0].split(' ').slice(1).map(Number);
  const nativeNs = lines.slice(1).map((line) => line.split(' ').map(Number));

  const { instance } = await WebAssembly.instantiate(fs.readFileSync(wasm.wasm), {
    env: { emscripten_notify_memory_growth() {} },
    wasi_snapshot_preview1: { proc_exit() {}, fd_write() { return 0; }, fd_close() { return 0; }, fd_seek() { return 0; } },
  });
  const ex = instance.exports;
  if (typeof ex._initialize === 'function') ex._initialize();
  if (ex.floor_setup(config.n) !== 0) throw new Error('wasm: floor_setup failed');
  const wasmCheck = [0, 1, 2].map((which) => ex.floor_run(which) >>> 0); // also the warm-up (tier-up)
  for (let i = 0; i < 3; i++) {
    if (wasmCheck[i] !== nativeCheck[i]) throw new Error(`${HASHES[i]}: wasm and native hashes differ (${wasmCheck[i]} vs ${nativeCheck[i]})`);
  }
  const wasmNs = [];
  for (let round = 0; round < config.rounds; round++) {
    wasmNs.push([0, 1, 2].map((which) => {
      const t0 = process.hrtime.bigint();
      ex.floor_run(which);
      return Number(process.hrtime.bigint() - t0) / config.n;
    }));
  }

  const rows = HASHES.map((name, i) => {
    const nat = nativeNs.map((round) => round[i]);
    const w = wasmNs.map((round) => round[i]);
    const fmt = (values) => `${median(values).toFixed(1)} (${Math.min(...values).toFixed(1)})`;
    return `| ${name} | ${fmt(nat)} | ${fmt(w)} | ${(median(w) / median(nat)).toFixed(2)}× (${(Math.min(...w) / Math.min(...nat)).toFixed(2)}×) |`;
  });
  const report = [
    '# The key hash alone: wasm against native',
    '',
    `- Date: ${new Date().toISOString()}; Node ${process.versions.node}; ${os.cpus()[0]?.model ?? 'unknown CPU'} × ${os.cpus().length}; 1-minute load average ${os.loadavg()[0].toFixed(2)}`,
    '- Command: `node bench/hash-floor.mjs` (method at the top of [bench/hash-floor.mjs](../hash-floor.mjs))',
    `- ${config.n.toLocaleString('en-US')} keys of 38 bytes hashed in one loop inside each build, seed 42; ns per key, median of ${config.rounds} rounds (fastest round in parentheses); native and wasm produce the same hashes (checked)`,
    '',
    '| Hash | native | wasm | wasm / native |',
    '|:---|---:|---:|---:|',
    ...rows,
    '',
  ].join('\n');
  process.stdout.write(report);
  fs.mkdirSync(path.join(benchDir, 'results'), { recursive: true });
  fs.writeFileSync(path.join(benchDir, 'results', 'hash-floor.md'), report);
}

main().catch((error) => {
  process.stderr.write(`hash-floor: crashed: ${error?.stack ?? error}\n`);
  process.exit(1);
});
