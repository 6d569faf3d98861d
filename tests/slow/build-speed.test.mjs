// The fast paths of `build --format hibp` (issue 10 item 3) change nothing
// that comes out:
//   - RecordReader.rows(), the splitter's fast path over whole chunks, takes
//     exactly the rows, counts, line numbers and errors of the line-by-line
//     parser, on mutated input cut into chunks anywhere (combined files and
//     per-prefix files);
//   - keys batched into a utf8 filter (digest-keys.js), the fuse filter built
//     in one pass, and the store fed in batches give the bytes of a filter
//     built key by key with addKey() under 'sha1' and of writeStore().
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { RecordReader } from '../../js/cli/records.js';
import { LineSplitter, MAX_LINE_BYTES } from '../../js/cli/lines.js';
import { BloomFilter } from '../../js/index.js';
import { writeStore } from '../../js/store.js';
import { prng } from '../js/helpers/prng.mjs';

const CLI = fileURLToPath(new URL('../../js/cli.js', import.meta.url));
const SEED = Number(process.env.BG_FUZZ_JS_SEED ?? 0x5eed);

const HEX = '0123456789ABCDEF';

function row(r, digits) {
  const hex = Array.from({ length: digits }, () => HEX[r.int(16)]).join('');
  let line = `${r.chance(0.1) ? hex.toLowerCase() : hex}:${r.chance(0.1) ? 0 : r.int(100000)}`;
  if (r.chance(0.05)) line = `\ufeff${line}`;
  if (r.chance(0.3)) {
    const at = r.int(line.length + 1);
    switch (r.int(9)) {
      case 0: line = line.slice(0, at) + line.slice(at + 1); break;
      case 1: line = line.slice(0, at) + ':G \t0\ufeff\r'[r.int(7)] + line.slice(at); break;
      case 2: line = ''; break;
      case 3: line = `${line}\r`; break;
      case 4: line = `${line.slice(0, digits + 1)}${'9'.repeat(r.int(30))}`; break;
      case 5: line = `\ufeff\ufeff${line}`; break;
      case 6: line = `${line}${'7'.repeat(MAX_LINE_BYTES - line.length + r.int(3))}`; break; // about the longest line
      case 7: line = `${line.slice(0, digits)}:`; break;
      default: line = `${line}\r\r`;
    }
  }
  return line;
}

let fastLines = 0;

/** Run one reader over `bytes` cut into chunks at `cuts`; what it saw, or its error. */
function read(bytes, cuts, { fast, minCount, skipInvalid, prefix }) {
  const keys = [];
  const onKey = (key, count) => keys.push(`${Buffer.from(key).toString('hex')}:${count}`);
  const onKeys = (batch, counts, n) => {
    for (let i = 0; i < n; i++) keys.push(`${Buffer.from(batch.subarray(20 * i, 20 * i + 20)).toString('hex')}:${counts[i]}`);
  };
  const batched = fast === 'batch';
  const reader = new RecordReader('hibp', { minCount, skipInvalid, onKey: batched ? null : onKey, onKeys: batched ? onKeys : null });
  if (prefix) reader.beginFile(`${prefix}.txt`, prefix);
  // Count the lines the fast path takes (the rest go line by line).
  const counting = {
    rows(...args) {
      const stop = reader.rows(...args);
      this.rowsDone = reader.rowsDone;
      fastLines += reader.rowsDone;
      return stop;
    },
    rowsDone: 0,
  };
  const splitter = new LineSplitter(reader.line, MAX_LINE_BYTES, fast ? counting : null);
  let error = null;
  try {
    let from = 0;
    for (const cut of [...cuts, bytes.length]) {
      splitter.push(bytes.subarray(from, cut));
      from = cut;
    }
    splitter.end();
    reader.flush();
  } catch (failure) {
    error = `${failure.code}: ${failure.message}`;
  }
  const { items, empty, invalid, belowMinCount, invalidLineNumbers } = reader;
  return { error, keys: error ? null : keys, items, empty, invalid, belowMinCount, invalidLineNumbers, lines: splitter.lineNumber };
}

