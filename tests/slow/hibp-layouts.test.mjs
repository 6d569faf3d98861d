// `bloomgate build --format hibp` on every layout the official Pwned Passwords
// downloader writes (github.com/HaveIBeenPwned/PwnedPasswordsDownloader):
//   - one combined file (`-s true`, the default): each range is written as a
//     block that starts with a UTF-8 byte order mark, rows `PREFIX+SUFFIX:COUNT`
//     each ending in the platform's newline (LF on Linux, CRLF on Windows);
//   - a directory (`-s false`): one file per 5-hex prefix, `{PREFIX}.txt`, the
//     range reply as served: `SUFFIX:COUNT` rows joined by CRLF, no final newline;
//   - `-n`: NTLM instead of SHA-1 (32 hex digits), which bloomgate refuses.
// The fixtures are generated here, small.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../../js/cli.js', import.meta.url));
const BOM = '\ufeff';
const LIST_ID = '3c'.repeat(16);

let dir;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'bloomgate-layouts-'));
});
after(() => {
  rmSync(dir, { recursive: true, force: true });
});

function run(args) {
  const result = spawnSync(process.execPath, [CLI, ...args], { cwd: dir, encoding: 'utf8' });
  assert.equal(result.error, undefined);
  assert.doesNotMatch(result.stderr, /\n\s+at /, `stack trace in stderr:\n${result.stderr}`);
  return result;
}

function assertError(result, exit, code, pattern) {
  assert.equal(result.status, exit, result.stderr);
  const lines = result.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, result.stderr);
  assert.match(lines[0], new RegExp(`^bloomgate: .+ \\(${code}\\)$`));
  assert.match(lines[0], pattern);
}

const passwords = Array.from({ length: 600 }, (_, i) => `password-${i}`);
const hex = (pw, algorithm = 'sha1') => createHash(algorithm).update(pw).digest('hex').toUpperCase();
/** Rows in hash order, grouped by 5-hex prefix, as the downloader fetches them. */
function ranges(algorithm = 'sha1') {
  const rows = passwords.map((pw, i) => [hex(pw, algorithm), (i % 97) + 1]).sort(([a], [b]) => (a < b ? -1 : 1));
  const byPrefix = new Map();
  for (const [hash, count] of rows) {
    const prefix = hash.slice(0, 5);
    if (!byPrefix.has(prefix)) byPrefix.set(prefix, []);
    byPrefix.get(prefix).push(`${hash.slice(5)}:${count}`);
  }
  return byPrefix;
}

/** The combined file: one block per range, each with a byte order mark, rows with `newline`. */
function combined(byPrefix, newline) {
  return [...byPrefix].map(([prefix, rows]) => BOM + rows.map((row) => `${prefix}${row}${newline}`).join('')).join('');
}

/** The directory: `{prefix}{extension}` files holding the range reply (CRLF-joined, no final newline). */
function directory(name, byPrefix, { extension = '.txt', bom = false } = {}) {
  const path = join(dir, name);
  mkdirSync(path);
  for (const [prefix, rows] of byPrefix) writeFileSync(join(path, `${prefix}${extension}`), (bom ? BOM : '') + rows.join('\r\n'));
  return path;
}

function build(input, name, extra = []) {
  const result = run(['build', input, '--format', 'hibp', '-o', `${name}.bgf`, '--store', `${name}.bgs`, '--list-id', LIST_ID, ...extra]);
  assert.equal(result.status, 0, `${name}: ${result.stderr}`);
  return result;
}

function filterPayload(name) {
  const report = JSON.parse(run(['inspect', `${name}.bgf`, '--json']).stdout);
  const bytes = readFileSync(join(dir, `${name}.bgf`));
  return { report, payload: bytes.subarray(report.header.payloadOffset, report.header.payloadOffset + report.header.payloadLength) };
}

test('every downloader layout gives the same filter bits and the same store', () => {
  const byPrefix = ranges();
  const plainRows = [...byPrefix].flatMap(([prefix, rows]) => rows.map((row) => prefix + row));
  writeFileSync(join(dir, 'reference.txt'), `${plainRows.join('\n')}\n`);
  build('reference.txt', 'reference');
  const reference = filterPayload('reference');
  assert.equal(reference.report.header.count, passwords.length);
  const referenceStore = readFileSync(join(dir, 'reference.bgs'));

  writeFileSync(join(dir, 'linux.txt'), combined(byPrefix, '\n'));
  writeFileSync(join(dir, 'windows.txt'), combined(byPrefix, '\r\n'));
  const layouts = {
    linux: 'linux.txt', // combined, LF, a BOM per block
    windows: 'windows.txt', // combined, CRLF, a BOM per block
    perPrefix: directory('per-prefix', byPrefix), // {PREFIX}.txt, CRLF, no final newline
    perPrefixBom: directory('per-prefix-bom', byPrefix, { bom: true }), // the same, each file with a BOM
    bare: directory('bare', byPrefix, { extension: '' }), // names without an extension
  };
  // Lowercase names and a hidden file the OS added are fine too.
  const lower = directory('lower', new Map([...byPrefix].map(([prefix, rows]) => [prefix.toLowerCase(), rows])));
  writeFileSync(join(lower, '.DS_Store'), 'not rows');
  layouts.lower = lower;

  for (const [name, input] of Object.entries(layouts)) {
    const result = build(input, name, ['--progress']);
    const { report, payload } = filterPayload(name);
    assert.deepEqual(payload, reference.payload, `${name}: the same bits`);
    assert.equal(report.metadata.items, passwords.length, `${name}: no row lost to a byte order mark`);
    assert.equal(report.metadata.skipped, 0);
    assert.ok(readFileSync(join(dir, `${name}.bgs`)).equals(referenceStore), `${name}: the same store`);
    assert.doesNotMatch(result.stderr, /merging|sorting run/, `${name}: read in hash order, no sort`);
    if (!input.endsWith('.txt')) {
      assert.match(result.stderr, new RegExp(`warning: .+ holds ${byPrefix.size} of the 1,048,576 prefix files`));
    }
  }
  // --skip-invalid used to drop the first row of every block (its BOM made it invalid).
  const skipping = build('linux.txt', 'skipping', ['--skip-invalid']);
  assert.doesNotMatch(skipping.stderr, /invalid/);
  assert.equal(filterPayload('skipping').report.metadata.items, passwords.length);

  const queried = run(['query', 'perPrefix.bgf', passwords[0], passwords[599], 'not-a-listed-password']);
  assert.match(queried.stdout, new RegExp(`^maybe\\t${passwords[0]}\\nmaybe\\t${passwords[599]}\\n`));
});

