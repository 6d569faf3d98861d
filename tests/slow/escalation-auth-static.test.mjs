// Authenticated escalation against a signed static RANGE export (issue 19,
// item 3), slow: `export-ranges --sign` writes 2 x 2^20 files (replies and
// proofs; minutes, ~4 GiB of 4 KiB blocks), served by a stock
// `python3 -m http.server`. The genuine export answers listed and clean
// passwords; behind the malicious mirror of tests/js/helpers/signed-endpoints.mjs
// every attack leaves every listed password listed or E_ESCALATION, never clean.
// (tests/js/escalation-auth.test.mjs plays the same attacks against `serve
// --sign` and a signed static hashes export in seconds.)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { BloomgateError, init } from '../../js/index.js';
import { checkPassword } from '../../js/password.js';
import {
  attacks, CLEAN_PASSWORDS, GENERATION, LIST_ID, LISTED_PASSWORDS, startMirror, startSignedEndpoints,
} from '../js/helpers/signed-endpoints.mjs';

const CLI = fileURLToPath(new URL('../../js/cli.js', import.meta.url));
const filter = { mightContainKey: () => true, keyEncoding: 'sha1', listId: LIST_ID, generation: GENERATION, minCount: 1 };

let dir;
let endpoints;
let mirror;
let python;
let pythonLog = '';
let pythonExit = null;
let host;

async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

before(async () => {
  await init();
  dir = mkdtempSync(join(tmpdir(), 'bloomgate-auth-static-'));
  endpoints = await startSignedEndpoints(dir);
  const exported = spawnSync(process.execPath, [CLI, 'export-ranges', 'passwords.bgs', '-o', 'range-site', '--sign', 'publisher.key', '-q'],
    { cwd: dir, encoding: 'utf8', timeout: 1800_000 });
  assert.equal(exported.status, 0, exported.stderr);
  const port = await freePort();
  python = spawn('python3', ['-m', 'http.server', String(port), '--bind', '127.0.0.1', '--directory', join(dir, 'range-site')], { stdio: ['ignore', 'ignore', 'pipe'] });
  python.stderr.on('data', (chunk) => { pythonLog = (pythonLog + chunk).slice(-4000); });
  python.on('exit', (code, signal) => { pythonExit = `python3 -m http.server exited (${code ?? signal}): ${pythonLog}`; });
  host = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    try {
      await fetch(`${host}/range/manifest.json`);
      break;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  mirror = await startMirror();
}, { timeout: 1900_000 });

after(async () => {
  python?.kill();
  await mirror?.close();
  await endpoints?.close();
  // 2 x 2^20 files take minutes to delete: a detached rm does it while the next test file runs.
  if (dir) spawn('rm', ['-rf', dir], { detached: true, stdio: 'ignore' }).unref();
});

test('the signed range export: a version 2 manifest, 2^20 proofs of 640 bytes beside the replies', () => {
  const manifest = JSON.parse(readFileSync(join(dir, 'range-site', 'range', 'manifest.json'), 'utf8'));
  assert.equal(manifest.version, 2);
  assert.equal(manifest.padding, 'none');
  assert.equal(manifest.signatures[0].keyid, endpoints.publisherKey);
  for (const name of ['00000', '7FFFF', 'FFFFF']) {
    assert.ok(existsSync(join(dir, 'range-site', 'range', name)));
    assert.equal(readFileSync(join(dir, 'range-site', 'range', `${name}.proof`)).length, 640);
  }
});

test('genuine static range export with keys: listed passwords listed, clean ones clean', async () => {
  const keys = [endpoints.publisherKey];
  const fetchImpl = (...args) => fetch(...args);
  for (const password of LISTED_PASSWORDS) {
    const result = await checkPassword(password, { filter, rangeUrl: `${host}/range`, keys, listId: LIST_ID, fetch: fetchImpl });
    assert.equal(result.breached, true, password);
  }
  for (const password of CLEAN_PASSWORDS) {
    const result = await checkPassword(password, { filter, rangeUrl: `${host}/range`, keys, listId: LIST_ID, fetch: fetchImpl });
    assert.deepEqual([result.breached, result.escalated], [false, true], password);
  }
});

test('every mirror attack on the static range export: listed passwords read listed or E_ESCALATION, never clean', async () => {
  const origins = { ...endpoints.origins, genuine: host };
  const list = attacks(origins, { otherPrefix: { range: 'ABCDE', hashes: 'ab000000' } });
  for (const attack of list) {
    mirror.attack = attack;
    const fetchImpl = (...args) => fetch(...args);
    for (const password of LISTED_PASSWORDS) {
      try {
        const result = await checkPassword(password, { filter, rangeUrl: `${mirror.url}/range`, keys: [endpoints.publisherKey], listId: LIST_ID, fetch: fetchImpl });
        assert.equal(result.breached, true, `${attack.name}: ${password} read clean`);
      } catch (error) {
        assert.ok(error instanceof BloomgateError && error.code === 'E_ESCALATION', `${attack.name}: ${error?.stack ?? error}`);
      }
    }
    assert.deepEqual(mirror.failures, [], `${attack.name}: ${pythonExit ?? 'the mirror could not reach an upstream'}`);
  }
});