test('rows(), the fast path, reads exactly what the line parser reads (fuzzed, any chunking)', () => {
  const r = prng(SEED ^ 0x51ab);
  let compared = 0;
  let taken = 0;
  for (let round = 0; round < 300; round++) {
    const prefix = round % 4 === 3 ? HEX[r.int(16)] + HEX[r.int(16)] + 'a0F' : null;
    const digits = prefix ? 35 : 40;
    const lines = Array.from({ length: 1 + r.int(60) }, () => row(r, digits));
    const text = lines.map((line) => line + (r.chance(0.5) ? '\r\n' : '\n')).join('');
    const bytes = Buffer.from(r.chance(0.2) ? text.replace(/\r?\n$/, '') : r.chance(0.1) ? `\ufeff${text}` : text);
    const cuts = Array.from({ length: r.int(6) }, () => r.int(bytes.length + 1)).sort((a, b) => a - b);
    const options = { minCount: r.int(3), skipInvalid: r.chance(0.7), prefix };
    const slow = read(bytes, cuts, { ...options, fast: null });
    for (const fast of ['single', 'batch']) {
      const seen = read(bytes, cuts, { ...options, fast });
      assert.deepEqual(seen, slow, `round ${round} (${fast}): ${JSON.stringify(bytes.toString('latin1').slice(0, 400))}`);
      compared++;
    }
    taken += slow.items;
  }
  assert.ok(compared === 600 && taken > 1000, `${taken} rows taken`);
  assert.ok(fastLines > taken, `the fast path took ${fastLines} lines of ${taken} rows taken (twice)`);
});

test('rows() in a buffer that ends in the middle of a row, and in a Buffer from the shared pool', () => {
  const hash = 'AB'.repeat(20);
  for (const text of [`${hash}:12\n${hash}:3`, `${hash}:12\r\n${hash.slice(0, 39)}`, `\ufeff${hash}:1\n${hash}`]) {
    const bytes = Buffer.from(text); // small Buffers are views into Node's 8 KiB pool
    const a = read(bytes, [], { fast: 'batch', minCount: 1, skipInvalid: true, prefix: null });
    const b = read(bytes, [], { fast: null, minCount: 1, skipInvalid: true, prefix: null });
    assert.deepEqual(a, b);
  }
});

let dir;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'bloomgate-build-speed-'));
});
after(() => {
  rmSync(dir, { recursive: true, force: true });
});

function cli(args, options = {}) {
  const result = spawnSync(process.execPath, [CLI, 'build', ...args], { cwd: dir, encoding: 'utf8', ...options });
  assert.equal(result.status, 0, result.stderr);
  return result;
}

const sha1 = (text) => createHash('sha1').update(text).digest();

/** A dump of `n` hashes in hash order, counts 0..9 (0 is below the default --min-count). */
function dump(n, name) {
  const rows = Array.from({ length: n }, (_, i) => [sha1(`pw-${i}`), i % 10]).sort((a, b) => Buffer.compare(a[0], b[0]));
  writeFileSync(join(dir, name), rows.map(([hash, count], i) => `${i % 1000 === 0 ? '\ufeff' : ''}${hash.toString('hex').toUpperCase()}:${count}\r\n`).join(''));
  return rows;
}

/** The filter a build of `rows` (counts at least minCount) is, made key by key with addKey() under 'sha1'. */
async function reference(rows, { kind, source, minCount = 1 }) {
  const kept = rows.filter(([, count]) => count >= minCount);
  const filter = await BloomFilter.create({
    capacity: Math.max(1, kept.length), errorRate: 0.01, kind, keyEncoding: 'sha1',
    metadata: { source, format: 'hibp', items: kept.length, skipped: rows.length - kept.length, minCount },
  });
  for (const [hash] of kept) filter.addKey(hash);
  const bytes = filter.serialize();
  filter.free();
  return Buffer.from(bytes);
}

