// The publisher's path at scale (issue 10 item 4): `bloomgate build --format
// hibp` on synthetic dumps of 1M, 10M and (when asked) 100M rows in the real
// format (40 uppercase hex digits, ':', COUNT, CRLF, in hash order, as the
// downloader writes them; bench/hibp-dump.mjs), beside two floors: `wc -l`
// (reading the file) and bench/native_build.c (the C core, natively, doing
// the CLI's work: a counting pass, bg_filter_add_key per row, the file; with
// --batch, bg_filter_add_many 4,096 keys a call).
//
//   npm run bench:scale                       # 1M and 10M rows, 2 rounds
//   npm run bench:scale -- --sizes 1M,10M,100M --rounds 3
//   node bench/scale.mjs --sizes 1M --only wc,native-classic,classic
//
// Each round runs every case once, one process at a time, in the same order
// (each CLI case right after its native counterpart), so the CLI/native ratio
// of a round compares runs seconds apart. Reported per case: the median and
// the fastest wall time over rounds (process start to exit), rows per second
// of the median, peak RSS (ru_maxrss through /usr/bin/time, else VmHWM from
// /proc polled), and the output's size; the load average before each run.
// The table goes to stdout and bench/results/scale.md (--out to change).
// The dumps and outputs go to --dir (default: a fresh directory in the
// system's temporary directory), removed at the end unless --keep.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { writeDump } from './hibp-dump.mjs';

const benchDir = dirname(fileURLToPath(import.meta.url));
const root = dirname(benchDir);
const CLI = join(root, 'js', 'cli.js');
const LIST_ID = '5ca1e'.padEnd(32, '0');

const CASES = [
  // The CLI's fixed cost: Node, the modules and the wasm module for a one-row build.
  { name: 'startup', label: 'CLI start-up (a 1-row build)', tiny: true, command: (input, out) => [process.execPath, [CLI, 'build', input, '--format', 'hibp', '-o', out, '-q']] },
  { name: 'wc', label: '`wc -l` (floor: reading the file)', command: (input) => ['wc', ['-l', input]] },
  { name: 'native-classic', label: 'native_build, classic', native: true, command: (input, out, native) => [native, [input, '-o', out, '--kind', 'classic']] },
  { name: 'native-classic-batch', label: 'native_build --batch, classic', native: true, command: (input, out, native) => [native, [input, '-o', out, '--kind', 'classic', '--batch']] },
  { name: 'classic', label: 'CLI, classic', pairs: ['native-classic', 'native-classic-batch'], command: (input, out) => [process.execPath, [CLI, 'build', input, '--format', 'hibp', '-o', out, '-q']] },
  { name: 'native-fuse', label: 'native_build, fuse', native: true, command: (input, out, native) => [native, [input, '-o', out, '--kind', 'fuse']] },
  { name: 'native-fuse-batch', label: 'native_build --batch, fuse', native: true, command: (input, out, native) => [native, [input, '-o', out, '--kind', 'fuse', '--batch']] },
  { name: 'fuse', label: 'CLI, fuse', pairs: ['native-fuse', 'native-fuse-batch'], command: (input, out) => [process.execPath, [CLI, 'build', input, '--format', 'hibp', '--kind', 'fuse', '-o', out, '-q']] },
  {
    name: 'store', label: 'CLI, classic + --store', store: true,
    command: (input, out) => [process.execPath, [CLI, 'build', input, '--format', 'hibp', '-o', out, '--store', `${out}.bgs`, '--list-id', LIST_ID, '-q']],
  },
];

