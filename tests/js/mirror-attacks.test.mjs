/**
 * A malicious mirror against openFilter() in Node: the host serves what the
 * attacker likes (tests/js/helpers/mirror.mjs builds a genuine signed site
 * with the real CLI, and the attacker's forgeries). For every attack the
 * client refuses with the attack's own code, keeps the genuine generation it
 * holds, and every listed URL still reads "maybe"; a genuine update afterwards
 * is still accepted. The Update Framework's list: arbitrary content,
 * rollback (fresh clients bounded by expiry), indefinite freeze,
 * mix-and-match, endless data, slow retrieval, wrong list, key compromise
 * (threshold and rotation); plus a publisher's successor list.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { BloomgateError, checkUrl, createGate, directoryStorage, openFilter } from '../../js/index.js';
import {
  ADDED, LISTED, LIST, NEXT_LIST, OTHER_LIST, MirrorHost, assertAllListed, attacksOn, buildKit, listedUrl, manifestOf, withManifest,
} from './helpers/mirror.mjs';

let kit;
let scratch;
let host;
let dirs = 0;

before(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'bloomgate-mirror-'));
  kit = await buildKit(scratch);
  host = await new MirrorHost(kit.genuine[2]).start();
});
after(async () => {
  await host?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

const urlsOf = (g) => Array.from({ length: LISTED + (g - 1) * ADDED }, (_, i) => listedUrl(i));
const pinned = () => ({ keys: kit.pinned, threshold: 2, listId: LIST });
const newStore = () => directoryStorage(join(scratch, `store-${++dirs}`));

function recorder(live) {
  const events = [];
  for (const type of ['update', 'error', 'check', 'stale']) live.addEventListener(type, (event) => events.push({ type, ...event.detail }));
  return events;
}

/** A client that pins k1..k3 (2 of 3) and holds genuine generation 2. */
async function clientAt2(options = {}) {
  host.serve(kit.genuine[2]);
  const live = await openFilter(host.manifestUrl, { storage: newStore(), ...pinned(), timeoutMs: 5000, ...options });
  assert.equal(live.generation, 2);
  assert.equal(live.stats().signed, true);
  return live;
}

function assertGenuine(live, g, what) {
  assert.equal(live.listId, LIST, what);
  assert.equal(live.generation, g, what);
  assertAllListed(live.mightContainMany(urlsOf(g)), what);
}

describe('a malicious mirror: every attack refused, every listed URL still listed', () => {
  it('builds a genuine signed site with the real CLI', () => {
    const manifest = manifestOf(kit.genuine[3]);
    assert.equal(manifest.version, 2);
    assert.equal(manifest.signatures.length, 2);
    assert.ok(manifest.expires > Date.now() / 1000 + 6 * 86400, 'publish signs for 7 days by default');
  });

  for (const attack of (kitAttacks())) {
    it(`refuses ${attack.name} (${attack.code})`, async () => {
      const live = await clientAt2();
      const events = recorder(live);
      try {
        host.serve(attack.files(kit));
        const outcome = await live.refresh({ force: true });
        assert.equal(outcome.changed, false);
        const codes = events.filter((e) => e.type === 'error').map((e) => e.code);
        assert.ok(codes.includes(attack.code), `expected ${attack.code}, got ${codes.join(', ')}: ${outcome.error?.message}`);
        assert.ok(outcome.error instanceof BloomgateError);
        assertGenuine(live, 2, attack.name);
        // The genuine next generation is still taken afterwards.
        host.serve(kit.genuine[3]);
        const next = await live.refresh({ force: true });
        assert.equal(next.changed, true, next.error?.message);
        assertGenuine(live, 3, `${attack.name}, then the genuine generation 3`);
      } finally {
        live.close();
      }
    });
  }

  for (const attack of kitAttacks()) {
    it(`a fresh client meets ${attack.name}`, async () => {
      host.serve(attack.files(kit));
      let live;
      try {
        live = await openFilter(host.manifestUrl, { storage: false, ...pinned(), timeoutMs: 5000 });
      } catch (error) {
        assert.ok(error instanceof BloomgateError, String(error));
        assert.ok([attack.code, 'E_INTEGRITY', 'E_SIGNATURE', 'E_MANIFEST'].includes(error.code), `${error.code}: ${error.message}`);
        return;
      }
      // Accepted only when what it serves is genuine: then it is a genuine generation of the list asked for, complete.
      // Another list (even one the same keys signed) is never a pass.
      try {
        assert.equal(live.listId, LIST, `a fresh client pinned to ${LIST} installed list ${live.listId}`);
        assert.ok([1, 3].includes(live.generation), `accepted generation ${live.generation}`);
        assertGenuine(live, live.generation, attack.name);
      } finally {
        live.close();
      }
    });
  }
});

