/**
 * The publisher's side of signed generations, through the real CLI:
 * `keygen` (mode 0600, never overwrites, the public key on stdout), `publish
 * --sign` (k-of-n signatures over the canonical bytes, verified here with
 * node:crypto independently of the library), `--expires-in`, `--min-refresh 0`,
 * generation jumps, `--replace-list`, the site lock against concurrent runs and
 * killed runs, and `keys rotate`.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createPublicKey, verify } from 'node:crypto';
import { readFileSync, statSync, writeFileSync, existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';

import { canonicalBytes } from '../../js/update/manifest.js';
import { rotationBytes } from '../../js/update/key-rotation.js';
import { CLI, runCli, scratchDirectory } from './helpers/cli.mjs';

const scratch = scratchDirectory('bloomgate-publish-signing-');
const at = (name) => join(scratch.dir, name);
const LIST = 'a11ce0000000000000000000000000b0';
/** `bloomgate ...args` in this process (the real command, without a Node start-up each): { status, stdout, stderr }. */
async function inProcess(args) {
  const { main } = await import('../../js/cli/main.js');
  const out = { stdout: '', stderr: '' };
  // stdout is left alone: node --test reports through it.
  const writes = { stderr: process.stderr.write };
  const back = process.cwd();
  process.chdir(scratch.dir);
  process.stderr.write = (chunk) => { out.stderr += String(chunk); return true; };
  try {
    const status = await main(args);
    return { status, ...out };
  } finally {
    process.stderr.write = writes.stderr;
    process.chdir(back);
  }
}
const ok = async (args) => {
  const result = await inProcess(args);
  assert.equal(result.status, 0, `bloomgate ${args.join(' ')}: ${result.stderr}`);
  assert.doesNotMatch(result.stderr, /\n\s+at /);
  return result;
};
const run = inProcess;
const manifestIn = (site) => JSON.parse(readFileSync(at(`${site}/manifest.json`), 'utf8'));
const keyIds = {};

before(async () => {
  for (const name of ['a', 'b', 'c']) {
    const made = runCli(scratch.dir, ['keygen', '-o', `${name}.key`, '-q']);
    assert.equal(made.status, 0, made.stderr);
    keyIds[name] = made.stdout.trim();
  }
  writeFileSync(at('items.txt'), Array.from({ length: 500 }, (_, i) => `item-${i}`).join('\n'));
  await ok(['build', 'items.txt', '-o', 'g1.bgf', '--list-id', LIST, '--generation', '1', '-q']);
  for (let g = 2; g <= 4; g++) await ok(['build', 'items.txt', '-o', `g${g}.bgf`, '--like', `g${g - 1}.bgf`, '-q']);
  await ok(['build', 'items.txt', '-o', 'g9.bgf', '--list-id', LIST, '--generation', '9', '-q']);
  await ok(['build', 'items.txt', '-o', 'new1.bgf', '--list-id', 'fee1'.repeat(8), '--generation', '1', '-q']);
});

/** Ed25519 verification with node:crypto, from the raw public key in the 'ed25519:' id. */
function verifies(keyId, message, sig) {
  const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: keyId.slice('ed25519:'.length) }, format: 'jwk' });
  return verify(null, message, key, Buffer.from(sig, 'base64url'));
}

test('keygen writes a 0600 PEM key, prints the public key, and never overwrites', async () => {
  assert.match(keyIds.a, /^ed25519:[A-Za-z0-9_-]{43}$/);
  assert.equal(statSync(at('a.key')).mode & 0o777, 0o600);
  assert.match(readFileSync(at('a.key'), 'utf8'), /^-----BEGIN PRIVATE KEY-----/);
  const before = readFileSync(at('a.key'));
  const again = await run(['keygen', '-o', 'a.key']);
  assert.equal(again.status, 73);
  assert.match(again.stderr, /never overwrites/);
  assert.deepEqual(readFileSync(at('a.key')), before);
  const missing = await run(['keygen']);
  assert.equal(missing.status, 64);
  writeFileSync(at('rsa.key'), '-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n');
  const bad = await run(['publish', 'g1.bgf', '--dir', 'bad-site', '--sign', 'rsa.key']);
  assert.equal(bad.status, 65);
  assert.match(bad.stderr, /not a private key/);
  assert.ok(!existsSync(at('bad-site/manifest.json')));
});

