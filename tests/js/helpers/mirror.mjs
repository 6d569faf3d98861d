/**
 * mirror.mjs — a malicious mirror: a genuine signed filter site, made with the
 * real CLI (`bloomgate keygen`, `build`, `publish --sign`, `keys rotate`), served
 * by a host the attacker controls (every file can be replaced, dripped, or
 * withheld). The attacks are data — what the host serves and the refusal the
 * client must give — so Node (tests/js/mirror-attacks.test.mjs) and Chromium
 * (tests/browser/mirror-attacks.test.mjs) play the same list against the same
 * assertions: every listed URL still reads "maybe", the generation in use stays
 * genuine, and the refusal has its own code.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const LIST = '1157ed0000000000000000000000beef';
export const OTHER_LIST = '07e4000000000000000000000000abcd';
export const NEXT_LIST = '5cce55000000000000000000000000f1';
export const LISTED = 2000;
export const ADDED = 100;

/** The listed URL i (generation 1 lists 0..1999; each later generation adds 100). */
export const listedUrl = (i) => `https://phish-${i}.example/login/index.html`;

/** `bloomgate ...args` run in this process (the real commands, without a Node start-up each). */
async function cli(cwd, args) {
  const { main } = await import('../../../js/cli/main.js');
  const back = process.cwd();
  process.chdir(cwd);
  let status;
  try {
    status = await main(args);
  } finally {
    process.chdir(back);
  }
  if (status !== 0) throw new Error(`bloomgate ${args.join(' ')} exited ${status}`);
}

