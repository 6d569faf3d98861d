/**
 * openFilter() in Chromium, Firefox and WebKit (tests/browser/engines/), the same assertions in
 * each: a page on one 127.0.0.1 origin imports the library by path (js/index.js, no bundler) and
 * follows a filter site on another (bench/fresh-site.mjs: CORS with If-None-Match allowed and
 * ETag exposed, every request recorded with its headers). IndexedDB holds the copy.
 *
 *   - the first open downloads the full file and stores it in IndexedDB as bytes; no request
 *     carries the page's cookie or a referrer (read at the server)
 *   - generations 2, 3 and 4 arrive as deltas (the .bgd is requested, the .bgf is not),
 *     byte-identical to the full files
 *   - If-None-Match gets a 304 that downloads nothing
 *   - corrupted and replayed deltas, a garbage manifest and a site that is down leave the page
 *     with its last good filter, answering
 *   - after a reload with the site stopped, the page (and a module worker) opens from IndexedDB
 *     and answers; the cold start is timed
 *
 * What differs by engine: the stored record's type. Chromium's and Firefox's profiles store the
 * Blob; WebKit's automation session is an ephemeral data store, which refuses Blobs, so there
 * the ArrayBuffer fallback is what is stored (a probe of the platform itself, without bloomgate,
 * checks that each engine still behaves as listed in BLOB_STORED).
 *
 * Run: node --test tests/browser/open-filter.test.mjs   (some engines: BG_ENGINES=firefox,webkit)
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, it } from 'node:test';

import { FilterSite, buildGenerations, sri } from '../../bench/fresh-site.mjs';
import { launchEngine } from './engines/index.mjs';
import { eachEngine, openReady, startLibraryServer } from './helpers/each-engine.mjs';

const SIZE = 20000;
const SHIFT = 200; // 1% out, 1% in per generation
/** Whether the engine's IndexedDB (as launched here) stores a Blob: WebKit's session is ephemeral and refuses one. */
const BLOB_STORED = { chromium: true, firefox: true, webkit: false };
const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>openFilter</title><link rel="icon" href="data:,">
<script type="module">
  import * as bloomgate from '/bloomgate/js/index.js';
  window.bloomgate = bloomgate;
  window.events = [];
  window.track = (live) => {
    for (const type of ['update', 'error', 'check']) {
      live.addEventListener(type, (event) => {
        const { error, ...rest } = event.detail;
        window.events.push({ type, ...rest, ...(error ? { code: error.code, message: error.message } : {}) });
      });
    }
    return live;
  };
  window.sha256 = async (bytes) => [...new Uint8Array(await crypto.subtle.digest('SHA-256', bytes))].map((b) => b.toString(16).padStart(2, '0')).join('');
  document.documentElement.dataset.ready = 'yes';