function kitAttacks() {
  // Attacks are built from the kit, which exists only once `before` ran: wrap each in a thunk.
  const names = [
    'arbitrary content: a forged full file with a matching unsigned manifest',
    'arbitrary content: a forged file and delta, the manifest signed by the attacker\'s own key',
    'key compromise: one stolen key of a 2-of-3 set signs a forgery',
    'a genuine manifest with a signature copied onto a forged one (file and delta swapped, digests edited)',
    'mix-and-match: the genuine generation-3 manifest, the forged file served under its name',
    'mix-and-match: the genuine generation-3 manifest, generation 1 served as generation 3',
    'jump to the highest generation (2^53-1), signed by the attacker',
    'rollback: the genuine generation-1 manifest, replayed',
    'wrong list: another genuine list of the same publisher',
    'endless data: an unsigned manifest claiming a 3 GB file beside a tiny delta',
    'a truncated manifest',
    'a malformed signature',
    'a genuine manifest with its generation raised (signature no longer matches)',
    'a genuine manifest with its expiry pushed back (signature no longer matches)',
  ];
  const codes = ['E_SIGNATURE', 'E_SIGNATURE', 'E_SIGNATURE', 'E_SIGNATURE', 'E_INTEGRITY', 'E_INTEGRITY', 'E_SIGNATURE', 'E_STALE',
    'E_LIST', 'E_SIGNATURE', 'E_MANIFEST', 'E_SIGNATURE', 'E_SIGNATURE', 'E_SIGNATURE'];
  return names.map((name, i) => ({
    name,
    code: codes[i],
    files: (k) => {
      const found = attacksOn(k).find((attack) => attack.name === name);
      assert.ok(found, `attack ${name} is defined in helpers/mirror.mjs`);
      assert.equal(found.code, codes[i]);
      return found.files;
    },
  }));
}

describe('freeze, rollback of a fresh client, and staleness', () => {
  it('a fresh client refuses an expired genuine manifest (a replay works only for its lifetime)', async () => {
    host.serve(kit.short);
    const expires = manifestOf(kit.short).expires * 1000;
    await assert.rejects(openFilter(host.manifestUrl, { storage: false, ...pinned(), now: () => expires + 1 }),
      (error) => error.code === 'E_EXPIRED' && /expired at/.test(error.message));
    const live = await openFilter(host.manifestUrl, { storage: false, ...pinned(), now: () => expires - 1000 });
    assertGenuine(live, 1, 'before its expiry');
    live.close();
  });

  it('a frozen site: stale after the expiry, a stale event, stale results; onStale error turns checks into errors', async () => {
    host.serve(kit.short);
    const expires = manifestOf(kit.short).expires * 1000;
    let now = Date.now();
    const live = await openFilter(host.manifestUrl, { storage: false, ...pinned(), now: () => now });
    const events = recorder(live);
    assert.equal(live.stale, false);
    assert.equal(live.stats().expires, expires);
    now = expires + 100 * 365 * 86400 * 1000; // a hundred years of the same manifest
    const outcome = await live.refresh({ force: true });
    assert.equal(outcome.error?.code, 'E_EXPIRED');
    assert.equal(outcome.stale, true);
    assert.equal(live.stats().stale, true);
    await new Promise((resolve) => setTimeout(resolve, 0));
    assert.equal(events.filter((e) => e.type === 'stale').length, 1, 'one stale event');
    // 'flag' (the default): it still answers, and every listed URL is still listed.
    assertGenuine(live, 1, 'stale but answering');
    // Every result of a check through the live filter says so.
    const listed = await checkUrl(listedUrl(7), { filter: live });
    assert.deepEqual([listed.listed, listed.escalated, listed.stale], [true, false, true]);
    assert.equal((await checkUrl('https://clean.example/', { filter: live })).stale, true);
    const gate = createGate({ filter: live, confirm: async () => true });
    assert.equal((await gate.check(listedUrl(3))).stale, true);
    assert.equal((await gate.check('https://clean.example/')).stale, true);
    live.close();
  });

  it("onStale: 'error' makes every query throw E_EXPIRED once the copy outlives its manifest", async () => {
    host.serve(kit.short);
    const expires = manifestOf(kit.short).expires * 1000;
    let now = expires - 5000;
    const live = await openFilter(host.manifestUrl, { storage: false, ...pinned(), now: () => now, onStale: 'error' });
    assert.equal(live.mightContain(listedUrl(1)), true);
    assert.equal((await checkUrl(listedUrl(1), { filter: live })).stale, undefined, 'fresh: no flag');
    now = expires;
    assert.throws(() => live.mightContain(listedUrl(1)), (error) => error.code === 'E_EXPIRED');
    await assert.rejects(checkUrl(listedUrl(1), { filter: live }), (error) => error.code === 'E_EXPIRED');
    assert.throws(() => live.mightContainMany([listedUrl(1)]), (error) => error.code === 'E_EXPIRED');
    // A genuine, fresher manifest of a later generation ends it.
    host.serve(kit.genuine[3]);
    now = Date.now();
    const outcome = await live.refresh({ force: true });
    assert.equal(outcome.changed, true, outcome.error?.message);
    assert.equal(live.mightContain(listedUrl(LISTED + ADDED)), true);
    assert.equal(live.stale, false);
    live.close();
  });
});

