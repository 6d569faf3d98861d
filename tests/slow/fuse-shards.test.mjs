// Sharded fuse filters (docs/kinds/fuse.md "Sharded payloads", docs/CLI.md
// "Fuse filters of any size"): the CLI's sharded build, part jobs and join,
// the layout of the file it writes, temporary files, and the out-of-memory
// guards of the wasm allocator.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { BloomFilter, init } from '../../js/index.js';
import { hashKey } from '../js/helpers/hash.mjs';
import { describeError } from '../../js/cli/errors.js';
import { defaultShards } from '../../js/cli/fuse-shards.js';
import { BloomgateError } from '../../js/errors.js';

const CLI = fileURLToPath(new URL('../../js/cli.js', import.meta.url));
const WASM = fileURLToPath(new URL('../../wasm/bloomgate.wasm', import.meta.url));

let dir;
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bloomgate-shards-'));
  await init();
  // 30,000 lines and a 20,000-row hibp dump (counts 1..7, CRLF).
  writeFileSync(join(dir, 'words.txt'), Array.from({ length: 30000 }, (_, i) => `word-${i}\n`).join(''));
  writeFileSync(join(dir, 'dump.txt'), Array.from({ length: 20000 }, (_, i) => `${sha1Hex(`pw${i}`)}:${(i % 7) + 1}\r\n`).join(''));
});
after(() => {
  rmSync(dir, { recursive: true, force: true });
});

function sha1Hex(text) {
  return createHash('sha1').update(text).digest('hex').toUpperCase();
}

function run(args, { input } = {}) {
  const result = spawnSync(process.execPath, [CLI, ...args], { cwd: dir, encoding: 'utf8', input: input ?? '', maxBuffer: 64 << 20 });
  assert.equal(result.error, undefined);
  assert.doesNotMatch(result.stderr, /\n\s+at /, `stack trace in stderr:\n${result.stderr}`);
  return result;
}

function runOk(args, options) {
  const result = run(args, options);
  assert.equal(result.status, 0, result.stderr);
  return result;
}

const bytesOf = (name) => readFileSync(join(dir, name));
const leftovers = () => readdirSync(dir).filter((name) => name.includes('.tmp-'));
const u32 = (b, at) => b.readUInt32LE(at);
const u64 = (b, at) => Number(b.readBigUInt64LE(at));

/** The sharded layout of a file: { payloadOffset, bits, shards: [payload bytes] }. */
function layout(file) {
  const payloadOffset = u64(file, 96);
  const payload = file.subarray(payloadOffset);
  const bits = payload[1];
  if (bits === 0) return { payloadOffset, bits, keyCount: u64(payload, 16), shards: [payload] };
  const count = 2 ** bits;
  const shards = [];
  for (let i = 0; i < count; i++) shards.push(payload.subarray(u64(payload, 32 + 8 * i), u64(payload, 40 + 8 * i)));
  return { payloadOffset, bits, keyCount: u64(payload, 16), shards, tableEnd: u64(payload, 32), end: u64(payload, 32 + 8 * count) };
}

test('the default rule: one shard up to 2^24 of capacity, then at most 2^24 per shard', () => {
  assert.equal(defaultShards(1), 1);
  assert.equal(defaultShards(2 ** 24), 1);
  assert.equal(defaultShards(2 ** 24 + 1), 2);
  assert.equal(defaultShards(50_000_000), 4);
  assert.equal(defaultShards(1e9), 64);
  assert.equal(defaultShards(2 ** 53), 2 ** 24);
});