</script></head><body><p>openFilter test page</p></body></html>
`;

const WORKER = `import { openFilter } from '/bloomgate/js/index.js';
self.onmessage = async ({ data }) => {
  try {
    const t0 = performance.now();
    const live = await openFilter(data.manifestUrl, { refreshSeconds: 3600 });
    const answers = data.keys.map((key) => live.mightContain(key));
    const ms = performance.now() - t0;
    const { source, generation } = live.stats();
    self.postMessage({ source, generation, answers, ms });
  } catch (error) {
    self.postMessage({ error: { code: error.code, message: error.message } });
  }
};
`;

const sha256Hex = (bytes) => createHash('sha256').update(bytes).digest('hex');

/** In the page: can this engine's IndexedDB store a Blob at all? (the platform, without bloomgate) */
const probeBlobStore = () => new Promise((resolve, reject) => {
  const open = indexedDB.open('blob-probe', 1);
  open.onupgradeneeded = () => open.result.createObjectStore('s');
  open.onerror = () => reject(open.error);
  open.onsuccess = () => {
    const tx = open.result.transaction('s', 'readwrite');
    try {
      tx.objectStore('s').put(new Blob([new Uint8Array([1, 2, 3])]), 'k');
    } catch {
      open.result.close();
      resolve(false);
      return;
    }
    tx.oncomplete = () => { open.result.close(); resolve(true); };
    tx.onabort = () => { open.result.close(); resolve(false); };
  };
});

let generations;
let pages;

before(async () => {
  generations = await buildGenerations({ count: 5, size: SIZE, shift: SHIFT, capacity: 25000, errorRate: 0.01 });
  pages = await startLibraryServer({ '/': PAGE, '/worker.js': WORKER });
});

after(async () => {
  await pages?.close();
});

eachEngine('openFilter', { timeout: 240000 }, (name) => {
  let site;
  let engine;
  let page;

  before(async () => {
    site = new FilterSite(generations);
    site.publish(1);
    await site.start();
    engine = await launchEngine(name);
    page = await engine.newPage();
    await openPage();
  });

  after(async () => {
    await engine?.close();
    await site?.stop();
  });

  const openPage = () => openReady(page, `${pages.origin}/`);

  /** Run `fn(manifestUrl, arg)` in the page, where window.live is the live filter. */
  const inPage = (fn, arg) => page.evaluate(fn, arg);

  /** The page's filter: generation, byte-identity with generation g, answers for keys of g. */
  async function expectPageGeneration(g) {
    const keys = generations.keysOf(g);
    const probe = [keys[0], keys[keys.length - 1], keys[SIZE / 2]];
    const state = await inPage(async (probeKeys) => ({
      generation: window.live.generation,
      digest: await window.sha256(window.live.serialize()),
      answers: probeKeys.map((key) => window.live.mightContain(key)),
    }), probe);
    assert.equal(state.generation, g);
    assert.equal(state.digest, sha256Hex(generations.files[g]), `the page's filter is byte for byte generation ${g}`);
    assert.deepEqual(state.answers, [true, true, true]);
  }

  it('opens from the network the first time and stores the bytes in IndexedDB; no cookie, no referrer', async () => {
    site.clearLog();
    const result = await inPage(async (url) => {
      document.cookie = 'session=secret-cookie; path=/';
      window.live = window.track(await window.bloomgate.openFilter(url));
      const stats = window.live.stats();
      // What IndexedDB holds, read directly.
      const stored = await new Promise((resolve, reject) => {
        const open = indexedDB.open('bloomgate-filters');
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const tx = open.result.transaction(['files', 'meta'], 'readonly');
          const file = tx.objectStore('files').get(url);
          const meta = tx.objectStore('meta').get(url);
          tx.oncomplete = async () => {
            const value = file.result;
            const bytes = value instanceof Blob ? await value.arrayBuffer() : value;
            resolve({
              type: Object.prototype.toString.call(value),
              length: bytes.byteLength,
              digest: await window.sha256(bytes),
              meta: meta.result,
            });
            open.result.close();
          };
        };
      });
      return { source: stats.source, generation: stats.generation, storage: stats.storage, stored };
    }, site.manifestUrl);
    assert.equal(result.source, 'full');
    assert.equal(result.generation, 1);
    assert.equal(result.storage, 'indexeddb');
    assert.equal(await inPage(probeBlobStore), BLOB_STORED[name], `${name}'s IndexedDB ${BLOB_STORED[name] ? 'stores' : 'refuses'} a Blob`);
    assert.equal(result.stored.type, BLOB_STORED[name] ? '[object Blob]' : '[object ArrayBuffer]',
      'stored as bytes (a Blob, or an ArrayBuffer where the engine refuses a Blob), not base64');
    assert.equal(result.stored.length, generations.files[1].length);
    assert.equal(result.stored.digest, sha256Hex(generations.files[1]));
    assert.equal(result.stored.meta.generation, 1);
    assert.match(result.stored.meta.etag, /^"/);
    assert.deepEqual(site.paths(), ['/manifest.json', '/filter-1.bgf']);
    for (const request of site.requests) {
      assert.equal(request.headers.cookie, undefined, `${request.path} carried a cookie`);
      assert.equal(request.headers.referer, undefined, `${request.path} carried a referrer`);
    }
    await expectPageGeneration(1);
  });

  it('takes generations 2, 3 and 4 as deltas, byte-identical to the full files', async () => {
    for (const g of [2, 3, 4]) {
      site.publish(g, { deltasFrom: [g - 1] });
      site.clearLog();
      const outcome = await inPage(() => window.live.refresh().then(({ error, ...rest }) => ({ ...rest, error: error && `${error.code}: ${error.message}` })));
      assert.equal(outcome.changed, true, `${JSON.stringify(outcome)}\n${site.log().join('\n')}\n${JSON.stringify(site.requests.map((r) => r.headers))}`);
      assert.equal(outcome.source, 'delta');
      const gets = site.paths();
      assert.deepEqual(gets, ['/manifest.json', `/delta-${g - 1}-${g}.bgd`]);
      assert.ok(!gets.includes(`/filter-${g}.bgf`));
      // If-None-Match is not a CORS-safelisted header: the host answered the preflight (the
      // first time; the reply allows caching it for 600 s, which WebKit does, so later updates
      // may go without one).
      if (g === 2) assert.ok(site.requests.some((r) => r.method === 'OPTIONS' && r.path === '/manifest.json'), site.log().join('\n'));
      assert.ok(site.requests.filter((r) => r.method === 'GET' && r.path === '/manifest.json').every((r) => /^"/.test(r.headers['if-none-match'] ?? '')),
        `the manifest is asked for with If-None-Match\n${JSON.stringify(site.requests.map((r) => r.headers))}`);
      await expectPageGeneration(g);
    }
    const updates = await inPage(() => window.events.filter((e) => e.type === 'update').map((e) => [e.previousGeneration, e.generation, e.source]));
    assert.deepEqual(updates, [[1, 2, 'delta'], [2, 3, 'delta'], [3, 4, 'delta']]);
  });

  it('revalidates with If-None-Match: a 304 downloads nothing', async () => {
    site.clearLog();
    const before = await inPage(() => window.live.stats().bytesDownloaded);
    const outcome = await inPage(() => window.live.refresh());
    assert.equal(outcome.notModified, true);
    assert.deepEqual(site.log().filter((line) => line.startsWith('GET')), ['GET /manifest.json 304']);
    assert.equal(await inPage(() => window.live.stats().bytesDownloaded), before);
    await expectPageGeneration(4);
  });

  it('refuses a corrupted delta and a replayed one, keeping generation 4', async () => {
    const cases = [
      ['corrupted', () => {
        const bytes = Uint8Array.from(site.delta(4, 5));
        bytes[bytes.length - 5] ^= 0x21;
        return bytes;
      }, ['E_CHECKSUM', 'E_DELTA']],
      ['replayed', () => site.delta(3, 4), ['E_STALE']],
    ];
    for (const [what, make, codes] of cases) {
      const bytes = make();
      site.publish(5, { deltasFrom: [4] });
      site.files.set('/delta-4-5.bgd', bytes);
      site.files.delete('/filter-5.bgf');
      site.setManifest({ ...site.manifest, deltas: [{ from: 4, url: 'delta-4-5.bgd', length: bytes.length, integrity: sri(bytes) }] });
      await inPage(() => { window.events.length = 0; });
      const outcome = await inPage(() => window.live.refresh().then((o) => ({ changed: o.changed, code: o.error?.code })));
      assert.equal(outcome.changed, false, what);
      const errors = await inPage(() => window.events.filter((e) => e.type === 'error').map((e) => [e.stage, e.code]));
      assert.ok(codes.includes(errors[0]?.[1]) && errors[0][0] === 'delta', `${what}: ${JSON.stringify(errors)}`);
      await expectPageGeneration(4);
    }
  });

  it('keeps the filter when the manifest is garbage or the site is down', async () => {
    site.setManifest('<!doctype html><title>Maintenance</title>');
    let outcome = await inPage(() => window.live.refresh().then((o) => ({ code: o.error?.code, last: window.live.stats().lastError?.code })));
    assert.deepEqual(outcome, { code: 'E_MANIFEST', last: 'E_MANIFEST' });
    await expectPageGeneration(4);
    await site.stop();
    outcome = await inPage(() => window.live.refresh().then((o) => ({ code: o.error?.code, last: window.live.stats().lastError?.code })));
    assert.deepEqual(outcome, { code: 'E_FETCH', last: 'E_FETCH' });
    await expectPageGeneration(4);
  });

  it('after a reload with the site stopped, opens from IndexedDB and answers (page and module worker)', async (t) => {
    await openPage(); // a reload: nothing survives but IndexedDB
    const keys = generations.keysOf(4);
    const probe = [keys[0], keys[keys.length - 1], 'definitely-not-listed-1', 'definitely-not-listed-2'];
    const cold = await inPage(async ({ url, probeKeys }) => {
      const t0 = performance.now();
      await window.bloomgate.init();
      const t1 = performance.now();
      window.live = window.track(await window.bloomgate.openFilter(url));
      const answers = probeKeys.map((key) => window.live.mightContain(key));
      const t2 = performance.now();
      const { source, generation } = window.live.stats();
      return { source, generation, answers, initMs: t1 - t0, openMs: t2 - t1, sinceNavigationMs: t2 };
    }, { url: site.manifestUrl, probeKeys: probe });
    assert.equal(cold.source, 'persisted');
    assert.equal(cold.generation, 4);
    assert.deepEqual(cold.answers.slice(0, 2), [true, true]);
    await expectPageGeneration(4);
    // The background check the open started fails (the site is down); the filter stays.
    const check = await inPage(() => window.live.refresh().then((o) => o.error?.code));
    assert.equal(check, 'E_FETCH');
    await expectPageGeneration(4);
    t.diagnostic(`cold start from IndexedDB (${SIZE} keys, ${generations.files[4].length} bytes): ` +
      `init ${cold.initMs.toFixed(1)} ms, openFilter + first query ${cold.openMs.toFixed(1)} ms, ` +
      `${cold.sinceNavigationMs.toFixed(1)} ms after navigation start`);

    const fromWorker = await inPage(({ url, probeKeys }) => new Promise((resolve) => {
      const worker = new Worker('/worker.js', { type: 'module' });
      worker.onmessage = ({ data }) => {
        worker.terminate();
        resolve(data);
      };
      worker.postMessage({ manifestUrl: url, keys: probeKeys });
    }), { url: site.manifestUrl, probeKeys: probe });
    assert.equal(fromWorker.error, undefined, JSON.stringify(fromWorker.error));
    assert.equal(fromWorker.source, 'persisted');
    assert.equal(fromWorker.generation, 4);
    assert.deepEqual(fromWorker.answers.slice(0, 2), [true, true]);
    t.diagnostic(`module worker: openFilter from IndexedDB + first query ${fromWorker.ms.toFixed(1)} ms (module instantiation included)`);
  });

  it('updates again once the site is back, by delta from the persisted generation', async () => {
    if (site.server === null) await site.start(); // (still up when an earlier test failed before stopping it)
    site.publish(5, { deltasFrom: [4] });
    site.clearLog();
    const outcome = await inPage(() => window.live.refresh({ force: true }));
    assert.equal(outcome.source, 'delta');
    assert.deepEqual(site.paths(), ['/manifest.json', '/delta-4-5.bgd']);
    await expectPageGeneration(5);
    await openPage();
    const reopened = await inPage(async (url) => {
      window.live = await window.bloomgate.openFilter(url, { refreshSeconds: 3600 });
      return window.live.stats();
    }, site.manifestUrl);
    assert.equal(reopened.source, 'persisted');
    assert.equal(reopened.generation, 5);
  });

  it('indexedDbStorage({ blob: false }) keeps an ArrayBuffer; a custom store that throws QuotaExceededError keeps the filter', async () => {
    const result = await inPage(async (url) => {
      const { indexedDbStorage, openFilter } = window.bloomgate;
      const store = indexedDbStorage({ name: 'bloomgate-arraybuffer', blob: false });
      const bytes = new Uint8Array([1, 2, 3, 4, 5]);
      await store.set('k', bytes, { note: 'x' });
      const back = await store.get('k');
      const raw = await new Promise((resolve) => {
        const open = indexedDB.open('bloomgate-arraybuffer');
        open.onsuccess = () => {
          const request = open.result.transaction('files').objectStore('files').get('k');
          request.onsuccess = () => {
            resolve(Object.prototype.toString.call(request.result));
            open.result.close();
          };
        };
      });
      await store.delete('k');
      const gone = await store.get('k');
      store.close();
      // A store that is full: the filter opens from the network and is used, the error reported.
      const errors = [];
      const full = {
        get: async () => null,
        set: async () => { throw new DOMException('quota', 'QuotaExceededError'); },
        delete: async () => {},
      };
      const live = await openFilter(url, { storage: full, onError: (error) => errors.push(error.code) });
      const generation = live.generation;
      live.close();
      return { back: [...back.bytes], meta: back.meta.note, raw, gone, errors, generation };
    }, site.manifestUrl);
    assert.deepEqual(result.back, [1, 2, 3, 4, 5]);
    assert.equal(result.meta, 'x');
    assert.equal(result.raw, '[object ArrayBuffer]');
    assert.equal(result.gone, null);
    assert.deepEqual(result.errors, ['E_STORAGE']);
    assert.equal(result.generation, 5);
  });
});
