// Generations of one list through the CLI (issue 13): build --like, diff,
// patch and publish, with the files a static host serves checked byte for byte.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, scratchDirectory } from '../js/helpers/cli.mjs';

const scratch = scratchDirectory('bloomgate-generations-');
const LIST = 'c0ffee00'.repeat(4);
const at = (name) => join(scratch.dir, name);
const bytes = (name) => readFileSync(at(name));
const ok = (args) => {
  const result = runCli(scratch.dir, args);
  assert.equal(result.status, 0, result.stderr);
  return result;
};

// Generation g: keys k0..k19999 with the first 100·g removed and 100·g new ones added.
function writeGeneration(g) {
  const lines = [];
  for (let i = 100 * g; i < 20000; i++) lines.push(`k${i}`);
  for (let i = 0; i < 100 * g; i++) lines.push(`new-${i}`);
  writeFileSync(at(`g${g}.txt`), `${lines.join('\n')}\n`);
}

test('build --like keeps the geometry and raises the generation; diff and patch reproduce the next file exactly', () => {
  for (let g = 0; g < 4; g++) writeGeneration(g);
  ok(['build', 'g0.txt', '-o', 'g0.bgf', '--capacity', '30000', '--list-id', LIST, '--seed', '42']);
  for (let g = 1; g < 4; g++) ok(['build', `g${g}.txt`, '-o', `g${g}.bgf`, '--like', `g${g - 1}.bgf`]);
  const inspect = JSON.parse(ok(['inspect', 'g3.bgf', '--json']).stdout);
  assert.equal(inspect.header.generation, 3);
  assert.equal(inspect.header.listId, LIST);
  assert.equal(inspect.header.capacity, 30000);
  assert.equal(inspect.header.seed, '42');
  for (let g = 1; g < 4; g++) {
    ok(['diff', `g${g - 1}.bgf`, `g${g}.bgf`, '-o', `d${g}.bgd`]);
    assert.ok(bytes(`d${g}.bgd`).length < bytes(`g${g}.bgf`).length / 10, 'a 1% change is a small delta');
  }
  // A chain of patches from generation 0 gives generation 3, byte for byte.
  ok(['patch', 'g0.bgf', 'd1.bgd', '-o', 'p1.bgf']);
  ok(['patch', 'p1.bgf', 'd2.bgd', '-o', 'p2.bgf']);
  ok(['patch', 'p2.bgf', 'd3.bgd', '-o', 'p3.bgf']);
  assert.deepEqual(bytes('p3.bgf'), bytes('g3.bgf'));
});

test('a delta for another base, a damaged delta and incompatible pairs are refused and write nothing', () => {
  const replay = runCli(scratch.dir, ['patch', 'g2.bgf', 'd1.bgd', '-o', 'bad1.bgf']);
  assert.equal(replay.status, 65);
  assert.match(replay.stderr, /E_DELTA_BASE/);
  const damaged = Buffer.from(bytes('d2.bgd'));
  damaged[damaged.length - 3] ^= 0x40;
  writeFileSync(at('damaged.bgd'), damaged);
  const corrupt = runCli(scratch.dir, ['patch', 'g1.bgf', 'damaged.bgd', '-o', 'bad2.bgf']);
  assert.equal(corrupt.status, 65);
  assert.match(corrupt.stderr, /E_CHECKSUM|E_DELTA/);
  writeFileSync(at('short.bgd'), bytes('d2.bgd').subarray(0, 50));
  assert.equal(runCli(scratch.dir, ['patch', 'g1.bgf', 'short.bgd', '-o', 'bad3.bgf']).status, 65);
  ok(['build', 'g1.txt', '-o', 'other.bgf', '--capacity', '30000', '--list-id', 'ab'.repeat(16), '--generation', '5']);
  const other = runCli(scratch.dir, ['diff', 'g0.bgf', 'other.bgf', '-o', 'bad.bgd']);
  assert.equal(other.status, 65);
  assert.match(other.stderr, /E_INCOMPATIBLE/);
  for (const name of ['bad1.bgf', 'bad2.bgf', 'bad3.bgf', 'bad.bgd']) assert.equal(existsSync(at(name)), false, `${name} was not written`);
});

test('build --like refuses what would break the geometry or the list', () => {
  const contradiction = runCli(scratch.dir, ['build', 'g1.txt', '-o', 'x.bgf', '--like', 'g0.bgf', '--capacity', '50000']);
  assert.equal(contradiction.status, 64);
  assert.match(contradiction.stderr, /capacity 50000 contradicts/);
  const older = runCli(scratch.dir, ['build', 'g1.txt', '-o', 'x.bgf', '--like', 'g2.bgf', '--generation', '1']);
  assert.equal(older.status, 64);
  ok(['build', 'g0.txt', '-o', 'unnamed.bgf', '--capacity', '30000']);
  assert.match(runCli(scratch.dir, ['build', 'g1.txt', '-o', 'x.bgf', '--like', 'unnamed.bgf']).stderr, /names no list/);
  writeFileSync(at('many.txt'), `${Array.from({ length: 31000 }, (_, i) => `m${i}`).join('\n')}\n`);
  const outgrown = runCli(scratch.dir, ['build', 'many.txt', '-o', 'x.bgf', '--like', 'g0.bgf']);
  assert.equal(outgrown.status, 65);
  assert.match(outgrown.stderr, /do not fit the geometry.*E_CAPACITY/s);
  assert.equal(existsSync(at('x.bgf')), false);
});

