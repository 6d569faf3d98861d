// No internal errors: every command meets every damaged input with a coded
// error (exit 64, 65, 66 or 73 and "bloomgate: ... (E_CODE)"), never exit 70,
// and a full disk is exit 73 with the output's path, the previous output kept.
//
// The damaged inputs are the ones the mutation tests make (errors.test.mjs:
// single-bit flips and truncations of a filter; fuzz-parsers.test.mjs: stores
// mutated with their checksum recomputed; the C fuzzer's corpus of every kind),
// plus every 64-bit header field set to 2^53, 2^63 and 2^64-1 with the checksum
// recomputed, so each reaches past the checksum to the checks after it. The
// commands run in batches through the CLI's main() in one child process
// (helpers/cli-batch.mjs: a spawn a case would take minutes); serve, which only
// stops on a signal, runs as child processes of its own. BG_NO_INTERNAL_SCALE=N
// runs N times the cases (every mutation through every command at N >= 4).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { BloomFilter, init } from '../../js/index.js';
import { writeStore } from '../../js/store.js';
import { FileChecksum } from '../../js/wasm/index.js';
import { CLI } from '../js/helpers/cli.mjs';
import { runBatch } from '../js/helpers/cli-batch.mjs';
import { prng } from '../js/helpers/prng.mjs';

const SCALE = Math.max(1, Number(process.env.BG_NO_INTERNAL_SCALE ?? 1));
const CORPUS = fileURLToPath(new URL('../fuzz/corpus/', import.meta.url));
const REGRESSIONS = fileURLToPath(new URL('../fuzz/regressions/', import.meta.url));