/** `bloomgate keygen -o FILE`: its stdout (the public key) is read from a child, as node --test owns this process's. */
function keygen(cwd, file) {
  const result = spawnSync(process.execPath, [fileURLToPath(new URL('../../../js/cli.js', import.meta.url)), 'keygen', '-q', '-o', file], { cwd, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`bloomgate keygen exited ${result.status}: ${result.stderr}`);
  return result.stdout.trim();
}

const sha256 = (bytes) => createHash('sha256').update(bytes).digest();
const sri = (bytes) => `sha256-${sha256(bytes).toString('base64')}`;

/** The directory's files as a Map('/name' -> Buffer). */
export function snapshot(dir) {
  return new Map(readdirSync(dir).filter((name) => !name.startsWith('.')).map((name) => [`/${name}`, readFileSync(join(dir, name))]));
}

/**
 * Everything the attacks need, built once: keys (the publisher's k1..k3 and the
 * attacker's), a genuine site at generations 1..3 of LIST, a genuine site of
 * OTHER_LIST signed by the same keys, the attacker's own forged files, a
 * successor site (NEXT_LIST replacing LIST) and a rotated site (k1 -> k4).
 */
export async function buildKit(dir) {
  const file = (name) => join(dir, name);
  const keys = {};
  for (const name of ['k1', 'k2', 'k3', 'k4', 'attacker']) keys[name] = keygen(dir, `${name}.key`);

  const urls = (n) => Array.from({ length: n }, (_, i) => listedUrl(i)).join('\n') + '\n';
  writeFileSync(file('g1.txt'), urls(LISTED));
  writeFileSync(file('g2.txt'), urls(LISTED + ADDED));
  writeFileSync(file('g3.txt'), urls(LISTED + 2 * ADDED));
  const common = ['--format', 'urls', '--capacity', '3000', '--error-rate', '0.001'];
  await cli(dir, ['build', 'g1.txt', '-o', 'g1.bgf', ...common, '--list-id', LIST, '--generation', '1', '-q']);
  await cli(dir, ['build', 'g2.txt', '-o', 'g2.bgf', '--format', 'urls', '--like', 'g1.bgf', '-q']);
  await cli(dir, ['build', 'g3.txt', '-o', 'g3.bgf', '--format', 'urls', '--like', 'g2.bgf', '-q']);

  const site = (name) => {
    mkdirSync(file(name));
    return name;
  };
  const publish = (bgf, siteName, signers, extra = []) =>
    cli(dir, ['publish', bgf, '--dir', siteName, '-q', ...signers.flatMap((k) => ['--sign', `${k}.key`]), ...extra]);

  // The genuine site of LIST, signed 2-of-3 (the client pins k1, k2, k3 with threshold 2), at each generation.
  const genuine = [null];
  site('site');
  for (const g of [1, 2, 3]) {
    await publish(`g${g}.bgf`, 'site', ['k1', 'k2']);
    genuine.push(snapshot(file('site')));
  }
  // The same site, its manifest expiring in a minute (for freeze and fresh-client rollback).
  site('short');
  await publish('g1.bgf', 'short', ['k1', 'k2'], ['--expires-in', '60s']);
  const short = snapshot(file('short'));

  // Another list by the same publisher, with nothing of LIST in it.
  writeFileSync(file('other.txt'), 'https://harmless.example/\n');
  await cli(dir, ['build', 'other.txt', '-o', 'other.bgf', ...common, '--list-id', OTHER_LIST, '--generation', '50', '-q']);
  site('other');
  await publish('other.bgf', 'other', ['k1', 'k2']);
  const other = snapshot(file('other'));

  // The attacker's forgery: LIST's id, a later generation, none of the listed URLs.
  writeFileSync(file('forged.txt'), 'https://attacker.example/\n');
  await cli(dir, ['build', 'forged.txt', '-o', 'forged4.bgf', ...common, '--list-id', LIST, '--generation', '4', '-q']);
  await cli(dir, ['build', 'forged.txt', '-o', 'forgedmax.bgf', ...common, '--list-id', LIST, '--generation', String(2 ** 53 - 1), '-q']);
  // A delta from genuine generation 3 to the forgery (same geometry): what a forged update would ship.
  await cli(dir, ['diff', 'g3.bgf', 'forged4.bgf', '-o', 'forged-3-4.bgd', '-q']);
  site('forged');
  await publish('g3.bgf', 'forged', ['attacker']);
  await publish('forged4.bgf', 'forged', ['attacker']);
  const forgedSignedByAttacker = snapshot(file('forged'));
  site('forged-unsigned');
  await publish('g3.bgf', 'forged-unsigned', []);
  await publish('forged4.bgf', 'forged-unsigned', []);
  const forgedUnsigned = snapshot(file('forged-unsigned'));
  site('forged-one');
  await publish('g3.bgf', 'forged-one', ['k1']);
  await publish('forged4.bgf', 'forged-one', ['k1']);
  const forgedOneKey = snapshot(file('forged-one')); // a compromised k1 alone: under the threshold
  site('forged-max');
  await publish('g3.bgf', 'forged-max', ['attacker']);
  await publish('forgedmax.bgf', 'forged-max', ['attacker'], ['--force']);
  const forgedMax = snapshot(file('forged-max'));

  // A successor list: NEXT_LIST replaces LIST (its generation 1 lists everything of g3 plus 100 more).
  writeFileSync(file('next.txt'), urls(LISTED + 3 * ADDED));
  await cli(dir, ['build', 'next.txt', '-o', 'next.bgf', ...common, '--list-id', NEXT_LIST, '--generation', '1', '-q']);
  cpSite(dir, 'site', 'successor');
  await publish('next.bgf', 'successor', ['k1', 'k2'], ['--replace-list']);
  const successor = snapshot(file('successor'));

  // Back again: LIST generation 4 replaces NEXT_LIST (a history A -> B -> A), so B's old manifest is a replay.
  writeFileSync(file('g4.txt'), urls(LISTED + 3 * ADDED));
  await cli(dir, ['build', 'g4.txt', '-o', 'g4.bgf', '--format', 'urls', '--like', 'g3.bgf', '-q']);
  cpSite(dir, 'successor', 'returned');
  await publish('g4.bgf', 'returned', ['k1', 'k2'], ['--replace-list']);
  const returned = snapshot(file('returned'));

  // Key rotation: k1 + k2 (set 0's threshold) sign key set 1 = { k4 } (threshold 1); the manifest is re-signed by k4.
  cpSite(dir, 'site', 'rotated');
  await cli(dir, ['keys', 'rotate', '--dir', 'rotated', '--old', 'k1.key', '--old', 'k2.key', '--new', 'k4.key', '-q']);
  const rotated = snapshot(file('rotated'));

  return {
    dir, keys, genuine, short, other, successor, returned, rotated,
    forged: { signedByAttacker: forgedSignedByAttacker, unsigned: forgedUnsigned, oneKey: forgedOneKey, max: forgedMax },
    files: {
      g1: readFileSync(file('g1.bgf')), g2: readFileSync(file('g2.bgf')), g3: readFileSync(file('g3.bgf')),
      forged4: readFileSync(file('forged4.bgf')), forgedDelta: readFileSync(file('forged-3-4.bgd')),
    },
    pinned: [keys.k1, keys.k2, keys.k3],
  };
}

function cpSite(dir, from, to) {
  mkdirSync(join(dir, to));
  for (const name of readdirSync(join(dir, from))) {
    if (!name.startsWith('.')) writeFileSync(join(dir, to, name), readFileSync(join(dir, from, name)));
  }
}

/**
 * A snapshot whose manifest was edited by `edit` and then genuinely signed again by `signers`
 * (key files under kit.dir): what a publisher's own tooling could sign, not a forgery.
 */
export async function resigned(kit, files, edit, signers) {
  const { parseManifest } = await import('../../../js/update/manifest.js');
  const { readSigningKeys, signAll } = await import('../../../js/cli/signing.js');
  const manifest = edit(manifestOf(files)) ?? manifestOf(files);
  delete manifest.signatures;
  const { canonical } = parseManifest(JSON.stringify(manifest), 'http://x/manifest.json');
  manifest.signatures = signAll(canonical, await readSigningKeys(signers.map((name) => join(kit.dir, `${name}.key`))));
  const copy = new Map(files);
  copy.set('/manifest.json', Buffer.from(JSON.stringify(manifest)));
  return copy;
}

/** The manifest of a snapshot, parsed. */
export const manifestOf = (files) => JSON.parse(files.get('/manifest.json').toString('utf8'));

/** A snapshot whose manifest was edited by `edit` (re-serialised; signatures untouched). */
export function withManifest(files, edit) {
  const copy = new Map(files);
  const manifest = manifestOf(files);
  copy.set('/manifest.json', Buffer.from(JSON.stringify(edit(manifest) ?? manifest)));
  return copy;
}

/**
 * The attacker's host: serves `files` (a snapshot), with CORS for pages, and
 * lets a test replace what it serves at any moment. `drip` sends bodies a few
 * bytes at a time. Every request is recorded.
 */
export class MirrorHost {
  constructor(files) {
    this.files = files;
    this.requests = [];
    this.dripMs = 0;
    this.server = createServer((req, res) => this.#handle(req, res));
  }

  async start() {
    await new Promise((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = this.server.address().port;
    return this;
  }

  stop() {
    this.server.closeAllConnections?.();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  get manifestUrl() {
    return `http://127.0.0.1:${this.port}/manifest.json`;
  }

  serve(files) {
    this.files = files;
  }

  #handle(req, res) {
    const path = new URL(req.url, 'http://x').pathname;
    this.requests.push(path);
    const cors = { 'access-control-allow-origin': '*', 'access-control-allow-headers': 'If-None-Match', 'access-control-expose-headers': 'ETag' };
    if (req.method === 'OPTIONS') return res.writeHead(204, cors).end();
    const body = this.files.get(path);
    if (body === undefined) return res.writeHead(404, cors).end();
    res.writeHead(200, { ...cors, 'content-length': body.length, 'cache-control': 'no-store' });
    if (!this.dripMs) return res.end(body);
    let at = 0;
    const timer = setInterval(() => {
      if (res.destroyed || at >= body.length) {
        clearInterval(timer);
        res.end();
        return;
      }
      res.write(body.subarray(at, at + 4));
      at += 4;
    }, this.dripMs);
    res.on('close', () => clearInterval(timer));
  }
}

/**
 * The attacks a host can mount on a client that holds genuine generation 2 of
 * LIST and pins k1, k2, k3 with threshold 2. `code` is the refusal it must
 * give; after it the client still answers from genuine generation 2.
 */
export function attacksOn(kit) {
  const g3 = kit.genuine[3];
  return [
    {
      name: 'arbitrary content: a forged full file with a matching unsigned manifest',
      code: 'E_SIGNATURE',
      files: kit.forged.unsigned,
    },
    {
      name: 'arbitrary content: a forged file and delta, the manifest signed by the attacker\'s own key',
      code: 'E_SIGNATURE',
      files: kit.forged.signedByAttacker,
    },
    {
      name: 'key compromise: one stolen key of a 2-of-3 set signs a forgery',
      code: 'E_SIGNATURE',
      files: kit.forged.oneKey,
    },
    {
      name: 'a genuine manifest with a signature copied onto a forged one (file and delta swapped, digests edited)',
      code: 'E_SIGNATURE',
      files: withManifest(kit.forged.unsigned, (m) => ({ ...m, signatures: manifestOf(g3).signatures })),
    },
    {
      name: 'mix-and-match: the genuine generation-3 manifest, the forged file served under its name',
      code: 'E_INTEGRITY',
      files: new Map([...g3, ['/filter-3.bgf', kit.files.forged4], ['/delta-2-3.bgd', kit.files.forgedDelta]]),
    },
    {
      name: 'mix-and-match: the genuine generation-3 manifest, generation 1 served as generation 3',
      code: 'E_INTEGRITY',
      files: new Map([...g3, ['/filter-3.bgf', kit.files.g1], ['/delta-2-3.bgd', Buffer.from('not a delta')]]),
    },
    {
      name: 'jump to the highest generation (2^53-1), signed by the attacker',
      code: 'E_SIGNATURE',
      files: kit.forged.max,
    },
    {
      name: 'rollback: the genuine generation-1 manifest, replayed',
      code: 'E_STALE',
      files: kit.genuine[1],
    },
    {
      name: 'wrong list: another genuine list of the same publisher',
      code: 'E_LIST',
      files: kit.other,
    },
    {
      name: 'endless data: an unsigned manifest claiming a 3 GB file beside a tiny delta',
      code: 'E_SIGNATURE',
      files: withManifest(kit.forged.unsigned, (m) => ({ ...m, full: { ...m.full, length: 3e9 } })),
    },
    {
      name: 'a truncated manifest',
      code: 'E_MANIFEST',
      files: new Map([...g3, ['/manifest.json', g3.get('/manifest.json').subarray(0, 200)]]),
    },
    {
      name: 'a malformed signature',
      code: 'E_SIGNATURE',
      files: withManifest(g3, (m) => ({ ...m, signatures: [{ keyid: m.signatures[0].keyid, sig: 'AAAA' }] })),
    },
    {
      name: 'a genuine manifest with its generation raised (signature no longer matches)',
      code: 'E_SIGNATURE',
      files: withManifest(g3, (m) => ({ ...m, generation: 9 })),
    },
    {
      name: 'a genuine manifest with its expiry pushed back (signature no longer matches)',
      code: 'E_SIGNATURE',
      files: withManifest(g3, (m) => ({ ...m, expires: m.expires + 10 * 365 * 86400 })),
    },
  ];
}

/** Assert that `answers` (one boolean per listed URL of generation g) are all "maybe". */
export function assertAllListed(answers, what) {
  const missing = answers.map((answer, i) => (answer ? -1 : i)).filter((i) => i >= 0);
  assert.deepEqual(missing.slice(0, 5), [], `${what}: ${missing.length} listed URLs read "clean"`);
}

export { sri, sha256 };
