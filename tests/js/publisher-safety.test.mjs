/**
 * The publisher's mistakes that lock clients out or leak keys (issue 28), through the real CLI
 * (`node js/cli.js ...` in a scratch directory): the client options `publish` and
 * `export-ranges` print, the initial key set `publish --sign` records in keys.json, `keys rotate`
 * refusing too few old keys and new keys nobody is shown to hold, an unsigned publish onto a
 * signed site, key files inside a site, `serve --static` keeping dotfiles and keys home, signed
 * endpoint manifests that expire (and `serve` renewing its own), and `patch` refusing a delta that
 * claims a huge target before allocating it. Every refusal is one `bloomgate: ... (E_CODE)` line
 * with exit 64 or 65, and the site is byte for byte what it was.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createHash, createPublicKey, verify } from 'node:crypto';
import {
  copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';

import { manifestBytes } from '../../js/endpoint.js';
import { parseRotations, rotationBytes } from '../../js/update/key-rotation.js';
import { writeStore } from '../../js/store.js';
import { startReferenceServer } from '../../js/server.js';
import { readSigningKeys, signAll } from '../../js/cli/signing.js';
import { CLI, runCli, scratchDirectory } from './helpers/cli.mjs';

const scratch = scratchDirectory('bloomgate-publisher-safety-');
const at = (...parts) => join(scratch.dir, ...parts);
const LIST = '5afe0000000000000000000000000a11';
const STORE_LIST = '5afe0000000000000000000000000b22';
const ids = {};

const cli = (args, options) => runCli(scratch.dir, args, options);
function ok(args) {
  const result = cli(args);
  assert.equal(result.status, 0, `bloomgate ${args.join(' ')}: ${result.stderr}`);
  return result;
}

/** Every file under `dir` (dotfiles included) -> SHA-256 of its bytes. */
function snapshot(dir) {
  const files = {};
  const walk = (sub) => {
    for (const entry of readdirSync(join(dir, sub), { withFileTypes: true })) {
      const path = join(sub, entry.name);
      if (entry.isDirectory()) walk(path);
      else files[path] = createHash('sha256').update(readFileSync(join(dir, path))).digest('hex');
    }
  };
  walk('');
  return files;
}
const snapshotOf = (dir) => snapshot(at(dir));

/** A refusal: the exit status, one `bloomgate: ... (E_CODE)` line matching `pattern`, and `dir` unchanged. */
function refused(args, { status, code, pattern, dir }) {
  const before = dir ? snapshotOf(dir) : null;
  const result = cli(args);
  assert.equal(result.status, status, `bloomgate ${args.join(' ')}: ${result.stderr}`);
  const lines = result.stderr.split('\n').filter(Boolean);
  assert.equal(lines.length, 1, `one line: ${result.stderr}`);
  assert.match(lines[0], new RegExp(`^bloomgate: .* \\(${code}\\)$`));
  if (pattern) assert.match(lines[0], pattern);
  if (dir) assert.deepEqual(snapshotOf(dir), before, `${dir} is as it was`);
  return result;
}

/** The `client options: { ... }` line of stderr, checked to be one pasteable object literal, evaluated. */
function clientOptions(stderr) {
  const lines = stderr.split('\n').filter((line) => line.startsWith('client options: '));
  assert.equal(lines.length, 1, stderr);
  const literal = lines[0].slice('client options: '.length);
  assert.match(literal, /^\{ [^\n]* \}$/);
  // As JSON once its quotes and keys are JSON's: the values are plain strings and numbers.
  const json = literal.replace(/'([^'\\]*)'/g, '"$1"').replace(/([{,] )([a-zA-Z]+):/g, '$1"$2":');
  return { line: lines[0], options: JSON.parse(json) };
}

const manifestOf = (site) => JSON.parse(readFileSync(at(site, 'manifest.json'), 'utf8'));

function verifies(keyId, message, sig) {
  const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: keyId.slice('ed25519:'.length) }, format: 'jwk' });
  return verify(null, message, key, Buffer.from(sig, 'base64url'));
}
const rawOf = (keyId) => new Uint8Array(Buffer.from(keyId.slice('ed25519:'.length), 'base64url'));

