// export-ranges on a real static host (stock `python3 -m http.server`): the
// export is all or nothing, its manifest comes last, a kill never leaves a
// directory that looks complete, and clients believe only a complete export.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { BloomFilter, init } from '../../js/index.js';
import { checkPassword } from '../../js/password.js';

const CLI = new URL('../../js/cli.js', import.meta.url).pathname;
const PASSWORDS = [['password', 9659365], ['letmein', 511475], ['dragon', 3]];
const CLEAN = 'a clean passphrase the filter is told to call maybe';

let dir;
let python;
let host; // http://127.0.0.1:PORT serving dir/site
let filter;

const run = (args) => spawnSync(process.execPath, [CLI, ...args], { cwd: dir, encoding: 'utf8' });
const sha1 = (text) => createHash('sha1').update(text).digest('hex').toUpperCase();
const freshFetch = () => (...args) => fetch(...args); // manifests are cached per fetch function

async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Start an export and SIGKILL it once its temporary directory holds some files. */
async function killMidway(args) {
  const child = spawn(process.execPath, [CLI, ...args], { cwd: dir, stdio: 'ignore' });
  const exited = new Promise((resolve) => child.on('close', resolve));
  const site = join(dir, 'site');
  for (let i = 0; i < 600; i++) {
    const temporary = existsSync(site) ? readdirSync(site).find((name) => name.startsWith('.range.tmp-')) : undefined;
    if (temporary && readdirSync(join(site, temporary)).length > 2000) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  child.kill('SIGKILL');
  await exited;
}

before(async () => {
  await init();
  dir = mkdtempSync(join(tmpdir(), 'bloomgate-export-'));
  writeFileSync(join(dir, 'dump.txt'), `${PASSWORDS.map(([pw, count]) => `${sha1(pw)}:${count}`).join('\r\n')}\r\n`);
  const built = run(['build', 'dump.txt', '--format', 'hibp', '-o', 'p.bgf', '--store', 'p.bgs', '-q']);
  assert.equal(built.status, 0, built.stderr);
  // The published filter, plus one clean password it answers "maybe" for, so that
  // password must escalate and be settled by the export.
  const published = await BloomFilter.from(readFileSync(join(dir, 'p.bgf')));
  filter = await BloomFilter.create({ capacity: 10, errorRate: 0.001, keyEncoding: 'sha1', listId: published.listId, generation: published.generation });
  for (const [pw] of PASSWORDS) filter.add(pw);
  filter.add(CLEAN);
  published.free();
  mkdirSync(join(dir, 'site'));
  const port = await freePort();
  python = spawn('python3', ['-m', 'http.server', String(port), '--bind', '127.0.0.1', '--directory', join(dir, 'site')], { stdio: 'ignore' });
  host = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    try {
      await fetch(`${host}/`);
      break;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
});

after(() => {
  python?.kill();
  filter?.free();
  rmSync(dir, { recursive: true, force: true });
});

test('a killed export leaves nothing under the real name; a client refuses to call anything clean', async () => {
  await killMidway(['export-ranges', 'p.bgs', '-o', 'site', '-q']);
  assert.equal(existsSync(join(dir, 'site', 'range')), false, 'no range/ directory until the export is complete');
  assert.ok(readdirSync(join(dir, 'site')).some((name) => name.startsWith('.range.tmp-')), 'the killed run left its temporary directory');
  await assert.rejects(checkPassword(CLEAN, { filter, rangeUrl: `${host}/range`, fetch: freshFetch() }), { code: 'E_ESCALATION' });
});

test('a complete export on python http.server: listed is breached, a "maybe" not in the list is clean', async () => {
  const exported = run(['export-ranges', 'p.bgs', '-o', 'site']);
  assert.equal(exported.status, 0, exported.stderr);
  const site = join(dir, 'site');
  assert.deepEqual(readdirSync(site).filter((name) => name.startsWith('.')), [], 'the next run removed what the killed one left');
  const files = readdirSync(join(site, 'range'));
  assert.equal(files.length, (1 << 20) + 1, 'every 5-hex range and the manifest');
  const manifest = JSON.parse(readFileSync(join(site, 'range', 'manifest.json'), 'utf8'));
  assert.equal(manifest.listId, filter.listId);
  assert.equal(manifest.records, PASSWORDS.length);
  assert.equal(manifest.padding, 'none');
  assert.equal(manifest.notFound, 'error');
  assert.match(readFileSync(join(site, '_headers'), 'utf8'), /^# written by bloomgate export-ranges\n\/range\/\*\n {2}Access-Control-Allow-Origin: \*/);
  const nginx = readFileSync(join(site, 'bloomgate-nginx.conf'), 'utf8');
  assert.match(nginx, /location ~ \/\(range\|hashes\)\/\[\^\/\]\+\$ \{\n {4}default_type text\/plain;/);
  assert.match(nginx, /Cache-Control "public, no-cache"/, 'CDNs revalidate: an older range beside a newer manifest would be a wrong clean');

  assert.equal(readFileSync(join(site, 'range', '5BAA6'), 'utf8'), '1E4C9B93F3F0682250B6CF8331B7EE68FD8:9659365');
  assert.equal(readFileSync(join(site, 'range', '00000'), 'utf8'), '');
  const raw = await fetch(`${host}/range/${sha1('password').slice(0, 5)}`);
  assert.equal(raw.headers.get('content-type'), 'application/octet-stream', 'stock static hosts send extension-less files as octet-stream');
  await raw.arrayBuffer();
  const fetchImpl = freshFetch();
  assert.deepEqual(await checkPassword('password', { filter, rangeUrl: `${host}/range`, fetch: fetchImpl }),
    { breached: true, count: 9659365, escalated: true, confirmed: true, minCount: 1 });
  assert.deepEqual(await checkPassword(CLEAN, { filter, rangeUrl: `${host}/range`, fetch: fetchImpl }),
    { breached: false, count: 0, escalated: true, confirmed: true, minCount: 1 });
});

test('a killed re-export leaves the previous export whole and trusted', async () => {
  await killMidway(['export-ranges', 'p.bgs', '-o', 'site', '-q']);
  assert.ok(existsSync(join(dir, 'site', 'range', 'manifest.json')));
  assert.equal(readdirSync(join(dir, 'site', 'range')).length, (1 << 20) + 1);
  assert.equal((await checkPassword(CLEAN, { filter, rangeUrl: `${host}/range`, fetch: freshFetch() })).breached, false);
});

test('without its manifest (a hand-copied or half-synced export) the same files are not trusted', async () => {
  const path = join(dir, 'site', 'range', 'manifest.json');
  const saved = readFileSync(path);
  unlinkSync(path);
  try {
    await assert.rejects(checkPassword(CLEAN, { filter, rangeUrl: `${host}/range`, fetch: freshFetch() }),
      (e) => e.code === 'E_ESCALATION' && /no bloomgate manifest/.test(e.message));
    // A listed password is still reported as breached: that answer is never the dangerous one.
    assert.equal((await checkPassword('password', { filter, rangeUrl: `${host}/range`, fetch: freshFetch() })).breached, true);
  } finally {
    writeFileSync(path, saved);
  }
});

test('a _headers file the user wrote is left alone', () => {
  const site = join(dir, 'own-site');
  mkdirSync(site);
  writeFileSync(join(site, '_headers'), '/*\n  X-Frame-Options: DENY\n');
  writeFileSync(join(dir, 'urls.txt'), 'evil.example\n');
  assert.equal(run(['build', 'urls.txt', '--format', 'urls', '-o', 'u.bgf', '--store', 'u.bgs', '-q']).status, 0);
  const exported = run(['export-ranges', 'u.bgs', '-o', 'own-site']);
  assert.equal(exported.status, 0, exported.stderr);
  assert.equal(readFileSync(join(site, '_headers'), 'utf8'), '/*\n  X-Frame-Options: DENY\n');
  assert.match(exported.stderr, /left .*_headers as it was/);
  const manifest = JSON.parse(readFileSync(join(site, 'hashes', 'manifest.json'), 'utf8'));
  assert.equal(manifest.notFound, 'empty');
  assert.equal(manifest.hashType, 'sha256');
});
