/**
 * IndexedDB persistence (js/persist-idb.js) against what real browsers and other code leave
 * behind, in Chromium, Firefox and WebKit (tests/browser/engines/), the same assertions in each
 * (issue 19 item 4, issue 21 items 1 and 3):
 *
 *   - a database named as ours at another version, with a store missing, a store of ours with
 *     in-line keys and a store of someone else's: openFilter() migrates it (a version upgrade),
 *     keeps the other store, persists, and a reload opens from it
 *   - records of another shape under the filter's key: read as nothing stored, replaced
 *   - a database that cannot be opened (UnknownError, as a corrupt one gives): deleted, created
 *     again, persisted
 *   - a database another tab holds open at a wrong shape, refusing to let go: E_STORAGE names
 *     the real cause, the filter still answers; once that tab closes, persistence works again
 *   - an engine that will not store a Blob, refused at once (DataCloneError thrown by put) or
 *     when the request runs (UnknownError on the request): the ArrayBuffer is stored in the same
 *     transaction and a reload opens from it (simulated by wrapping IDBObjectStore.prototype.put
 *     in the page, so every engine meets both refusals)
 *   - nothing storable at all: E_STORAGE names the platform's DataCloneError, never "failed"
 *   - private storage for real: Chromium's off-the-record context, Firefox private browsing,
 *     WebKit's ephemeral automation session. A probe of the platform (without bloomgate) says
 *     whether it stores a Blob; WebKit's refuses it exactly so (an UnknownError on the put
 *     request, "Error preparing Blob/File data to be stored in object store", tx.error still
 *     null in onerror). openFilter persists there (the Blob, or the ArrayBuffer where refused)
 *     and a reload opens from it
 *
 * What differs by engine: only what the engine stores (BLOB_STORED): a Blob in Chromium and
 * Firefox, in their profiles and their private modes alike; an ArrayBuffer in WebKit, whose
 * automation session is always an ephemeral data store (so its "profile" run meets the refusal
 * too). Each probe is asserted, so an engine that changes is noticed.
 *
 * Run: node --test tests/browser/persist-idb.test.mjs   (some engines: BG_ENGINES=firefox,webkit)
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, it } from 'node:test';

import { FilterSite, buildGenerations } from '../../bench/fresh-site.mjs';
import { launchEngine } from './engines/index.mjs';
import { eachEngine, openReady, startLibraryServer } from './helpers/each-engine.mjs';

/** Whether IndexedDB stores a Blob, by engine, in its profile and in its private mode. */
const BLOB_STORED = {
  chromium: { profile: true, private: true },
  firefox: { profile: true, private: true },
  webkit: { profile: false, private: false },
};
const SIZE = 2000;

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>persist-idb</title><link rel="icon" href="data:,">
<script type="module">
  import * as bloomgate from '/bloomgate/js/index.js';
  window.bloomgate = bloomgate;
  window.sha256 = async (bytes) => [...new Uint8Array(await crypto.subtle.digest('SHA-256', bytes))].map((b) => b.toString(16).padStart(2, '0')).join('');
  /** openFilter with its error events collected: { live, errors }. */
  window.openLive = async (url, options = {}) => {
    const errors = [];
    const live = await bloomgate.openFilter(url, { refreshSeconds: 3600, ...options, onError: (error) => errors.push({ code: error.code, message: error.message }) });
    return { live, errors };
  };
  /** What a database holds, read directly: version, stores, and files/meta under key (null when absent). */
  window.inspect = (name, key) => new Promise((resolve, reject) => {
    const open = indexedDB.open(name);
    open.onerror = () => reject(open.error);
    open.onsuccess = () => {
      const db = open.result;
      const stores = [...db.objectStoreNames];
      const shape = {};
      if (!stores.includes('files') || !stores.includes('meta')) {
        db.close();
        return resolve({ version: db.version, stores, shape, file: null, meta: null });
      }
      const tx = db.transaction(stores, 'readonly');
      for (const s of stores) shape[s] = { keyPath: tx.objectStore(s).keyPath, autoIncrement: tx.objectStore(s).autoIncrement };
      const file = tx.objectStore('files').get(key);
      const meta = tx.objectStore('meta').get(key);
      const others = stores.filter((s) => s !== 'files' && s !== 'meta').map((s) => [s, tx.objectStore(s).getAll()]);
      tx.oncomplete = async () => {
        const value = file.result;
        const bytes = value instanceof Blob ? await value.arrayBuffer() : value instanceof ArrayBuffer ? value : null;
        db.close();
        resolve({
          version: db.version,
          stores,
          shape,
          file: value === undefined ? null : {
            type: Object.prototype.toString.call(value),
            digest: bytes ? await window.sha256(bytes) : null,
          },
          meta: meta.result ?? null,
          others: Object.fromEntries(others.map(([s, r]) => [s, r.result])),
        });
      };
    };
  });
  document.documentElement.dataset.ready = 'yes';