test('publish --sign signs the canonical bytes with every key; node:crypto verifies them', async () => {
  await ok(['publish', 'g1.bgf', '--dir', 'site', '--sign', 'a.key', '--sign', 'b.key', '--expires-in', '2d', '--min-refresh', '0']);
  const manifest = manifestIn('site');
  assert.equal(manifest.version, 2);
  assert.equal(manifest.minRefreshSeconds, 0, '--min-refresh 0 is allowed');
  assert.ok(Math.abs(manifest.expires - (Date.now() / 1000 + 2 * 86400)) < 600);
  const digest = (integrity) => new Uint8Array(Buffer.from(integrity.slice(7), 'base64'));
  const message = canonicalBytes({
    listId: manifest.listId, generation: manifest.generation, expires: manifest.expires, minRefreshSeconds: manifest.minRefreshSeconds,
    keySet: manifest.keySet, full: { length: manifest.full.length, sha256: digest(manifest.full.integrity), checksum: manifest.full.checksum },
    deltas: manifest.deltas.map((d) => ({ from: d.from, length: d.length, sha256: digest(d.integrity) })), replaces: manifest.replaces,
  });
  assert.deepEqual(manifest.signatures.map((s) => s.keyid).sort(), [keyIds.a, keyIds.b].sort());
  for (const { keyid, sig } of manifest.signatures) assert.ok(verifies(keyid, message, sig), `signature by ${keyid}`);
  // The canonical bytes start with the domain string and bind the list id right after it.
  assert.equal(Buffer.from(message.subarray(0, 28)).toString(), 'bloomgate-filter-manifest/2\0');
  assert.equal(Buffer.from(message.subarray(28, 44)).toString('hex'), LIST);
});

test('publish refuses a generation jump unless forced, and re-publishing the same file renews the expiry', async () => {
  await ok(['publish', 'g1.bgf', '--dir', 'jump', '--sign', 'a.key']);
  const jump = await run(['publish', 'g9.bgf', '--dir', 'jump', '--sign', 'a.key']);
  assert.equal(jump.status, 65);
  assert.match(jump.stderr, /a jump of 8 generations .*--force.*E_GENERATION/);
  assert.equal(manifestIn('jump').generation, 1);
  const first = manifestIn('jump').expires;
  await ok(['publish', 'g1.bgf', '--dir', 'jump', '--sign', 'a.key', '--expires-in', '30d']);
  assert.ok(manifestIn('jump').expires > first, 'the same generation again: a later expiry');
  await ok(['publish', 'g9.bgf', '--dir', 'jump', '--sign', 'a.key', '--force']);
  assert.equal(manifestIn('jump').generation, 9);
  for (const bad of [['--expires-in', '5'], ['--expires-in', '400d'], ['--expires-in', 'soon'], ['--min-refresh', '-1']]) {
    const result = await run(['publish', 'g1.bgf', '--dir', 'other', ...bad]);
    assert.equal(result.status, 64, bad.join(' '));
  }
});

test('publish --replace-list names the old list as replaced; without it another list is refused', async () => {
  await ok(['publish', 'g1.bgf', '--dir', 'move', '--sign', 'a.key']);
  await ok(['publish', 'g2.bgf', '--dir', 'move', '--sign', 'a.key']);
  const refused = await run(['publish', 'new1.bgf', '--dir', 'move', '--sign', 'a.key']);
  assert.equal(refused.status, 65);
  assert.match(refused.stderr, /--replace-list/);
  await ok(['publish', 'new1.bgf', '--dir', 'move', '--sign', 'a.key', '--replace-list']);
  const manifest = manifestIn('move');
  assert.equal(manifest.listId, 'fee1'.repeat(8));
  assert.deepEqual(manifest.replaces, [{ listId: LIST, generation: 2 }]);
  assert.deepEqual(manifest.deltas, []);
  assert.ok(!readdirSync(at('move')).some((name) => name.endsWith('.bgd')), 'the old list\'s deltas are gone');
  const nothing = await run(['publish', 'g1.bgf', '--dir', 'empty-site', '--replace-list']);
  assert.equal(nothing.status, 64);
});

/** Two real processes publishing to one site at the same moment. */
function publishConcurrently(site, files) {
  return Promise.all(files.map((file) => new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, 'publish', file, '--dir', site, '--sign', 'a.key', '-q'], { cwd: scratch.dir });
    let stderr = '';
    child.stderr.on('data', (chunk) => { stderr += chunk; });
    child.on('close', (status) => resolve({ status, stderr }));
  })));
}