test('NTLM dumps are refused, in either layout and even with --skip-invalid', () => {
  const ntlm = ranges('md5'); // 32 hex digits, the shape of an NTLM (MD4) dump; OpenSSL 3 may lack MD4
  writeFileSync(join(dir, 'ntlm.txt'), combined(ntlm, '\r\n'));
  const ntlmDir = directory('ntlm-dir', ntlm);
  for (const args of [['ntlm.txt'], ['ntlm.txt', '--skip-invalid'], [ntlmDir], [ntlmDir, '--skip-invalid']]) {
    const result = run(['build', ...args, '--format', 'hibp', '-o', 'ntlm.bgf', '--store', 'ntlm.bgs']);
    assertError(result, 65, 'E_NTLM', /NTLM dump .*SHA-1/);
    assert.match(result.stderr, args[0] === 'ntlm.txt' ? /^bloomgate: line 1: / : /ntlm-dir.[0-9A-F]{5}\.txt line 1: /);
  }
  assert.deepEqual(readdirSync(dir).filter((entry) => entry.startsWith('ntlm.bg')), [], 'nothing written');
});

test('directories that are not one downloader layout fail with E_LAYOUT (exit 65), naming the file', () => {
  const byPrefix = ranges();
  const [[firstPrefix, firstRows]] = byPrefix;

  const mixed = directory('mixed', byPrefix);
  writeFileSync(join(mixed, 'pwnedpasswords.txt'), combined(byPrefix, '\n')); // a combined dump beside the per-prefix files
  assertError(run(['build', mixed, '--format', 'hibp', '-o', 'x.bgf']), 65, 'E_LAYOUT', /mixed.pwnedpasswords\.txt: not a per-prefix file/);

  const twice = directory('twice', byPrefix);
  writeFileSync(join(twice, firstPrefix), firstRows.join('\r\n')); // 21BD1 beside 21BD1.txt
  assertError(run(['build', twice, '--format', 'hibp', '-o', 'x.bgf']), 65, 'E_LAYOUT', new RegExp(`prefix ${firstPrefix} is also in`));

  const nested = directory('nested', byPrefix);
  mkdirSync(join(nested, 'ABCDE'));
  assertError(run(['build', nested, '--format', 'hibp', '-o', 'x.bgf']), 65, 'E_LAYOUT', /nested.ABCDE: not a regular file/);

  const readme = directory('readme', byPrefix);
  writeFileSync(join(readme, 'README.md'), '# hashes\n');
  assertError(run(['build', readme, '--format', 'hibp', '-o', 'x.bgf']), 65, 'E_LAYOUT', /README\.md: not a per-prefix file/);

  mkdirSync(join(dir, 'empty'));
  assertError(run(['build', 'empty', '--format', 'hibp', '-o', 'x.bgf']), 65, 'E_LAYOUT', /no per-prefix files/);

  // Whole 40-digit rows in a per-prefix file: the combined layout's rows in the other layout.
  const whole = directory('whole', new Map([[firstPrefix, firstRows.map((row) => firstPrefix + row)]]));
  assertError(run(['build', whole, '--format', 'hibp', '-o', 'x.bgf', '--skip-invalid']), 65, 'E_LAYOUT', /line 1: a whole 40-digit hash in a per-prefix file/);

  // A per-prefix file's rows given as a file: a data error that says what to do.
  writeFileSync(join(dir, 'suffixes.txt'), firstRows.join('\r\n'));
  assertError(run(['build', 'suffixes.txt', '--format', 'hibp', '-o', 'x.bgf']), 65, 'E_INPUT', /^bloomgate: line 1: expected SHA1HEX:COUNT, got a 35-digit suffix .*give the directory/);

  // A bad row in a per-prefix file names the file and its line.
  const bad = directory('bad', new Map([[firstPrefix, [...firstRows, 'XYZ:1']]]));
  assertError(run(['build', bad, '--format', 'hibp', '-o', 'x.bgf']), 65, 'E_INPUT', new RegExp(`bad.${firstPrefix}\\.txt line ${firstRows.length + 1}: expected SUFFIX:COUNT`));
  const skipped = run(['build', bad, '--format', 'hibp', '-o', 'x.bgf', '--skip-invalid']);
  assert.equal(skipped.status, 0, skipped.stderr);
  assert.match(skipped.stderr, new RegExp(`skipped 1 invalid line \\(line .*${firstPrefix}\\.txt:${firstRows.length + 1}\\)`));

  // Other formats still refuse a directory as an input that cannot be read (exit 66).
  const lines = run(['build', mixed, '-o', 'x.bgf']);
  assertError(lines, 66, 'EISDIR', /cannot open/);
  assert.deepEqual(readdirSync(dir).filter((entry) => entry.startsWith('x.bgf.tmp-')), []);
});