</script></head><body><p>persist-idb test page</p></body></html>
`;

const sha256Hex = (bytes) => createHash('sha256').update(bytes).digest('hex');

/** In the page: does this engine's IndexedDB store a Blob? The platform itself, without bloomgate. */
const probeBlobStore = () => new Promise((resolve) => {
  const open = indexedDB.open('bg-blob-probe', 1);
  open.onupgradeneeded = () => open.result.createObjectStore('s');
  open.onerror = () => resolve({ openError: String(open.error) });
  open.onsuccess = () => {
    const tx = open.result.transaction('s', 'readwrite');
    let request;
    try {
      request = tx.objectStore('s').put(new Blob([new Uint8Array([1, 2, 3])]), 'k');
    } catch (error) {
      open.result.close();
      resolve({ stored: false, thrown: error.name, message: error.message });
      return;
    }
    let txErrorInOnerror = 'unset';
    tx.onerror = () => { txErrorInOnerror = tx.error; };
    tx.onabort = () => {
      open.result.close();
      resolve({ stored: false, name: request.error && request.error.name, message: request.error && request.error.message, txErrorInOnerror });
    };
    tx.oncomplete = () => { open.result.close(); resolve({ stored: true }); };
  };
});

let generations;
let pages;
let digest1;

before(async () => {
  generations = await buildGenerations({ count: 1, size: SIZE, shift: 0, capacity: 2500, errorRate: 0.01 });
  digest1 = sha256Hex(generations.files[1]);
  pages = await startLibraryServer({ '/': PAGE, '/other': PAGE });
});

after(async () => {
  await pages?.close();
});

eachEngine('IndexedDB persistence', { timeout: 240000 }, (name) => {
  const blobType = BLOB_STORED[name].profile ? '[object Blob]' : '[object ArrayBuffer]';
  let site;
  let engine;
  let page;

  before(async () => {
    site = new FilterSite(generations);
    site.publish(1);
    await site.start();
    engine = await launchEngine(name);
    page = await engine.newPage();
    await openPage(page);
  });

  after(async () => {
    await engine?.close();
    await site?.stop();
  });

  const openPage = (target, path = '/') => openReady(target, `${pages.origin}${path}`);

  /** After a reload: openFilter from storage `name` (default storage when null) answers from the persisted copy. */
  async function expectPersisted(name) {
    await openPage(page);
    const reopened = await page.evaluate(async ({ url, storeName }) => {
      const options = storeName === null ? {} : { storage: window.bloomgate.indexedDbStorage({ name: storeName }) };
      const { live, errors } = await window.openLive(url, options);
      return { source: live.stats().source, generation: live.generation, errors, digest: await window.sha256(live.serialize()) };
    }, { url: site.manifestUrl, storeName: name });
    assert.deepEqual(reopened.errors, []);
    assert.equal(reopened.source, 'persisted', 'a reload opens from IndexedDB');
    assert.equal(reopened.generation, 1);
    assert.equal(reopened.digest, digest1);
  }

  it('a same-named database of another version and shape is migrated, its other store kept', async () => {
    const made = await page.evaluate(() => new Promise((resolve, reject) => {
      // Version 7; 'files' with in-line keys and a key generator; no 'meta'; someone's 'notes'.
      const open = indexedDB.open('bloomgate-filters', 7);
      open.onupgradeneeded = () => {
        const db = open.result;
        db.createObjectStore('files', { keyPath: 'id', autoIncrement: true }).add({ junk: 1 });
        db.createObjectStore('notes').put('kept', 'n1');
      };
      open.onerror = () => reject(open.error);
      open.onsuccess = () => {
        const db = open.result;
        const info = { version: db.version, stores: [...db.objectStoreNames] };
        db.close();
        resolve(info);
      };
    }));
    assert.deepEqual(made, { version: 7, stores: ['files', 'notes'] });

    const opened = await page.evaluate(async (url) => {
      const { live, errors } = await window.openLive(url); // the default storage: 'bloomgate-filters'
      return { source: live.stats().source, storage: live.stats().storage, errors };
    }, site.manifestUrl);
    assert.deepEqual(opened.errors, [], 'no storage error: the database was migrated, not given up on');
    assert.equal(opened.source, 'full');
    assert.equal(opened.storage, 'indexeddb');

    const held = await page.evaluate((url) => window.inspect('bloomgate-filters', url), site.manifestUrl);
    assert.equal(held.version, 8, 'migrated by one version upgrade');
    assert.deepEqual(held.stores.sort(), ['files', 'meta', 'notes']);
    assert.deepEqual(held.shape.files, { keyPath: null, autoIncrement: false });
    assert.deepEqual(held.others.notes, ['kept'], "another store's records are left alone");
    assert.deepEqual(await page.evaluate(probeBlobStore).then((probe) => probe.stored), BLOB_STORED[name].profile,
      `${name} ${BLOB_STORED[name].profile ? 'stores' : 'refuses'} a Blob`);
    assert.equal(held.file.type, blobType, 'a Blob where the engine stores one, else the ArrayBuffer');
    assert.equal(held.file.digest, digest1);
    assert.equal(held.meta.generation, 1);
    await expectPersisted(null);
  });

  it('records of another shape under the filter key read as nothing stored and are replaced', async () => {
    const name = 'bg-shape';
    await page.evaluate(async ({ storeName, url }) => {
      const store = window.bloomgate.indexedDbStorage({ name: storeName });
      await store.set('warm-up', new Uint8Array([1]), {}); // creates the database
      store.close();
      await new Promise((resolve, reject) => {
        const open = indexedDB.open(storeName);
        open.onsuccess = () => {
          const tx = open.result.transaction(['files', 'meta'], 'readwrite');
          tx.objectStore('files').put({ not: 'bytes' }, url);
          tx.objectStore('meta').put('not an object', url);
          tx.oncomplete = () => {
            open.result.close();
            resolve();
          };
          tx.onerror = () => reject(tx.error);
        };
      });
    }, { storeName: name, url: site.manifestUrl });
    const opened = await page.evaluate(async ({ url, storeName }) => {
      const storage = window.bloomgate.indexedDbStorage({ name: storeName });
      const direct = await storage.get(url);
      const { live, errors } = await window.openLive(url, { storage });
      return { direct, source: live.stats().source, errors };
    }, { url: site.manifestUrl, storeName: name });
    assert.equal(opened.direct, null, 'a record that is not bytes reads as nothing stored');
    assert.deepEqual(opened.errors, []);
    assert.equal(opened.source, 'full');
    const held = await page.evaluate(({ storeName, url }) => window.inspect(storeName, url), { storeName: name, url: site.manifestUrl });
    assert.equal(held.file.digest, digest1);
    assert.equal(held.meta.generation, 1);
    await expectPersisted(name);
  });

  it('a database another tab holds open at a wrong shape: E_STORAGE names the cause, the filter answers; later it is migrated', async () => {
    const name = 'bg-held';
    const other = await engine.newPage();
    await openPage(other, '/other');
    // The other tab: the database at version 3 without our stores, and it never closes on versionchange.
    await other.evaluate((storeName) => new Promise((resolve) => {
      const open = indexedDB.open(storeName, 3);
      open.onupgradeneeded = () => open.result.createObjectStore('theirs');
      open.onsuccess = () => {
        window.held = open.result;
        window.held.onversionchange = () => {}; // ignores it: the upgrade stays blocked
        resolve();
      };
    }), name);
    const opened = await page.evaluate(async ({ url, storeName }) => {
      const { live, errors } = await window.openLive(url, { storage: window.bloomgate.indexedDbStorage({ name: storeName }) });
      const keys = ['key-0', 'key-1999'];
      return { source: live.stats().source, errors, answers: keys.map((k) => live.mightContain(k)) };
    }, { url: site.manifestUrl, storeName: name });
    assert.equal(opened.source, 'full');
    assert.deepEqual(opened.answers, [true, true], 'the filter answers from memory');
    assert.ok(opened.errors.length >= 1, 'the storage failure is reported');
    for (const error of opened.errors) {
      assert.equal(error.code, 'E_STORAGE');
      assert.match(error.message, /bg-held/);
      assert.match(error.message, /no object store 'files' or 'meta'/, error.message);
      assert.match(error.message, /another open connection held up/, error.message);
    }
    // The other tab lets go: the next open migrates and persists.
    await other.evaluate(() => window.held.close());
    await other.close();
    const again = await page.evaluate(async ({ url, storeName }) => {
      const { live, errors } = await window.openLive(url, { storage: window.bloomgate.indexedDbStorage({ name: storeName }) });
      return { source: live.stats().source, errors };
    }, { url: site.manifestUrl, storeName: name });
    assert.deepEqual(again.errors, []);
    const held = await page.evaluate(({ storeName, url }) => window.inspect(storeName, url), { storeName: name, url: site.manifestUrl });
    assert.equal(held.version, 4);
    assert.ok(held.stores.includes('theirs'));
    assert.equal(held.file.digest, digest1);
    await expectPersisted(name);
  });

  it('a database that cannot be opened (UnknownError, as a corrupt one gives) is deleted and created again', async () => {
    const name = 'bg-reset';
    const result = await page.evaluate(async ({ url, storeName }) => {
      // Something of ours there before: it goes with the reset.
      const first = window.bloomgate.indexedDbStorage({ name: storeName });
      await first.set('old', new Uint8Array([9]), {});
      first.close();
      const calls = [];
      let failNext = true;
      // The real factory, except that the first open fails the way a corrupt database does.
      const factory = {
        open(...args) {
          calls.push(`open ${args.length > 1 ? args[1] : ''}`.trim());
          if (!failNext) return indexedDB.open(...args);
          failNext = false;
          const fake = { error: new DOMException('Internal error opening backing store for indexedDB.open.', 'UnknownError') };
          setTimeout(() => fake.onerror?.({ preventDefault() {} }), 0);
          return fake;
        },
        deleteDatabase(...args) {
          calls.push('delete');
          return indexedDB.deleteDatabase(...args);
        },
      };
      const storage = window.bloomgate.indexedDbStorage({ name: storeName, indexedDB: factory });
      const { live, errors } = await window.openLive(url, { storage });
      return { calls, errors, source: live.stats().source, old: await storage.get('old') };
    }, { url: site.manifestUrl, storeName: name });
    assert.deepEqual(result.errors, []);
    assert.equal(result.source, 'full');
    assert.deepEqual(result.calls.slice(0, 3), ['open', 'delete', 'open'], 'open failed, so: delete, open again');
    assert.equal(result.old, null, 'the reset database starts empty');
    await expectPersisted(name);
  });

  for (const [how, wrap] of [
    ['refused at once: put() throws DataCloneError', 'sync'],
    ['refused when the request runs: UnknownError on the request', 'async'],
  ]) {
    it(`a Blob the engine will not store (${how}): an ArrayBuffer is persisted and reloads`, async () => {
      const name = `bg-noblob-${wrap}`;
      const opened = await page.evaluate(async ({ url, storeName, mode }) => {
        const put = IDBObjectStore.prototype.put;
        const get = IDBObjectStore.prototype.get;
        window.refusals = 0;
        // What WebKit's ephemeral store does with a Blob: it refuses it.
        IDBObjectStore.prototype.put = function wrappedPut(value, key) {
          if (!(value instanceof Blob)) return put.call(this, value, key);
          window.refusals++;
          if (mode === 'sync') throw new DOMException('Failed to store a Blob in this store', 'DataCloneError');
          // A request that fails with UnknownError; its error event runs while the transaction is
          // active (chained on a real request), and an unprevented one aborts the transaction.
          const tx = this.transaction;
          const fake = { error: new DOMException('Error preparing Blob/File data to be stored in object store', 'UnknownError'), onerror: null, onsuccess: null };
          get.call(this, key).onsuccess = () => {
            const event = { target: fake, defaultPrevented: false, preventDefault() { this.defaultPrevented = true; } };
            fake.onerror?.(event);
            if (!event.defaultPrevented) tx.abort();
          };
          return fake;
        };
        try {
          const { live, errors } = await window.openLive(url, { storage: window.bloomgate.indexedDbStorage({ name: storeName }) });
          return { source: live.stats().source, errors, refusals: window.refusals };
        } finally {
          IDBObjectStore.prototype.put = put;
        }
      }, { url: site.manifestUrl, storeName: name, mode: wrap });
      assert.deepEqual(opened.errors, [], 'no storage error: the ArrayBuffer fallback took it');
      assert.equal(opened.source, 'full');
      assert.ok(opened.refusals >= 1, 'a Blob was offered and refused');
      const held = await page.evaluate(({ storeName, url }) => window.inspect(storeName, url), { storeName: name, url: site.manifestUrl });
      assert.equal(held.file.type, '[object ArrayBuffer]', 'stored as an ArrayBuffer');
      assert.equal(held.file.digest, digest1);
      assert.equal(held.meta.generation, 1);
      await expectPersisted(name);
    });
  }

  it('nothing storable (Blob and ArrayBuffer refused): E_STORAGE names the DataCloneError, the filter answers', async () => {
    const opened = await page.evaluate(async (url) => {
      const put = IDBObjectStore.prototype.put;
      IDBObjectStore.prototype.put = function wrappedPut(value, key) {
        if (value instanceof Blob || value instanceof ArrayBuffer) throw new DOMException(`cannot clone a ${value.constructor.name} here`, 'DataCloneError');
        return put.call(this, value, key);
      };
      try {
        const { live, errors } = await window.openLive(url, { storage: window.bloomgate.indexedDbStorage({ name: 'bg-nothing' }) });
        return { source: live.stats().source, errors, answer: live.mightContain('key-5') };
      } finally {
        IDBObjectStore.prototype.put = put;
      }
    }, site.manifestUrl);
    assert.equal(opened.source, 'full');
    assert.equal(opened.answer, true);
    assert.equal(opened.errors.length, 1);
    assert.equal(opened.errors[0].code, 'E_STORAGE');
    assert.match(opened.errors[0].message, /bg-nothing/);
    assert.match(opened.errors[0].message, /DataCloneError: cannot clone a ArrayBuffer here/);
    const held = await page.evaluate((url) => window.inspect('bg-nothing', url), site.manifestUrl);
    assert.equal(held.file, null, 'nothing half-written');
    assert.equal(held.meta, null);
  });
});

eachEngine('IndexedDB persistence in private storage', { timeout: 240000 }, (name) => {
  let site;
  let engine;
  let page;
  const openPage = () => openReady(page, `${pages.origin}/`);

  before(async () => {
    site = new FilterSite(generations);
    site.publish(1);
    await site.start();
    engine = await launchEngine(name, { private: true });
    page = await engine.newPage();
    await openPage();
  });

  after(async () => {
    await engine?.close();
    await site?.stop();
  });

  it('the platform stores a Blob or refuses it; openFilter persists what it can and a reload opens from it', async (t) => {
    t.diagnostic(`${name} ${engine.version}, private`);
    // The platform itself, without bloomgate.
    const probe = await page.evaluate(probeBlobStore);
    t.diagnostic(`a Blob put: ${JSON.stringify(probe)}`);
    assert.equal(probe.stored, BLOB_STORED[name].private, `${name}'s private store ${BLOB_STORED[name].private ? 'stores' : 'refuses'} a Blob: ${JSON.stringify(probe)}`);
    if (name === 'webkit') {
      // WebKit's refusal, as openFilter meets it: on the request, and tx.error still null in onerror.
      assert.equal(probe.name, 'UnknownError', JSON.stringify(probe));
      assert.equal(probe.txErrorInOnerror, null, 'tx.error is still null while onerror runs');
    }

    const opened = await page.evaluate(async (url) => {
      const { live, errors } = await window.openLive(url, { storage: window.bloomgate.indexedDbStorage({ name: 'bg-private' }) });
      return { source: live.stats().source, storage: live.stats().storage, errors, answers: ['key-0', 'key-1999'].map((k) => live.mightContain(k)) };
    }, site.manifestUrl);
    assert.deepEqual(opened.errors, [], 'no E_STORAGE: what the store takes was stored');
    assert.equal(opened.source, 'full');
    assert.equal(opened.storage, 'indexeddb');
    assert.deepEqual(opened.answers, [true, true]);
    const held = await page.evaluate((arg) => window.inspect(arg.name, arg.url), { name: 'bg-private', url: site.manifestUrl });
    assert.equal(held.file.type, BLOB_STORED[name].private ? '[object Blob]' : '[object ArrayBuffer]');
    assert.equal(held.file.digest, digest1);
    assert.equal(held.meta.generation, 1);

    await openPage(); // a reload: only the session's (private) IndexedDB survives
    const reopened = await page.evaluate(async (url) => {
      const { live, errors } = await window.openLive(url, { storage: window.bloomgate.indexedDbStorage({ name: 'bg-private' }) });
      return { source: live.stats().source, generation: live.generation, errors, digest: await window.sha256(live.serialize()) };
    }, site.manifestUrl);
    assert.deepEqual(reopened.errors, []);
    assert.equal(reopened.source, 'persisted');
    assert.equal(reopened.generation, 1);
    assert.equal(reopened.digest, digest1);
  });
});
