// Nothing lost on the write side of `bloomgate build`: outputs never replace
// their own input, and a build killed outright leaves nothing that later
// runs trip over.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { linkSync, mkdirSync, openSync, closeSync, readdirSync, readFileSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { StoreReader } from '../../js/store.js';
import { CLI, runCli, scratchDirectory } from './helpers/cli.mjs';

const scratch = scratchDirectory('bloomgate-safety-');
let dir;
before(() => {
  dir = scratch.dir;
});
const run = (args, options = {}) => runCli(dir, args, options);

const sha1Hex = (text) => createHash('sha1').update(text).digest('hex').toUpperCase();
const temporaries = (sub = '') => readdirSync(join(dir, sub)).filter((name) => name.includes('.tmp-'));

test('build refuses to write -o or --store over its own input: same path, symlink, hard link, stdin', () => {
  const dump = `${['a', 'b', 'c'].map((pw) => `${sha1Hex(pw)}:3`).join('\r\n')}\r\n`;
  writeFileSync(join(dir, 'dump.txt'), dump);
  symlinkSync('dump.txt', join(dir, 'symlink.txt'));
  linkSync(join(dir, 'dump.txt'), join(dir, 'hardlink.txt'));
  const cases = [
    [['dump.txt', '-o', 'dump.txt'], /-o 'dump\.txt' is the input 'dump\.txt': refusing/],
    [['dump.txt', '-o', './dump.txt'], /is the input/],
    [['dump.txt', '-o', 'symlink.txt'], /-o 'symlink\.txt' is the input 'dump\.txt' \(a link to it\)/],
    [['symlink.txt', '-o', 'dump.txt'], /a link to it/],
    [['dump.txt', '-o', 'hardlink.txt'], /a link to it/],
    [['dump.txt', '-o', 'f.bgf', '--store', 'dump.txt'], /--store 'dump\.txt' is the input/],
    [['dump.txt', '-o', 'f.bgf', '--store', 'hardlink.txt'], /--store 'hardlink\.txt' is the input/],
    [['dump.txt', '-o', 'f.bgf', '--store', './f.bgf'], /--store and --output must be different files/],
  ];
  for (const [args, pattern] of cases) {
    const result = run(['build', ...args, '--format', 'hibp']);
    assert.equal(result.status, 64, `${args.join(' ')}: ${result.stderr}`);
    assert.match(result.stderr, /^bloomgate: .+ \(E_USAGE\)\n$/);
    assert.match(result.stderr, pattern);
    assert.equal(readFileSync(join(dir, 'dump.txt'), 'utf8'), dump, 'the input is untouched');
  }
  // stdin redirected from the file the output names.
  const fd = openSync(join(dir, 'dump.txt'), 'r');
  const redirected = run(['build', '--format', 'hibp', '-o', 'dump.txt'], { stdio: [fd, 'pipe', 'pipe'] });
  closeSync(fd);
  assert.equal(redirected.status, 64, redirected.stderr);
  assert.match(redirected.stderr, /-o 'dump\.txt' is the input \(stdin\)/);
  assert.equal(readFileSync(join(dir, 'dump.txt'), 'utf8'), dump);
  assert.deepEqual(temporaries(), [], 'refused before any temporary file was made');

  // A per-prefix directory: outputs inside it would replace or pollute its files.
  mkdirSync(join(dir, 'hashes'));
  const suffix = sha1Hex('a').slice(5);
  writeFileSync(join(dir, 'hashes', `${sha1Hex('a').slice(0, 5)}.txt`), `${suffix}:3`);
  const inside = run(['build', 'hashes', '--format', 'hibp', '-o', join('hashes', 'out.bgf')]);
  assert.equal(inside.status, 64, inside.stderr);
  assert.match(inside.stderr, /-o 'hashes.out\.bgf' is inside the input 'hashes', a per-prefix directory/);
  assert.deepEqual(readdirSync(join(dir, 'hashes')), [`${sha1Hex('a').slice(0, 5)}.txt`]);

  // A different file is fine, of course.
  assert.equal(run(['build', 'dump.txt', '--format', 'hibp', '-o', 'ok.bgf', '--store', 'ok.bgs', '-q']).status, 0);
});

test('a build killed with SIGKILL leaves temporary files that the next build of the same output removes', async () => {
  // Shuffled rows and small sort runs, so the store build has run files on disk when it is killed.
  const rows = Array.from({ length: 60000 }, (_, i) => `${sha1Hex(`kill-${i}`)}:${i + 1}`);
  writeFileSync(join(dir, 'big.txt'), rows.join('\n'));
  const child = spawn(process.execPath, [CLI, 'build', 'big.txt', '--format', 'hibp', '-o', 'k.bgf', '--store', 'k.bgs', '--progress'], {
    cwd: dir, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, BLOOMGATE_STORE_RUN_BYTES: String(24 * 1000) },
  });
  let stderr = '';
  await new Promise((resolve, reject) => {
    child.stderr.setEncoding('utf8').on('data', (text) => {
      stderr += text;
      if (/sorting run 5\b/.test(stderr)) resolve();
    });
    child.on('close', () => reject(new Error(`the build ended before it could be killed: ${stderr}`)));
  });
  const closed = new Promise((resolve) => child.on('close', (code, signal) => resolve(signal)));
  child.kill('SIGKILL');
  assert.equal(await closed, 'SIGKILL');
  const litter = temporaries();
  assert.ok(litter.includes(`k.bgf.tmp-${child.pid}`), litter.join(' '));
  assert.ok(litter.includes(`k.bgs.tmp-${child.pid}`), litter.join(' '));
  assert.ok(litter.filter((name) => name.startsWith(`k.bgs.tmp-${child.pid}-run`)).length >= 4, litter.join(' '));
  assert.equal(readdirSync(dir).includes('k.bgf') || readdirSync(dir).includes('k.bgs'), false);

  // Temporary files of a live process, and of outputs not being built, are left alone.
  const alive = `k.bgs.tmp-${process.pid}-run1`;
  writeFileSync(join(dir, alive), 'a live build');
  writeFileSync(join(dir, `other.bgs.tmp-${child.pid}`), 'another output');
  // A dead process's file written after this build started is not touched either
  // (it could be a writer in another PID namespace): dated in the future here.
  writeFileSync(join(dir, `k.bgf.tmp-${child.pid}-fresh`), 'recent');
  const future = new Date(Date.now() + 3600_000);
  utimesSync(join(dir, `k.bgf.tmp-${child.pid}-fresh`), future, future);

  const again = run(['build', 'big.txt', '--format', 'hibp', '-o', 'k.bgf', '--store', 'k.bgs', '-q'], { env: { ...process.env, BLOOMGATE_STORE_RUN_BYTES: String(24 * 1000) } });
  assert.equal(again.status, 0, again.stderr);
  assert.deepEqual(temporaries().sort(), [alive, `k.bgf.tmp-${child.pid}-fresh`, `other.bgs.tmp-${child.pid}`].sort());
  const store = await StoreReader.open(join(dir, 'k.bgs'));
  assert.equal(store.count, rows.length);
  await store.close();
});