before(() => {
  mkdirSync(at('keys'));
  for (const name of ['a', 'b', 'c', 'd', 'e']) {
    const made = runCli(scratch.dir, ['keygen', '-o', `keys/${name}.key`, '-q']);
    assert.equal(made.status, 0, made.stderr);
    ids[name] = made.stdout.trim();
  }
  writeFileSync(at('items.txt'), Array.from({ length: 400 }, (_, i) => `item-${i}`).join('\n'));
  ok(['build', 'items.txt', '-o', 'g1.bgf', '--list-id', LIST, '--generation', '1', '-q']);
  for (let g = 2; g <= 4; g++) ok(['build', 'items.txt', '-o', `g${g}.bgf`, '--like', `g${g - 1}.bgf`, '-q']);
  const records = Array.from({ length: 300 }, (_, i) => ({ hash: createHash('sha256').update(`listed.example/${i}`).digest(), count: 1 }));
  writeFileSync(at('urls.bgs'), writeStore(records, { hashType: 'sha256', listId: STORE_LIST, generation: 2 }));
});

test('publish prints the client options: the current key set, its threshold and the list id; keys.json records key set 0', () => {
  const signed = ok(['publish', 'g1.bgf', '--dir', 'opts', '--sign', 'keys/a.key', '--sign', 'keys/b.key', '--sign', 'keys/c.key', '--threshold', '2']);
  const { line, options } = clientOptions(signed.stderr);
  assert.equal(line, `client options: { keys: ['${ids.a}', '${ids.b}', '${ids.c}'], threshold: 2, listId: '${LIST}' }`);
  assert.deepEqual(options, { keys: [ids.a, ids.b, ids.c], threshold: 2, listId: LIST });
  assert.ok(signed.stderr.trimEnd().endsWith(line), 'the last line');
  // The initial record: the keys and threshold, signed like a rotation numbered 0 by the keys.
  const text = readFileSync(at('opts', 'keys.json'), 'utf8');
  const document = JSON.parse(text);
  assert.equal(document.format, 'bloomgate-keys');
  assert.equal(document.version, 1);
  assert.deepEqual(document.rotations, []);
  assert.deepEqual([document.initial.keys, document.initial.threshold], [[ids.a, ids.b, ids.c], 2]);
  const message = rotationBytes({ seq: 0, threshold: 2, keys: [ids.a, ids.b, ids.c].map((id) => ({ raw: rawOf(id) })) });
  assert.equal(document.initial.signatures.length, 3);
  for (const { keyid, sig } of document.initial.signatures) assert.ok(verifies(keyid, message, sig), keyid);
  assert.deepEqual(parseRotations(text, 'keys.json'), [], 'the client parser accepts it (and ignores the record)');
  assert.equal(manifestOf('opts').keySet, 0);
  // Two of the three reach the threshold; one does not; a stranger is not in the set.
  ok(['publish', 'g2.bgf', '--dir', 'opts', '--sign', 'keys/a.key', '--sign', 'keys/c.key']);
  refused(['publish', 'g3.bgf', '--dir', 'opts', '--sign', 'keys/b.key'], { status: 64, code: 'E_KEY', pattern: /needs 2 signatures/, dir: 'opts' });
  refused(['publish', 'g3.bgf', '--dir', 'opts', '--sign', 'keys/d.key', '--sign', 'keys/a.key'], { status: 65, code: 'E_KEY', pattern: /not in key set 0/, dir: 'opts' });
  refused(['publish', 'g3.bgf', '--dir', 'opts', '--sign', 'keys/a.key', '--sign', 'keys/b.key', '--threshold', '1'],
    { status: 64, code: 'E_USAGE', pattern: /has threshold 2; change it with 'bloomgate keys rotate'/, dir: 'opts' });
  // The default threshold is every --sign key; more than them is a usage error.
  const all = ok(['publish', 'g1.bgf', '--dir', 'opts-all', '--sign', 'keys/a.key', '--sign', 'keys/b.key']);
  assert.deepEqual(clientOptions(all.stderr).options, { keys: [ids.a, ids.b], threshold: 2, listId: LIST });
  refused(['publish', 'g1.bgf', '--dir', 'opts-none', '--sign', 'keys/a.key', '--threshold', '2'], { status: 64, code: 'E_USAGE', pattern: /would not verify/ });
  assert.ok(!existsSync(at('opts-none', 'manifest.json')));
  // Unsigned: the list id alone; --quiet: nothing.
  const unsigned = ok(['publish', 'g1.bgf', '--dir', 'opts-unsigned']);
  assert.equal(clientOptions(unsigned.stderr).line, `client options: { listId: '${LIST}' }`);
  assert.ok(!existsSync(at('opts-unsigned', 'keys.json')));
  assert.equal(ok(['publish', 'g2.bgf', '--dir', 'opts-all', '--sign', 'keys/a.key', '--sign', 'keys/b.key', '-q']).stderr, '');
});

