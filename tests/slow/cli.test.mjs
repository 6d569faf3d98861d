// The `bloomgate` CLI, run as a child process in a temporary directory.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, openSync, closeSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { LineSplitter } from '../../js/cli/lines.js';

const CLI = fileURLToPath(new URL('../../js/cli.js', import.meta.url));
const PACKAGE = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));

let dir;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'bloomgate-cli-'));
});
after(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** Run the CLI; every run is checked for stack traces. */
function run(args, { input, stdin, env } = {}) {
  const options = { cwd: dir, encoding: 'utf8', env: { ...process.env, ...env }, maxBuffer: 64 << 20 };
  if (stdin !== undefined) options.stdio = [stdin, 'pipe', 'pipe'];
  else options.input = input ?? '';
  const result = spawnSync(process.execPath, [CLI, ...args], options);
  assert.equal(result.error, undefined);
  assert.doesNotMatch(result.stderr, /\n\s+at /, `stack trace in stderr:\n${result.stderr}`);
  return result;
}

/** Like run(), without waiting: independent cases run side by side. */
function runAsync(args) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (text) => { stdout += text; });
    child.stderr.setEncoding('utf8').on('data', (text) => { stderr += text; });
    child.on('error', reject);
    child.on('close', (status) => {
      assert.doesNotMatch(stderr, /\n\s+at /, `stack trace in stderr:\n${stderr}`);
      resolve({ status, stdout, stderr });
    });
  });
}

/** Run independent CLI invocations at most `limit` at a time. */
async function runAll(cases, limit = 4) {
  const results = new Array(cases.length);
  let next = 0;
  const worker = async () => {
    while (next < cases.length) {
      const index = next++;
      results[index] = await runAsync(cases[index]);
    }
  };
  await Promise.all(Array.from({ length: limit }, worker));
  return results;
}

/** The single error line the CLI prints: `bloomgate: <message> (<code>)`. */
function assertErrorLine(stderr, code, pattern = /./) {
  const lines = stderr.trimEnd().split('\n');
  const last = lines[lines.length - 1];
  assert.match(last, new RegExp(`^bloomgate: .+ \\(${code}\\)$`), `stderr: ${stderr}`);
  assert.match(last, pattern);
}

