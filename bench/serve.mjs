// `npm run bench:serve`: padded against unpadded range replies of `bloomgate
// serve` under the same load (issue 11, item 3: padded at least 0.5x the
// unpadded throughput on loopback).
//
//   npm run bench:serve
//   node bench/serve.mjs --rounds 5 --seconds 4 --connections 32 --threads 2
//   node bench/serve.mjs --cpu-prof DIR     # the server under node --cpu-prof, profiles in DIR
//
// It writes a synthetic hibp dump (bench/hibp-dump.mjs), builds a password
// store with the CLI (`build --format hibp --store`), then:
//   1. times rangeReplyBytes alone, in this process: CPU per reply, padded and
//      unpadded, on the records of random 5-hex prefixes of that store;
//   2. starts `node js/cli.js serve --password-store` on 127.0.0.1 (a free port)
//      and checks real padded replies: 800-1,000 rows, sorted, every row
//      35 uppercase hex + ':COUNT', Content-Length right;
//   3. loads it with Debian's wrk (2 threads, 32 connections by default), a random
//      5-hex prefix per request, rounds alternating padded (`Add-Padding: true`)
//      and unpadded, the order swapped every round, and reports requests/s, the
//      server's CPU per request (from /proc/PID/stat) and padded/unpadded per
//      round and as the median of the per-round ratios.
// Everything goes to 127.0.0.1 only and takes about a minute. The report goes to
// stdout and bench/results/serve.md (--out to change); progress to stderr.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { rangeReply, rangeReplyBytes, StoreReader } from '../js/store.js';
import { writeDump } from './hibp-dump.mjs';

const benchDir = dirname(fileURLToPath(import.meta.url));
const root = dirname(benchDir);
const CLI = join(root, 'js', 'cli.js');
const LIST_ID = '5e7e'.padEnd(32, '0');

const { values: opts } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    seconds: { type: 'string', default: '4' },
    connections: { type: 'string', default: '32' },
    threads: { type: 'string', default: '2' },
    rows: { type: 'string', default: '1000000' },
    out: { type: 'string', default: join(benchDir, 'results', 'serve.md') },
    'cpu-prof': { type: 'string' },
    wrk: { type: 'string', default: 'wrk' },
  },
});
const ROUNDS = Number(opts.rounds);
const SECONDS = Number(opts.seconds);
const CONNECTIONS = Number(opts.connections);
const THREADS = Number(opts.threads);
const ROWS = Number(opts.rows);
const log = (text) => process.stderr.write(`${text}\n`);
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const load = () => loadavg().map((x) => x.toFixed(2)).join(' ');
const fmt = (x, digits = 0) => x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

if (spawnSync(opts.wrk, ['--version']).error) {
  log(`bench:serve needs wrk (${opts.wrk} not found): apt-get install -y wrk`);
  process.exit(1);
}

const dir = mkdtempSync(join(tmpdir(), 'bloomgate-serve-'));
let server = null;
const cleanup = () => {
  if (server && server.exitCode === null) server.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
};
process.on('exit', cleanup);

function randomPrefix() {
  return Math.floor(Math.random() * 0x100000).toString(16).toUpperCase().padStart(5, '0');
}

function prefixBytes(text) {
  return Uint8Array.from([parseInt(text.slice(0, 2), 16), parseInt(text.slice(2, 4), 16), parseInt(`${text[4]}0`, 16)]);
}

// --- the store ---------------------------------------------------------------------------------
const loadBefore = load();
log(`bench:serve: ${fmt(ROWS)}-row dump and store in ${dir}`);
const dump = join(dir, 'dump.txt');
writeDump(dump, ROWS);
const built = spawnSync(process.execPath, [CLI, 'build', dump, '--format', 'hibp', '-o', join(dir, 'p.bgf'), '--store', join(dir, 'p.bgs'), '--list-id', LIST_ID, '-q'], { stdio: 'inherit' });
if (built.status !== 0) throw new Error(`build failed with status ${built.status}`);
rmSync(dump);
const storePath = join(dir, 'p.bgs');

// --- 1. CPU per reply, in process ----------------------------------------------------------------
const store = await StoreReader.open(storePath);
const samples = [];
for (let i = 0; i < 256; i++) samples.push(await store.lookup(prefixBytes(randomPrefix()), 20));
await store.close();
const recordsPerPrefix = samples.reduce((n, s) => n + s.length, 0) / samples.length;

// CPU time (this process's user + system, so not the waits of a busy machine) per reply: the
// median of 6 rounds of >= 150 ms after one to warm up.
function timeReplies(make) {
  const perRound = [];
  for (let round = 0; round < 7; round++) {
    let n = 0;
    let sink = 0;
    const before = process.cpuUsage();
    let used = 0;
    while (used < 150e3) {
      for (let i = 0; i < 64; i++) sink += make(samples[(n + i) & 255]).length;
      n += 64;
      const { user, system } = process.cpuUsage(before);
      used = user + system;
    }
    if (sink === 0) throw new Error('no bytes');
    perRound.push(used / n);
  }
  return median(perRound.slice(1));
}
log('bench:serve: CPU per reply (rangeReplyBytes alone)');
const cpu = {
  paddedBytes: timeReplies((r) => rangeReplyBytes(r, true)),
  plainBytes: timeReplies((r) => rangeReplyBytes(r, false)),
  paddedString: timeReplies((r) => rangeReply(r, true)),
};

