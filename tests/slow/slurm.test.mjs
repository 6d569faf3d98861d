// The slow tier (npm run test:slow; .ci/run runs it): a sharded fuse build
// as a Slurm job array on a one-node cluster this test starts itself
// (Debian's slurm-wlm and munge, run as root from a temporary directory:
// munged, slurmctld, slurmd), one `build --shard I/S` task per shard, joined
// with `bloomgate join` and compared byte for byte with the one-machine build.
//
// Skipped when not root or when Slurm is not installed, unless
// BLOOMGATE_REQUIRE_SLURM=1 (CI), which turns that into a failure.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../../js/cli.js', import.meta.url));
const REQUIRED = process.env.BLOOMGATE_REQUIRE_SLURM === '1';
const TOOLS = ['munged', 'slurmctld', 'slurmd', 'sbatch', 'sinfo'];

function which(tool) {
  const result = spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' });
  return result.status === 0 ? result.stdout.trim() : null;
}

const missing = TOOLS.filter((tool) => which(tool) === null);
const notRoot = typeof process.getuid === 'function' && process.getuid() !== 0;
const skip = missing.length > 0 ? `Slurm is not installed (${missing.join(', ')} missing): apt-get install -y slurm-wlm munge`
  : notRoot ? 'starting a Slurm cluster needs root' : false;

let dir;
const daemons = [];