let dir;
before(async () => {
  await init();
  dir = mkdtempSync(join(tmpdir(), 'bloomgate-no-internal-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

/**
 * Run jobs ({ args, write?: [[path, bytes]], remove?, devFull? }, in `dir`) in one
 * child process: [{ status, stdout, stderr }] in order.
 */
function batch(jobs) {
  return runBatch(dir, jobs.map((job) => ({
    ...job, write: (job.write ?? []).map(([path, bytes]) => [join(dir, path), Buffer.from(bytes).toString('base64')]),
  })));
}

/** One run: `bloomgate ...args` in `dir`. */
const cli = (args) => batch([{ args }])[0];

const CODED = /^bloomgate: [^\n]+ \((?:E_[A-Z_]+|E[A-Z]+)\)\n$/;

/** The verdict on one run: a clean exit, or one coded error line with a documented non-internal exit code. */
function check(result, what) {
  if (result.status === 0 || result.status === 1) return;
  assert.ok([64, 65, 66, 71, 73].includes(result.status), `${what}: exit ${result.status}\n${result.stderr}`);
  assert.match(result.stderr.slice(result.stderr.lastIndexOf('bloomgate: ')), CODED, `${what}: ${result.stderr}`);
  assert.doesNotMatch(result.stderr, /internal error|\n\s+at /, what);
}

function reseal(bytes) {
  if (bytes.length >= 16) {
    const sum = new FileChecksum();
    sum.update(bytes);
    Buffer.from(sum.digestBytes()).copy(bytes, 8);
    sum.free();
  }
  return bytes;
}

const U64_FIELDS = { checksum: 8, m: 32, capacity: 40, count: 56, seed: 64, generation: 72, payloadOffset: 96, payloadLength: 104 };
const EDGES = [2n ** 53n, 2n ** 63n, 2n ** 64n - 1n];

/** Header fields at their edges, the checksum recomputed after each (so later checks see them). */
function headerMutations(name, base) {
  const out = [];
  for (const [field, offset] of Object.entries(U64_FIELDS)) {
    for (const value of EDGES) {
      const bytes = Buffer.from(base);
      bytes.writeBigUInt64LE(value, offset);
      out.push([`${name} ${field}=${value}`, field === 'checksum' ? bytes : reseal(bytes)]);
    }
  }
  for (const [field, offset] of [['k', 24], ['metadataLength', 28]]) {
    for (const value of [0, 2 ** 31, 2 ** 32 - 1]) {
      const bytes = Buffer.from(base);
      bytes.writeUInt32LE(value, offset);
      out.push([`${name} ${field}=${value}`, reseal(bytes)]);
    }
  }
  for (const value of [Number.NaN, Infinity, 0, 1]) {
    const bytes = Buffer.from(base);
    bytes.writeDoubleLE(value, 48);
    out.push([`${name} errorRate=${value}`, reseal(bytes)]);
  }
  return out;
}

/**
 * errors.test.mjs's damage: a bit flipped in each header byte (resealed past the
 * checksum field, so the field checks see it) and across the payload, cuts, an
 * extra byte; and seeded random edits, half of them resealed.
 */
function byteMutations(name, base, r, count, { header = true } = {}) {
  const out = [];
  const step = SCALE >= 4 ? 1 : 16;
  for (let at = header || SCALE >= 4 ? 0 : 128; at < base.length; at += at < 128 ? 1 : step) {
    const bytes = Buffer.from(base);
    bytes[at] ^= 1 << (at % 8);
    out.push([`${name} flip@${at}`, at >= 16 && at < 128 ? reseal(bytes) : bytes]);
  }
  for (const length of [0, 7, 17, 127, 128, 129, base.length - 1]) out.push([`${name} cut@${length}`, base.subarray(0, Math.max(0, length))]);
  out.push([`${name} +1 byte`, Buffer.concat([base, Buffer.from([0])])]);
  for (let i = 0; i < count; i++) {
    let bytes = Buffer.from(base);
    for (let round = 1 + r.int(3); round > 0; round--) {
      switch (r.int(4)) {
        case 0: bytes[r.int(bytes.length)] = r.byte(); break;
        case 1: bytes[16 + r.int(112)] = [0, 1, 0x7f, 0x80, 0xff][r.int(5)]; break; // a header byte
        case 2: bytes = bytes.subarray(0, 128 + r.int(bytes.length - 128)); break;
        default: bytes = Buffer.concat([bytes, Buffer.from(Array.from({ length: 1 + r.int(32) }, r.byte))]);
      }
    }
    out.push([`${name} random#${i}`, r.chance(0.5) ? reseal(Buffer.from(bytes)) : bytes]);
  }
  return out;
}

function corpusFilters() {
  const files = readdirSync(CORPUS).map((file) => [file, readFileSync(join(CORPUS, file))]);
  for (const file of readdirSync(REGRESSIONS)) files.push([file, readFileSync(join(REGRESSIONS, file))]);
  return files;
}

/** A list's two generations and their delta, what diff, patch and build --like take: g0.bgf, g1.bgf, g.bgd. */
let generations = null;
async function twoGenerations() {
  if (generations) return generations;
  const g0 = await BloomFilter.create({ capacity: 200, errorRate: 0.01, listId: '5eed'.repeat(8), metadata: { source: 'g0' } });
  for (let i = 0; i < 100; i++) g0.add(`item-${i}`);
  writeFileSync(join(dir, 'g0.bgf'), g0.serialize());
  g0.free();
  writeFileSync(join(dir, 'items.txt'), Array.from({ length: 120 }, (_, i) => `item-${i}`).join('\n'));
  const [like, diff] = batch([{ args: ['build', 'items.txt', '--like', 'g0.bgf', '-o', 'g1.bgf', '-q'] }, { args: ['diff', 'g0.bgf', 'g1.bgf', '-o', 'g.bgd', '-q'] }]);
  assert.equal(like.status, 0, like.stderr);
  assert.equal(diff.status, 0, diff.stderr);
  generations = { g0: readFileSync(join(dir, 'g0.bgf')) };
  return generations;
}

// One base a kind (the C fuzzer's corpus), and g0.bgf: a named list with a delta.
const KIND_BASES = ['classic.bgf', 'kind_blocked.bgf', 'kind_counting.bgf', 'kind_cuckoo.bgf', 'kind_fuse8.bgf', 'kind_fuse16.bgf', 'kind_fuse8_sharded.bgf', 'kind_fuse4.bgf', 'kind_fuse4_values.bgf', 'kind_fuse4_sharded.bgf', 'kind_scalable.bgf', 'url_keys.bgf'];
const WRITER_BASES = SCALE >= 4 ? KIND_BASES : ['classic.bgf', 'kind_counting.bgf', 'kind_fuse8_sharded.bgf'];

/**
 * Put each mutated file through each command (args built from the file's name,
 * m.bgf); every run must end in a clean exit or a coded error. Returns the codes seen.
 */
function runAll(cases, commands) {
  const jobs = [];
  const names = [];
  for (const [name, bytes] of cases) {
    for (const [i, args] of commands('m.bgf').entries()) {
      jobs.push(i === 0 ? { args, write: [['m.bgf', bytes]], remove: [join(dir, 'site')] } : { args });
      names.push(`${args.join(' ')} with ${name}`);
    }
  }
  const codes = new Map();
  for (const [i, result] of batch(jobs).entries()) {
    check(result, names[i]);
    if (result.status >= 64) {
      const code = /\(([A-Z_]+)\)\n$/.exec(result.stderr)?.[1];
      codes.set(code, (codes.get(code) ?? 0) + 1);
    }
  }
  return codes;
}

const readers = (m) => [['inspect', m], ['inspect', m, '--json'], ['query', m, 'item-1', 'other']];

test('inspect and query meet every mutated filter file with a coded error, never exit 70', async () => {
  const r = prng(0x70);
  const { g0 } = await twoGenerations();
  const kinds = KIND_BASES.map((file) => [file, readFileSync(join(CORPUS, file))]);
  const cases = [
    ...[...kinds, ['g0.bgf', g0]].flatMap(([file, bytes]) => headerMutations(file, bytes)),
    ...byteMutations('g0.bgf', g0, r, 20 * SCALE),
    // (its header is g0's header logic; its payload is the sharded layout's)
    ...byteMutations('kind_fuse8_sharded.bgf', readFileSync(join(CORPUS, 'kind_fuse8_sharded.bgf')), r, 20 * SCALE, { header: false }),
    ...byteMutations('kind_fuse4_values.bgf', readFileSync(join(CORPUS, 'kind_fuse4_values.bgf')), r, 20 * SCALE, { header: false }),
    ...byteMutations('kind_fuse4_sharded.bgf', readFileSync(join(CORPUS, 'kind_fuse4_sharded.bgf')), r, 20 * SCALE, { header: false }),
    ...corpusFilters(), // the corpus as it is: valid files of every kind, and its broken ones
  ];
  const codes = runAll(cases, readers);
  // The mutations reach past the checksum: many checks answer, not just E_CHECKSUM.
  for (const code of ['E_CHECKSUM', 'E_TRUNCATED', 'E_HEADER', 'E_TOO_LARGE', 'E_MAGIC', 'E_VERSION']) assert.ok(codes.has(code), `${code} among ${[...codes.keys()].join(', ')}`);
});

test('merge, compact, diff, patch, build --like and join meet header fields at 2^53, 2^63, 2^64-1 with a coded error', async () => {
  const { g0 } = await twoGenerations();
  const cases = [...WRITER_BASES.map((file) => [file, readFileSync(join(CORPUS, file))]), ['g0.bgf', g0]].flatMap(([file, bytes]) => headerMutations(file, bytes));
  const codes = runAll(cases, (m) => [
    ['merge', '-o', 'out.bgf', m, 'g0.bgf'], ['compact', m, '-o', 'out.bgf', '-q'], ['diff', m, 'g1.bgf', '-o', 'out.bgd', '-q'],
    ['patch', m, 'g.bgd', '-o', 'out.bgf', '-q'], ['build', 'items.txt', '--like', m, '-o', 'out.bgf', '-q'], ['join', '-o', 'out.bgf', m, '-q'],
    ...(SCALE >= 4 ? [['merge', '-o', 'out.bgf', 'g0.bgf', m], ['diff', 'g0.bgf', m, '-o', 'out.bgd', '-q']] : []),
  ]);
  assert.ok(codes.has('E_TOO_LARGE') && codes.has('E_HEADER'), [...codes.keys()].join(', '));
});

test('publish meets header fields at 2^53, 2^63, 2^64-1 with a coded error', async () => {
  const { g0 } = await twoGenerations();
  const cases = [...WRITER_BASES.map((file) => [file, readFileSync(join(CORPUS, file))]), ['g0.bgf', g0]].flatMap(([file, bytes]) => headerMutations(file, bytes));
  runAll(cases, (m) => [['publish', m, '--dir', 'site', '-q']]);
});

test('inspect prints a header field past 2^53 exactly, and --json as a decimal string', async () => {
  const base = readFileSync(join(CORPUS, 'classic.bgf'));
  const cases = [
    ['count', 56, 2n ** 64n - 1n, 'E_TOO_LARGE', /^items inserted +18,446,744,073,709,551,615$/m],
    ['generation', 72, 2n ** 63n, 'E_TOO_LARGE', /^generation +9223372036854775808$/m],
    ['m', 32, 2n ** 53n, 'E_HEADER', /^m +9,007,199,254,740,992 bits \(1024\.0 TiB\)$/m],
  ];
  const results = batch(cases.flatMap(([field, offset, value]) => {
    const bytes = Buffer.from(base);
    bytes.writeBigUInt64LE(value, offset);
    const file = `edge-${field}.bgf`;
    return [{ args: ['inspect', file, '--json'], write: [[file, reseal(bytes)]] }, { args: ['inspect', file] }, { args: ['query', file, 'x'] }];
  }));
  for (const [field, , value, code, line] of cases) {
    const [json, text, query] = results.splice(0, 3);
    assert.equal(json.status, 65, json.stderr);
    const report = JSON.parse(json.stdout);
    assert.equal(report.code, code, field);
    assert.equal(report.checksum, 'ok', `${field}: the checksum held`);
    assert.equal(report.header[field], value.toString(), `${field} keeps every digit`);
    assert.equal(text.status, 65);
    assert.match(text.stdout, line, field);
    assert.match(text.stderr, new RegExp(`^bloomgate: edge-${field}\\.bgf: .*\\(${code}\\)\\n$`));
    // Every command that uses the filter refuses it the same way.
    assert.equal(query.status, 65);
    assert.match(query.stderr, new RegExp(`\\(${code}\\)\\n$`));
  }
});

/** Stores as fuzz-parsers.test.mjs mutates them: bytes, cuts, header fields; half resealed (SHA-256 over [16, end)). */
function mutateStore(base, r) {
  let bytes = Buffer.from(base);
  for (let round = 1 + r.int(3); round > 0; round--) {
    switch (r.int(5)) {
      case 0: bytes[r.int(bytes.length)] ^= 1 << r.int(8); break;
      case 1: bytes[r.int(bytes.length)] = r.byte(); break;
      case 2: bytes = bytes.subarray(0, r.int(bytes.length)); break;
      case 3: bytes[16 + r.int(64)] = [0, 1, 0x7f, 0x80, 0xff][r.int(5)]; break;
      default: bytes.writeBigUInt64LE(EDGES[r.int(3)], [24, 32, 40, 64][r.int(4)]);
    }
  }
  if (bytes.length >= 16 && r.chance(0.5)) createHash('sha256').update(bytes.subarray(16)).digest().copy(bytes, 8, 0, 8);
  return bytes;
}

test('stores: build --list-id-from, export-ranges and serve meet mutated stores with a coded error', async () => {
  const r = prng(0xb65);
  const sha = (algorithm, text) => createHash(algorithm).update(text).digest();
  const sha1Store = writeStore(Array.from({ length: 40 }, (_, i) => ({ hash: sha('sha1', `pw${i}`), count: i + 1 })), { hashType: 'sha1', listId: 'ab'.repeat(16), generation: 2, minCount: 1 });
  const urlStore = writeStore(Array.from({ length: 40 }, (_, i) => ({ hash: sha('sha256', `u${i}.example/`), count: 1 })), { hashType: 'sha256', listId: 'cd'.repeat(16) });
  writeFileSync(join(dir, 'dump.txt'), `${sha('sha1', 'pw1').toString('hex').toUpperCase()}:3\n`);
  writeFileSync(join(dir, 'urls.txt'), 'u1.example\n');
  const mutated = [];
  for (let i = 0; i < 60 * SCALE; i++) mutated.push(['sha1', mutateStore(sha1Store, r)], ['sha256', mutateStore(urlStore, r)]);
  let opened = 0;
  const jobs = [];
  for (const [hashType, bytes] of mutated) {
    const args = hashType === 'sha1'
      ? [['build', 'dump.txt', '--format', 'hibp', '--list-id-from', 'm.bgs', '-o', 'out.bgf', '-q']]
      : [['build', 'urls.txt', '--format', 'urls', '--list-id-from', 'm.bgs', '-o', 'out.bgf', '-q'], ['export-ranges', 'm.bgs', '-o', 'ranges', '-q']];
    args.forEach((command, i) => jobs.push({ args: command, ...(i === 0 && { write: [['m.bgs', bytes]] }), hashType }));
  }
  for (const [i, result] of batch(jobs).entries()) {
    check(result, `${jobs[i].args.join(' ')} with a mutated ${jobs[i].hashType} store`);
    if (result.status === 0) opened++;
  }
  assert.ok(opened > 0, 'some mutations (a count, a record) still open');

  // serve opens what it serves before it listens: a bad file ends it with a code.
  const serveCases = [
    ['--password-store', mutateStore(sha1Store, prng(1)).subarray(0, 100), 'p.bgs'],
    ['--url-store', (() => { const b = Buffer.from(urlStore); b.writeBigUInt64LE(2n ** 64n - 1n, 24); return b; })(), 'u.bgs'],
    ['--filter', (() => { const b = Buffer.from(readFileSync(join(CORPUS, 'classic.bgf'))); b.writeBigUInt64LE(2n ** 63n, 32); return reseal(b); })(), 'f.bgf'],
    ['--filter', Buffer.from('not a filter at all'), 'g.bgf'],
  ];
  const results = await Promise.all(serveCases.map(([flag, bytes, file]) => {
    writeFileSync(join(dir, file), bytes);
    const spec = flag === '--filter' ? `x=${file}` : file;
    return new Promise((resolve) => {
      const child = spawn(process.execPath, [CLI, 'serve', flag, spec, '--port', '0'], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (text) => {
        stderr += text;
        if (/serving on/.test(stderr)) child.kill('SIGTERM');
      });
      child.on('close', (status) => resolve({ status, stderr, stdout: '' }));
    });
  }));
  for (const [i, result] of results.entries()) {
    if (/serving on/.test(result.stderr)) continue; // accepted (a mutation that left it valid)
    check(result, `serve ${serveCases[i][0]} ${serveCases[i][2]}`);
    assert.equal(result.status, 65, result.stderr);
  }
});

test('patch meets mutated deltas with a coded error', async () => {
  const r = prng(0xde17a);
  await twoGenerations();
  const delta = readFileSync(join(dir, 'g.bgd'));
  const jobs = [];
  for (let i = 0; i < 80 * SCALE; i++) {
    const bytes = Buffer.from(delta);
    if (i % 3 === 0) bytes.writeBigUInt64LE(EDGES[r.int(3)], 8 * (2 + r.int(14)));
    else if (i % 3 === 1) bytes[r.int(bytes.length)] ^= 1 << r.int(8);
    jobs.push({ args: ['patch', 'g0.bgf', 'm.bgd', '-o', 'patched.bgf', '-q'], write: [['m.bgd', i % 3 === 2 ? bytes.subarray(0, r.int(bytes.length)) : bytes]] });
  }
  for (const [i, result] of batch(jobs).entries()) check(result, `patch with mutated delta #${i}`);
});

/*
 * A full disk. As root, a small tmpfs really fills up; elsewhere the temporary
 * file a command writes (`OUT.tmp-<pid>`, helpers/cli-batch.mjs's pid, as the
 * commands run in it) is a link to /dev/full, whose every write is ENOSPC.
 */
function fullDisk(t) {
  const mount = join(dir, 'full');
  mkdirSync(mount);
  if (process.getuid?.() === 0 && spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', mount]).status === 0) {
    t.after(() => spawnSync('umount', [mount]));
    return {
      mount,
      real: true,
      // Everything that follows fails at its first block.
      fill() {
        const info = statfsSync(mount);
        writeFileSync(join(mount, 'filler'), Buffer.alloc(info.bavail * info.bsize));
      },
    };
  }
  return { mount, real: false, fill() {} };
}

const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

test('ENOSPC while writing is exit 73 naming the output, and the previous output stays', async (t) => {
  await twoGenerations();
  const disk = fullDisk(t);
  const { mount } = disk;
  const out = join(mount, 'out.bgf');
  const store = join(mount, 'out.bgs');
  const site = join(mount, 'ranges');
  // Inputs live outside the full disk.
  writeFileSync(join(dir, 'words.txt'), Array.from({ length: 300 }, (_, i) => `word-${i}`).join('\n'));
  const urls = writeStore(Array.from({ length: 20 }, (_, i) => ({ hash: createHash('sha256').update(`h${i}.example/`).digest(), count: 1 })), { hashType: 'sha256', listId: 'ef'.repeat(16) });
  writeFileSync(join(dir, 'urls.bgs'), urls);
  const counting = await BloomFilter.create({ capacity: 300, errorRate: 0.01, kind: 'counting' });
  counting.add('x');
  writeFileSync(join(dir, 'counting.bgf'), counting.serialize());
  counting.free();
  const rows = Array.from({ length: 50 }, (_, i) => `${createHash('sha1').update(`p${i}`).digest('hex').toUpperCase()}:${i + 1}`);
  writeFileSync(join(dir, 'dump.txt'), rows.sort().join('\n'));
  // The previous outputs, written while there was room.
  const previous = Buffer.from('the previous output\n');
  writeFileSync(out, previous);
  if (disk.real) assert.equal(cli(['export-ranges', 'urls.bgs', '-o', site, '-q']).status, 0);
  const manifest = disk.real ? readFileSync(join(site, 'hashes', 'manifest.json')) : null;
  disk.fill();

  const commands = [
    ['build', 'words.txt', '-o', out, '-q'],
    ['build', 'words.txt', '-o', out, '--kind', 'blocked', '-q'],
    ['build', 'words.txt', '-o', out, '--kind', 'fuse', '-q'],
    ['build', 'words.txt', '-o', out, '--kind', 'fuse', '--shards', '2', '-q'],
    ['build', 'dump.txt', '--format', 'hibp', '-o', out, '--store', store, '-q'],
    ['merge', '-o', out, 'g0.bgf', 'g0.bgf', '-q'],
    ['compact', 'counting.bgf', '-o', out, '-q'],
    ['diff', 'g0.bgf', 'g1.bgf', '-o', out, '-q'],
    ['patch', 'g0.bgf', 'g.bgd', '-o', out, '-q'],
    ...(disk.real ? [['export-ranges', 'urls.bgs', '-o', site, '-q']] : []),
  ];
  const results = batch(commands.map((args) => ({ args, ...(!disk.real && { devFull: [out, store] }) })));
  for (const [i, result] of results.entries()) {
    const what = commands[i].join(' ');
    assert.equal(result.status, 73, `${what}: ${result.stderr}`);
    // Named by the output it was writing (with the temporary file, when that is where it failed).
    const named = commands[i][0] === 'export-ranges' ? `${escape(site)}[^']*` : `${escape(out)}|${escape(store)}`;
    assert.match(result.stderr, new RegExp(`^bloomgate: cannot write '(?:${named})'(?: \\(its temporary file '[^']+'\\))?: no space left on device \\(ENOSPC\\)\\n$`), what);
  }
  // Nothing of theirs is left, and what was there before is as it was.
  assert.deepEqual(readFileSync(out), previous, 'the previous output stays');
  assert.equal(existsSync(store), false);
  if (manifest) assert.deepEqual(readFileSync(join(site, 'hashes', 'manifest.json')), manifest, 'the previous export stays');
  const left = readdirSync(mount).filter((name) => name.includes('.tmp-') && !(disk.real === false && /\.tmp-[0-9]+$/.test(name)));
  assert.deepEqual(left, [], 'no temporary file left');
  // A command whose -o names the output plainly: the message names it too.
  assert.match(results[0].stderr, new RegExp(`^bloomgate: cannot write '${escape(out)}'`));
  // The real command, as a process: the same line and status.
  if (disk.real) {
    const child = spawnSync(process.execPath, [CLI, 'build', 'words.txt', '-o', out], { cwd: dir, encoding: 'utf8' });
    assert.equal(child.status, 73, child.stderr);
    assert.equal(child.stderr, `bloomgate: cannot write '${out}': no space left on device (ENOSPC)\n`);
    assert.deepEqual(readFileSync(out), previous);
  }
});