// --- 2. the server, and real padded replies ------------------------------------------------------
const nodeArgs = [];
if (opts['cpu-prof']) nodeArgs.push('--cpu-prof', '--cpu-prof-dir', resolve(opts['cpu-prof']));
server = spawn(process.execPath, [...nodeArgs, CLI, 'serve', '--password-store', storePath, '--host', '127.0.0.1', '--port', '0'], { stdio: ['ignore', 'ignore', 'pipe'] });
const url = await new Promise((resolveUrl, reject) => {
  let text = '';
  server.stderr.on('data', (chunk) => {
    text += chunk;
    const match = /serving on (http:\/\/127\.0\.0\.1:\d+)/.exec(text);
    if (match) resolveUrl(match[1]);
  });
  server.once('exit', (code) => reject(new Error(`serve exited (${code}): ${text}`)));
});
log(`bench:serve: server on ${url}, pid ${server.pid}`);

const ROW = /^[0-9A-F]{35}:[0-9]+$/;
const check = { replies: 0, minRows: Infinity, maxRows: 0, padRows: 0, realRows: 0, plainRows: 0 };
for (let i = 0; i < 200; i++) {
  const prefix = randomPrefix();
  for (const padded of [true, false]) {
    const res = await fetch(`${url}/range/${prefix}`, { headers: padded ? { 'Add-Padding': 'true' } : {} });
    const body = Buffer.from(await res.arrayBuffer());
    if (res.status !== 200) throw new Error(`${prefix}: status ${res.status}`);
    const length = res.headers.get('content-length');
    if (length !== null && Number(length) !== body.length) throw new Error(`${prefix}: Content-Length ${length}, body ${body.length}`);
    const lines = body.length ? body.toString('latin1').split('\r\n') : [];
    for (const line of lines) if (!ROW.test(line)) throw new Error(`${prefix}: malformed row '${line}'`);
    for (let j = 1; j < lines.length; j++) if (!(lines[j - 1] < lines[j])) throw new Error(`${prefix}: rows out of order at ${j}`);
    if (padded) {
      check.replies++;
      check.minRows = Math.min(check.minRows, lines.length);
      check.maxRows = Math.max(check.maxRows, lines.length);
      for (const line of lines) line.endsWith(':0') ? check.padRows++ : check.realRows++;
      check.contentLength = length !== null;
    } else {
      check.plainRows += lines.length;
    }
  }
}
if (check.minRows < 800 || check.maxRows > 1000) throw new Error(`padded replies held ${check.minRows}-${check.maxRows} rows, not 800-1,000`);
if (check.realRows !== check.plainRows) throw new Error(`padded replies held ${check.realRows} real rows, unpadded ${check.plainRows}`);

// --- 3. wrk ------------------------------------------------------------------------------------
function luaScript(padded) {
  return `-- written by bench/serve.mjs: a random 5-hex prefix per request
local hex = "0123456789ABCDEF"
local headers = ${padded ? '{ ["Add-Padding"] = "true" }' : '{}'}
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("id", threads)
end
function init(args)
  math.randomseed(os.time() * 1000 + (id or 0) * 7919)
end
function request()
  local t = {}
  for i = 1, 5 do
    local k = math.random(16)
    t[i] = hex:sub(k, k)
  end
  return wrk.format("GET", "/range/" .. table.concat(t), headers)
end
`;
}
const scripts = { padded: join(dir, 'padded.lua'), plain: join(dir, 'plain.lua') };
writeFileSync(scripts.padded, luaScript(true));
writeFileSync(scripts.plain, luaScript(false));

const ticks = Number(spawnSync('getconf', ['CLK_TCK']).stdout?.toString().trim()) || 100;
function serverCpuSeconds() {
  const stat = readFileSync(`/proc/${server.pid}/stat`, 'latin1');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // fields from the 3rd on
  return (Number(fields[11]) + Number(fields[12])) / ticks; // utime, stime
}

function runWrk(kind, seconds) {
  const cpuBefore = serverCpuSeconds();
  const result = spawnSync(opts.wrk, ['-t', String(THREADS), '-c', String(CONNECTIONS), '-d', `${seconds}s`, '--timeout', '5s', '-s', scripts[kind], `${url}/`], { encoding: 'utf8' });
  const cpuUsed = serverCpuSeconds() - cpuBefore;
  if (result.status !== 0) throw new Error(`wrk failed: ${result.stderr}`);
  const out = result.stdout;
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]);
  const requests = Number(/(\d+) requests in/.exec(out)?.[1]);
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
  const errors = /Socket errors: (.*)/.exec(out)?.[1] ?? '';
  if (!Number.isFinite(rps) || non2xx > 0) throw new Error(`wrk ${kind}: ${out}`);
  return { rps, requests, errors, cpuPerRequest: (cpuUsed / requests) * 1e6, transfer: /Transfer\/sec:\s+(\S+)/.exec(out)?.[1] };
}

