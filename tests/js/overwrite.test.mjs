// `merge` and `compact` never write over one of their inputs, as `build`
// never does (build-safety.test.mjs): an -o that is an input (the same path,
// a symbolic link or a hard link to it) is a usage error, exit 64, reported
// before anything is created, and the input stays as it was.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { linkSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, scratchDirectory } from './helpers/cli.mjs';

const scratch = scratchDirectory('bloomgate-overwrite-');
let dir;
before(() => {
  dir = scratch.dir;
});
const run = (args, options = {}) => runCli(dir, args, options);

function build(name, items, extra = []) {
  writeFileSync(join(dir, `${name}.txt`), `${items.join('\n')}\n`);
  const result = run(['build', `${name}.txt`, '-o', `${name}.bgf`, '--capacity', '100', '-q', ...extra]);
  assert.equal(result.status, 0, result.stderr);
  return readFileSync(join(dir, `${name}.bgf`));
}

test('merge refuses -o naming one of its inputs: same path, symlink, hard link', () => {
  const a = build('a', ['alpha', 'beta']);
  const b = build('b', ['gamma']);
  symlinkSync('a.bgf', join(dir, 'a-link.bgf'));
  linkSync(join(dir, 'b.bgf'), join(dir, 'b-hard.bgf'));
  const cases = [
    [['-o', 'a.bgf', 'a.bgf', 'b.bgf'], /-o 'a\.bgf' is the input 'a\.bgf': refusing to overwrite it/],
    [['-o', './b.bgf', 'a.bgf', 'b.bgf'], /-o '\.\/b\.bgf' is the input 'b\.bgf': refusing/],
    [['-o', 'a-link.bgf', 'a.bgf', 'b.bgf'], /-o 'a-link\.bgf' is the input 'a\.bgf' \(a link to it\)/],
    [['-o', 'a.bgf', 'a-link.bgf', 'b.bgf'], /is the input 'a-link\.bgf' \(a link to it\)/],
    [['-o', 'b-hard.bgf', 'a.bgf', 'b.bgf'], /-o 'b-hard\.bgf' is the input 'b\.bgf' \(a link to it\)/],
  ];
  for (const [args, pattern] of cases) {
    const result = run(['merge', ...args]);
    assert.equal(result.status, 64, `${args.join(' ')}: ${result.stderr}`);
    assert.match(result.stderr, /^bloomgate: .+ \(E_USAGE\)\n$/);
    assert.match(result.stderr, pattern);
    assert.ok(readFileSync(join(dir, 'a.bgf')).equals(a), 'a.bgf is untouched');
    assert.ok(readFileSync(join(dir, 'b.bgf')).equals(b), 'b.bgf is untouched');
    assert.deepEqual(readdirSync(dir).filter((name) => name.includes('.tmp-')), [], 'nothing was created');
  }
  // Another output still merges.
  const merged = run(['merge', '-o', 'ab.bgf', 'a.bgf', 'b.bgf', '-q']);
  assert.equal(merged.status, 0, merged.stderr);
});

test('compact refuses -o naming its input: same path, symlink, hard link', () => {
  const counting = build('c', ['alpha', 'beta'], ['--kind', 'counting']);
  symlinkSync('c.bgf', join(dir, 'c-link.bgf'));
  linkSync(join(dir, 'c.bgf'), join(dir, 'c-hard.bgf'));
  for (const [args, pattern] of [
    [['c.bgf', '-o', 'c.bgf'], /-o 'c\.bgf' is the input 'c\.bgf': refusing to overwrite it/],
    [['c.bgf', '-o', 'c-link.bgf'], /\(a link to it\)/],
    [['c-link.bgf', '-o', 'c.bgf'], /is the input 'c-link\.bgf' \(a link to it\)/],
    [['c.bgf', '-o', 'c-hard.bgf'], /\(a link to it\)/],
  ]) {
    const result = run(['compact', ...args]);
    assert.equal(result.status, 64, `${args.join(' ')}: ${result.stderr}`);
    assert.match(result.stderr, /^bloomgate: .+ \(E_USAGE\)\n$/);
    assert.match(result.stderr, pattern);
    assert.ok(readFileSync(join(dir, 'c.bgf')).equals(counting), 'the input is untouched');
    assert.deepEqual(readdirSync(dir).filter((name) => name.includes('.tmp-')), []);
  }
  const published = run(['compact', 'c.bgf', '-o', 'published.bgf', '-q']);
  assert.equal(published.status, 0, published.stderr);
});
