/**
 * The malicious mirror in Chromium, Firefox and WebKit (tests/browser/engines/), the same
 * assertions in each: the same kit and the same attacks as tests/js/mirror-attacks.test.mjs
 * (tests/js/helpers/mirror.mjs), played against openFilter() in a page that imports the library
 * by path and verifies with the browser's own WebCrypto Ed25519. For every attack the page
 * refuses with the attack's code, keeps genuine generation 2, every listed URL still reads
 * "maybe", and the genuine generation 3 is taken afterwards. Also: a page whose WebCrypto has no
 * Ed25519 (importKey refused by a script the page server puts before the module, as an older
 * engine would) verifies with the JavaScript verifier and refuses the same forgeries; a frozen
 * site turns the filter stale, and a signed successor moves it on.
 *
 * Run: node --test tests/browser/mirror-attacks.test.mjs   (some engines: BG_ENGINES=firefox,webkit)
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';

import { ADDED, LISTED, LIST, NEXT_LIST, OTHER_LIST, MirrorHost, attacksOn, buildKit, listedUrl, manifestOf, resigned } from '../js/helpers/mirror.mjs';
import { launchEngine } from './engines/index.mjs';
import { eachEngine, openReady, startLibraryServer } from './helpers/each-engine.mjs';

const MODULE = `<script type="module">
  import * as bloomgate from '/bloomgate/js/index.js';
  window.bloomgate = bloomgate;
  document.documentElement.dataset.ready = 'yes';
</script>`;
const PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>mirror</title><link rel="icon" href="data:,">
${MODULE}</head><body>mirror attacks</body></html>`;
/** An engine without Ed25519 in WebCrypto (Chrome < 137, Firefox < 129, Safari < 17): importKey refuses it, before any module runs. */
const NO_ED25519_PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>mirror, no Ed25519</title><link rel="icon" href="data:,">
<script>
  const importKey = crypto.subtle.importKey.bind(crypto.subtle);
  crypto.subtle.importKey = (format, key, algorithm, ...rest) => (String(algorithm && algorithm.name || algorithm).toLowerCase() === 'ed25519'
    ? Promise.reject(new DOMException('Algorithm: Unrecognized name', 'NotSupportedError'))
    : importKey(format, key, algorithm, ...rest));