test('a sharded build: the layout of docs/kinds/fuse.md, each shard the unsharded filter of its keys', async () => {
  runOk(['build', 'words.txt', '-o', 'w4.bgf', '--kind', 'fuse', '--shards', '4', '--seed', '77', '-q']);
  assert.deepEqual(leftovers(), []);
  const file = bytesOf('w4.bgf');
  const { payloadOffset, bits, keyCount, shards, tableEnd, end } = layout(file);
  assert.equal(bits, 2);
  assert.equal(keyCount, 30000);
  assert.equal(tableEnd, 32 + 8 * 5);
  assert.equal(end, file.length - payloadOffset);
  assert.equal(file[payloadOffset], 8);
  // Key i goes to shard h2 >> 62; each shard's bytes are an unsharded build of exactly those keys.
  const keys = Array.from({ length: 4 }, () => []);
  for (let i = 0; i < 30000; i++) {
    const key = `word-${i}`;
    keys[Number(hashKey(new TextEncoder().encode(key), 77).h2 >> 62n)].push(key);
  }
  for (let s = 0; s < 4; s++) {
    assert.ok(keys[s].length > 6000, `shard ${s}: ${keys[s].length} keys`);
    const alone = await BloomFilter.create({ capacity: keys[s].length, errorRate: 0.01, kind: 'fuse8', seed: 77 });
    for (const key of keys[s]) alone.add(key);
    const bytes = alone.serialize();
    alone.free();
    assert.deepEqual(Buffer.from(shards[s]), Buffer.from(bytes.subarray(128)), `shard ${s}`);
    assert.equal(u64(shards[s], 16), keys[s].length);
  }
  // Header: the whole filter's, with count, m and payload length of all shards.
  const filter = await BloomFilter.from(file);
  try {
    const stats = filter.stats();
    assert.equal(stats.kind, 'fuse8');
    assert.equal(stats.n, 30000);
    assert.equal(stats.capacity, 30000);
    assert.equal(stats.bitsSet, 30000);
    assert.equal(stats.m, 8 * shards.reduce((sum, shard) => sum + u32(shard, 12), 0));
    assert.deepEqual(filter.metadata, { source: 'words.txt', format: 'lines', items: 30000, skipped: 0 });
    const members = Array.from({ length: 30000 }, (_, i) => `word-${i}`);
    assert.ok(filter.mightContainMany(members).every(Boolean));
    assert.ok(members.every((key) => filter.mightContain(key)));
    const probes = Array.from({ length: 200000 }, (_, i) => `probe-${i}`);
    const rate = filter.mightContainMany(probes).filter(Boolean).length / probes.length;
    assert.ok(Math.abs(rate - 1 / 256) < 4 * Math.sqrt((1 / 256) / probes.length), `false-positive rate ${rate}`);
  } finally {
    filter.free();
  }
});

test('part jobs joined in any order are byte-identical to the one-machine build (lines, hibp; counted or --capacity)', () => {
  const cases = [
    { name: 'w', args: ['words.txt', '--kind', 'fuse', '--seed', '5'], shards: 8 },
    { name: 'h', args: ['dump.txt', '--format', 'hibp', '--kind', 'fuse16', '--min-count', '2', '--list-id', 'ab'.repeat(16), '--generation', '3'], shards: 4 },
    { name: 'c', args: ['dump.txt', '--format', 'hibp', '--kind', 'fuse', '--capacity', '25000', '--description', 'single pass'], shards: 2 },
  ];
  for (const { name, args, shards } of cases) {
    runOk(['build', ...args, '-o', `${name}-all.bgf`, '--shards', String(shards), '--jobs', '2', '-q']);
    const parts = [];
    for (let i = shards - 1; i >= 0; i--) {
      runOk(['build', ...args, '-o', `${name}-part${i}.bgf`, '--shard', `${i}/${shards}`, '-q']);
      parts.push(`${name}-part${i}.bgf`);
    }
    const joined = runOk(['join', '-o', `${name}-joined.bgf`, ...parts]);
    assert.match(joined.stderr, new RegExp(`joined ${shards} shards`));
    assert.ok(bytesOf(`${name}-joined.bgf`).equals(bytesOf(`${name}-all.bgf`)), name);
    // Every part is a valid filter of its own shard's keys.
    const inspected = JSON.parse(runOk(['inspect', '--json', parts[0]]).stdout);
    assert.equal(inspected.ok, true);
    assert.equal(inspected.metadata.fuseShards, shards);
    assert.equal(inspected.shards, 1);
    assert.equal(JSON.parse(runOk(['inspect', '--json', `${name}-joined.bgf`]).stdout).shards, shards);
  }
  assert.deepEqual(leftovers(), []);
});