test('two publish runs at once: one waits its turn or is refused with exit 75; the manifest never names a missing file', async () => {
  for (let pair = 0; pair < 3; pair++) {
    const site = `race-${pair}`;
    await ok(['publish', 'g1.bgf', '--dir', site, '--sign', 'a.key', '-q']);
    const results = await publishConcurrently(site, ['g2.bgf', 'g2.bgf']);
    for (const { status, stderr } of results) {
      assert.ok(status === 0 || status === 75 || (status === 65 && /E_STALE/.test(stderr)), `status ${status}: ${stderr}`);
      if (status === 75) assert.match(stderr, /another bloomgate \(pid \d+\) is publishing .*E_LOCKED/);
    }
    assert.ok(results.some((r) => r.status === 0));
    const manifest = manifestIn(site);
    assert.equal(manifest.generation, 2);
    for (const file of [manifest.full, ...manifest.deltas]) assert.ok(existsSync(at(`${site}/${file.url}`)), `${site}: ${file.url} exists`);
    assert.ok(!existsSync(at(`${site}/.bloomgate.lock`)), 'the lock is released');
  }
});

test('a lock left by a killed run is taken over; a live one is not', async () => {
  await ok(['publish', 'g1.bgf', '--dir', 'locked', '--sign', 'a.key', '-q']);
  writeFileSync(at('locked/.bloomgate.lock'), '999999999\n'); // no such process
  await ok(['publish', 'g2.bgf', '--dir', 'locked', '--sign', 'a.key', '-q']);
  assert.equal(manifestIn('locked').generation, 2);
  writeFileSync(at('locked/.bloomgate.lock'), `${process.pid}\n`); // this test process: alive
  const held = await run(['publish', 'g3.bgf', '--dir', 'locked', '--sign', 'a.key']);
  assert.equal(held.status, 75);
  assert.equal(manifestIn('locked').generation, 2);
  assert.ok(existsSync(at('locked/.bloomgate.lock')), 'a live owner\'s lock is left alone');
});

test('keys rotate: the new key set is signed by the old keys, and the manifest re-signed by the new ones', async () => {
  await ok(['publish', 'g1.bgf', '--dir', 'rot', '--sign', 'a.key', '--sign', 'b.key']);
  const stranger = await run(['keys', 'rotate', '--dir', 'rot', '--old', 'c.key', '--new', 'c.key']);
  assert.equal(stranger.status, 65);
  assert.match(stranger.stderr, /did not sign the site's current manifest/);
  await ok(['keys', 'rotate', '--dir', 'rot', '--old', 'a.key', '--old', 'b.key', '--new', 'c.key']);
  const history = JSON.parse(readFileSync(at('rot/keys.json'), 'utf8'));
  assert.equal(history.format, 'bloomgate-keys');
  const [rotation] = history.rotations;
  assert.deepEqual([rotation.seq, rotation.threshold, rotation.keys], [1, 1, [keyIds.c]]);
  const raw = new Uint8Array(Buffer.from(keyIds.c.slice(8), 'base64url'));
  const message = rotationBytes({ seq: 1, threshold: 1, keys: [{ raw }] });
  assert.deepEqual(rotation.signatures.map((s) => s.keyid).sort(), [keyIds.a, keyIds.b].sort());
  for (const { keyid, sig } of rotation.signatures) assert.ok(verifies(keyid, message, sig));
  const manifest = manifestIn('rot');
  assert.equal(manifest.keySet, 1);
  assert.equal(manifest.keys, 'keys.json');
  assert.deepEqual(manifest.signatures.map((s) => s.keyid), [keyIds.c]);
  // The old keys can no longer publish to this site.
  const old = await run(['publish', 'g2.bgf', '--dir', 'rot', '--sign', 'a.key']);
  assert.equal(old.status, 65);
  assert.match(old.stderr, /not in key set 1/);
  await ok(['publish', 'g2.bgf', '--dir', 'rot', '--sign', 'c.key']);
  // A public key alone as --new (held elsewhere, said so): the rotation is written, the manifest waits for a publish with the new key.
  await ok(['keys', 'rotate', '--dir', 'rot', '--old', 'c.key', '--new', keyIds.a, '--new', keyIds.b, '--threshold', '2', '--allow-unheld-new-key']);
  assert.equal(manifestIn('rot').keySet, 1);
  const short = await run(['publish', 'g3.bgf', '--dir', 'rot', '--sign', 'a.key']);
  assert.equal(short.status, 64);
  assert.match(short.stderr, /needs 2 signatures/);
  await ok(['publish', 'g3.bgf', '--dir', 'rot', '--sign', 'a.key', '--sign', 'b.key']);
  assert.equal(manifestIn('rot').keySet, 2);
});
