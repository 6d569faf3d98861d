// Authenticated escalation (issue 19, item 3): with publisher keys, a host that
// serves the escalation endpoint but does not hold the key cannot make a
// listed item read "clean". Real `bloomgate serve` servers (signed, unsigned,
// signed by an attacker's key, another list's), a real signed static export
// on a plain static server, and a malicious mirror in front of them that plays
// each attack; every listed item is checked in every attack.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { BloomgateError, createGate, init } from '../../js/index.js';
import { checkPassword } from '../../js/password.js';
import { checkUrl } from '../../js/url.js';
import { authorityOf, manifestBytes } from '../../js/endpoint.js';
import { keySetFromOptions } from '../../js/signature.js';
import { blockNode, merkleHasher, proofBytes, TreeTop, verifyLeaf } from '../../js/merkle.js';
import { runCli } from './helpers/cli.mjs';
import {
  attacks, CLEAN_PASSWORDS, CLEAN_URLS, GENERATION, LIST_ID, LISTED_PASSWORDS, LISTED_URLS, OTHER_LIST_ID,
  listedExpression, startMirror, startSignedEndpoints, staticAttacks,
} from './helpers/signed-endpoints.mjs';

const sha1Hex = (text) => createHash('sha1').update(text).digest('hex').toUpperCase();
const sha256Hex = (text) => createHash('sha256').update(text).digest('hex');
/** Filters that say "maybe" to everything: every check escalates. */
const passwordFilter = (extra = {}) => ({ mightContainKey: () => true, keyEncoding: 'sha1', listId: LIST_ID, generation: GENERATION, minCount: 1, ...extra });
const urlFilter = (extra = {}) => ({ mightContainKey: () => true, keyEncoding: 'url', listId: LIST_ID, generation: GENERATION, minCount: 1, ...extra });
/** Manifests are cached per fetch function: each scenario gets its own. */
const freshFetch = () => (...args) => fetch(...args);

let dir;
let endpoints;
let mirror;
let keys;
/** Prefixes with no listed item (a reply or proof "of another prefix"). */
const otherPrefix = {};

before(async () => {
  await init();
  dir = mkdtempSync(join(tmpdir(), 'bloomgate-auth-'));
  endpoints = await startSignedEndpoints(dir);
  mirror = await startMirror();
  keys = [endpoints.publisherKey];
  const listedRange = new Set(LISTED_PASSWORDS.map((p) => sha1Hex(p).slice(0, 5)));
  otherPrefix.range = ['ABCDE', 'ABCDF', '12345'].find((p) => !listedRange.has(p));
  const listedHashes = new Set(LISTED_URLS.map((u) => sha256Hex(listedExpression(u)).slice(0, 2)));
  const block = ['ab', 'cd', 'ef', '12'].find((b) => !listedHashes.has(b));
  otherPrefix.hashes = `${block}000000`;
});

