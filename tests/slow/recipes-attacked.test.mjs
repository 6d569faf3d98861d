/**
 * The signed-update recipes of the README, as a user runs them from the
 * packed tarball installed into a fresh app (issue 28), then attacked by the
 * host: a real static server (`python3 -m http.server`) serves what the
 * publisher published, and then what an attacker who holds every byte but no
 * key puts there instead.
 *
 * The publisher side is the installed `bloomgate` command: one key signs two
 * lists (phishing and malware), `publish --sign` and `export-ranges --sign`
 * print the "client options" line, and the app pastes that line into
 * `openFilter(url, { ... })` and `checkPassword(pw, { rangeUrl, ... })` as the
 * README says. The host then serves the malware list (or its endpoint) under
 * the phishing URLs: the app must refuse, never read a listed item "clean".
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PHISHING = Array.from({ length: 200 }, (_, i) => `https://phish-${i}.example/login`);
const MALWARE = Array.from({ length: 200 }, (_, i) => `https://malware-${i}.example/get.exe`);

function run(cwd, command, args, options = {}) {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', ...options });
  assert.equal(result.error, undefined, `${command} ${args.join(' ')}: ${result.error}`);
  assert.equal(result.status, 0, `${command} ${args.join(' ')} exited ${result.status}:\n${result.stderr}`);
  return result;
}

/** The object literal after "client options:" on the command's stderr, as a user copies it. */
function pastedOptions(stderr) {
  const line = stderr.split('\n').find((text) => text.startsWith('client options: '));
  assert.ok(line, `no "client options" line in:\n${stderr}`);
  return line.slice('client options: '.length);
}

async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const python = spawnSync('python3', ['--version']).status === 0;