test('publish writes the file, deltas from the kept generations and the manifest that names them with SRI', () => {
  for (let g = 0; g < 4; g++) ok(['publish', `g${g}.bgf`, '--dir', 'site', '--keep', '2', '--min-refresh', '600']);
  const manifest = JSON.parse(readFileSync(at('site/manifest.json'), 'utf8'));
  assert.equal(manifest.format, 'bloomgate-filter');
  assert.equal(manifest.version, 2);
  assert.deepEqual(manifest.signatures, [], 'no --sign: an unsigned manifest');
  assert.ok(Math.abs(manifest.expires - (Date.now() / 1000 + 7 * 86400)) < 600, 'expires in 7 days by default');
  assert.equal(manifest.listId, LIST);
  assert.equal(manifest.generation, 3);
  assert.equal(manifest.minRefreshSeconds, 600);
  const sri = (file) => `sha256-${createHash('sha256').update(readFileSync(at(`site/${file}`))).digest('base64')}`;
  assert.equal(manifest.full.url, 'filter-3.bgf');
  assert.deepEqual(readFileSync(at('site/filter-3.bgf')), bytes('g3.bgf'));
  assert.equal(manifest.full.integrity, sri('filter-3.bgf'));
  assert.equal(manifest.full.length, bytes('g3.bgf').length);
  assert.deepEqual(manifest.deltas.map((d) => d.from), [2, 1]);
  for (const delta of manifest.deltas) {
    assert.equal(delta.integrity, sri(delta.url));
    ok(['patch', `g${delta.from}.bgf`, `site/${delta.url}`, '-o', `from${delta.from}.bgf`]);
    assert.deepEqual(bytes(`from${delta.from}.bgf`), bytes('g3.bgf'));
  }
  // Generation 0 is past --keep 2 and gone; the previous manifest's deltas (to 2) stay one round.
  const files = readdirSync(at('site')).sort();
  assert.ok(!files.includes('filter-0.bgf'), files.join(' '));
  assert.ok(files.includes('delta-1-2.bgd'), files.join(' '));
  assert.ok(!files.includes('delta-0-1.bgd'), files.join(' '));
  assert.ok(!files.some((name) => name.startsWith('.')), `no temporary files left: ${files.join(' ')}`);
});

test('publish refuses an older generation, another list, an unnamed filter and a foreign manifest', () => {
  const stale = runCli(scratch.dir, ['publish', 'g2.bgf', '--dir', 'site']);
  assert.equal(stale.status, 65);
  assert.match(stale.stderr, /E_STALE/);
  const other = runCli(scratch.dir, ['publish', 'other.bgf', '--dir', 'site']);
  assert.equal(other.status, 65);
  assert.match(other.stderr, /E_LIST/);
  assert.equal(runCli(scratch.dir, ['publish', 'unnamed.bgf', '--dir', 'site2']).status, 64);
  ok(['publish', 'g0.bgf', '--dir', 'site3']);
  writeFileSync(at('site3/manifest.json'), '{"format": "something-else"}');
  const foreign = runCli(scratch.dir, ['publish', 'g1.bgf', '--dir', 'site3']);
  assert.equal(foreign.status, 65);
  assert.match(foreign.stderr, /E_MANIFEST/);
  assert.equal(JSON.parse(readFileSync(at('site/manifest.json'), 'utf8')).generation, 3, 'the site is unchanged');
});

test('--kind smallest picks the kind with the smallest file that meets the rate, and says which', () => {
  writeFileSync(at('twenty.txt'), `${Array.from({ length: 20000 }, (_, i) => `s${i}`).join('\n')}\n`);
  const sizes = {};
  for (const kind of ['classic', 'cuckoo', 'fuse8', 'fuse16', 'fuse4']) {
    for (const rate of ['0.01', '0.001']) {
      const result = runCli(scratch.dir, ['build', 'twenty.txt', '-o', `${kind}-${rate}.bgf`, '--kind', kind, '--error-rate', rate, '-q']);
      if (result.status === 0) sizes[`${kind}-${rate}`] = bytes(`${kind}-${rate}.bgf`).length;
    }
  }
  for (const rate of ['0.01', '0.001']) {
    const result = ok(['build', 'twenty.txt', '-o', `smallest-${rate}.bgf`, '--kind', 'smallest', '--error-rate', rate]);
    const chosen = /--kind smallest: (\w+)/.exec(result.stderr)[1];
    const candidates = Object.entries(sizes).filter(([name]) => name.endsWith(`-${rate}`));
    const least = Math.min(...candidates.map(([, size]) => size));
    assert.equal(bytes(`smallest-${rate}.bgf`).length, least, `${chosen} is the smallest of ${JSON.stringify(candidates)}`);
    assert.equal(JSON.parse(ok(['inspect', `smallest-${rate}.bgf`, '--json']).stdout).header.kind, chosen);
  }
  assert.equal(runCli(scratch.dir, ['build', 'twenty.txt', '-o', 'x.bgf', '--kind', 'smallest', '--shards', '4']).status, 64);
});