after(async () => {
  await mirror?.close();
  await endpoints?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Every listed password against `base`: listed, or an E_ESCALATION error; returns the outcomes. */
async function passwordOutcomes(base, options = {}) {
  const fetchImpl = freshFetch();
  const outcomes = [];
  for (const password of LISTED_PASSWORDS) {
    try {
      const result = await checkPassword(password, { filter: passwordFilter(), rangeUrl: base, fetch: fetchImpl, keys, listId: LIST_ID, ...options });
      outcomes.push(result.breached ? 'listed' : 'clean');
    } catch (error) {
      assert.ok(error instanceof BloomgateError && error.code === 'E_ESCALATION', `${password}: ${error?.stack ?? error}`);
      outcomes.push(error.message);
    }
  }
  return outcomes;
}

async function urlOutcomes(base, options = {}) {
  const fetchImpl = freshFetch();
  const outcomes = [];
  for (const url of LISTED_URLS) {
    try {
      const result = await checkUrl(url, { filter: urlFilter(), hashesUrl: base, fetch: fetchImpl, keys, listId: LIST_ID, ...options });
      outcomes.push(result.listed ? 'listed' : 'clean');
    } catch (error) {
      assert.ok(error instanceof BloomgateError && error.code === 'E_ESCALATION', `${url}: ${error?.stack ?? error}`);
      outcomes.push(error.message);
    }
  }
  return outcomes;
}

test('a genuine signed endpoint: listed items read listed, clean items clean, over serve and a static export', async () => {
  const { genuine, static: site } = endpoints.origins;
  assert.deepEqual(await passwordOutcomes(`${genuine}/range`), LISTED_PASSWORDS.map(() => 'listed'));
  for (const padding of [true, false]) {
    const fetchImpl = freshFetch();
    for (const password of CLEAN_PASSWORDS) {
      const result = await checkPassword(password, { filter: passwordFilter(), rangeUrl: `${genuine}/range`, fetch: fetchImpl, keys, listId: LIST_ID, addPadding: padding });
      assert.deepEqual([result.breached, result.escalated, result.count], [false, true, 0], password);
    }
  }
  for (const base of [`${genuine}/hashes`, `${site}/hashes`]) {
    assert.deepEqual(await urlOutcomes(base), LISTED_URLS.map(() => 'listed'), base);
    const fetchImpl = freshFetch();
    for (const url of CLEAN_URLS) {
      const result = await checkUrl(url, { filter: urlFilter(), hashesUrl: base, fetch: fetchImpl, keys, listId: LIST_ID });
      assert.deepEqual([result.listed, result.escalated], [false, true], `${url} at ${base}`);
    }
  }
});

test('without keys the mirror\'s stripped replies do read clean: the attacks below bite', async () => {
  mirror.attack = attacks(endpoints.origins, { otherPrefix })[2];
  const outcomes = await passwordOutcomes(`${mirror.url}/range`, { keys: undefined });
  assert.deepEqual(outcomes, LISTED_PASSWORDS.map(() => 'clean'));
});

for (const [index, { name }] of attacks({}, { otherPrefix: { range: '', hashes: '' } }).entries()) {
  test(`attack: ${name} — every listed password and URL reads listed or E_ESCALATION, never clean`, async () => {
    mirror.attack = attacks(endpoints.origins, { otherPrefix })[index];
    const passwords = await passwordOutcomes(`${mirror.url}/range`);
    const urls = await urlOutcomes(`${mirror.url}/hashes`);
    mirror.attack = staticAttacks(endpoints.origins, { otherPrefix })[index];
    const staticUrls = await urlOutcomes(`${mirror.url}/hashes`);
    // The listed records are gone from everything the mirror serves: each check must be an error.
    for (const [what, outcomes] of [['range', passwords], ['hashes', urls], ['static hashes', staticUrls]]) {
      for (const outcome of outcomes) {
        assert.notEqual(outcome, 'clean', `${what}: a listed item read clean`);
        assert.notEqual(outcome, 'listed', `${what}: the attack left a listed row`);
      }
    }
    // The reason names the failed check: the signature, the list, or the proof.
    assert.match([...passwords, ...urls, ...staticUrls].join('\n'), /sign|not authenticated|proof|list|malformed/);
  });
}

test('a live filter from openFilter passes its keys on (its trust), to checkPassword, checkUrl and createGate', async () => {
  mirror.attack = attacks(endpoints.origins, { otherPrefix })[2]; // stripped replies, genuine manifest and proofs
  const trust = { keys, threshold: 1, listId: LIST_ID };
  const fetchImpl = freshFetch();
  await assert.rejects(
    checkPassword(LISTED_PASSWORDS[0], { filter: passwordFilter({ trust }), rangeUrl: `${mirror.url}/range`, fetch: fetchImpl }),
    (error) => error.code === 'E_ESCALATION' && /not authenticated/.test(error.message),
  );
  await assert.rejects(
    checkUrl(LISTED_URLS[0], { filter: urlFilter({ trust }), hashesUrl: `${mirror.url}/hashes`, fetch: fetchImpl }),
    (error) => error.code === 'E_ESCALATION' && /not authenticated/.test(error.message),
  );
  // The gate hands the keys to confirm(), which passes them on.
  const seen = [];
  const gate = createGate({
    filter: { mightContain: () => true, trust },
    confirm: async (item, context) => {
      seen.push(context.keys);
      const result = await checkPassword(item, { filter: passwordFilter(), rangeUrl: `${mirror.url}/range`, fetch: fetchImpl, keys: context.keys, threshold: context.threshold, listId: context.listId });
      return result.breached;
    },
  });
  await assert.rejects(gate.check(LISTED_PASSWORDS[1]), (error) => error.code === 'E_ESCALATION');
  assert.deepEqual(seen, [keys]);
  assert.equal(gate.stats().errors, 1);
  assert.throws(() => createGate({ filter: { mightContain: () => true }, confirm: async () => true, keys: ['ed25519:nope'] }), TypeError);
});

test('keys: a threshold the endpoint does not meet, an unsigned manifest, no manifest, an expired one', async () => {
  const { genuine, forgedUnsigned } = endpoints.origins;
  // Two keys pinned, threshold 2: the endpoint is signed by one.
  await assert.rejects(
    checkPassword(CLEAN_PASSWORDS[0], { filter: passwordFilter(), rangeUrl: `${genuine}/range`, fetch: freshFetch(), keys: [keys[0], endpoints.attackerKey], threshold: 2, listId: LIST_ID }),
    (error) => error.code === 'E_ESCALATION' && error.cause?.code === 'E_SIGNATURE' && /2 of the 2/.test(error.message),
  );
  await assert.rejects(
    checkPassword(CLEAN_PASSWORDS[0], { filter: passwordFilter(), rangeUrl: `${forgedUnsigned}/range`, fetch: freshFetch(), keys, listId: LIST_ID }),
    (error) => error.code === 'E_ESCALATION' && error.cause?.code === 'E_SIGNATURE' && /unsigned/.test(error.message),
  );
  // Malformed keys are the caller's mistake, before any request.
  await assert.rejects(checkPassword('x', { filter: passwordFilter(), rangeUrl: `${genuine}/range`, keys: ['ed25519:short'] }), TypeError);
  await assert.rejects(checkUrl('http://x.example/', { filter: urlFilter(), hashesUrl: `${genuine}/hashes`, keys, threshold: 3 }), RangeError);
  // No manifest at all: the public service passes by its padding over https only; anything else is refused.
  const keySet = { ...keySetFromOptions(keys, 1, 'test'), listId: LIST_ID };
  assert.equal(await authorityOf(null, null, keySet, 'https://api.pwnedpasswords.com/range', 'range'), null);
  await assert.rejects(authorityOf(null, null, keySet, 'http://api.pwnedpasswords.com/range', 'range'), /no signed manifest/);
  await assert.rejects(authorityOf(null, null, keySet, `${forgedUnsigned}/nothing`, 'range'), /no signed manifest/);
  // An expired signed manifest (signed here with the publisher's key, so only the expiry fails).
  const { readSigningKeys, signAll } = await import('../../js/cli/signing.js');
  const [publisher] = await readSigningKeys([join(dir, 'publisher.key')]);
  const live = await (await fetch(`${genuine}/range/manifest.json`)).json();
  const expired = { ...live, expires: Math.floor(Date.now() / 1000) - 60 };
  expired.signatures = signAll(manifestBytes(expired), [publisher]);
  await assert.rejects(authorityOf({ ...expired, url: 'test' }, null, keySet, genuine, 'range'), /expired/);
  const fresh = { ...live, expires: Math.floor(Date.now() / 1000) + 3600 };
  fresh.signatures = signAll(manifestBytes(fresh), [publisher]);
  const authority = await authorityOf({ ...fresh, url: 'test' }, null, keySet, genuine, 'range');
  assert.equal(Buffer.from(authority.root).toString('hex'), live.root);
  // Any signed field changed breaks the signature (here the generation).
  await assert.rejects(authorityOf({ ...live, generation: live.generation + 1, url: 'test' }, null, keySet, genuine, 'range'), /do not verify/);
});

test('proofs: the tree against a naive computation; every flipped proof byte and every other leaf fails', () => {
  const hasher = merkleHasher((bytes) => createHash('sha256').update(bytes).digest());
  // A depth-8 tree with blocks of 4 bits, leaves at random positions.
  const shape = { depth: 8, blockBits: 4 };
  const leaves = new Map();
  for (let i = 0; i < 40; i++) leaves.set((i * 37 + 11) % 256, hasher.leaf(Uint8Array.of(i)));
  const naive = (height, at) => (height === 0
    ? leaves.get(at) ?? hasher.empty[0]
    : hasher.node(naive(height - 1, 2 * at), naive(height - 1, 2 * at + 1)));
  const top = new TreeTop(shape, hasher);
  const blocks = new Map();
  for (const leaf of [...leaves.keys()].sort((a, b) => a - b)) {
    const block = leaf >> 4;
    if (!blocks.has(block)) blocks.set(block, []);
    blocks.get(block).push({ leaf: leaf & 15, hash: leaves.get(leaf) });
  }
  for (const [block, entries] of blocks) top.add(block, blockNode(entries, shape, hasher));
  top.finish();
  assert.deepEqual(Buffer.from(top.root), Buffer.from(naive(8, 0)));
  for (let leaf = 0; leaf < 256; leaf++) {
    const proof = proofBytes(blocks.get(leaf >> 4) ?? [], top.siblings(leaf >> 4), shape);
    const own = leaves.get(leaf) ?? hasher.empty[0];
    assert.equal(verifyLeaf(proof, leaf, own, top.root, shape, hasher), null, `leaf ${leaf}`);
    // Dropping a present leaf (an empty reply for a listed prefix) fails.
    if (leaves.has(leaf)) assert.match(verifyLeaf(proof, leaf, hasher.empty[0], top.root, shape, hasher), /signed root/);
    if (leaf % 51 === 0) {
      const entries = blocks.get(leaf >> 4) ?? [];
      const mine = entries.findIndex((entry) => entry.leaf === (leaf & 15));
      for (let i = 0; i < proof.length; i++) {
        // The proof's hash for the verifier's own leaf is never read: the reply's leaf takes its place.
        if (mine >= 0 && i > mine * 33 && i < (mine + 1) * 33) continue;
        const flipped = proof.slice();
        flipped[i] ^= 1;
        assert.notEqual(verifyLeaf(flipped, leaf, own, top.root, shape, hasher), null, `leaf ${leaf}, byte ${i}`);
      }
      assert.match(verifyLeaf(proof.subarray(1), leaf, own, top.root, shape, hasher), /malformed/);
    }
  }
});

test('CLI: --sign needs a store to sign, and a readable Ed25519 key', () => {
  const serve = runCli(dir, ['serve', '--sign', 'publisher.key', '--static', '.']);
  assert.equal(serve.status, 64, serve.stderr);
  assert.match(serve.stderr, /--sign signs the endpoints/);
  const missing = runCli(dir, ['export-ranges', 'urls.bgs', '-o', 'out', '--sign', 'no-such.key']);
  assert.equal(missing.status, 66, missing.stderr);
  const notKey = runCli(dir, ['export-ranges', 'urls.bgs', '-o', 'out', '--sign', 'urls.bgs']);
  assert.equal(notKey.status, 65, notKey.stderr);
  assert.match(notKey.stderr, /not a private key/);
  const unsignedExpiry = runCli(dir, ['export-ranges', 'urls.bgs', '-o', 'out', '--expires-in', '1h']);
  assert.equal(unsignedExpiry.status, 64, unsignedExpiry.stderr);
});

test('export-ranges --sign --expires-in: a signed expiry clients honour', async () => {
  // The fixture's genuine static export was written with --expires-in 1h a few seconds ago.
  const { readFileSync } = await import('node:fs');
  const manifest = JSON.parse(readFileSync(join(dir, 'site', 'hashes', 'manifest.json'), 'utf8'));
  const now = Math.floor(Date.now() / 1000);
  assert.ok(manifest.expires > now + 3000 && manifest.expires <= now + 3600, String(manifest.expires));
  const keySet = { ...keySetFromOptions(keys, 1, 'test'), listId: LIST_ID };
  assert.ok(await authorityOf({ ...manifest, url: 'test' }, null, keySet, 'http://x', 'hashes'));
  // The expiry is signed: moving it is a signature failure, not a longer life.
  await assert.rejects(authorityOf({ ...manifest, expires: manifest.expires + 86400, url: 'test' }, null, keySet, 'http://x', 'hashes'), /do not verify/);
});

test('store lookups of a prefix shorter than the index read every bucket under it (a hashes proof reads its block)', async () => {
  const { writeStore, StoreReader } = await import('../../js/store.js');
  const { writeFileSync } = await import('node:fs');
  const records = Array.from({ length: 40000 }, (_, i) => ({ hash: createHash('sha256').update(`record ${i}`).digest(), count: 1 }));
  const path = join(dir, 'lookup.bgs');
  writeFileSync(path, writeStore(records, { hashType: 'sha256' }));
  const store = await StoreReader.open(path);
  try {
    assert.ok(store.indexBits > 8, `index bits ${store.indexBits}`);
    for (const [prefix, bits] of [[Uint8Array.of(0x00), 8], [Uint8Array.of(0xa7), 8], [Uint8Array.of(0xff), 8], [Uint8Array.of(0x5c), 4]]) {
      const expected = records.filter(({ hash }) => (hash[0] >> (8 - bits)) === (prefix[0] >> (8 - bits))).length;
      const found = await store.lookup(prefix, bits);
      assert.equal(found.length, expected, `prefix ${prefix[0].toString(16)}/${bits}`);
      assert.ok(found.every(({ hash }) => (hash[0] >> (8 - bits)) === (prefix[0] >> (8 - bits))));
    }
  } finally {
    await store.close();
  }
});

test('keys bind a check to one list, with or without a filter: another list, an older export, no expiry (issue 28)', async () => {
  const { genuine, otherList, older } = endpoints.origins;
  const password = LISTED_PASSWORDS[3];
  const url = LISTED_URLS[2];
  const refusedWith = (code) => (error) => error instanceof BloomgateError && error.code === 'E_ESCALATION' && error.cause?.code === code;
  // The recipe without the list id: a usage error that says where the id is.
  await assert.rejects(checkPassword(password, { rangeUrl: `${otherList}/range`, keys }),
    (error) => error instanceof TypeError && /listId/.test(error.message) && /export-ranges/.test(error.message));
  assert.throws(() => createGate({ filter: { mightContain: () => true }, confirm: async () => true, keys }), TypeError);
  // No filter: another list the same key signed never answers "not listed".
  for (const base of [otherList]) {
    await assert.rejects(checkPassword(password, { rangeUrl: `${base}/range`, keys, listId: LIST_ID, fetch: freshFetch() }), refusedWith('E_LIST'));
    await assert.rejects(checkUrl(url, { filter: urlFilter({ listId: OTHER_LIST_ID }), hashesUrl: `${base}/hashes`, keys, listId: LIST_ID, fetch: freshFetch() }),
      (error) => error.code === 'E_LIST');
  }
  // No filter: once generation 3 was believed in this page, generation 2 (the host's replay) is refused.
  const fetchImpl = freshFetch();
  const genuineAnswer = await checkPassword(password, { rangeUrl: `${genuine}/range`, keys, listId: LIST_ID, fetch: fetchImpl });
  assert.equal(genuineAnswer.breached, true);
  await assert.rejects(checkPassword(password, { rangeUrl: `${older}/range`, keys, listId: LIST_ID, fetch: fetchImpl }), refusedWith('E_STALE'));
  await assert.rejects(checkUrl(url, { filter: urlFilter(), hashesUrl: `${older}/hashes`, keys, fetch: freshFetch(), listId: LIST_ID }),
    (error) => error.code === 'E_ESCALATION');
  // serve --sign signs an expiry now (and renews it): about a day ahead.
  const served = await (await fetch(`${genuine}/range/manifest.json`)).json();
  const now = Date.now() / 1000;
  assert.ok(served.expires > now + 3600 && served.expires <= now + 86400 + 60, `serve --sign expires ${served.expires}`);
  // A signed manifest with no expiry (what serve --sign wrote before), or one signed for years: refused.
  const { readSigningKeys, signAll } = await import('../../js/cli/signing.js');
  const [publisher] = await readSigningKeys([join(dir, 'publisher.key')]);
  const keySet = { ...keySetFromOptions(keys, 1, 'test'), listId: LIST_ID };
  for (const expires of [0, Math.floor(now) + 400 * 86400]) {
    const edited = { ...served, expires };
    edited.signatures = signAll(manifestBytes(edited), [publisher]);
    await assert.rejects(authorityOf({ ...edited, url: 'test' }, null, keySet, genuine, 'range'), refusedWith('E_EXPIRED'));
  }
});