describe('README recipes from the installed tarball, attacked by the host', { skip: python ? false : 'needs python3', timeout: 240000 }, () => {
  let dir;
  let app;
  let web;
  let server;
  let base;
  const bin = () => join(app, 'node_modules', '.bin', 'bloomgate');
  const cli = (args) => run(dir, bin(), args);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'bloomgate-recipes-'));
    const packed = run(ROOT, 'npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir, '--offline', '--loglevel=error']);
    const tarball = join(dir, JSON.parse(packed.stdout)[0].filename);
    app = join(dir, 'app');
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
    run(app, 'npm', ['install', tarball, '--offline', '--no-audit', '--no-fund', '--loglevel=error']);
    web = join(dir, 'web');
    mkdirSync(web);
    const port = await freePort();
    server = spawn('python3', ['-m', 'http.server', String(port), '--bind', '127.0.0.1', '--directory', web], { stdio: 'ignore' });
    base = `http://127.0.0.1:${port}`;
    for (let i = 0; i < 50; i++) {
      try {
        await fetch(`${base}/`);
        break;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  });

  after(() => {
    server?.kill();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** Run `source` as app.mjs in the app (XDG cache inside the temp dir); its JSON output. */
  function runApp(source) {
    writeFileSync(join(app, 'app.mjs'), source);
    const result = spawnSync(process.execPath, ['app.mjs'], { cwd: app, encoding: 'utf8', env: { ...process.env, XDG_CACHE_HOME: join(dir, 'cache') } });
    assert.equal(result.status, 0, result.stderr);
    return JSON.parse(result.stdout);
  }

  it('openFilter with the pasted client options: the genuine list, then the other list of the same key refused', () => {
    const key = cli(['keygen', '-o', 'publisher.key']).stdout.trim();
    assert.match(key, /^ed25519:/);
    writeFileSync(join(dir, 'phishing.txt'), `${PHISHING.join('\n')}\n`);
    writeFileSync(join(dir, 'malware.txt'), `${MALWARE.join('\n')}\n`);
    cli(['build', 'phishing.txt', '--format', 'urls', '-o', 'phishing.bgf', '--capacity', '1000', '--list-id', '9b15b000000000000000000000000001', '-q']);
    cli(['build', 'malware.txt', '--format', 'urls', '-o', 'malware.bgf', '--capacity', '1000', '--list-id', '3a1a2e00000000000000000000000002', '-q']);
    const phishing = pastedOptions(cli(['publish', 'phishing.bgf', '--dir', join(web, 'phishing'), '--sign', 'publisher.key']).stderr);
    cli(['publish', 'malware.bgf', '--dir', join(web, 'malware'), '--sign', 'publisher.key', '-q']);
    assert.ok(phishing.includes(key) && phishing.includes('9b15b000000000000000000000000001'), phishing);

    const recipe = (options) => `
import { openFilter } from 'bloomgate';
const listed = ${JSON.stringify(PHISHING)};
try {
  const filter = await openFilter(${JSON.stringify(`${base}/phishing/manifest.json`)}, ${options});
  console.log(JSON.stringify({ listId: filter.listId, signed: filter.stats().signed, missed: listed.filter((url) => !filter.mightContain(url)).length }));
  filter.close();
} catch (error) {
  console.log(JSON.stringify({ error: error.name, code: error.code ?? null, message: error.message }));
}
`;
    assert.deepEqual(runApp(recipe(phishing)), { listId: '9b15b000000000000000000000000001', signed: true, missed: 0 });
    // The host swaps in the malware site (signed by the same key) under the phishing URL.
    rmSync(join(web, 'phishing'), { recursive: true });
    cpSync(join(web, 'malware'), join(web, 'phishing'), { recursive: true });
    // A restart answers from the genuine copy it kept (the next check would refuse the swap: E_LIST).
    assert.deepEqual(runApp(recipe(phishing)), { listId: '9b15b000000000000000000000000001', signed: true, missed: 0 });
    // The old recipe, keys without the list id, is a usage error that says where the id is.
    const old = runApp(recipe(`{ keys: ['${key}'] }`));
    assert.equal(old.error, 'TypeError');
    assert.match(old.message, /listId/);
    // A fresh client (no copy kept) pinned to phishing refuses outright.
    rmSync(join(dir, 'cache'), { recursive: true, force: true });
    const freshClient = runApp(recipe(phishing));
    assert.equal(freshClient.code, 'E_LIST', JSON.stringify(freshClient));
  });

  it('checkUrl against a signed static export with the pasted options: another list\'s export never reads "clean"', () => {
    cli(['build', 'phishing.txt', '--format', 'urls', '-o', 'exact.bgf', '--capacity', '1000', '--store', 'phishing.bgs', '-q']);
    cli(['build', 'malware.txt', '--format', 'urls', '-o', 'other.bgf', '--capacity', '1000', '--store', 'malware.bgs', '-q']);
    const options = pastedOptions(cli(['export-ranges', 'phishing.bgs', '-o', join(web, 'exact'), '--sign', 'publisher.key']).stderr);
    cli(['export-ranges', 'malware.bgs', '-o', join(web, 'other-exact'), '--sign', 'publisher.key', '-q']);
    cpSync(join(dir, 'exact.bgf'), join(web, 'exact.bgf'));
    const recipe = `
import { checkUrl, loadFilter } from 'bloomgate';
const filter = await loadFilter(${JSON.stringify(`${base}/exact.bgf`)});
const out = [];
for (const url of ${JSON.stringify(PHISHING.slice(0, 5))}) {
  try {
    const { listed, confirmed } = await checkUrl(url, { filter, hashesUrl: ${JSON.stringify(`${base}/exact/hashes`)}, ...${options} });
    out.push(listed && confirmed ? 'listed' : 'clean');
  } catch (error) {
    out.push(error.code ?? error.name);
  }
}
console.log(JSON.stringify(out));
`;
    assert.deepEqual(runApp(recipe), Array(5).fill('listed'));
    // The host serves the malware list's export, signed by the same key, in its place.
    rmSync(join(web, 'exact'), { recursive: true });
    cpSync(join(web, 'other-exact'), join(web, 'exact'), { recursive: true });
    assert.deepEqual(runApp(recipe), Array(5).fill('E_ESCALATION'));
  });
});