test('after a rotation, publish prints the rotated key set', () => {
  ok(['publish', 'g1.bgf', '--dir', 'opts-rot', '--sign', 'keys/a.key']);
  const rotated = ok(['keys', 'rotate', '--dir', 'opts-rot', '--old', 'keys/a.key', '--new', 'keys/d.key', '--new', 'keys/e.key', '--threshold', '2']);
  assert.deepEqual(clientOptions(rotated.stderr).options, { keys: [ids.d, ids.e], threshold: 2, listId: LIST });
  const published = ok(['publish', 'g2.bgf', '--dir', 'opts-rot', '--sign', 'keys/d.key', '--sign', 'keys/e.key']);
  assert.deepEqual(clientOptions(published.stderr).options, { keys: [ids.d, ids.e], threshold: 2, listId: LIST });
  const document = JSON.parse(readFileSync(at('opts-rot', 'keys.json'), 'utf8'));
  assert.deepEqual(document.initial.keys, [ids.a], 'the initial record stays');
  assert.equal(document.rotations.length, 1);
});

test('keys rotate needs the threshold of the current key set, and leaves the site as it was without it', () => {
  ok(['publish', 'g1.bgf', '--dir', 'two-of-three', '--sign', 'keys/a.key', '--sign', 'keys/b.key', '--sign', 'keys/c.key', '--threshold', '2']);
  refused(['keys', 'rotate', '--dir', 'two-of-three', '--old', 'keys/a.key', '--new', 'keys/d.key'],
    { status: 64, code: 'E_KEY', pattern: /key set 0 needs 2 of its keys to sign a rotation; --old gave 1/, dir: 'two-of-three' });
  refused(['keys', 'rotate', '--dir', 'two-of-three', '--old', 'keys/a.key', '--old', 'keys/d.key', '--new', 'keys/e.key'],
    { status: 65, code: 'E_KEY', pattern: /keys\/d\.key' did not sign/, dir: 'two-of-three' });
  const done = ok(['keys', 'rotate', '--dir', 'two-of-three', '--old', 'keys/a.key', '--old', 'keys/c.key', '--new', 'keys/d.key']);
  assert.match(done.stderr, /manifest\.json signed again with the new keys/);
  const manifest = manifestOf('two-of-three');
  assert.equal(manifest.keySet, 1);
  assert.deepEqual(manifest.signatures.map((s) => s.keyid), [ids.d], 'still publishable: re-signed by the new key');
  // Key set 1 (1-of-1, d): the next rotation needs d.
  refused(['keys', 'rotate', '--dir', 'two-of-three', '--old', 'keys/a.key', '--old', 'keys/b.key', '--new', 'keys/e.key'],
    { status: 65, code: 'E_KEY', pattern: /not in the site's current key set 1/, dir: 'two-of-three' });
});

test('a site signed before the key set was recorded: its valid signatures are the threshold, and rotate says so', () => {
  ok(['publish', 'g1.bgf', '--dir', 'legacy', '--sign', 'keys/a.key', '--sign', 'keys/b.key']);
  // What an older bloomgate left: a signed manifest, no keys.json.
  rmSync(at('legacy', 'keys.json'));
  assert.ok(!existsSync(at('legacy', 'keys.json')));
  refused(['keys', 'rotate', '--dir', 'legacy', '--old', 'keys/a.key', '--new', 'keys/c.key'],
    { status: 64, code: 'E_KEY', pattern: /needs 2 of its keys.*records no threshold, so key set 0 is taken as the 2 key\(s\) with valid signatures on its manifest/, dir: 'legacy' });
  const done = ok(['keys', 'rotate', '--dir', 'legacy', '--old', 'keys/a.key', '--old', 'keys/b.key', '--new', 'keys/c.key']);
  assert.match(done.stderr, /records no threshold/);
  assert.equal(manifestOf('legacy').keySet, 1);
  // publish on such a site records what signed it, all of it needed.
  ok(['publish', 'g1.bgf', '--dir', 'legacy-publish', '--sign', 'keys/a.key', '--sign', 'keys/b.key']);
  rmSync(at('legacy-publish', 'keys.json'));
  refused(['publish', 'g2.bgf', '--dir', 'legacy-publish', '--sign', 'keys/a.key'], { status: 64, code: 'E_KEY', pattern: /needs 2 signatures/, dir: 'legacy-publish' });
  const published = ok(['publish', 'g2.bgf', '--dir', 'legacy-publish', '--sign', 'keys/a.key', '--sign', 'keys/b.key']);
  assert.match(published.stderr, /taken from the current manifest/);
  assert.deepEqual(JSON.parse(readFileSync(at('legacy-publish', 'keys.json'), 'utf8')).initial.threshold, 2);
});

test('keys rotate refuses a new public key whose private half is not presented, unless --allow-unheld-new-key', () => {
  ok(['publish', 'g1.bgf', '--dir', 'unheld', '--sign', 'keys/a.key']);
  refused(['keys', 'rotate', '--dir', 'unheld', '--old', 'keys/a.key', '--new', ids.e],
    { status: 64, code: 'E_USAGE', pattern: /public key alone.*If nobody does, the site is locked for good.*--allow-unheld-new-key/, dir: 'unheld' });
  // One held and one not: still refused (say so explicitly).
  refused(['keys', 'rotate', '--dir', 'unheld', '--old', 'keys/a.key', '--new', 'keys/d.key', '--new', ids.e],
    { status: 64, code: 'E_USAGE', pattern: /locked for good/, dir: 'unheld' });
  const forced = ok(['keys', 'rotate', '--dir', 'unheld', '--old', 'keys/a.key', '--new', ids.e, '--allow-unheld-new-key']);
  assert.match(forced.stderr, /publish next with --sign NEWKEY/);
  assert.equal(JSON.parse(readFileSync(at('unheld', 'keys.json'), 'utf8')).rotations[0].keys[0], ids.e);
  ok(['publish', 'g2.bgf', '--dir', 'unheld', '--sign', 'keys/e.key']);
  assert.equal(manifestOf('unheld').keySet, 1);
});

test('publish without --sign onto a signed site is refused unless --unsigned', () => {
  ok(['publish', 'g1.bgf', '--dir', 'signed', '--sign', 'keys/a.key']);
  refused(['publish', 'g2.bgf', '--dir', 'signed'], { status: 65, code: 'E_UNSIGNED', pattern: /signed site.*--unsigned/, dir: 'signed' });
  refused(['publish', 'g2.bgf', '--dir', 'signed', '--unsigned', '--sign', 'keys/a.key'], { status: 64, code: 'E_USAGE', dir: 'signed' });
  const dropped = ok(['publish', 'g2.bgf', '--dir', 'signed', '--unsigned']);
  assert.match(dropped.stderr, /UNSIGNED/);
  assert.deepEqual(manifestOf('signed').signatures, []);
  // keys.json still says the site is signed: the next unsigned publish needs --unsigned again.
  refused(['publish', 'g3.bgf', '--dir', 'signed'], { status: 65, code: 'E_UNSIGNED', pattern: /it has keys\.json/, dir: 'signed' });
  // A signed manifest without keys.json (an older bloomgate's site) is a signed site too.
  ok(['publish', 'g1.bgf', '--dir', 'signed-legacy', '--sign', 'keys/a.key']);
  rmSync(at('signed-legacy', 'keys.json'));
  refused(['publish', 'g2.bgf', '--dir', 'signed-legacy'], { status: 65, code: 'E_UNSIGNED', pattern: /its manifest is signed/, dir: 'signed-legacy' });
  // An unsigned site stays publishable unsigned.
  ok(['publish', 'g1.bgf', '--dir', 'plain']);
  ok(['publish', 'g2.bgf', '--dir', 'plain']);
});

test('a key file inside a site is refused: keygen, publish, export-ranges, keys rotate', () => {
  ok(['publish', 'g1.bgf', '--dir', 'public', '--sign', 'keys/a.key']);
  mkdirSync(at('public', 'sub'));
  for (const path of ['public/publisher.key', 'public/sub/publisher.key']) {
    refused(['keygen', '-o', path], { status: 64, code: 'E_KEY_EXPOSED', pattern: /inside the bloomgate site .*serves as it is.*Write it outside/, dir: 'public' });
    assert.ok(!existsSync(at(path)));
  }
  // A key someone put there anyway (or a symlink from outside into it) is refused where it is read.
  copyFileSync(at('keys', 'a.key'), at('public', 'leaked.key'));
  symlinkSync(at('public', 'leaked.key'), at('keys', 'link.key'));
  for (const key of ['public/leaked.key', 'keys/link.key']) {
    refused(['publish', 'g2.bgf', '--dir', 'public', '--sign', key], { status: 64, code: 'E_KEY_EXPOSED', pattern: /inside the site 'public'.*Move it out/, dir: 'public' });
    refused(['keys', 'rotate', '--dir', 'public', '--old', key, '--new', 'keys/b.key'], { status: 64, code: 'E_KEY_EXPOSED', dir: 'public' });
    refused(['keys', 'rotate', '--dir', 'public', '--old', 'keys/a.key', '--new', key], { status: 64, code: 'E_KEY_EXPOSED', dir: 'public' });
  }
  // An export directory is a site too.
  ok(['export-ranges', 'urls.bgs', '-o', 'export', '--sign', 'keys/a.key', '-q']);
  refused(['keygen', '-o', 'export/k.key'], { status: 64, code: 'E_KEY_EXPOSED', dir: 'export' });
  copyFileSync(at('keys', 'a.key'), at('export', 'k.key'));
  refused(['export-ranges', 'urls.bgs', '-o', 'export', '--sign', 'export/k.key'], { status: 64, code: 'E_KEY_EXPOSED', pattern: /inside the export directory/, dir: 'export' });
  // Outside a site keygen works, even next to one.
  ok(['keygen', '-o', 'keys/outside.key', '-q']);
});

/** `bloomgate serve ...` as a child process; resolves to { url, child, stop }. */
function serve(args) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', ...args], { cwd: scratch.dir });
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      const match = /serving on (http:\/\/\S+)/.exec(stderr);
      if (match) resolve({ url: match[1], child, stop: () => new Promise((done) => { child.once('close', done); child.kill('SIGTERM'); }) });
    });
    child.once('close', (status) => reject(new Error(`serve exited ${status}: ${stderr}`)));
  });
}