log('bench:serve: warm-up');
runWrk('plain', 1);
runWrk('padded', 1);
const rounds = [];
for (let round = 0; round < ROUNDS; round++) {
  const order = round % 2 ? ['padded', 'plain'] : ['plain', 'padded'];
  const r = { load: loadavg()[0] };
  for (const kind of order) r[kind] = runWrk(kind, SECONDS);
  r.ratio = r.padded.rps / r.plain.rps;
  rounds.push(r);
  log(`  round ${round + 1}: unpadded ${fmt(r.plain.rps)}/s, padded ${fmt(r.padded.rps)}/s, ratio ${r.ratio.toFixed(3)} (load ${r.load.toFixed(2)})`);
}
const loadAfter = load();

await new Promise((resolveExit) => {
  const timer = setTimeout(() => server.kill('SIGKILL'), 5000);
  server.once('exit', () => {
    clearTimeout(timer);
    resolveExit(undefined);
  });
  server.kill('SIGTERM');
});

// --- the report ----------------------------------------------------------------------------------
const ratios = rounds.map((r) => r.ratio);
const command = `node bench/serve.mjs ${process.argv.slice(2).join(' ')}`.trim();
const wrkVersion = spawnSync(opts.wrk, ['--version'], { encoding: 'utf8' }).stdout.split('\n')[0].split(' Copyright')[0].trim();
const lines = [
  '# `bloomgate serve`: padded against unpadded range replies',
  '',
  `\`${command}\` (\`npm run bench:serve\`), ${new Date().toISOString()}; Node ${process.version}, ${wrkVersion}, ` +
    `${cpus().length} × ${cpus()[0]?.model.trim()}; load average (1, 5, 15 min) ${loadBefore} before, ${loadAfter} after.`,
  '',
  `Store: ${fmt(ROWS)} synthetic hibp rows (\`bench/hibp-dump.mjs\`, \`build --format hibp --store\`), ` +
    `${recordsPerPrefix.toFixed(2)} records per 5-hex prefix on average. Load: \`wrk -t ${THREADS} -c ${CONNECTIONS} -d ${SECONDS}s\` ` +
    'against 127.0.0.1, a random prefix per request (a Lua script), padded rounds with `Add-Padding: true`; ' +
    `${ROUNDS} rounds, each one unpadded and one padded run, the order swapped every round. The server's CPU per request is ` +
    'its utime + stime from /proc over the run, divided by the requests.',
  '',
  `**padded ÷ unpadded requests/s: median ${median(ratios).toFixed(3)}** (per round ${Math.min(...ratios).toFixed(3)}–${Math.max(...ratios).toFixed(3)}; target ≥ 0.5)`,
  '',
  '| round | 1-min load | unpadded req/s | padded req/s | ratio | server CPU µs/request, unpadded / padded | transfer/s, unpadded / padded |',
  '|---:|---:|---:|---:|---:|---:|---:|',
  ...rounds.map((r, i) => `| ${i + 1} | ${r.load.toFixed(2)} | ${fmt(r.plain.rps)} | ${fmt(r.padded.rps)} | ${r.ratio.toFixed(3)} | ` +
    `${fmt(r.plain.cpuPerRequest)} / ${fmt(r.padded.cpuPerRequest)} | ${r.plain.transfer} / ${r.padded.transfer} |`),
  '',
  '| CPU per reply, `rangeReplyBytes` alone, in process (median of 6 rounds of ≥ 150 ms of CPU time) | µs |',
  '|:---|---:|',
  `| padded, \`rangeReplyBytes(records, true)\` | ${cpu.paddedBytes.toFixed(1)} |`,
  `| unpadded, \`rangeReplyBytes(records, false)\` | ${cpu.plainBytes.toFixed(2)} |`,
  `| padded as a string, \`rangeReply(records, true)\` | ${cpu.paddedString.toFixed(1)} |`,
  '',
  `Checked before the load: ${check.replies} padded replies of random prefixes held ${check.minRows}–${check.maxRows} rows ` +
    `(${check.padRows} padding, ${check.realRows} real rows, the same real rows as the unpadded replies), every row 35 uppercase hex and ':COUNT', ` +
    `in strictly ascending order; ${check.contentLength ? 'Content-Length equal to the body' : 'no Content-Length (chunked)'}.` +
    (rounds.some((r) => r.plain.errors || r.padded.errors) ? ` wrk socket errors: ${rounds.map((r) => `${r.plain.errors || '-'} / ${r.padded.errors || '-'}`).join('; ')}.` : ''),
  '',
];
const report = lines.join('\n');
process.stdout.write(report);
writeFileSync(opts.out, report);
log(`bench:serve: wrote ${opts.out}`);