describe('the stale event comes unasked', () => {
  it('fires at the expiry of the newest manifest believed, with no query or refresh', async () => {
    const expires = Math.ceil(Date.now() / 1000) + 1; // an unsigned client still honours a version-2 expiry
    host.serve(withManifest(kit.genuine[2], (m) => ({ ...m, expires })));
    const live = await openFilter(host.manifestUrl, { storage: false });
    const fired = await new Promise((resolve) => {
      const timer = setTimeout(() => resolve(null), 4000);
      live.addEventListener('stale', (event) => {
        clearTimeout(timer);
        resolve(event.detail);
      }, { once: true });
    });
    assert.equal(fired?.expires, expires * 1000);
    assert.equal(live.stale, true);
    live.close();
  });
});

describe('successors, key rotation and key compromise', () => {
  it('a signed successor moves a client that opted in to the new list; an unsigned client is told why it does not', async () => {
    const live = await clientAt2({ followSuccessors: true });
    const events = recorder(live);
    host.serve(kit.successor);
    const outcome = await live.refresh({ force: true });
    assert.equal(outcome.changed, true, outcome.error?.message);
    assert.equal(outcome.successor, true);
    assert.equal(live.listId, NEXT_LIST);
    assertAllListed(live.mightContainMany(Array.from({ length: LISTED + 3 * ADDED }, (_, i) => listedUrl(i))), 'the successor list');
    assert.ok(events.some((e) => e.type === 'update' && e.successor === true));
    live.close();

    host.serve(kit.genuine[2]);
    const unsigned = await openFilter(host.manifestUrl, { storage: false });
    host.serve(kit.successor);
    const refused = await unsigned.refresh({ force: true });
    assert.equal(refused.error?.code, 'E_LIST');
    assert.match(refused.error.message, /pass keys/);
    assert.equal(unsigned.listId, LIST);
    unsigned.close();
  });

  it('a client follows a rotation signed by the old keys, then refuses what only the old keys sign', async () => {
    host.serve(kit.genuine[3]);
    const store = newStore();
    const live = await openFilter(host.manifestUrl, { storage: store, ...pinned() });
    host.serve(kit.rotated);
    const outcome = await live.refresh({ force: true });
    assert.equal(outcome.error, undefined, outcome.error?.message);
    assert.equal(live.stats().keySet, 1);
    assert.deepEqual(live.trust, { keys: [kit.keys.k4], threshold: 1, listId: LIST });
    // k1 and k2 were stolen after the rotation: what they sign now is refused.
    host.serve(withManifest(kit.genuine[3], (m) => m)); // the old keys' manifest (key set 0)
    const old = await live.refresh({ force: true });
    assert.equal(old.error?.code, 'E_SIGNATURE');
    assert.match(old.error.message, /replaced/);
    assertGenuine(live, 3, 'after the rotation');
    live.close();
    // After a restart the persisted record keeps key set 1.
    const again = await openFilter(host.manifestUrl, { storage: store, ...pinned() });
    assert.equal(again.stats().keySet, 1);
    const restarted = await again.refresh({ force: true });
    assert.equal(restarted.error?.code, 'E_SIGNATURE');
    again.close();
  });

  it('a rotation the trusted keys did not sign is ignored', async () => {
    host.serve(kit.genuine[3]);
    const live = await openFilter(host.manifestUrl, { storage: false, ...pinned() });
    const keysJson = JSON.parse(kit.rotated.get('/keys.json').toString());
    keysJson.rotations[0].keys = [kit.keys.attacker];
    const tampered = new Map([...kit.forged.signedByAttacker, ['/keys.json', Buffer.from(JSON.stringify(keysJson))]]);
    host.serve(withManifest(tampered, (m) => ({ ...m, keySet: 1, keys: 'keys.json' })));
    const outcome = await live.refresh({ force: true });
    assert.equal(outcome.error?.code, 'E_SIGNATURE');
    assert.equal(live.stats().keySet, 0);
    assertGenuine(live, 3, 'tampered key history');
    live.close();
  });
});