test('serve --static never serves dotfiles, key files or anything that reads as a private key: 404', async () => {
  const root = at('static');
  mkdirSync(join(root, '.git'), { recursive: true });
  mkdirSync(join(root, 'docs'));
  writeFileSync(join(root, 'index.html'), '<p>hello</p>');
  writeFileSync(join(root, 'manifest.json'), '{"ok":true}');
  writeFileSync(join(root, '.env'), 'SECRET=1\n');
  writeFileSync(join(root, '.git', 'config'), '[core]\n');
  copyFileSync(at('keys', 'a.key'), join(root, 'publisher.key'));
  writeFileSync(join(root, 'server.PEM'), 'not even a key\n');
  writeFileSync(join(root, 'docs', 'notes.txt'), `my key, for later:\n${readFileSync(at('keys', 'b.key'), 'utf8')}`);
  writeFileSync(join(root, 'id_backup'), '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n');
  writeFileSync(join(root, 'big.bin'), Buffer.concat([Buffer.from('-----BEGIN EC PRIVATE KEY-----\n'), Buffer.alloc(200_000, 0x41)]));
  writeFileSync(join(root, 'public.pem.txt'), '-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA\n-----END PUBLIC KEY-----\n');
  symlinkSync('.env', join(root, 'innocent.txt'));
  const server = await serve(['--static', 'static']);
  try {
    const get = async (path) => {
      const response = await fetch(`${server.url}${path}`);
      return { status: response.status, body: await response.text() };
    };
    for (const path of ['/.env', '/.git/config', '/.git/', '/%2eenv', '/docs/../.env', '/publisher.key', '/server.PEM', '/docs/notes.txt',
      '/id_backup', '/big.bin', '/innocent.txt', '/.bloomgate.lock']) {
      const { status, body } = await get(path);
      assert.equal(status, 404, path);
      assert.doesNotMatch(body, /PRIVATE|SECRET|core/, path);
    }
    assert.equal((await get('/manifest.json')).status, 200);
    assert.equal((await get('/')).body, '<p>hello</p>');
    assert.equal((await get('/public.pem.txt')).status, 200, 'a public key is not a secret');
  } finally {
    await server.stop();
  }
});

