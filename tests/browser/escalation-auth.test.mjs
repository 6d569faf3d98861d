/**
 * Authenticated escalation in Chromium, Firefox and WebKit (tests/browser/engines/), the same
 * assertions in each (issue 19 item 3, issue 21 item 1):
 * the library as a page imports it, the publisher's key pinned, against real
 * signed `bloomgate serve` endpoints and a signed static export, and the
 * malicious mirror of tests/js/helpers/signed-endpoints.mjs on another origin
 * (CORS, Add-Padding preflights and all). A genuine endpoint answers listed and
 * clean items; with the mirror's forged replies (listed rows removed, the
 * genuine manifest and proofs beside them) and an attacker-signed endpoint,
 * every listed item is an E_ESCALATION error in the page, never "clean".
 *
 * Run: node --test tests/browser/escalation-auth.test.mjs   (some engines: BG_ENGINES=firefox,webkit)
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';

import { init } from '../../js/index.js';
import { startReferenceServer } from '../../js/server.js';
import { launchEngine } from './engines/index.mjs';
import { eachEngine, openReady } from './helpers/each-engine.mjs';
import { libraryMounts } from './helpers/page.mjs';
import {
  attacks, CLEAN_PASSWORDS, CLEAN_URLS, GENERATION, LIST_ID, LISTED_PASSWORDS, LISTED_URLS,
  startMirror, startSignedEndpoints, staticAttacks,
} from '../js/helpers/signed-endpoints.mjs';

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>authenticated escalation</title>
<script type="module">
  import * as bloomgate from '/bloomgate/js/index.js';
  window.bloomgate = bloomgate;
  bloomgate.init().then(() => { document.documentElement.dataset.ready = 'yes'; },
    (error) => { document.documentElement.dataset.ready = 'failed: ' + error.message; });
</script></head><body>authenticated escalation</body></html>
`;

let dir;
let endpoints;
let mirror;
let site;

/** Every item through checkPassword / checkUrl in the page, with a filter that always says "maybe". */
function checkAll(page, kind, items, endpoint, keys) {
  return page.evaluate(async ({ kind, items, endpoint, keys, listId, generation }) => {
    const filter = { mightContainKey: () => true, keyEncoding: kind === 'password' ? 'sha1' : 'url', listId, generation, minCount: 1 };
    const fetchImpl = (...args) => fetch(...args); // a fresh manifest cache per call
    const out = [];
    for (const item of items) {
      try {
        const result = kind === 'password'
          ? await window.bloomgate.checkPassword(item, { filter, rangeUrl: endpoint, keys, listId, fetch: fetchImpl })
          : await window.bloomgate.checkUrl(item, { filter, hashesUrl: endpoint, keys, listId, fetch: fetchImpl });
        out.push(kind === 'password' ? (result.breached ? 'listed' : 'clean') : (result.listed ? 'listed' : 'clean'));
      } catch (error) {
        out.push(`${error?.code ?? error?.name}: ${error?.message ?? error}`);
      }
    }
    return out;
  }, { kind, items, endpoint, keys, listId: LIST_ID, generation: GENERATION });
}

before(async () => {
  await init();
  dir = mkdtempSync(join(tmpdir(), 'bloomgate-auth-browser-'));
  endpoints = await startSignedEndpoints(dir);
  mirror = await startMirror();
  writeFileSync(join(dir, 'index.html'), PAGE);
  site = await startReferenceServer({ staticDir: [...libraryMounts(), { prefix: '/', dir }] });
});

after(async () => {
  await new Promise((resolve) => (site ? site.server.close(resolve) : resolve()));
  await mirror?.close();
  await endpoints?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

eachEngine('authenticated escalation', { timeout: 240000 }, (name) => {
  let engine;
  let page;

  before(async () => {
    engine = await launchEngine(name);
    page = await engine.newPage();
    await openReady(page, `${site.url}/`);
  });

  after(async () => {
    await engine?.close();
  });

  it('a genuine signed endpoint: listed items listed, clean items clean (serve and a static export)', async () => {
    const keys = [endpoints.publisherKey];
    const { genuine, static: exported } = endpoints.origins;
    assert.deepEqual(await checkAll(page, 'password', LISTED_PASSWORDS, `${genuine}/range`, keys), LISTED_PASSWORDS.map(() => 'listed'));
    assert.deepEqual(await checkAll(page, 'password', CLEAN_PASSWORDS, `${genuine}/range`, keys), CLEAN_PASSWORDS.map(() => 'clean'));
    for (const base of [`${genuine}/hashes`, `${exported}/hashes`]) {
      assert.deepEqual(await checkAll(page, 'url', LISTED_URLS, base, keys), LISTED_URLS.map(() => 'listed'), base);
      assert.deepEqual(await checkAll(page, 'url', CLEAN_URLS, base, keys), CLEAN_URLS.map(() => 'clean'), base);
    }
  });

  const otherPrefix = { range: 'ABCDE', hashes: 'ab000000' };
  for (const index of [2, 1]) {
    const attackName = attacks({}, { otherPrefix })[index].name;
    it(`mirror attack: ${attackName} — every listed item is E_ESCALATION, never clean`, async () => {
      const keys = [endpoints.publisherKey];
      mirror.attack = attacks(endpoints.origins, { otherPrefix })[index];
      const passwords = await checkAll(page, 'password', LISTED_PASSWORDS, `${mirror.url}/range`, keys);
      const urls = await checkAll(page, 'url', LISTED_URLS, `${mirror.url}/hashes`, keys);
      mirror.attack = staticAttacks(endpoints.origins, { otherPrefix })[index];
      const staticUrls = await checkAll(page, 'url', LISTED_URLS, `${mirror.url}/hashes`, keys);
      for (const outcome of [...passwords, ...urls, ...staticUrls]) {
        assert.match(outcome, /^E_ESCALATION: .*(not authenticated|not trusted)/, outcome);
      }
      if (index === 2) {
        // Control: without keys the same forged replies read "clean" in the page.
        mirror.attack = attacks(endpoints.origins, { otherPrefix })[index];
        assert.deepEqual(await checkAll(page, 'password', LISTED_PASSWORDS, `${mirror.url}/range`, undefined), LISTED_PASSWORDS.map(() => 'clean'));
      }
    });
  }

  it('keys bind a check with no filter to one list: another list and an older export never answer "not listed" (issue 28)', async () => {
    const { genuine, otherList, older } = endpoints.origins;
    const outcomes = await page.evaluate(async ({ keys, listId, bases, password }) => {
      const fetchImpl = (...args) => fetch(...args);
      const run = async (options) => {
        try {
          const result = await window.bloomgate.checkPassword(password, { fetch: fetchImpl, keys, ...options });
          return result.breached ? 'listed' : 'clean';
        } catch (error) {
          return `${error.name}/${error.code ?? ''}/${error.cause?.code ?? ''}`;
        }
      };
      return [
        await run({ rangeUrl: `${bases.otherList}/range` }),
        await run({ rangeUrl: `${bases.otherList}/range`, listId }),
        await run({ rangeUrl: `${bases.genuine}/range`, listId }),
        await run({ rangeUrl: `${bases.older}/range`, listId }),
      ];
    }, { keys: [endpoints.publisherKey], listId: LIST_ID, bases: { genuine, otherList, older }, password: LISTED_PASSWORDS[5] });
    assert.deepEqual(outcomes, ['TypeError//', 'BloomgateError/E_ESCALATION/E_LIST', 'listed', 'BloomgateError/E_ESCALATION/E_STALE']);
  });
});