test('one shard: the part of 0/1 joins into the unsharded file a plain build writes', () => {
  runOk(['build', 'dump.txt', '--format', 'hibp', '--kind', 'fuse', '-o', 'plain.bgf', '-q']);
  runOk(['build', 'dump.txt', '--format', 'hibp', '--kind', 'fuse', '-o', 'one.bgf', '--shards', '1', '-q']);
  runOk(['build', 'dump.txt', '--format', 'hibp', '--kind', 'fuse', '-o', 'part.bgf', '--shard', '0/1', '-q']);
  runOk(['join', '-o', 'joined1.bgf', 'part.bgf', '-q']);
  assert.ok(bytesOf('one.bgf').equals(bytesOf('plain.bgf')));
  assert.ok(bytesOf('joined1.bgf').equals(bytesOf('plain.bgf')));
  assert.equal(layout(bytesOf('plain.bgf')).bits, 0);
});

test('sharded builds with --store, from stdin, and with more jobs than shards', () => {
  runOk(['build', 'dump.txt', '--format', 'hibp', '--kind', 'fuse', '-o', 'st.bgf', '--store', 'st.bgs', '--list-id', '12'.repeat(16), '--shards', '2', '-q']);
  runOk(['build', 'dump.txt', '--format', 'hibp', '--kind', 'fuse', '-o', 'st2.bgf', '--list-id', '12'.repeat(16), '--shards', '2', '--jobs', '8', '-q']);
  assert.ok(bytesOf('st.bgf').equals(bytesOf('st2.bgf')));
  const piped = runOk(['build', '-', '--kind', 'fuse', '-o', 'stdin.bgf', '--shards', '4', '--capacity', '30000', '-q'], { input: readFileSync(join(dir, 'words.txt')) });
  assert.equal(piped.stderr, '');
  assert.equal(layout(bytesOf('stdin.bgf')).keyCount, 30000);
  assert.deepEqual(leftovers(), []);
});

test('a failed sharded build leaves no output and no temporary files', () => {
  writeFileSync(join(dir, 'bad.txt'), `${sha1Hex('a')}:1\n`.repeat(5000) + 'not a row\n');
  const result = run(['build', 'bad.txt', '--format', 'hibp', '--kind', 'fuse', '--shards', '4', '--capacity', '6000', '-o', 'bad.bgf']);
  assert.equal(result.status, 65);
  assert.match(result.stderr, /line 5001/);
  assert.ok(!readdirSync(dir).includes('bad.bgf'));
  assert.deepEqual(leftovers(), []);
});