/** The endpoint manifest's signatures, checked with node:crypto over its canonical bytes. */
function assertSigned(manifest, keyId) {
  assert.equal(manifest.version, 2);
  assert.deepEqual(manifest.signatures.map((s) => s.keyid), [keyId]);
  const { signatures, ...fields } = manifest;
  assert.ok(verifies(keyId, manifestBytes(fields), signatures[0].sig), 'the signature covers the expiry');
}

test('export-ranges --sign writes an expiry by default (7d), or --expires-in, and prints the client options', () => {
  const now = Date.now() / 1000;
  const made = ok(['export-ranges', 'urls.bgs', '-o', 'exp-default', '--sign', 'keys/a.key']);
  const manifest = JSON.parse(readFileSync(at('exp-default', 'hashes', 'manifest.json'), 'utf8'));
  assert.ok(Math.abs(manifest.expires - (now + 7 * 86400)) < 120, `expires ${manifest.expires}`);
  assertSigned(manifest, ids.a);
  assert.equal(clientOptions(made.stderr).line, `client options: { keys: ['${ids.a}'], threshold: 1, listId: '${STORE_LIST}' }`);
  ok(['export-ranges', 'urls.bgs', '-o', 'exp-short', '--sign', 'keys/a.key', '--expires-in', '2h', '-q']);
  const short = JSON.parse(readFileSync(at('exp-short', 'hashes', 'manifest.json'), 'utf8'));
  assert.ok(Math.abs(short.expires - (now + 7200)) < 120);
  refused(['export-ranges', 'urls.bgs', '-o', 'exp-short', '--sign', 'keys/a.key', '--expires-in', '400d'], { status: 64, code: 'E_USAGE', dir: 'exp-short' });
  refused(['export-ranges', 'urls.bgs', '-o', 'exp-short', '--expires-in', '2h'], { status: 64, code: 'E_USAGE', dir: 'exp-short' });
  const unsigned = ok(['export-ranges', 'urls.bgs', '-o', 'exp-unsigned']);
  assert.equal(clientOptions(unsigned.stderr).line, `client options: { listId: '${STORE_LIST}' }`);
});