describe('fail-safe transport', () => {
  it('slow retrieval: a host that drips bytes ends in E_TIMEOUT, the copy kept', async () => {
    const live = await clientAt2({ timeoutMs: 800 });
    host.serve(kit.genuine[3]);
    host.dripMs = 100;
    try {
      const started = Date.now();
      const outcome = await live.refresh({ force: true });
      assert.equal(outcome.error?.code, 'E_TIMEOUT', outcome.error?.message);
      assert.ok(Date.now() - started < 4000, 'bounded by timeoutMs');
      assertGenuine(live, 2, 'after a dripping host');
    } finally {
      host.dripMs = 0;
      live.close();
    }
  });

  it('endless data without keys: a claimed size over maxBytes is refused before any download', async () => {
    host.serve(kit.genuine[2]);
    const live = await openFilter(host.manifestUrl, { storage: false });
    assert.equal(live.stats().signed, false);
    host.serve(withManifest(kit.forged.unsigned, (m) => ({ ...m, full: { ...m.full, length: 3e9 } })));
    host.requests.length = 0;
    const outcome = await live.refresh({ force: true });
    assert.equal(outcome.error?.code, 'E_TOO_LARGE');
    assert.deepEqual(host.requests, ['/manifest.json'], 'nothing but the manifest was fetched');
    live.close();
  });

  it('plain http: is refused off loopback unless the caller opts in', async () => {
    await assert.rejects(openFilter('http://filters.example/manifest.json', { storage: false }), (error) => error.code === 'E_INSECURE');
    let asked = null;
    const fakeFetch = async (url) => {
      asked = String(url);
      return new Response('{}', { status: 200 });
    };
    await assert.rejects(openFilter('http://filters.example/manifest.json', { storage: false, allowHttp: true, fetch: fakeFetch }),
      (error) => error.code === 'E_MANIFEST');
    assert.equal(asked, 'http://filters.example/manifest.json');
  });

  it('a persisted copy of another list is discarded and the genuine list fetched', async () => {
    const dir = join(scratch, `store-${++dirs}`);
    // Persist the other list's file under this manifest's key, as a copied-in file would be.
    host.serve(kit.other);
    const otherLive = await openFilter(host.manifestUrl, { storage: directoryStorage(dir), ...pinned(), listId: OTHER_LIST });
    otherLive.close();
    host.serve(kit.genuine[2]);
    const live = await openFilter(host.manifestUrl, { storage: directoryStorage(dir), ...pinned(), listId: LIST });
    assertGenuine(live, 2, 'after discarding the other list');
    live.close();
  });

  it('a valid file of another list copied over the persisted one is discarded, with or without keys', async () => {
    for (const options of [pinned(), {}]) {
      const dir = join(scratch, `store-${++dirs}`);
      host.serve(kit.genuine[2]);
      const first = await openFilter(host.manifestUrl, { storage: directoryStorage(dir), ...options });
      first.close();
      const name = createHash('sha256').update(host.manifestUrl).digest('hex').slice(0, 40);
      const otherFile = kit.other.get(`/${manifestOf(kit.other).full.url}`);
      writeFileSync(join(dir, `${name}.bgf`), otherFile); // the meta beside it still names LIST's bytes
      const codes = [];
      const live = await openFilter(host.manifestUrl, { storage: directoryStorage(dir), ...options, onError: (error) => codes.push(error.code) });
      assert.deepEqual(codes, ['E_LIST'], 'the copy is discarded, and says why');
      assert.equal(live.stats().source, 'full', 'fetched again');
      assertGenuine(live, 2, 'after discarding the other list\'s file');
      live.close();
    }
  });

  it('unsigned clients work as before and say so', async () => {
    host.serve(kit.genuine[2]);
    const live = await openFilter(host.manifestUrl, { storage: false });
    const events = recorder(live);
    assert.equal(live.stats().signed, false);
    assert.equal(live.trust, null);
    host.serve(kit.genuine[3]);
    await live.refresh({ force: true });
    assert.equal(events.find((e) => e.type === 'update')?.signed, false);
    live.close();
  });
});