</script>
${MODULE}</head><body>mirror attacks, no Ed25519</body></html>`;

let scratch;
let kit;
let pages;

before(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'bloomgate-mirror-browser-'));
  kit = await buildKit(scratch);
  pages = await startLibraryServer({ '/': PAGE, '/no-ed25519': NO_ED25519_PAGE });
});

after(async () => {
  await pages?.close();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

eachEngine('a malicious mirror against openFilter', { timeout: 300000 }, (name) => {
  let host;
  let engine;
  let page;

  before(async () => {
    host = await new MirrorHost(kit.genuine[2]).start();
    engine = await launchEngine(name);
    page = await engine.newPage();
    await openReady(page, `${pages.origin}/`);
  });

  after(async () => {
    await engine?.close();
    await host?.stop();
  });

  const urlsOf = (g) => Array.from({ length: LISTED + (g - 1) * ADDED }, (_, i) => listedUrl(i));

  /** Open at genuine generation 2 in the page (pinned k1..k3, 2 of 3), then serve `files` and refresh. */
  async function attack(files, options = {}) {
    host.serve(kit.genuine[2]);
    await page.evaluate(async ({ url, keys, listId, options: extra }) => {
      window.live?.close();
      window.codes = [];
      window.live = await window.bloomgate.openFilter(url, { storage: false, keys, threshold: 2, listId, ...extra });
      window.live.addEventListener('error', (event) => window.codes.push(event.detail.code));
    }, { url: host.manifestUrl, listId: LIST, keys: kit.pinned, options });
    host.serve(files);
    return page.evaluate(async () => {
      const outcome = await window.live.refresh({ force: true });
      return { changed: outcome.changed, code: outcome.error?.code ?? null, codes: window.codes, generation: window.live.generation, signed: window.live.stats().signed };
    });
  }

  const answers = (urls) => page.evaluate((list) => window.live.mightContainMany(list), urls);

  for (const { name, code } of [
    { name: 'arbitrary content: a forged full file with a matching unsigned manifest', code: 'E_SIGNATURE' },
    { name: 'arbitrary content: a forged file and delta, the manifest signed by the attacker\'s own key', code: 'E_SIGNATURE' },
    { name: 'key compromise: one stolen key of a 2-of-3 set signs a forgery', code: 'E_SIGNATURE' },
    { name: 'a genuine manifest with a signature copied onto a forged one (file and delta swapped, digests edited)', code: 'E_SIGNATURE' },
    { name: 'mix-and-match: the genuine generation-3 manifest, the forged file served under its name', code: 'E_INTEGRITY' },
    { name: 'mix-and-match: the genuine generation-3 manifest, generation 1 served as generation 3', code: 'E_INTEGRITY' },
    { name: 'jump to the highest generation (2^53-1), signed by the attacker', code: 'E_SIGNATURE' },
    { name: 'rollback: the genuine generation-1 manifest, replayed', code: 'E_STALE' },
    { name: 'wrong list: another genuine list of the same publisher', code: 'E_LIST' },
    { name: 'endless data: an unsigned manifest claiming a 3 GB file beside a tiny delta', code: 'E_SIGNATURE' },
    { name: 'a truncated manifest', code: 'E_MANIFEST' },
    { name: 'a malformed signature', code: 'E_SIGNATURE' },
    { name: 'a genuine manifest with its generation raised (signature no longer matches)', code: 'E_SIGNATURE' },
    { name: 'a genuine manifest with its expiry pushed back (signature no longer matches)', code: 'E_SIGNATURE' },
  ]) {
    it(`refuses ${name} (${code})`, async () => {
      const found = attacksOn(kit).find((entry) => entry.name === name);
      assert.ok(found, name);
      const outcome = await attack(found.files);
      assert.equal(outcome.changed, false);
      assert.ok(outcome.codes.includes(code), `expected ${code}, got ${outcome.codes.join(', ')}`);
      assert.equal(outcome.generation, 2);
      assert.equal(outcome.signed, true);
      const listed = await answers(urlsOf(2));
      assert.equal(listed.filter((answer) => !answer).length, 0, 'every listed URL still reads "maybe"');
      host.serve(kit.genuine[3]);
      const next = await page.evaluate(async () => {
        const result = await window.live.refresh({ force: true });
        return { changed: result.changed, generation: window.live.generation, code: result.error?.code ?? null };
      });
      assert.deepEqual(next, { changed: true, generation: 3, code: null });
      assert.equal((await answers(urlsOf(3))).filter((answer) => !answer).length, 0);
    });
  }

  it('uses the browser\'s own Ed25519', async () => {
    await attack(kit.genuine[2]);
    assert.equal(await page.evaluate(() => window.live.stats().verifier), 'webcrypto');
  });

  it('where WebCrypto has no Ed25519, the verifier written here takes over and refuses the same forgeries', async () => {
    const tab = await engine.newPage();
    try {
      await openReady(tab, `${pages.origin}/no-ed25519`);
      const run = (files) => {
        host.serve(files);
        return tab.evaluate(async ({ url, keys, listId }) => {
          try {
            const live = await window.bloomgate.openFilter(url, { storage: false, keys, threshold: 2, listId });
            const result = { generation: live.generation, verifier: live.stats().verifier, signed: live.stats().signed };
            live.close();
            return result;
          } catch (error) {
            return { code: error.code };
          }
        }, { url: host.manifestUrl, listId: LIST, keys: kit.pinned });
      };
      assert.deepEqual(await run(kit.genuine[3]), { generation: 3, verifier: 'js', signed: true });
      assert.deepEqual(await run(kit.forged.signedByAttacker), { code: 'E_SIGNATURE' });
      assert.deepEqual(await run(kit.forged.oneKey), { code: 'E_SIGNATURE' });
    } finally {
      await tab.close();
    }
  });

  it('a frozen site: stale past the expiry, one stale event, answers flagged; onStale error throws E_EXPIRED', async () => {
    host.serve(kit.short);
    const expires = manifestOf(kit.short).expires * 1000;
    const result = await page.evaluate(async ({ url, keys, listId, expires: at }) => {
      window.live?.close();
      let now = at - 10000;
      const events = [];
      const live = await window.bloomgate.openFilter(url, { storage: false, keys, threshold: 2, listId, now: () => now });
      live.addEventListener('stale', (event) => events.push(event.detail.expires));
      const before = live.stale;
      now = at + 100 * 365 * 86400 * 1000;
      const outcome = await live.refresh({ force: true });
      await new Promise((resolve) => setTimeout(resolve, 0));
      let strictNow = at - 1000;
      const strict = await window.bloomgate.openFilter(url, { storage: false, keys, threshold: 2, listId, now: () => strictNow, onStale: 'error' });
      const fresh = strict.mightContain('https://phish-1.example/login/index.html');
      strictNow = at;
      let thrown = null;
      try {
        strict.mightContain('https://phish-1.example/login/index.html');
      } catch (error) {
        thrown = error.code;
      }
      strict.close();
      window.live = live;
      return { before, code: outcome.error?.code, stale: outcome.stale, statsStale: live.stats().stale, events: events.length, fresh, thrown };
    }, { url: host.manifestUrl, listId: LIST, keys: kit.pinned, expires });
    assert.deepEqual(result, { before: false, code: 'E_EXPIRED', stale: true, statsStale: true, events: 1, fresh: true, thrown: 'E_EXPIRED' });
    assert.equal((await answers(urlsOf(1))).filter((answer) => !answer).length, 0, 'stale but still answering every listed URL');
  });

  it('a signed successor moves the page to the new list when it opted in (followSuccessors)', async () => {
    const outcome = await attack(kit.successor, { followSuccessors: true });
    assert.equal(outcome.code, null);
    assert.equal(outcome.changed, true);
    assert.equal(await page.evaluate(() => window.live.listId), NEXT_LIST);
    const all = Array.from({ length: LISTED + 3 * ADDED }, (_, i) => listedUrl(i));
    assert.equal((await answers(all)).filter((answer) => !answer).length, 0);
    assert.notEqual(NEXT_LIST, LIST);
  });

  /** A fresh page's openFilter against `files`: the list and generation it took, or the refusal's code. */
  const fresh = (files, options = {}) => {
    host.serve(files);
    return page.evaluate(async ({ url, keys, options: extra }) => {
      try {
        const live = await window.bloomgate.openFilter(url, { storage: false, keys, threshold: 2, ...extra });
        const taken = { listId: live.listId, generation: live.generation };
        live.close();
        return taken;
      } catch (error) {
        return { name: error.name, code: error.code ?? null, message: error.message };
      }
    }, { url: host.manifestUrl, keys: kit.pinned, options });
  };

  it('one key, two lists: keys without listId are a TypeError; a page pinned to LIST refuses the other list (E_LIST)', async () => {
    const bare = await fresh(kit.other);
    assert.equal(bare.name, 'TypeError');
    assert.match(bare.message, /listId/);
    assert.equal((await fresh(kit.other, { listId: LIST })).code, 'E_LIST');
    assert.deepEqual(await fresh(kit.genuine[3], { listId: LIST }), { listId: LIST, generation: 3 });
    assert.deepEqual(await fresh(kit.other, { listId: OTHER_LIST }), { listId: OTHER_LIST, generation: 50 });
  });

  it('successors: refused without followSuccessors; A -> B -> A then B replayed is E_STALE', async () => {
    const plain = await attack(kit.successor);
    assert.equal(plain.code, 'E_LIST');
    assert.equal(plain.generation, 2);
    await attack(kit.successor, { followSuccessors: true });
    host.serve(kit.returned);
    const back = await page.evaluate(async () => {
      const outcome = await window.live.refresh({ force: true });
      return { changed: outcome.changed, listId: window.live.listId, generation: window.live.generation };
    });
    assert.deepEqual(back, { changed: true, listId: LIST, generation: 4 });
    host.serve(kit.successor);
    const replay = await page.evaluate(async () => {
      const outcome = await window.live.refresh({ force: true });
      return { changed: outcome.changed, code: outcome.error?.code ?? null, listId: window.live.listId, generation: window.live.generation };
    });
    assert.deepEqual(replay, { changed: false, code: 'E_STALE', listId: LIST, generation: 4 });
    assert.equal((await answers(urlsOf(4))).filter((answer) => !answer).length, 0);
  });

  it('a key-history record the host appends (the current keys again) does not stop the genuine rotation', async () => {
    const history = JSON.parse(kit.rotated.get('/keys.json').toString('utf8'));
    const last = history.rotations.at(-1);
    history.rotations.push({ seq: last.seq + 1, threshold: last.threshold, keys: last.keys, signatures: [] });
    const tampered = new Map(kit.rotated);
    tampered.set('/keys.json', Buffer.from(JSON.stringify(history)));
    await attack(kit.genuine[3]);
    host.serve(tampered);
    const outcome = await page.evaluate(async () => {
      const result = await window.live.refresh({ force: true });
      return { code: result.error?.code ?? null, keySet: window.live.stats().keySet, generation: window.live.generation };
    });
    assert.deepEqual(outcome, { code: null, keySet: last.seq, generation: 3 });
  });

  it('a genuinely signed expiry of 2^53-1 is refused (E_EXPIRED)', async () => {
    const forever = await resigned(kit, kit.genuine[3], (m) => ({ ...m, expires: 2 ** 53 - 1 }), ['k1', 'k2']);
    const outcome = await fresh(forever, { listId: LIST });
    assert.equal(outcome.code, 'E_EXPIRED', outcome.message);
  });

  it('a manifest that expires while its file downloads is not installed (E_EXPIRED), the copy in use stays', async () => {
    host.serve(kit.genuine[2]);
    const lapse = manifestOf(kit.genuine[3]).expires * 1000 + 1000;
    const outcome = await page.evaluate(async ({ url, keys, listId, lapse: at }) => {
      window.live?.close();
      let late = false;
      let armed = false;
      const slowFetch = (input, init) => {
        if (armed && /\.bg[fd]$/.test(String(input))) late = true; // the clock passes the expiry during the download
        return fetch(input, init);
      };
      window.live = await window.bloomgate.openFilter(url, { storage: false, keys, threshold: 2, listId, fetch: slowFetch, now: () => (late ? at : Date.now()) });
      armed = true;
      return { armed };
    }, { url: host.manifestUrl, keys: kit.pinned, listId: LIST, lapse });
    assert.deepEqual(outcome, { armed: true });
    host.serve(kit.genuine[3]);
    const refreshed = await page.evaluate(async () => {
      const result = await window.live.refresh({ force: true });
      return { changed: result.changed, code: result.error?.code ?? null, generation: window.live.generation };
    });
    assert.deepEqual(refreshed, { changed: false, code: 'E_EXPIRED', generation: 2 });
    assert.equal((await answers(urlsOf(2))).filter((answer) => !answer).length, 0);
  });
});