test('serve --sign: the manifest expires in a day by default, and is signed again with a later expiry while serving', async () => {
  const server = await serve(['--url-store', 'urls.bgs', '--sign', 'keys/a.key']);
  try {
    const manifest = await (await fetch(`${server.url}/hashes/manifest.json`)).json();
    assert.ok(Math.abs(manifest.expires - (Date.now() / 1000 + 86400)) < 120, `expires ${manifest.expires}`);
    assertSigned(manifest, ids.a);
  } finally {
    await server.stop();
  }
  refused(['serve', '--url-store', 'urls.bgs', '--expires-in', '1h'], { status: 64, code: 'E_USAGE', pattern: /--expires-in applies to signed endpoints/ });
  refused(['serve', '--url-store', 'urls.bgs', '--sign', 'keys/a.key', '--expires-in', '30s'], { status: 64, code: 'E_USAGE', pattern: /60s to 366d/ });
  // The real CLI with --expires-in 60s renews every 15 s: the manifest a client gets later has a later expiry.
  const short = await serve(['--url-store', 'urls.bgs', '--sign', 'keys/a.key', '--expires-in', '60s']);
  try {
    const first = await (await fetch(`${short.url}/hashes/manifest.json`)).json();
    assert.ok(Math.abs(first.expires - (Date.now() / 1000 + 60)) < 30);
    await new Promise((resolve) => setTimeout(resolve, 15_500));
    const later = await (await fetch(`${short.url}/hashes/manifest.json`)).json();
    assert.ok(later.expires >= first.expires + 15, `renewed: ${first.expires} -> ${later.expires}`);
    assertSigned(later, ids.a);
  } finally {
    await short.stop();
  }
});