async function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Start a daemon in the foreground as our child, its output in dir/<name>.out. */
function startDaemon(name, command, args, env) {
  const out = join(dir, `${name}.out`);
  const child = spawn(command, args, { cwd: dir, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  child.stdout.setEncoding('utf8').on('data', (chunk) => { text += chunk; });
  child.stderr.setEncoding('utf8').on('data', (chunk) => { text += chunk; });
  const exited = new Promise((resolve) => child.on('close', (code, signal) => {
    writeFileSync(out, text);
    resolve({ code, signal });
  }));
  daemons.push({ name, child, exited, log: () => text });
  return child;
}

async function waitFor(what, check, timeoutMs = 60000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

function logs() {
  return daemons.map(({ name, log }) => `--- ${name}\n${log().slice(-2000)}`).join('\n');
}

function cli(args) {
  const result = spawnSync(process.execPath, [CLI, ...args], { cwd: dir, encoding: 'utf8' });
  assert.equal(result.status, 0, result.stderr);
  return result;
}

before(async () => {
  if (skip) return;
  dir = mkdtempSync(join(tmpdir(), 'bloomgate-slurm-'));
  chmodSync(dir, 0o755); // slurmd and the job steps reach the munge socket through it
  mkdirSync(join(dir, 'state'));
  mkdirSync(join(dir, 'spool'));
  // munge: a fresh key, the socket in the temporary directory.
  const key = Buffer.alloc(1024);
  for (let i = 0; i < key.length; i += 32) createHash('sha256').update(`${process.pid}-${Date.now()}-${Math.random()}-${i}`).digest().copy(key, i);
  writeFileSync(join(dir, 'munge.key'), key, { mode: 0o400 });
  const socket = join(dir, 'munge.sock');
  startDaemon('munged', 'munged', ['-F', '-f', `--key-file=${join(dir, 'munge.key')}`, `--socket=${socket}`,
    `--pid-file=${join(dir, 'munged.pid')}`, `--seed-file=${join(dir, 'munged.seed')}`, `--log-file=${join(dir, 'munged.log')}`]);
  await waitFor('the munge socket', () => readdirSync(dir).includes('munge.sock'), 20000);

  const node = hostname().split('.')[0];
  const [ctldPort, slurmdPort] = [await freePort(), await freePort()];
  const conf = join(dir, 'slurm.conf');
  writeFileSync(conf, [
    'ClusterName=bloomgate',
    `SlurmctldHost=${node}(127.0.0.1)`,
    `SlurmctldPort=${ctldPort}`,
    `SlurmdPort=${slurmdPort}`,
    'AuthType=auth/munge',
    `AuthInfo=socket=${socket}`,
    'CredType=cred/munge',
    'SlurmUser=root',
    'SlurmdUser=root',
    `StateSaveLocation=${join(dir, 'state')}`,
    `SlurmdSpoolDir=${join(dir, 'spool')}`,
    `SlurmctldPidFile=${join(dir, 'slurmctld.pid')}`,
    `SlurmdPidFile=${join(dir, 'slurmd.pid')}`,
    `SlurmctldLogFile=${join(dir, 'slurmctld.log')}`,
    `SlurmdLogFile=${join(dir, 'slurmd.log')}`,
    'ProctrackType=proctrack/linuxproc',
    'TaskPlugin=task/none',
    'JobAcctGatherType=jobacct_gather/none',
    'AccountingStorageType=accounting_storage/none',
    'JobCompType=jobcomp/none',
    'MpiDefault=none',
    'SchedulerType=sched/backfill',
    'SelectType=select/cons_tres',
    'SelectTypeParameters=CR_Core',
    'ReturnToService=2',
    'SlurmdParameters=config_overrides',
    `NodeName=${node} NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN`,
    `PartitionName=bloomgate Nodes=${node} Default=YES MaxTime=INFINITE State=UP`,
    '',
  ].join('\n'));
  const env = { SLURM_CONF: conf };
  startDaemon('slurmctld', 'slurmctld', ['-D', '-c', '-f', conf], env);
  startDaemon('slurmd', 'slurmd', ['-D', '-f', conf, '-N', node], env);
  try {
    await waitFor('an idle Slurm node', () => {
      const result = spawnSync('sinfo', ['-h', '-o', '%T'], { env: { ...process.env, ...env }, encoding: 'utf8' });
      return result.status === 0 && /^idle/m.test(result.stdout);
    });
  } catch (error) {
    throw new Error(`${error.message}\n${logs()}`, { cause: error });
  }
});

after(async () => {
  // Only the daemons this test started, by their process.
  for (const { child } of daemons.slice().reverse()) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  }
  await Promise.all(daemons.map(({ child, exited }) => Promise.race([
    exited,
    new Promise((resolve) => setTimeout(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      resolve();
    }, 15000)),
  ])));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('Slurm job array: one shard per task, joined byte-identical to the one-machine build', { skip: REQUIRED ? false : skip, timeout: 600000 }, async () => {
  if (skip) throw new Error(`BLOOMGATE_REQUIRE_SLURM=1 but ${skip}`);
  const started = Date.now();
  // A 300,000-row dump, and --capacity 40,000,000: the default rule gives 4 shards.
  const rows = [];
  for (let i = 0; i < 300000; i++) rows.push(`${createHash('sha1').update(`slurm-${i}`).digest('hex').toUpperCase()}:${(i % 13) + 1}\r\n`);
  writeFileSync(join(dir, 'dump.txt'), rows.join(''));
  const options = ['dump.txt', '--format', 'hibp', '--kind', 'fuse', '--capacity', '40000000', '--seed', '0x5eed', '--list-id', 'c0ffee'.padEnd(32, '0'), '--generation', '2'];
  const shards = 4;

  // The job script: every task builds its shard's part from the whole input (SLURM_ARRAY_TASK_ID).
  const script = join(dir, 'shard-job.sh');
  writeFileSync(script, [
    '#!/bin/sh',
    'set -eu',
    `exec "${process.execPath}" "${CLI}" build ${options.join(' ')} --shard "$SLURM_ARRAY_TASK_ID/${shards}" -o "part-$SLURM_ARRAY_TASK_ID.bgf" -q`,
    '',
  ].join('\n'), { mode: 0o755 });
  const sbatch = spawnSync('sbatch', ['--array', `0-${shards - 1}`, '--wait', '--chdir', dir, '--output', join(dir, 'task-%a.out'), '--cpus-per-task', '1', script], {
    cwd: dir, env: { ...process.env, SLURM_CONF: join(dir, 'slurm.conf') }, encoding: 'utf8', timeout: 300000,
  });
  const taskOutput = readdirSync(dir).filter((name) => name.startsWith('task-')).map((name) => `--- ${name}\n${readFileSync(join(dir, name), 'utf8')}`).join('\n');
  assert.equal(sbatch.status, 0, `sbatch: ${sbatch.stdout}${sbatch.stderr}\n${taskOutput}\n${logs()}`);
  assert.match(sbatch.stdout, /Submitted batch job [0-9]+/);
  const parts = Array.from({ length: shards }, (_, i) => `part-${i}.bgf`);
  assert.deepEqual(parts.filter((name) => !readdirSync(dir).includes(name)), [], taskOutput);

  cli(['join', '-o', 'joined.bgf', ...parts.slice().reverse(), '-q']);
  cli(['build', ...options, '-o', 'single.bgf', '-q']); // the default rule: 4 shards for --capacity 40,000,000
  const joined = readFileSync(join(dir, 'joined.bgf'));
  const single = readFileSync(join(dir, 'single.bgf'));
  assert.equal(joined[Number(joined.readBigUInt64LE(96)) + 1], 2, 'four shards');
  assert.ok(joined.equals(single), 'the joined file is the one-machine build, byte for byte');
  const query = spawnSync(process.execPath, [CLI, 'query', 'joined.bgf', 'slurm-1', 'slurm-299999', 'not-listed'], { cwd: dir, encoding: 'utf8' });
  assert.equal(query.stdout.split('\n').slice(0, 2).every((line) => line.startsWith('maybe')), true, query.stdout);
  process.stdout.write(`# Slurm job array of ${shards} shard tasks, join and compare: ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
});
