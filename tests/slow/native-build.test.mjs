// bench/native_build.c, the native floor under `bloomgate build --format hibp`
// (bench/scale.mjs times the two side by side), writes byte for byte the
// CLI's file for the same input and options. Skipped without a C compiler or
// Debian's /usr/include/xxhash.h.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { writeDump } from '../../bench/hibp-dump.mjs';

const CLI = fileURLToPath(new URL('../../js/cli.js', import.meta.url));
const BUILD_NATIVE = fileURLToPath(new URL('../../bench/build-native.sh', import.meta.url));

let dir;
let native = null;
let skip = false;

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'bloomgate-native-build-'));
  const built = spawnSync('sh', [BUILD_NATIVE, 'native_build'], { encoding: 'utf8' });
  if (built.error || built.status === 3) {
    skip = 'no C compiler or /usr/include/xxhash.h';
    return;
  }
  assert.equal(built.status, 0, built.stderr);
  native = built.stdout.trim().split('\n').pop();
});
after(() => {
  rmSync(dir, { recursive: true, force: true });
});

function cli(args) {
  const result = spawnSync(process.execPath, [CLI, 'build', ...args, '-q'], { cwd: dir, encoding: 'utf8' });
  assert.equal(result.status, 0, result.stderr);
}

function nativeBuild(args) {
  const result = spawnSync(native, args, { cwd: dir, encoding: 'utf8' });
  assert.equal(result.status, 0, result.stderr);
  return JSON.parse(result.stdout);
}

/** Both builders on one input: the same bytes. */
function same(t, input, options, expectedItems, nativeOptions = []) {
  if (skip) return t.skip(skip);
  const tag = options.join('_').replace(/[^a-z0-9]+/gi, '');
  cli([input, '--format', 'hibp', '-o', `cli-${tag}.bgf`, ...options]);
  const report = nativeBuild([input, '-o', `native-${tag}.bgf`, ...options, ...nativeOptions]);
  if (expectedItems !== undefined) assert.equal(report.items, expectedItems);
  const a = readFileSync(join(dir, `cli-${tag}.bgf`));
  const b = readFileSync(join(dir, `native-${tag}.bgf`));
  assert.ok(a.length > 128);
  assert.ok(a.equals(b), `${input} ${options.join(' ')}: the native file differs from the CLI's (${a.length} vs ${b.length} bytes)`);
}

const HASH = (i) => (i * 2654435761 >>> 0).toString(16).toUpperCase().padStart(8, '0').repeat(5);

before(() => {
  writeDump(join(dir, 'dump.txt'), 20000, { seed: 7 });
  writeDump(join(dir, 'bom-lf.txt'), 5000, { seed: 8, crlf: false, bom: true });
  // Every kind of row the parser meets: BOMs at block starts, lowercase hex,
  // LF and CRLF, empty lines, COUNT 0 padding, invalid rows, a last row
  // without its newline.
  const rows = ['\ufeff' + `${HASH(1)}:5`];
  for (let i = 2; i < 400; i++) {
    const hash = i % 7 === 0 ? HASH(i).toLowerCase() : HASH(i);
    rows.push(i % 50 === 0 ? `\ufeff${hash}:${i}` : `${hash}:${i % 13}`);
    if (i % 97 === 0) rows.push('');
  }
  rows.push(`${HASH(401)}:notanumber`, `${HASH(402).slice(1)}:3`, `${HASH(403)}:123456789012345678901234`);
  const text = rows.map((row, i) => (i % 3 === 0 ? `${row}\r\n` : `${row}\n`)).join('') + `${HASH(404)}:9`;
  writeFileSync(join(dir, 'mixed.txt'), text);
});

test('classic, blocked and fuse from a generated dump: the same bytes', (t) => {
  for (const kind of ['classic', 'blocked', 'fuse', 'fuse16']) {
    if (skip) return t.skip(skip);
    same(t, 'dump.txt', ['--kind', kind], 20000);
  }
});

test('native_build --batch (bg_filter_add_many into a utf8 filter, then the sha1 header): the same bytes', (t) => {
  for (const kind of ['classic', 'blocked', 'fuse']) {
    if (skip) return t.skip(skip);
    same(t, 'dump.txt', ['--kind', kind], 20000, ['--batch']);
  }
  same(t, 'mixed.txt', ['--skip-invalid', '--seed', '7'], undefined, ['--batch']);
});

test('--error-rate, --seed, --min-count and --capacity: the same bytes', (t) => {
  same(t, 'dump.txt', ['--error-rate', '0.001', '--seed', '12345']);
  same(t, 'dump.txt', ['--min-count', '10', '--kind', 'fuse']);
  same(t, 'dump.txt', ['--capacity', '25000']);
  same(t, 'dump.txt', ['--capacity', '25000', '--kind', 'fuse', '--min-count', '0']);
});

test('byte order marks, LF endings, empty lines, lowercase hex and skipped rows: the same bytes', (t) => {
  same(t, 'bom-lf.txt', [], 5000);
  same(t, 'bom-lf.txt', ['--kind', 'fuse']);
  same(t, 'mixed.txt', ['--skip-invalid']);
  same(t, 'mixed.txt', ['--skip-invalid', '--min-count', '0', '--kind', 'fuse']);
});

test('a sharded fuse build (--shards): the same bytes', (t) => {
  same(t, 'dump.txt', ['--kind', 'fuse', '--shards', '4']);
  same(t, 'dump.txt', ['--kind', 'fuse16', '--shards', '8', '--seed', '99']);
});

test('the native builder refuses what the CLI refuses', (t) => {
  if (skip) return t.skip(skip);
  writeFileSync(join(dir, 'bad.txt'), `${HASH(1)}:1\n${HASH(2)}:x\n`);
  writeFileSync(join(dir, 'ntlm.txt'), `${HASH(1).slice(0, 32)}:1\n`);
  for (const input of ['bad.txt', 'ntlm.txt']) {
    const result = spawnSync(native, [input, '-o', 'x.bgf'], { cwd: dir, encoding: 'utf8' });
    assert.equal(result.status, 65, result.stderr);
  }
});