function parseArgs(argv) {
  const options = { sizes: [1e6, 1e7], rounds: 2, only: null, dir: null, keep: false, out: join(benchDir, 'results', 'scale.md') };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${arg} needs a value`);
      return argv[++i];
    };
    if (arg === '--sizes') options.sizes = value().split(',').map(parseSize);
    else if (arg === '--rounds') options.rounds = Math.max(1, Number(value()));
    else if (arg === '--only') options.only = new Set(value().split(','));
    else if (arg === '--dir') options.dir = value();
    else if (arg === '--keep') options.keep = true;
    else if (arg === '--out') options.out = value();
    else if (arg === '--help' || arg === '-h') {
      process.stdout.write('usage: node bench/scale.mjs [--sizes 1M,10M[,100M]] [--rounds N] [--only startup,wc,native-classic,native-classic-batch,classic,native-fuse,native-fuse-batch,fuse,store] [--dir DIR] [--keep] [--out FILE]\n');
      process.exit(0);
    } else throw new Error(`unknown option ${arg}`);
  }
  if (options.only) {
    for (const name of options.only) if (!CASES.some((c) => c.name === name)) throw new Error(`unknown case ${name}`);
  }
  return options;
}

function parseSize(text) {
  const match = /^([0-9_.]+)([kKmMgG]?)$/.exec(text.trim());
  if (!match) throw new Error(`bad size ${text}`);
  const scale = { '': 1, k: 1e3, m: 1e6, g: 1e9 }[match[2].toLowerCase()];
  return Math.round(Number(match[1].replace(/_/g, '')) * scale);
}

const formatRows = (n) => (n >= 1e9 && n % 1e9 === 0 ? `${n / 1e9}G` : n >= 1e6 && n % 1e6 === 0 ? `${n / 1e6}M` : n >= 1e3 && n % 1e3 === 0 ? `${n / 1e3}k` : String(n));
const mib = (bytes) => bytes / 2 ** 20;
const fmtMiB = (bytes) => (bytes === null ? '–' : mib(bytes) >= 100 ? `${mib(bytes).toFixed(0)} MiB` : `${mib(bytes).toFixed(1)} MiB`);
const fmtBytes = (bytes) => (bytes === null ? '–' : bytes >= 2 ** 30 ? `${(bytes / 2 ** 30).toFixed(2)} GiB` : fmtMiB(bytes));
const fmtRate = (rate) => (rate >= 1e6 ? `${(rate / 1e6).toFixed(2)} M/s` : `${(rate / 1e3).toFixed(0)} k/s`);
const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const load = () => loadavg()[0].toFixed(2);

const TIME = existsSync('/usr/bin/time') ? '/usr/bin/time' : null;

/** Run one command to its end: wall seconds, peak RSS (bytes) and its stdout. */
function measure(command, args) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const argv = TIME ? [TIME, ['-f', '\n@@maxrss %M', command, ...args]] : [command, args];
    const child = spawn(argv[0], argv[1], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let polledPeak = 0;
    const poll = TIME ? null : setInterval(() => {
      try {
        const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
        if (match) polledPeak = Math.max(polledPeak, Number(match[1]) * 1024);
      } catch {
        // exited
      }
    }, 20);
    child.stdout.on('data', (data) => {
      stdout += data;
    });
    child.stderr.on('data', (data) => {
      stderr += data;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      if (poll) clearInterval(poll);
      const match = /@@maxrss (\d+)\s*$/.exec(stderr);
      const rss = match ? Number(match[1]) * 1024 : polledPeak || null;
      const errors = stderr.replace(/\n?@@maxrss \d+\s*$/, '');
      if (code !== 0) reject(new Error(`${command} ${args.join(' ')} exited ${code}:\n${errors}`));
      else resolve({ seconds, rss, stdout });
    });
  });
}

function buildNative() {
  const built = spawnSync('sh', [join(benchDir, 'build-native.sh'), 'native_build'], { encoding: 'utf8' });
  if (built.error || built.status === 3) return null;
  if (built.status !== 0) throw new Error(`native build failed:\n${built.stderr}`);
  return built.stdout.trim().split('\n').pop();
}

function sizeOf(path) {
  try {
    return statSync(path).size;
  } catch {
    return null;
  }
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const native = buildNative();
  const cases = CASES.filter((c) => (!options.only || options.only.has(c.name)) && (!c.native || native));
  if (!native) process.stderr.write('scale: no C compiler or xxhash.h: the native floor is skipped\n');
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'bloomgate-scale-'));
  mkdirSync(dir, { recursive: true });
  const startedAt = new Date();
  const loadStart = loadavg().map((x) => x.toFixed(2)).join(' ');
  const results = []; // { rows, bytes, generate, cases: Map(name -> runs[]) }
  try {
    for (const rows of options.sizes) {
      const input = join(dir, `dump-${formatRows(rows)}.txt`);
      process.stderr.write(`scale: generating ${formatRows(rows)} rows (${input})\n`);
      const t0 = process.hrtime.bigint();
      const { bytes } = writeDump(input, rows, { seed: 1 });
      const generate = Number(process.hrtime.bigint() - t0) / 1e9;
      const entry = { rows, bytes, generate, runs: new Map(cases.map((c) => [c.name, []])) };
      results.push(entry);
      await measure('wc', ['-l', input]); // into the page cache before anything is timed
      const tiny = join(dir, 'one-row.txt');
      writeDump(tiny, 1, { seed: 2 });
      for (let round = 0; round < options.rounds; round++) {
        for (const c of cases) {
          const out = join(dir, `out-${c.name}.bgf`);
          const [command, args] = c.command(c.tiny ? tiny : input, out, native);
          const loadBefore = load();
          const run = await measure(command, args);
          run.load = loadBefore;
          run.output = c.name === 'wc' ? null : sizeOf(out);
          run.store = c.store ? sizeOf(`${out}.bgs`) : null;
          if (c.native) run.report = JSON.parse(run.stdout);
          entry.runs.get(c.name).push(run);
          process.stderr.write(`scale: ${formatRows(rows)} round ${round + 1} ${c.name}: ${run.seconds.toFixed(2)} s, ${fmtMiB(run.rss)} (load ${loadBefore})\n`);
          rmSync(out, { force: true });
          rmSync(`${out}.bgs`, { force: true });
        }
      }
      rmSync(input, { force: true });
    }
  } finally {
    if (!options.keep && !options.dir) rmSync(dir, { recursive: true, force: true });
  }
  const report = render(results, cases, { options, startedAt, loadStart, loadEnd: loadavg().map((x) => x.toFixed(2)).join(' '), native });
  process.stdout.write(report);
  mkdirSync(dirname(options.out), { recursive: true });
  writeFileSync(options.out, report);
  process.stderr.write(`scale: wrote ${options.out}\n`);
}

function render(results, cases, { options, startedAt, loadStart, loadEnd }) {
  const commit = spawnSync('git', ['-C', root, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).stdout?.trim() || 'unknown';
  const lines = [];
  lines.push('# Scale benchmark: `bloomgate build --format hibp`', '');
  lines.push(`Run ${startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC, commit ${commit}, Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}; ` +
    `${options.rounds} round${options.rounds === 1 ? '' : 's'}; load average ${loadStart} at start, ${loadEnd} at the end.`, '');
  lines.push('`node bench/scale.mjs --sizes ' + options.sizes.map(formatRows).join(',') + ` --rounds ${options.rounds}\`` +
    ' — synthetic dumps in the downloader\'s format (40 uppercase hex, `:COUNT`, CRLF, hash order); classic at p = 0.01; ' +
    'wall time is process start to exit (the median over rounds, the fastest in brackets); rows/s from the median; peak RSS is the largest over rounds.', '');
  lines.push('| rows | input | case | wall time | rows/s | peak RSS | output | load |');
  lines.push('|---:|---:|:---|---:|---:|---:|---:|---:|');
  for (const entry of results) {
    let first = true;
    for (const c of cases) {
      const runs = entry.runs.get(c.name);
      if (runs.length === 0) continue;
      const times = runs.map((r) => r.seconds);
      const wall = median(times);
      const rss = Math.max(...runs.map((r) => r.rss ?? 0)) || null;
      const output = c.name === 'wc' ? '–' : c.store ? `${fmtBytes(runs[0].output)} + ${fmtBytes(runs[0].store)} store` : fmtBytes(runs[0].output);
      lines.push(`| ${first ? formatRows(entry.rows) : ''} | ${first ? fmtBytes(entry.bytes) : ''} | ${c.label} | ${wall.toFixed(2)} s (${Math.min(...times).toFixed(2)}) | ` +
        `${c.tiny ? '–' : fmtRate(entry.rows / wall)} | ${fmtMiB(rss)} | ${c.tiny ? '–' : output} | ${runs.map((r) => r.load).join(', ')} |`);
      first = false;
    }
  }
  lines.push('');
  // CLI / native ratios, round by round (a round's runs are seconds apart).
  const pairs = cases.flatMap((c) => (c.pairs ?? []).filter((name) => cases.some((n) => n.name === name)).map((name) => [c, cases.find((n) => n.name === name)]));
  if (pairs.length > 0) {
    lines.push('**CLI rows/s ÷ native rows/s** (per round, paired; issue 10 wants ≥ 0.5 against `native_build`, which adds with `bg_filter_add_key` as the CLI did; ' +
      '`--batch` is the fastest the core takes keys, `bg_filter_add_many`). "Without start-up" takes the round\'s one-row CLI build off the CLI\'s time:', '');
    lines.push(`| rows | ${pairs.map(([c, n]) => `${c.label} ÷ ${n.label.replace(/, [a-z]+$/, '')}`).join(' | ')} |`);
    lines.push(`|---:|${pairs.map(() => '---:').join('|')}|`);
    for (const entry of results) {
      const cells = pairs.map(([c, n]) => {
        const cli = entry.runs.get(c.name);
        const nat = entry.runs.get(n.name);
        const ratios = cli.map((run, i) => nat[i].seconds / run.seconds);
        const text = `${ratios.map((r) => r.toFixed(2)).join(', ')} (median ${median(ratios).toFixed(2)})`;
        const startup = entry.runs.get('startup');
        if (!startup || startup.length === 0) return text;
        const adjusted = cli.map((run, i) => nat[i].seconds / Math.max(1e-3, run.seconds - startup[i].seconds));
        return `${text}; without start-up ${median(adjusted).toFixed(2)}`;
      });
      lines.push(`| ${formatRows(entry.rows)} | ${cells.join(' | ')} |`);
    }
    lines.push('');
  }
  // Growth: time per row and peak RSS from the smallest size to the largest.
  if (results.length > 1) {
    const a = results[0];
    const b = results[results.length - 1];
    lines.push(`**Growth from ${formatRows(a.rows)} to ${formatRows(b.rows)} rows** (${b.rows / a.rows}× the rows):`, '');
    lines.push('| case | ns per row | wall time × | peak RSS |');
    lines.push('|:---|---:|---:|---:|');
    for (const c of cases) {
      const ra = a.runs.get(c.name);
      const rb = b.runs.get(c.name);
      if (ra.length === 0 || rb.length === 0 || c.tiny) continue;
      const ta = median(ra.map((r) => r.seconds));
      const tb = median(rb.map((r) => r.seconds));
      const perRow = results.map((e) => (1e9 * median(e.runs.get(c.name).map((r) => r.seconds))) / e.rows);
      const rss = results.map((e) => fmtMiB(Math.max(...e.runs.get(c.name).map((r) => r.rss ?? 0)) || null));
      lines.push(`| ${c.label} | ${perRow.map((x) => x.toFixed(0)).join(' → ')} | ${(tb / ta).toFixed(1)} | ${rss.join(' → ')} |`);
    }
    lines.push('');
  }
  const biggest = results[results.length - 1];
  lines.push(`Generating the dumps (bench/hibp-dump.mjs): ${results.map((e) => `${formatRows(e.rows)} rows, ${fmtBytes(e.bytes)} in ${e.generate.toFixed(1)} s`).join('; ')}.`);
  if (biggest) {
    const phases = [...biggest.runs.entries()].filter(([name]) => name.startsWith('native')).map(([name, runs]) => {
      const s = runs[0].report?.seconds;
      return s ? `${name}: counting ${s.count.toFixed(2)} s, adding ${s.add.toFixed(2)} s, sealing ${s.seal.toFixed(2)} s` : null;
    }).filter(Boolean);
    if (phases.length) lines.push(`The native floor's phases at ${formatRows(biggest.rows)} rows (first round): ${phases.join('; ')}.`);
  }
  lines.push('');
  return `${lines.join('\n')}\n`;
}

main().catch((error) => {
  process.stderr.write(`scale: ${error.stack ?? error}\n`);
  process.exit(1);
});