test('an interrupted sharded build removes its temporary files', async () => {
  // 400,000 rows give the signal time to land while the shard files are written.
  writeFileSync(join(dir, 'big.txt'), Array.from({ length: 400000 }, (_, i) => `k${i}\n`).join(''));
  const child = spawn(process.execPath, [CLI, 'build', 'big.txt', '--kind', 'fuse', '--shards', '16', '-o', 'big.bgf', '--progress'], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (text) => { stderr += text; });
  // Wait until the shard files exist, then interrupt.
  for (let i = 0; i < 400 && !readdirSync(dir).some((name) => name.startsWith('big.bgf.tmp-') && name.includes('shard')); i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  child.kill('SIGTERM');
  const status = await new Promise((resolve) => child.on('close', (code, signal) => resolve(code ?? signal)));
  assert.ok(status === 143 || status === 0, `status ${status}: ${stderr}`);
  assert.deepEqual(leftovers(), []);
});

test('join refuses parts that do not make one filter, with their names', () => {
  for (let i = 0; i < 4; i++) runOk(['build', 'words.txt', '--kind', 'fuse', '-o', `j${i}.bgf`, '--shard', `${i}/4`, '-q']);
  runOk(['build', 'words.txt', '--kind', 'fuse', '--seed', '1', '-o', 'other2.bgf', '--shard', '2/4', '-q']);
  runOk(['build', 'words.txt', '--kind', 'fuse', '-o', 'eight.bgf', '--shard', '2/8', '-q']);
  runOk(['build', 'words.txt', '--kind', 'fuse', '-o', 'whole.bgf', '-q']);
  runOk(['build', 'words.txt', '-o', 'classic.bgf', '-q']);
  const expect = (args, status, code, pattern) => {
    const result = run(['join', '-o', 'out.bgf', ...args]);
    assert.equal(result.status, status, result.stderr);
    assert.match(result.stderr, new RegExp(`\\(${code}\\)\\n$`));
    if (pattern) assert.match(result.stderr, pattern);
    assert.ok(!readdirSync(dir).includes('out.bgf'));
  };
  expect(['j0.bgf', 'j1.bgf', 'j3.bgf'], 65, 'E_SHARDS', /missing part for shard 2 of 4/);
  expect(['j0.bgf', 'j1.bgf', 'j2.bgf', 'j2.bgf', 'j3.bgf'], 65, 'E_SHARDS', /shard 2 of 4 is given twice/);
  expect(['j0.bgf', 'j1.bgf', 'other2.bgf', 'j3.bgf'], 65, 'E_INCOMPATIBLE', /other2\.bgf differs from j0\.bgf in seed 1 vs 0/);
  expect(['j0.bgf', 'j1.bgf', 'eight.bgf', 'j3.bgf'], 65, 'E_INCOMPATIBLE', /shard count 8 vs 4/);
  expect(['j0.bgf', 'whole.bgf'], 65, 'E_PART', /whole\.bgf is not the part of a sharded build/);
  expect(['classic.bgf'], 65, 'E_PART', /not a fuse filter/);
  expect(['j0.bgf', 'missing.bgf'], 66, 'ENOENT');
  expect([], 64, 'E_USAGE');
  // A corrupt part is caught by the core's validation when its turn comes.
  const corrupt = bytesOf('j3.bgf');
  corrupt[corrupt.length - 1] ^= 1;
  writeFileSync(join(dir, 'j3bad.bgf'), corrupt);
  expect(['j0.bgf', 'j1.bgf', 'j2.bgf', 'j3bad.bgf'], 65, 'E_CHECKSUM', /j3bad\.bgf/);
  writeFileSync(join(dir, 'j3cut.bgf'), bytesOf('j3.bgf').subarray(0, 200));
  expect(['j0.bgf', 'j1.bgf', 'j2.bgf', 'j3cut.bgf'], 65, 'E_TRUNCATED', /j3cut\.bgf/);
  assert.deepEqual(leftovers(), []);
});

test('shard options are checked before anything is read', () => {
  const expect = (args, pattern) => {
    const result = run(['build', 'words.txt', '-o', 'x.bgf', ...args]);
    assert.equal(result.status, 64, result.stderr);
    assert.match(result.stderr, pattern);
  };
  expect(['--kind', 'fuse', '--shards', '3'], /power of two/);
  expect(['--kind', 'fuse', '--shards', String(2 ** 25)], /power of two from 1 to 2\^24/);
  expect(['--kind', 'fuse', '--shard', '4/4'], /index must be below 4/);
  expect(['--kind', 'fuse', '--shard', '1-4'], /expected I\/S/);
  expect(['--kind', 'fuse', '--shard', '0/4', '--shards', '4'], /not both/);
  expect(['--kind', 'fuse', '--jobs', '0'], /positive integer/);
  expect(['--shards', '4'], /only to --kind fuse/);
  expect(['--kind', 'blocked', '--jobs', '2'], /only to --kind fuse/);
  const store = run(['build', 'dump.txt', '--format', 'hibp', '-o', 'x.bgf', '--kind', 'fuse', '--shard', '0/2', '--store', 'x.bgs']);
  assert.equal(store.status, 64);
  assert.match(store.stderr, /--store cannot be built by a --shard job/);
});

test('E_NOMEM is exit 71 in every command, not an internal error', () => {
  const report = describeError(new BloomgateError('E_NOMEM', 'out of memory'));
  assert.equal(report.exitCode, 71);
  assert.equal(report.code, 'E_NOMEM');
});

test('the wasm allocator refuses what cannot fit below 4 GiB instead of handing out a block past memory', async () => {
  // emmalloc alone returned a block running off memory for these (the 200M-key fuse trap).
  const { instance } = await WebAssembly.instantiate(readFileSync(WASM), { env: { emscripten_notify_memory_growth() {} } });
  const ex = instance.exports;
  ex._initialize?.();
  assert.equal(ex.malloc(2 ** 32 - 1000) >>> 0, 0);
  assert.equal(ex.malloc(2 ** 32 - 300000) >>> 0, 0);
  const block = ex.malloc(1e9) >>> 0;
  assert.notEqual(block, 0);
  assert.equal(ex.malloc(3.3e9) >>> 0, 0);
  assert.equal(ex.realloc(block, 3.5e9) >>> 0, 0); // trapped inside emmalloc before
  // What fits is still given.
  const small = ex.malloc(1 << 20) >>> 0;
  assert.notEqual(small, 0);
  assert.ok(small + (1 << 20) <= ex.memory.buffer.byteLength);
});
