/**
 * A client with keys is bound to the list it names (issue 28): the rows of
 * "trust, round two" against openFilter() in Node, on the mirror harness's
 * genuine sites (tests/js/helpers/mirror.mjs, made with the real CLI). One
 * publisher key signs several lists; a host that holds every byte but no key
 * replays what that key once signed. Each row ends with every listed URL
 * still "maybe" and the genuine list still accepted afterwards.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { BloomgateError, directoryStorage, openFilter } from '../../js/index.js';
import {
  ADDED, LISTED, LIST, NEXT_LIST, OTHER_LIST, MirrorHost, assertAllListed, buildKit, listedUrl, manifestOf, resigned,
} from './helpers/mirror.mjs';

let kit;
let scratch;
let host;
let dirs = 0;

before(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'bloomgate-binding-'));
  kit = await buildKit(scratch);
  host = await new MirrorHost(kit.genuine[2]).start();
});
after(async () => {
  await host?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

const urlsOf = (count) => Array.from({ length: count }, (_, i) => listedUrl(i));
const keysOnly = () => ({ keys: kit.pinned, threshold: 2 });
const pinned = (extra = {}) => ({ ...keysOnly(), listId: LIST, timeoutMs: 5000, ...extra });
const newStore = () => directoryStorage(join(scratch, `store-${++dirs}`));

function assertGenuine(live, g, what) {
  assert.equal(live.listId, LIST, what);
  assert.equal(live.generation, g, what);
  assertAllListed(live.mightContainMany(urlsOf(LISTED + (g - 1) * ADDED)), what);
}

describe('one key, two lists: a client is bound to the list it names', () => {
  it("the README's old form, keys without listId, is a usage error that says where the id is", async () => {
    host.serve(kit.other);
    await assert.rejects(openFilter(host.manifestUrl, { storage: false, ...keysOnly() }),
      (error) => error instanceof TypeError && /pass listId/.test(error.message) && /bloomgate publish/.test(error.message));
    await assert.rejects(openFilter(host.manifestUrl, { storage: false, followSuccessors: true }), TypeError);
  });

  it('a fresh client pinned to LIST meets the other list the same keys signed: refused, nothing saved, the genuine list taken after', async () => {
    const storage = newStore();
    host.serve(kit.other);
    await assert.rejects(openFilter(host.manifestUrl, { storage, ...pinned() }),
      (error) => error instanceof BloomgateError && error.code === 'E_LIST' && error.message.includes(OTHER_LIST));
    assert.equal(await storage.get(host.manifestUrl), null, 'nothing persisted');
    host.serve(kit.genuine[3]);
    const live = await openFilter(host.manifestUrl, { storage, ...pinned() });
    assertGenuine(live, 3, 'the genuine list, after the other was refused');
    live.close();
    // A restart answers from the genuine copy.
    host.serve(kit.other);
    const again = await openFilter(host.manifestUrl, { storage, ...pinned() });
    assert.equal(again.stats().source, 'persisted');
    assertGenuine(again, 3, 'restarted');
    const outcome = await again.refresh({ force: true });
    assert.equal(outcome.error?.code, 'E_LIST');
    assertGenuine(again, 3, 'after refusing the other list on refresh');
    again.close();
  });
});

describe('successors: followed only when asked for, never back to an old one', () => {
  it('a pinned client that did not opt in refuses a signed successor and says how to follow it', async () => {
    host.serve(kit.genuine[3]);
    const live = await openFilter(host.manifestUrl, { storage: false, ...pinned() });
    host.serve(kit.successor);
    const outcome = await live.refresh({ force: true });
    assert.equal(outcome.error?.code, 'E_LIST');
    assert.match(outcome.error.message, /followSuccessors/);
    assertGenuine(live, 3, 'kept');
    live.close();
  });

  it('an opted-in client follows A -> B -> A, then refuses B\'s old manifest replayed (E_STALE), restarts included', async () => {
    const storage = newStore();
    host.serve(kit.genuine[3]);
    const live = await openFilter(host.manifestUrl, { storage, ...pinned({ followSuccessors: true }) });
    host.serve(kit.successor);
    assert.equal((await live.refresh({ force: true })).changed, true);
    assert.equal(live.listId, NEXT_LIST);
    host.serve(kit.returned);
    const back = await live.refresh({ force: true });
    assert.equal(back.changed, true, back.error?.message);
    assertGenuine(live, 4, 'back on LIST');
    host.serve(kit.successor);
    const replay = await live.refresh({ force: true });
    assert.equal(replay.changed, false);
    assert.equal(replay.error?.code, 'E_STALE', replay.error?.message);
    assertGenuine(live, 4, 'after the replayed successor record');
    live.close();
    // Reopened: the persisted LIST generation 4 answers, and the replay is refused again.
    const again = await openFilter(host.manifestUrl, { storage, ...pinned({ followSuccessors: true }) });
    assert.equal(again.stats().source, 'persisted');
    const refused = await again.refresh({ force: true });
    assert.equal(refused.error?.code, 'E_STALE');
    assertGenuine(again, 4, 'restarted, replay refused');
    again.close();
  });

  it('a successor copy persisted under an opt-in is reopened only by a client that still opts in', async () => {
    const storage = newStore();
    host.serve(kit.genuine[3]);
    const live = await openFilter(host.manifestUrl, { storage, ...pinned({ followSuccessors: true }) });
    host.serve(kit.successor);
    await live.refresh({ force: true });
    assert.equal(live.listId, NEXT_LIST);
    live.close();
    const reopened = await openFilter(host.manifestUrl, { storage, ...pinned({ followSuccessors: true }) });
    assert.equal(reopened.stats().source, 'persisted');
    assert.equal(reopened.listId, NEXT_LIST);
    assert.deepEqual(reopened.trust?.listId, NEXT_LIST, 'escalations are bound to the list followed');
    reopened.close();
    const codes = [];
    host.serve(kit.genuine[3]);
    const strict = await openFilter(host.manifestUrl, { storage, ...pinned(), onError: (error) => codes.push(error.code) });
    assert.ok(codes.includes('E_LIST'), codes.join());
    assertGenuine(strict, 3, 'without the opt-in the pin holds');
    strict.close();
  });
});

describe('key history: a record the host appends cannot stop a genuine rotation', () => {
  it('a record repeating the current keys after the genuine rotation changes nothing', async () => {
    const history = JSON.parse(kit.rotated.get('/keys.json').toString('utf8'));
    const last = history.rotations[history.rotations.length - 1];
    history.rotations.push({ seq: last.seq + 1, threshold: last.threshold, keys: last.keys, signatures: [] });
    const tampered = new Map(kit.rotated);
    tampered.set('/keys.json', Buffer.from(JSON.stringify(history)));
    host.serve(kit.genuine[3]);
    const live = await openFilter(host.manifestUrl, { storage: false, ...pinned() });
    host.serve(tampered);
    const outcome = await live.refresh({ force: true });
    assert.equal(outcome.error, undefined, outcome.error?.message);
    assert.equal(live.stats().keySet, last.seq, 'on the genuine key set, not the appended one');
    assertGenuine(live, 3, 'after the rotation');
    live.close();
  });
});

describe('time: expiries no publisher signs, and a manifest that lapses while its files download', () => {
  it('a genuinely signed expiry of 2^53-1 or 400 days is refused; 365 days is taken', async () => {
    for (const [expires, code] of [[2 ** 53 - 1, 'E_EXPIRED'], [Math.floor(Date.now() / 1000) + 400 * 86400, 'E_EXPIRED'], [Math.floor(Date.now() / 1000) + 365 * 86400, null]]) {
      host.serve(await resigned(kit, kit.genuine[3], (m) => ({ ...m, expires }), ['k1', 'k2']));
      const attempt = openFilter(host.manifestUrl, { storage: false, ...pinned() });
      if (code === null) {
        const live = await attempt;
        assertGenuine(live, 3, `expires ${expires}`);
        live.close();
      } else {
        await assert.rejects(attempt, (error) => error.code === code && /366 days/.test(error.message), String(expires));
      }
    }
  });

  it('a manifest that expires while its file downloads is not installed; the filter in use stays', async () => {
    host.serve(kit.genuine[2]);
    let late = false;
    let armed = false;
    const expires = manifestOf(kit.genuine[3]).expires * 1000;
    const now = () => (late ? expires + 1000 : Date.now());
    const slowFetch = async (url, init) => {
      if (armed && (String(url).endsWith('.bgf') || String(url).endsWith('.bgd'))) late = true;
      return fetch(url, init);
    };
    const live = await openFilter(host.manifestUrl, { storage: false, ...pinned(), now, fetch: slowFetch });
    assertGenuine(live, 2, 'opened before the clock moved');
    armed = true;
    host.serve(kit.genuine[3]);
    const outcome = await live.refresh({ force: true });
    assert.equal(outcome.changed, false);
    assert.equal(outcome.error?.code, 'E_EXPIRED', outcome.error?.message);
    assert.match(outcome.error.message, /while its files downloaded/);
    assertGenuine(live, 2, 'kept');
    live.close();
  });
});