test('classic, blocked and fuse builds (the fuse one in a single pass) are the filters addKey() builds', async () => {
  const rows = dump(30000, 'd.txt');
  for (const kind of ['classic', 'blocked', 'fuse', 'fuse16']) {
    cli(['d.txt', '--format', 'hibp', '--kind', kind, '-o', `${kind}.bgf`, '-q']);
    const expected = await reference(rows, { kind, source: 'd.txt' });
    assert.ok(readFileSync(join(dir, `${kind}.bgf`)).equals(expected), `${kind}: the build differs from addKey()'s filter`);
  }
  // From a pipe too (held in memory, then read once for fuse), and with --min-count 0.
  const input = readFileSync(join(dir, 'd.txt'));
  cli(['-', '--format', 'hibp', '--kind', 'fuse', '--min-count', '0', '-o', 'pipe.bgf', '-q'], { input });
  assert.ok(readFileSync(join(dir, 'pipe.bgf')).equals(await reference(rows, { kind: 'fuse', source: 'stdin', minCount: 0 })));
  // The summary names the capacity the keys gave.
  const { stderr } = cli(['d.txt', '--format', 'hibp', '--kind', 'fuse', '-o', 'f2.bgf']);
  assert.match(stderr, /27,000 items, capacity 27,000,/);
  assert.doesNotMatch(stderr, /exceed the capacity/);
});

test('a fuse build in one pass fails on a bad row as the two-pass build does, and leaves no output', () => {
  writeFileSync(join(dir, 'bad.txt'), `${'AB'.repeat(20)}:1\n${'AB'.repeat(20)}:x\n`);
  const result = spawnSync(process.execPath, [CLI, 'build', 'bad.txt', '--format', 'hibp', '--kind', 'fuse', '-o', 'bad.bgf'], { cwd: dir, encoding: 'utf8' });
  assert.equal(result.status, 65);
  assert.match(result.stderr, /^bloomgate: line 2: expected SHA1HEX:COUNT, got .* \(E_INPUT\)\n$/);
  assert.throws(() => readFileSync(join(dir, 'bad.bgf')), { code: 'ENOENT' });
});

test('--store fed in batches writes what writeStore() writes, in order and shuffled', () => {
  const rows = dump(20000, 's.txt');
  const listId = '5a'.repeat(16);
  const records = rows.filter(([, count]) => count >= 1).map(([hash, count]) => ({ hash, count }));
  const expected = Buffer.from(writeStore(records, { hashType: 'sha1', listId, minCount: 1 }));
  cli(['s.txt', '--format', 'hibp', '-o', 's.bgf', '--store', 's.bgs', '--list-id', listId, '-q']);
  assert.ok(readFileSync(join(dir, 's.bgs')).equals(expected), 'sorted input: the store differs from writeStore()');
  // Shuffled, with duplicates (the largest count wins), through small sorted runs.
  const text = readFileSync(join(dir, 's.txt'), 'latin1').split('\r\n').filter(Boolean);
  const r = prng(SEED);
  for (let i = text.length - 1; i > 0; i--) {
    const j = r.int(i + 1);
    [text[i], text[j]] = [text[j], text[i]];
  }
  writeFileSync(join(dir, 'shuffled.txt'), `${text.join('\n')}\n${text.slice(0, 50).join('\n')}\n`, 'latin1');
  cli(['shuffled.txt', '--format', 'hibp', '-o', 'u.bgf', '--store', 'u.bgs', '--list-id', listId, '-q'], {
    env: { ...process.env, BLOOMGATE_STORE_RUN_BYTES: String(24 * 3000) },
  });
  assert.ok(readFileSync(join(dir, 'u.bgs')).equals(expected), 'shuffled input: the store differs from writeStore()');
});