test('the reference server re-signs its endpoint manifest once a quarter of its lifetime has passed (an injected clock)', async () => {
  let clock = Date.UTC(2030, 0, 1);
  const [key] = await readSigningKeys([at('keys', 'a.key')]);
  const { server, url } = await startReferenceServer({ urlStore: at('urls.bgs'), sign: (bytes) => signAll(bytes, [key]), expiresIn: 3600, now: () => clock });
  try {
    const expiresAt = async () => (await (await fetch(`${url}/hashes/manifest.json`)).json()).expires;
    const start = clock / 1000;
    assert.equal(await expiresAt(), start + 3600);
    clock += 899_000; // under a quarter: the same manifest
    assert.equal(await expiresAt(), start + 3600);
    clock += 1000; // a quarter: signed again
    assert.equal(await expiresAt(), start + 900 + 3600);
    clock += 5 * 3600 * 1000; // a server that slept past its expiry hands out a fresh one at once
    assert.equal(await expiresAt(), clock / 1000 + 3600);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});

test('patch refuses a small delta claiming a 3 GB target before allocating it, in a 64 MB heap, within seconds', async () => {
  ok(['diff', 'g1.bgf', 'g2.bgf', '-o', 'd12.bgd', '-q']);
  const delta = Buffer.from(readFileSync(at('d12.bgd')));
  const { init, deltaInfo, FileChecksum } = await import('../../js/wasm/index.js');
  await init();
  const reseal = (bytes) => {
    const hasher = new FileChecksum();
    hasher.update(bytes);
    Buffer.from(hasher.digestBytes()).copy(bytes, 8);
    hasher.free();
  };
  const resealed = Buffer.from(delta);
  reseal(resealed);
  assert.deepEqual(resealed, delta, 'the checksum is recomputed as the core computes it');
  const claim = 3_000_000_000;
  const baseLength = Number(delta.readBigUInt64LE(56));
  const baseBody = Number(delta.readBigUInt64LE(96));
  const targetBody = Number(delta.readBigUInt64LE(104));
  delta.writeBigUInt64LE(BigInt(claim), 80);
  delta.writeBigUInt64LE(BigInt(claim - targetBody - (baseLength - baseBody)), 120);
  reseal(delta);
  assert.equal(deltaInfo(delta).targetLength, claim, 'a well-formed delta that claims 3 GB');
  writeFileSync(at('huge.bgd'), delta);
  assert.ok(delta.length < 4096);
  const started = Date.now();
  const result = spawnSync('/usr/bin/time', ['-f', 'maxrss=%M', process.execPath, '--max-old-space-size=64', CLI, 'patch', 'g1.bgf', 'huge.bgd', '-o', 'huge.bgf'],
    { cwd: scratch.dir, encoding: 'utf8', timeout: 20_000 });
  assert.equal(result.status, 65, result.stderr);
  assert.ok(Date.now() - started < 10_000);
  const line = result.stderr.split('\n').find((text) => text.startsWith('bloomgate:'));
  assert.match(String(line), /^bloomgate: 'huge\.bgd' claims a target of .* \(3000000000 bytes\) from a base of .*more than 8 times its base.*refused before allocating it .*\(E_DELTA\)$/);
  const kib = Number(/maxrss=(\d+)/.exec(result.stderr)?.[1]);
  assert.ok(kib < 150 * 1024, `max RSS ${kib} KiB`);
  assert.ok(!existsSync(at('huge.bgf')));
  // The genuine delta still applies.
  ok(['patch', 'g1.bgf', 'd12.bgd', '-o', 'g2-again.bgf', '-q']);
  assert.deepEqual(readFileSync(at('g2-again.bgf')), readFileSync(at('g2.bgf')));
  // A delta for another base is refused before allocating too, with the message it always had.
  refused(['patch', 'g3.bgf', 'd12.bgd', '-o', 'wrong.bgf'], { status: 65, code: 'E_DELTA_BASE', pattern: /applies to generation 1 of list/ });
});