function file(name, content) {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

function inspectJson(path) {
  const result = run(['inspect', path, '--json']);
  return { ...result, report: JSON.parse(result.stdout) };
}

function payload(path) {
  const { report } = inspectJson(path);
  const bytes = readFileSync(join(dir, path));
  return bytes.subarray(report.header.payloadOffset, report.header.payloadOffset + report.header.payloadLength);
}

/** No output file and no leftover temporary file. */
function assertNoOutput(name) {
  assert.equal(existsSync(join(dir, name)), false, `${name} should not exist`);
  assert.deepEqual(readdirSync(dir).filter((entry) => entry.startsWith(`${name}.tmp-`)), []);
}

const sha1Hex = (text) => createHash('sha1').update(text, 'utf8').digest('hex');
const words = (prefix, count) => Array.from({ length: count }, (_, i) => `${prefix}${i}`);

function queryAll(path, items) {
  const result = run(['query', path], { input: `${items.join('\n')}\n` });
  const lines = result.stdout.trimEnd().split('\n');
  assert.equal(lines.length, items.length);
  const answers = lines.map((line, i) => {
    const [answer, item] = line.split('\t');
    assert.equal(item, items[i]);
    assert.ok(answer === 'maybe' || answer === 'no', line);
    return answer;
  });
  // The exit status is the answer: 1 when any item is "maybe", 0 when all are "no".
  assert.equal(result.status, answers.includes('maybe') ? 1 : 0, result.stderr);
  return answers;
}

test('build from a file; query members and non-members', () => {
  const items = words('item-', 500);
  const input = file('items.txt', `${items.join('\n')}\n`);
  const built = run(['build', input, '-o', 'items.bgf']);
  assert.equal(built.status, 0, built.stderr);
  assert.match(built.stderr, /wrote items\.bgf .*500 items/);

  assert.ok(queryAll('items.bgf', items).every((answer) => answer === 'maybe'));
  const outsiders = queryAll('items.bgf', words('other-', 2000));
  const falsePositives = outsiders.filter((answer) => answer === 'maybe').length;
  assert.ok(falsePositives < 60, `${falsePositives} false positives of 2000 at p = 0.01`);

  const argv = run(['query', 'items.bgf', 'item-7', 'not-there-at-all']);
  assert.equal(argv.status, 1, 'item-7 is "maybe"');
  assert.match(argv.stdout, /^maybe\titem-7\n(maybe|no)\tnot-there-at-all\n$/);
});

test('build from stdin (a pipe and a redirected file) sizes for the item count', () => {
  const items = words('stdin-', 300);
  const text = `${items.join('\n')}\n`;
  const piped = run(['build', '-', '-o', 'piped.bgf'], { input: text });
  assert.equal(piped.status, 0, piped.stderr);
  const fd = openSync(file('redirect.txt', text), 'r');
  const redirected = run(['build', '-o', 'redirected.bgf'], { stdin: fd });
  closeSync(fd);
  assert.equal(redirected.status, 0, redirected.stderr);

  for (const name of ['piped.bgf', 'redirected.bgf']) {
    const { report } = inspectJson(name);
    assert.equal(report.header.capacity, 300);
    assert.equal(report.header.count, 300);
    assert.equal(report.metadata.source, 'stdin');
    assert.ok(queryAll(name, items).every((answer) => answer === 'maybe'));
  }
  assert.deepEqual(readFileSync(join(dir, 'piped.bgf')), readFileSync(join(dir, 'redirected.bgf')));
});

test('CRLF input (with a BOM) gives the same bits as LF input; empty lines are skipped', () => {
  const items = words('crlf-', 200);
  file('lf.txt', `${items.join('\n')}\n`);
  file('crlf.txt', `\ufeff${items.join('\r\n')}\r\n\r\n\r\n`); // with a byte order mark, as Windows editors write
  assert.equal(run(['build', 'lf.txt', '-o', 'lf.bgf']).status, 0);
  assert.equal(run(['build', 'crlf.txt', '-o', 'crlf.bgf']).status, 0);
  assert.deepEqual(payload('crlf.bgf'), payload('lf.bgf'));
  const { report } = inspectJson('crlf.bgf');
  assert.equal(report.header.capacity, 200, 'empty lines are not items');
  assert.equal(report.metadata.items, 200);
  assert.ok(queryAll('crlf.bgf', items).every((answer) => answer === 'maybe'));
});

test('capacity defaults to the number of items; --capacity, --error-rate and --seed are stored', () => {
  file('five.txt', 'a\nb\n\nc\nd\ne'); // no final newline, one empty line
  assert.equal(run(['build', 'five.txt', '-o', 'five.bgf']).status, 0);
  const { report } = inspectJson('five.bgf');
  assert.equal(report.header.capacity, 5);
  assert.equal(report.header.count, 5);
  // m = ceil(-n ln p / (ln 2)^2), k = round((m/n) ln 2)
  assert.equal(report.header.m, Math.ceil((-5 * Math.log(0.01)) / Math.LN2 ** 2));
  assert.equal(report.header.k, Math.round((report.header.m / 5) * Math.LN2));

  const sized = run(['build', 'five.txt', '-o', 'sized.bgf', '--capacity', '1_000', '--error-rate', '0.001', '--seed', '0xfeed']);
  assert.equal(sized.status, 0, sized.stderr);
  const custom = inspectJson('sized.bgf').report.header;
  assert.equal(custom.capacity, 1000);
  assert.equal(custom.errorRate, 0.001);
  assert.equal(custom.seed, String(0xfeed));
  assert.equal(custom.count, 5);
});

test('hibp dumps: hashes in either case, --min-count, plaintext queries', () => {
  const rows = [
    ['password', 9000], ['123456', 20000], ['letmein', 50], ['correct horse', 3], ['rare-one', 1], ['padding', 0],
  ];
  const lines = rows.map(([pw, count], i) => `${i % 2 ? sha1Hex(pw).toUpperCase() : sha1Hex(pw)}:${count}`);
  file('dump.txt', `${lines.join('\r\n')}\r\n`);

  const built = run(['build', 'dump.txt', '--format', 'hibp', '--min-count', '10', '-o', 'pw.bgf']);
  assert.equal(built.status, 0, built.stderr);
  assert.match(built.stderr, /skipped 3 rows with COUNT below 10/);
  const { report } = inspectJson('pw.bgf');
  assert.equal(report.header.keyEncoding, 'sha1');
  assert.equal(report.header.capacity, 3);
  assert.deepEqual(
    { format: report.metadata.format, items: report.metadata.items, skipped: report.metadata.skipped, minCount: report.metadata.minCount },
    { format: 'hibp', items: 3, skipped: 3, minCount: 10 },
  );
  const answers = queryAll('pw.bgf', rows.map(([pw]) => pw));
  assert.deepEqual(answers.slice(0, 3), ['maybe', 'maybe', 'maybe']);
  assert.deepEqual(answers.slice(3), ['no', 'no', 'no']);

  // The default --min-count 1 drops only count-0 padding rows.
  assert.equal(run(['build', 'dump.txt', '--format', 'hibp', '-o', 'pw-all.bgf']).status, 0);
  assert.deepEqual(queryAll('pw-all.bgf', rows.map(([pw]) => pw)), ['maybe', 'maybe', 'maybe', 'maybe', 'maybe', 'no']);
});

test('malformed hibp lines fail with exit 65 and the line number; no output is left', async () => {
  const good = `${sha1Hex('a')}:5`;
  const cases = [
    [`${good}\n${good}\n${sha1Hex('b').slice(0, 39)}:5\n`, 3], // hash too short
    [`${good}\nZZ${sha1Hex('b').slice(2)}:5\n`, 2], // not hex
    [`${sha1Hex('b')}\n`, 1], // no count
    [`${good}\n${sha1Hex('b')}:\n`, 2], // empty count
    [`${good}\n\n${sha1Hex('b')}:-4\n`, 3], // negative count; the empty line still counts
    [`${good}\n${sha1Hex('b')}:12x\n`, 2],
  ];
  const runs = [];
  cases.forEach(([text], i) => {
    file(`bad-${i}.txt`, text);
    writeFileSync(join(dir, `keep-${i}.bgf`), 'previous contents');
    runs.push(['build', `bad-${i}.txt`, '--format', 'hibp', '-o', `bad-${i}.bgf`]);
    // With --capacity the build is one streaming pass; the existing output must survive it.
    runs.push(['build', `bad-${i}.txt`, '--format', 'hibp', '--capacity', '10', '-o', `keep-${i}.bgf`]);
  });
  const results = await runAll(runs);
  cases.forEach(([, lineNumber], i) => {
    for (const result of [results[2 * i], results[2 * i + 1]]) {
      assert.equal(result.status, 65, result.stderr);
      assertErrorLine(result.stderr, 'E_INPUT', new RegExp(`^bloomgate: line ${lineNumber}: expected SHA1HEX:COUNT, got `));
      assert.equal(result.stderr.trimEnd().split('\n').length, 1);
    }
    assertNoOutput(`bad-${i}.bgf`);
    assert.deepEqual(readdirSync(dir).filter((entry) => entry.startsWith(`keep-${i}.bgf.tmp-`)), []);
    assert.equal(readFileSync(join(dir, `keep-${i}.bgf`), 'utf8'), 'previous contents');
  });
});

test('--skip-invalid skips malformed lines and reports them', () => {
  const text = [`${sha1Hex('one')}:5`, 'garbage', `${sha1Hex('two')}:7`, `${sha1Hex('x')}:nope`, '', `${sha1Hex('three')}:1`].join('\n');
  file('mixed.txt', text);
  const result = run(['build', 'mixed.txt', '--format', 'hibp', '--skip-invalid', '-o', 'mixed.bgf']);
  assert.equal(result.status, 0, result.stderr);
  assert.match(result.stderr, /skipped 2 invalid lines \(lines 2, 4\)/);
  const { report } = inspectJson('mixed.bgf');
  assert.equal(report.metadata.items, 3);
  assert.equal(report.metadata.skipped, 2);
  assert.deepEqual(queryAll('mixed.bgf', ['one', 'two', 'three']), ['maybe', 'maybe', 'maybe']);

  const quiet = run(['build', 'mixed.txt', '--format', 'hibp', '--skip-invalid', '-q', '-o', 'mixed.bgf']);
  assert.equal(quiet.status, 0);
  assert.equal(quiet.stderr, '');
});

test('lines longer than 64 KiB are input errors with their line number', () => {
  file('long.txt', `short\n${'x'.repeat(70000)}\nafter\n`);
  const failed = run(['build', 'long.txt', '-o', 'long.bgf']);
  assert.equal(failed.status, 65);
  assertErrorLine(failed.stderr, 'E_INPUT', /^bloomgate: line 2: line is longer than 65536 bytes/);
  assertNoOutput('long.bgf');
  const skipped = run(['build', 'long.txt', '-o', 'long.bgf', '--skip-invalid']);
  assert.equal(skipped.status, 0, skipped.stderr);
  assert.equal(inspectJson('long.bgf').report.metadata.items, 2);
});

test('inspect --json reports every header field, rates and a valid checksum', () => {
  file('inspect.txt', `${words('i', 1000).join('\n')}\n`);
  assert.equal(run(['build', 'inspect.txt', '-o', 'inspect.bgf', '--description', 'test list']).status, 0);
  const { status, report } = inspectJson('inspect.bgf');
  assert.equal(status, 0);
  assert.equal(report.ok, true);
  assert.equal(report.checksum, 'ok');
  const header = report.header;
  assert.equal(header.version, 1);
  assert.equal(header.kind, 'classic');
  assert.equal(header.keyEncoding, 'utf8');
  assert.equal(header.hashAlgorithm, 'xxh3-128');
  assert.equal(header.seed, '0');
  assert.equal(header.capacity, 1000);
  assert.equal(header.errorRate, 0.01);
  assert.equal(header.count, 1000);
  assert.equal(header.m, 9586);
  assert.equal(header.k, 7);
  assert.equal(header.listId, '0'.repeat(32));
  assert.equal(header.generation, 0);
  assert.equal(header.payloadOffset % 64, 0);
  assert.equal(header.payloadLength, Math.ceil(9586 / 8));
  assert.equal(header.fileLength, readFileSync(join(dir, 'inspect.bgf')).length);
  assert.equal(header.metadataLength, Buffer.byteLength(JSON.stringify(report.metadata)));
  assert.match(header.checksum, /^[0-9a-f]{16}$/);
  assert.deepEqual(report.metadata, { source: 'inspect.txt', format: 'lines', description: 'test list', items: 1000, skipped: 0 });
  const stats = report.stats;
  assert.ok(stats.fillRatio > 0.4 && stats.fillRatio < 0.6, `fill ratio ${stats.fillRatio}`);
  assert.ok(Math.abs(stats.estimatedItems - 1000) < 50, `estimated ${stats.estimatedItems}`);
  assert.ok(stats.estimatedErrorRate > 0.005 && stats.estimatedErrorRate < 0.02);
  const theory = (1 - Math.exp((-7 * 1000) / 9586)) ** 7;
  assert.ok(Math.abs(stats.theoreticalErrorRate - theory) < 1e-9);
  assert.equal(stats.bitsSet, Math.round(stats.fillRatio * 9586));
  assert.deepEqual(report.warnings, []);

  const text = run(['inspect', 'inspect.bgf']);
  assert.equal(text.status, 0);
  for (const label of ['version', 'kind', 'key encoding', 'hash', 'seed', 'capacity', 'target error rate', 'items inserted',
    'list id', 'generation', 'metadata', 'payload', 'file length', 'checksum', 'fill ratio', 'estimated items',
    'estimated error rate', 'theoretical error rate']) {
    assert.match(text.stdout, new RegExp(`^${label} +`, 'm'), `missing '${label}' in:\n${text.stdout}`);
  }
  assert.match(text.stdout, /^checksum +ok/m);
});

test('inspect warns about filters over capacity and over-full', () => {
  file('many.txt', `${words('w', 400).join('\n')}\n`);
  assert.equal(run(['build', 'many.txt', '-o', 'full.bgf', '--capacity', '50']).status, 0);
  const { status, report } = inspectJson('full.bgf');
  assert.equal(status, 0);
  assert.equal(report.warnings.length, 2);
  assert.match(report.warnings.join('\n'), /over capacity/);
  assert.match(report.warnings.join('\n'), /over-full: answers degrade; rebuild with a larger capacity/);
  assert.match(run(['inspect', 'full.bgf']).stdout, /warning: over-full/);
});

test('inspect of a corrupt file prints what it can and exits 65 with the exact code', () => {
  file('c.txt', `${words('c', 100).join('\n')}\n`);
  assert.equal(run(['build', 'c.txt', '-o', 'c.bgf']).status, 0);
  const good = readFileSync(join(dir, 'c.bgf'));
  const { report: goodReport } = inspectJson('c.bgf');

  const flipped = Buffer.from(good);
  flipped[goodReport.header.payloadOffset + 3] ^= 0x10;
  writeFileSync(join(dir, 'flipped.bgf'), flipped);
  const bad = inspectJson('flipped.bgf');
  assert.equal(bad.status, 65);
  assert.equal(bad.report.ok, false);
  assert.equal(bad.report.code, 'E_CHECKSUM');
  assert.equal(bad.report.checksum, 'mismatch');
  assert.equal(bad.report.header.m, goodReport.header.m, 'the readable header is still reported');
  const badText = run(['inspect', 'flipped.bgf']);
  assert.equal(badText.status, 65);
  assert.match(badText.stdout, /^m +/m);
  assertErrorLine(badText.stderr, 'E_CHECKSUM');

  writeFileSync(join(dir, 'short.bgf'), good.subarray(0, good.length - 10));
  const truncated = inspectJson('short.bgf');
  assert.equal(truncated.status, 65);
  assert.equal(truncated.report.code, 'E_TRUNCATED');
  assertErrorLine(run(['inspect', 'short.bgf']).stderr, 'E_TRUNCATED');

  file('not-a-filter.bgf', 'hello world, definitely not a filter file\n');
  const magic = inspectJson('not-a-filter.bgf');
  assert.equal(magic.status, 65);
  assert.equal(magic.report.code, 'E_MAGIC');

  const query = run(['query', 'flipped.bgf', 'c1']);
  assert.equal(query.status, 65);
  assertErrorLine(query.stderr, 'E_CHECKSUM', /flipped\.bgf/);
});

test('merging partitions gives the bits of a build over the union', () => {
  const all = words('m-', 600);
  file('union.txt', `${all.join('\n')}\n`);
  file('part-a.txt', `${all.slice(0, 250).join('\n')}\n`);
  file('part-b.txt', `${all.slice(250).join('\n')}\n`);
  const common = ['--capacity', '600', '--seed', '42'];
  for (const name of ['union', 'part-a', 'part-b']) {
    const result = run(['build', `${name}.txt`, '-o', `${name}.bgf`, ...common]);
    assert.equal(result.status, 0, result.stderr);
  }
  const merged = run(['merge', '-o', 'merged.bgf', 'part-a.bgf', 'part-b.bgf']);
  assert.equal(merged.status, 0, merged.stderr);
  assert.deepEqual(payload('merged.bgf'), payload('union.bgf'));
  const union = inspectJson('union.bgf').report;
  const result = inspectJson('merged.bgf').report;
  assert.equal(result.header.count, 600);
  assert.equal(result.stats.bitsSet, union.stats.bitsSet);
  assert.equal(result.header.m, union.header.m);
  assert.ok(queryAll('merged.bgf', all).every((answer) => answer === 'maybe'));
});

test('merging incompatible filters fails with E_INCOMPATIBLE and exit 65', () => {
  file('x.txt', 'x\ny\n');
  assert.equal(run(['build', 'x.txt', '-o', 'small.bgf', '--capacity', '10']).status, 0);
  assert.equal(run(['build', 'x.txt', '-o', 'large.bgf', '--capacity', '1000']).status, 0);
  assert.equal(run(['build', 'x.txt', '-o', 'seeded.bgf', '--capacity', '10', '--seed', '9']).status, 0);
  for (const other of ['large.bgf', 'seeded.bgf']) {
    const result = run(['merge', '-o', 'bad-merge.bgf', 'small.bgf', other]);
    assert.equal(result.status, 65);
    assertErrorLine(result.stderr, 'E_INCOMPATIBLE', /^bloomgate: filters are incompatible/);
    assertNoOutput('bad-merge.bgf');
  }
});

test('query --json and stdin queries', () => {
  file('q.txt', 'alpha\nbeta\n');
  assert.equal(run(['build', 'q.txt', '-o', 'q.bgf']).status, 0);
  const json = run(['query', 'q.bgf', 'alpha', 'beta', '--json']);
  assert.equal(json.status, 1, 'both are "maybe"');
  assert.deepEqual(JSON.parse(json.stdout), [{ item: 'alpha', maybe: true }, { item: 'beta', maybe: true }]);
  const fromStdin = run(['query', 'q.bgf', '--json'], { input: 'alpha\r\n\r\nbeta\n' });
  assert.deepEqual(JSON.parse(fromStdin.stdout).map((entry) => entry.item), ['alpha', 'beta']);
  assert.deepEqual(JSON.parse(run(['query', 'q.bgf', '--json'], { input: '' }).stdout), []);
});

test('builds are reproducible; --created adds a timestamp', () => {
  file('r.txt', 'one\ntwo\nthree\n');
  assert.equal(run(['build', 'r.txt', '-o', 'r1.bgf']).status, 0);
  assert.equal(run(['build', 'r.txt', '-o', 'r2.bgf']).status, 0);
  assert.deepEqual(readFileSync(join(dir, 'r1.bgf')), readFileSync(join(dir, 'r2.bgf')));
  assert.equal(inspectJson('r1.bgf').report.metadata.created, undefined);
  assert.equal(run(['build', 'r.txt', '-o', 'r3.bgf', '--created'], { env: { SOURCE_DATE_EPOCH: '1700000000' } }).status, 0);
  assert.equal(inspectJson('r3.bgf').report.metadata.created, '2023-11-14T22:13:20.000Z');
});

test('the progress bar appears only on a terminal or with --progress', () => {
  file('p.txt', 'p\nq\n');
  assert.doesNotMatch(run(['build', 'p.txt', '-o', 'p.bgf']).stderr, /adding/);
  assert.match(run(['build', 'p.txt', '-o', 'p.bgf', '--progress']).stderr, /adding/);
});

test('usage errors exit 64', async () => {
  file('u.txt', 'u\n');
  const cases = [
    [],
    ['frobnicate'],
    ['--frobnicate'],
    ['build', 'u.txt'],
    ['build', 'u.txt', '-o'],
    ['build', 'u.txt', '-o', 'u.bgf', '--bogus'],
    ['build', 'u.txt', '-o', 'u.bgf', '--capacity', 'abc'],
    ['build', 'u.txt', '-o', 'u.bgf', '--capacity', '0'],
    ['build', 'u.txt', '-o', 'u.bgf', '--capacity', '1.5'],
    ['build', 'u.txt', '-o', 'u.bgf', '--error-rate', '1'],
    ['build', 'u.txt', '-o', 'u.bgf', '--error-rate', 'x'],
    ['build', 'u.txt', '-o', 'u.bgf', '--seed', '-1'],
    ['build', 'u.txt', '-o', 'u.bgf', '--format', 'csv'],
    ['build', 'u.txt', '-o', 'u.bgf', '--kind', 'quotient'],
    ['build', 'u.txt', '-o', 'u.bgf', '--store', 's.bgs'],
    ['build', 'u.txt', '-o', 'u.bgf', '--min-count', '3'],
    ['build', 'u.txt', 'v.txt', '-o', 'u.bgf'],
    ['build', 'u.txt', '-o', 'u.bgf', '--quiet=yes'],
    ['inspect'],
    ['inspect', 'u.bgf', '--yaml'],
    ['query'],
    ['merge', '-o', 'm.bgf', 'one.bgf'],
    ['merge', 'a.bgf', 'b.bgf'],
  ];
  const results = await runAll(cases);
  cases.forEach((args, i) => {
    assert.equal(results[i].status, 64, `${args.join(' ')}: ${results[i].stderr}`);
    if (args.length > 0) assertErrorLine(results[i].stderr, 'E_USAGE');
  });
  assertNoOutput('u.bgf');
});

test('missing inputs exit 66; unwritable outputs exit 73', async () => {
  const cases = [['build', 'nope.txt', '-o', 'x.bgf'], ['inspect', 'nope.bgf'], ['query', 'nope.bgf', 'a'],
    ['merge', '-o', 'x.bgf', 'nope.bgf', 'nope2.bgf'], ['build', dir, '-o', 'x.bgf']];
  const results = await runAll(cases);
  cases.forEach((args, i) => {
    assert.equal(results[i].status, 66, `${args.join(' ')}: ${results[i].stderr}`);
    assert.match(results[i].stderr, /^bloomgate: cannot open .+ \(E[A-Z]+\)\n$/);
  });
  assertNoOutput('x.bgf');
  file('w.txt', 'w\n');
  const result = run(['build', 'w.txt', '-o', join(dir, 'no-such-dir', 'w.bgf')]);
  assert.equal(result.status, 73);
  assertErrorLine(result.stderr, 'ENOENT', /cannot write/);
});

test('--help and --version', async () => {
  const commands = ['build', 'inspect', 'query', 'merge'];
  const [help, ...results] = await runAll([['--help'], ...commands.map((command) => [command, '--help'])]);
  assert.equal(help.status, 0);
  assert.match(help.stdout, /bloomgate build/);
  assert.match(help.stdout, /65 +data error/);
  commands.forEach((command, i) => {
    assert.equal(results[i].status, 0);
    assert.match(results[i].stdout, new RegExp(`^Usage: bloomgate ${command}`));
    assert.match(results[i].stdout, /Exit codes/);
  });
  const version = run(['--version']);
  assert.equal(version.status, 0);
  assert.equal(version.stdout, `${PACKAGE.version}\n`);
});

test('line splitting does not depend on where chunks end', () => {
  const long = 'y'.repeat(70000);
  const text = Buffer.from(`\ufeffalpha\r\nbeta\n\n${long}\r\ngamma\r\n\u00e9t\u00e9\nlast`);
  const expected = [['alpha', 1, false], ['beta', 2, false], ['', 3, false], ['yyyyyyyy', 4, true], ['gamma', 5, false], ['\u00e9t\u00e9', 6, false], ['last', 7, false]];
  const split = (chunkSizes, input) => {
    const lines = [];
    const splitter = new LineSplitter((buffer, start, end, lineNumber, tooLong) => {
      lines.push([Buffer.from(buffer.subarray(start, tooLong ? start + 8 : end)).toString('utf8'), lineNumber, tooLong]);
    });
    let offset = 0;
    for (let i = 0; offset < input.length; i++) {
      const size = chunkSizes[i % chunkSizes.length];
      splitter.push(input.subarray(offset, offset + size));
      offset += size;
    }
    splitter.end();
    return lines;
  };
  for (const sizes of [[text.length], [1], [2], [3], [7, 1], [4096], [65535, 2, 1], [5, 65536, 3]]) {
    assert.deepEqual(split(sizes, text), expected, `chunks of ${sizes.join(',')}`);
  }
  // Bytes that only begin like a byte order mark are data.
  const almost = Buffer.from([0xef, 0xbb, 0x41, 0x0a, 0x42]);
  for (const sizes of [[1], [2], [5]]) {
    const raw = [];
    const splitter = new LineSplitter((buffer, start, end) => raw.push(Buffer.from(buffer.subarray(start, end)).toString('hex')));
    for (let offset = 0; offset < almost.length; offset += sizes[0]) splitter.push(almost.subarray(offset, offset + sizes[0]));
    splitter.end();
    assert.deepEqual(raw, ['efbb41', '42'], `chunks of ${sizes[0]}`);
  }
  assert.deepEqual(split([1], Buffer.from([0xef, 0xbb])).length, 1);
  assert.deepEqual(split([1], Buffer.from([0xef, 0xbb, 0xbf])), []);
});

test('build --format urls --store: URLs and expressions in, filter + exact store out; bad URLs by line', async () => {
  file('bad.txt', 'evil.example\nhttp://bad.example/phish/login.html\n1.2.3.4/malware/\n\nhttp://[::1\n');
  const failed = run(['build', 'bad.txt', '--format', 'urls', '-o', 'u.bgf', '--store', 'u.bgs']);
  assert.equal(failed.status, 65);
  assertErrorLine(failed.stderr, 'E_INPUT', /line 5/);
  assert.equal(existsSync(join(dir, 'u.bgf')) || existsSync(join(dir, 'u.bgs')), false, 'a failed build leaves neither file');

  const built = run(['build', 'bad.txt', '--format', 'urls', '-o', 'u.bgf', '--store', 'u.bgs', '--skip-invalid']);
  assert.equal(built.status, 0, built.stderr);
  const info = JSON.parse(run(['inspect', 'u.bgf', '--json']).stdout);
  assert.equal(info.header.keyEncoding, 'url');
  const queried = run(['query', 'u.bgf', 'https://evil.example/any', 'http://sub.evil.example/', 'http://0x01020304/malware/a.exe', 'https://good.example/']);
  assert.equal(queried.stdout, 'maybe\thttps://evil.example/any\nmaybe\thttp://sub.evil.example/\nmaybe\thttp://0x01020304/malware/a.exe\nno\thttps://good.example/\n');

  const { StoreReader } = await import('../../js/store.js');
  const store = await StoreReader.open(join(dir, 'u.bgs'));
  assert.equal(store.hashType, 'sha256');
  assert.equal(store.count, 3);
  const evil = createHash('sha256').update('evil.example/').digest();
  const found = await store.lookup(evil.subarray(0, 4), 32);
  assert.equal(Buffer.from(found[0].hash).toString('hex'), evil.toString('hex'));
  await store.close();

  const exported = run(['export-ranges', 'u.bgs', '-o', 'static']);
  assert.equal(exported.status, 0, exported.stderr);
  assert.equal(readFileSync(join(dir, 'static', 'hashes', evil.toString('hex').slice(0, 8)), 'utf8'), `${evil.toString('hex')}\n`);

  // Outputs that cannot be written: exit 73 with the path, never an internal error.
  file('not-a-dir', 'x');
  const noDir = run(['export-ranges', 'u.bgs', '-o', 'not-a-dir']);
  assert.equal(noDir.status, 73, noDir.stderr);
  assertErrorLine(noDir.stderr, 'ENOTDIR', /^bloomgate: cannot write 'not-a-dir'/);
  assert.equal(readFileSync(join(dir, 'not-a-dir'), 'utf8'), 'x', 'the file in the way is untouched');
  // A re-export replaces the previous one whole (whatever was in it), never merges into it.
  const stale = join(dir, 'static', 'hashes', 'ffffffff');
  writeFileSync(stale, `${'f'.repeat(64)}\n`);
  assert.equal(run(['export-ranges', 'u.bgs', '-o', 'static', '-q']).status, 0);
  assert.equal(existsSync(stale), false);
  assert.equal(readFileSync(join(dir, 'static', 'hashes', evil.toString('hex').slice(0, 8)), 'utf8'), `${evil.toString('hex')}\n`);
});

// The full 2^20-file range export (contents, atomicity, kills, a real static host) is tested in export-ranges.test.mjs.
test('build --format hibp --store: the dump the serve test below uses', () => {
  const rows = ['password', 'letmein'].map((pw, i) => `${createHash('sha1').update(pw).digest('hex').toUpperCase()}:${i + 5}`);
  file('dump.txt', `${rows.join('\r\n')}\r\n`);
  assert.equal(run(['build', 'dump.txt', '--format', 'hibp', '-o', 'p.bgf', '--store', 'p.bgs', '-q']).status, 0);
});

test('--kind builds every kind; compact publishes a counting filter as classic', () => {
  file('k.txt', Array.from({ length: 500 }, (_, i) => `item-${i}`).join('\n'));
  for (const kind of ['classic', 'blocked', 'fuse', 'counting', 'scalable', 'cuckoo']) {
    const built = run(['build', 'k.txt', '-o', `${kind}.bgf`, '--kind', kind, '-q']);
    assert.equal(built.status, 0, `${kind}: ${built.stderr}`);
    const answers = run(['query', `${kind}.bgf`, 'item-0', 'item-499']).stdout;
    assert.equal(answers, 'maybe\titem-0\nmaybe\titem-499\n', kind);
  }
  const compacted = run(['compact', 'counting.bgf', '-o', 'published.bgf', '-q']);
  assert.equal(compacted.status, 0, compacted.stderr);
  assert.equal(JSON.parse(run(['inspect', 'published.bgf', '--json']).stdout).header.kind, 'classic');
  assert.equal(run(['query', 'published.bgf', 'item-7']).stdout, 'maybe\titem-7\n');
  const refused = run(['compact', 'classic.bgf', '-o', 'x.bgf']);
  assert.equal(refused.status, 65);
  assertErrorLine(refused.stderr, 'E_UNSUPPORTED');
});

test('serve answers on 127.0.0.1 and stops on SIGTERM', async () => {
  const child = spawn(process.execPath, [CLI, 'serve', '--filter', 'p=p.bgf', '--password-store', 'p.bgs', '--port', '0'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  const address = await new Promise((resolve, reject) => {
    child.stderr.setEncoding('utf8').on('data', (text) => {
      stderr += text;
      const match = /serving on (http:\/\/127\.0\.0\.1:\d+)/.exec(stderr);
      if (match) resolve(match[1]);
    });
    child.on('close', () => reject(new Error(`serve exited: ${stderr}`)));
  });
  const range = await (await fetch(`${address}/range/5BAA6`)).text();
  assert.equal(range, '1E4C9B93F3F0682250B6CF8331B7EE68FD8:5');
  assert.equal((await fetch(`${address}/filters/p.bgf`)).status, 200);
  const closed = new Promise((resolve) => child.on('close', resolve));
  child.kill('SIGTERM');
  assert.equal(await closed, 0);
  const missing = run(['serve', '--filter', 'x=missing.bgf']);
  assert.equal(missing.status, 66);
  assert.equal(run(['serve']).status, 64);
});

test('inspect says the checksum was verified when it was, though a later check fails', async () => {
  const { BloomFilter, init } = await import('../../js/index.js');
  const { FileChecksum } = await import('../../js/wasm/index.js');
  await init();
  const filter = await BloomFilter.create({ capacity: 100, errorRate: 0.01 });
  const bytes = Buffer.from(filter.serialize());
  filter.free();
  bytes.writeUInt32LE(0, 24); // k = 0: refused after the checksum step (E_HEADER)
  const sum = new FileChecksum();
  sum.update(bytes);
  Buffer.from(sum.digestBytes()).copy(bytes, 8); // a checksum that holds
  sum.free();
  file('k0.bgf', bytes);
  const inspected = run(['inspect', 'k0.bgf', '--json']);
  assert.equal(inspected.status, 65);
  const report = JSON.parse(inspected.stdout);
  assert.equal(report.code, 'E_HEADER');
  assert.equal(report.checksum, 'ok', 'verified, then a field failed');
  bytes[bytes.length - 1] ^= 1; // now the checksum fails too (it comes first)
  file('k0-flipped.bgf', bytes);
  assert.equal(JSON.parse(run(['inspect', 'k0-flipped.bgf', '--json']).stdout).checksum, 'mismatch');
  file('k0-short.bgf', bytes.subarray(0, bytes.length - 3));
  assert.equal(JSON.parse(run(['inspect', 'k0-short.bgf', '--json']).stdout).checksum, 'not verified');
});

test('E_TOO_LARGE exits 65 in every command: a --capacity past 2^43 bits, a file that claims one', () => {
  file('one.txt', 'a\n');
  const built = run(['build', 'one.txt', '-o', 'huge.bgf', '--capacity', '9007199254740991', '--error-rate', '0.000001']);
  assert.equal(built.status, 65, built.stderr);
  assertErrorLine(built.stderr, 'E_TOO_LARGE');
  assert.equal(run(['build', 'one.txt', '-o', 'ok.bgf', '-q']).status, 0);
  const bytes = readFileSync(join(dir, 'ok.bgf'));
  bytes.writeBigUInt64LE(2n ** 41n, 104); // payload_length past the limit (validation step 7)
  file('claims-huge.bgf', bytes);
  for (const args of [['inspect', 'claims-huge.bgf'], ['query', 'claims-huge.bgf', 'a'], ['merge', '-o', 'm.bgf', 'claims-huge.bgf', 'ok.bgf']]) {
    const result = run(args);
    assert.equal(result.status, 65, `${args.join(' ')}: ${result.stderr}`);
    assert.match(result.stderr, /\(E_TOO_LARGE\)/, args.join(' '));
  }
});
