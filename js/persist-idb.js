// @ts-check
/**
 * persist-idb.js — where openFilter() keeps its copy of a filter in pages,
 * workers and extension service workers: IndexedDB.
 *
 * The file is stored as bytes — a Blob of them where the platform has Blob
 * (Chromium reads a 1.2 MB Blob back in about half the time of the same
 * ArrayBuffer: bench/fresh.mjs), else an ArrayBuffer; no base64, no size cap
 * beyond the origin's quota — and its record of what it is (`meta`:
 * generation, checksum, ETag, last check, ...) beside it. Two
 * object stores, written in one transaction: `files` (key -> bytes)
 * and `meta` (key -> object), so a check that changes only the meta (a 304,
 * say) does not rewrite megabytes, and a write that fails (QuotaExceededError)
 * leaves the previous copy whole: IndexedDB commits a transaction entirely
 * or not at all.
 *
 * Where a Blob cannot be stored (WebKit's ephemeral data store — Safari's
 * Private Browsing, a WKWebView without a persistent store — refuses them
 * with an UnknownError or DataCloneError), the same write is made with an
 * ArrayBuffer in the same transaction, and this storage stores ArrayBuffers
 * from then on; reading takes either form.
 *
 * A database of this name that is not what this code made — another version,
 * a store missing, a store with in-line keys or a key generator, an open that
 * fails — is not left to disable persistence: the database is opened at
 * whatever version it has, its shape checked, and a wrong shape migrated by a
 * version upgrade (missing stores created, misshapen ones of ours replaced,
 * other stores left alone); a database that cannot be opened or upgraded is
 * deleted and created again (it is a cache: the filter comes back from the
 * network). A record of another shape reads as nothing stored. Every failure
 * is a BloomgateError 'E_STORAGE' that names the platform's own error (the
 * failing request's, or the aborted transaction's), never "failed" alone.
 *
 * Nothing here touches `indexedDB` until a method is called.
 */
import { BloomgateError } from './errors.js';

const FILES = 'files';
const META = 'meta';
const STORES = [FILES, META];
/** Errors of a put() that mean "this engine will not store a Blob here". */
const BLOB_REFUSED = new Set(['DataCloneError', 'UnknownError', 'NotSupportedError']);
/** An upgrade or a deletion that another connection holds up this long is given up. */
const BLOCKED_MS = 3000;
/** An open that gets no answer at all this long is given up (queued behind a held-up upgrade). */
const OPEN_MS = 5000;
/** How long a later call waits for an open given up on to settle before failing at once. */
const STALLED_WAIT_MS = 500;

/**
 * @typedef {{ get(key: string): Promise<{ bytes: Uint8Array, meta: Record<string, unknown> } | null>,
 *   set(key: string, bytes: Uint8Array, meta: Record<string, unknown>): Promise<void>,
 *   setMeta(key: string, meta: Record<string, unknown>): Promise<void>,
 *   delete(key: string): Promise<void>, close(): void, kind: string }} IndexedDbStorage
 */

/** "Name: message" of a platform error, or what is known when there is none. */
function describe(error) {
  if (error === null || error === undefined) return 'no reason given by the browser';
  const name = typeof error.name === 'string' && error.name !== 'Error' ? error.name : '';
  const message = typeof error.message === 'string' ? error.message : String(error);
  return name && message ? `${name}: ${message}` : name || message || 'no reason given by the browser';
}

/**
 * The filter store in IndexedDB.
 * @param {{ name?: string, indexedDB?: IDBFactory, blob?: boolean }} [options] `name`: the
 *   database (default 'bloomgate-filters'); `indexedDB`: the factory (default
 *   globalThis.indexedDB); `blob: false` stores an ArrayBuffer instead of a Blob
 * @returns {IndexedDbStorage}
 */
export function indexedDbStorage(options = {}) {
  if (options === null || typeof options !== 'object') throw new TypeError('indexedDbStorage(options): options must be an object');
  const name = options.name ?? 'bloomgate-filters';
  if (typeof name !== 'string' || name === '') throw new TypeError('indexedDbStorage(): name must be a non-empty string');
  /** @type {Promise<IDBDatabase> | null} */
  let opening = null;
  /** Store Blobs until the engine refuses one. */
  let blobs = options.blob !== false && typeof Blob === 'function';

  /** @param {string} what @param {unknown} [cause] */
  function storageError(what, cause) {
    return new BloomgateError('E_STORAGE', `IndexedDB database '${name}': ${what}: ${describe(cause)}`, cause === undefined || cause === null ? undefined : { cause });
  }

  /** @returns {IDBFactory} */
  function factory() {
    const found = options.indexedDB ?? /** @type {any} */ (globalThis).indexedDB;
    if (!found || typeof found.open !== 'function') {
      throw new BloomgateError('E_STORAGE', 'IndexedDB is not available here (the filter is kept in memory only)');
    }
    return found;
  }

  /**
   * Make the stores what this code needs, inside a versionchange transaction: create the
   * missing, replace a store of ours with in-line keys or a key generator; leave others alone.
   * @param {IDBDatabase} db @param {IDBTransaction} tx
   */
  function shapeStores(db, tx) {
    for (const store of STORES) {
      if (db.objectStoreNames.contains(store)) {
        const existing = tx.objectStore(store);
        if (existing.keyPath === null && !existing.autoIncrement) continue;
        db.deleteObjectStore(store);
      }
      db.createObjectStore(store);
    }
  }

  /** What is wrong with an open database's shape, or null. @param {IDBDatabase} db */
  function shapeProblem(db) {
    const missing = STORES.filter((store) => !db.objectStoreNames.contains(store));
    if (missing.length) return `no object store ${missing.map((s) => `'${s}'`).join(' or ')}`;
    const tx = db.transaction(STORES, 'readonly');
    for (const store of STORES) {
      const existing = tx.objectStore(store);
      if (existing.keyPath !== null) return `object store '${store}' has in-line keys`;
      if (existing.autoIncrement) return `object store '${store}' has a key generator`;
    }
    return null;
  }

  /** Open requests given up on that the browser still holds (each entry resolves once it settles). */
  const stalled = new Set();
  /** Why the last open was given up on, and what it was for. @type {unknown} */
  let stallError = null;
  /** @type {string | null} */
  let stallWhat = null;

  /**
   * One open request; `version` undefined opens whatever version exists (or creates version 1).
   * Given up on after OPEN_MS (BLOCKED_MS once it is blocked): an open queued behind an upgrade
   * that another connection holds up gets no event at all. A request given up on is closed if
   * it ever succeeds, and stays in `stalled` until it settles.
   * @param {IDBFactory} idb @param {number} [version] @returns {Promise<IDBDatabase>}
   */
  function openOnce(idb, version) {
    return new Promise((resolve, reject) => {
      const request = version === undefined ? idb.open(name) : idb.open(name, version);
      let settled = false;
      /** @type {(() => void) | null} */
      let release = null;
      const finish = () => {
        settled = true;
        clearTimeout(timer);
      };
      const giveUp = (/** @type {string} */ errorName, /** @type {string} */ message) => {
        if (settled) return;
        finish();
        const entry = new Promise((done) => { release = () => done(undefined); });
        stalled.add(entry);
        entry.then(() => stalled.delete(entry));
        stallError = Object.assign(new Error(message), { name: errorName });
        reject(stallError);
      };
      let timer = setTimeout(() => giveUp('TimeoutError', `opening it took over ${OPEN_MS / 1000} s (held up by another connection?)`), OPEN_MS);
      request.onupgradeneeded = () => {
        const tx = /** @type {IDBTransaction} */ (request.transaction);
        try {
          shapeStores(request.result, tx);
        } catch (error) {
          tx.abort();
          if (!settled) {
            finish();
            reject(error);
          }
        }
      };
      request.onsuccess = () => {
        if (settled) {
          request.result.close(); // given up on: not ours to keep
          release?.();
          return;
        }
        finish();
        resolve(request.result);
      };
      request.onerror = (event) => {
        event.preventDefault?.();
        if (settled) {
          release?.();
          return;
        }
        finish();
        reject(request.error ?? new Error('the open request failed'));
      };
      request.onblocked = () => {
        // Another connection (another tab) holds the database open at its old version.
        clearTimeout(timer);
        timer = setTimeout(() => giveUp('BlockedError', `another open connection held up the upgrade for ${BLOCKED_MS / 1000} s`), BLOCKED_MS);
      };
    });
  }

  /** Delete the database (a reset). @param {IDBFactory} idb @returns {Promise<void>} */
  function deleteOnce(idb) {
    return new Promise((resolve, reject) => {
      const request = idb.deleteDatabase(name);
      /** @type {ReturnType<typeof setTimeout> | undefined} */
      let blocked;
      const done = () => clearTimeout(blocked);
      request.onsuccess = () => {
        done();
        resolve();
      };
      request.onerror = (event) => {
        event.preventDefault?.();
        done();
        reject(request.error ?? new Error('the delete request failed'));
      };
      request.onblocked = () => {
        blocked ??= setTimeout(() => reject(Object.assign(new Error(`another open connection held up deleting it for ${BLOCKED_MS / 1000} s`), { name: 'BlockedError' })), BLOCKED_MS);
      };
    });
  }

  /**
   * A connection to a database of the right shape: open at its version; migrate a wrong shape
   * by an upgrade; reset (delete, create) what cannot be opened or upgraded.
   * @returns {Promise<IDBDatabase>}
   */
  async function connect() {
    const idb = factory();
    if (stalled.size > 0) {
      // An open given up on is still queued: a new one would wait behind it. Wait a little for it.
      const wait = new Promise((done) => { setTimeout(done, STALLED_WAIT_MS); });
      await Promise.race([Promise.all([...stalled]), wait]);
      if (stalled.size > 0) throw storageError(stallWhat ?? 'an earlier open is still held up', stallError);
    }
    /** @type {unknown} */
    let firstError = null;
    /** @type {string | null} */
    let problem = null;
    for (let attempt = 0; attempt < 3; attempt++) {
      let db;
      try {
        db = await openOnce(idb);
      } catch (error) {
        const why = /** @type {any} */ (error)?.name;
        if (why === 'SecurityError') throw storageError('storage is not allowed here (the filter is kept in memory only)', error);
        if (why === 'TimeoutError') throw storageError('it could not be opened', error); // a deletion would queue the same way
        firstError ??= error;
        break; // cannot be opened as it is: reset below
      }
      try {
        problem = shapeProblem(db);
      } catch (error) {
        problem = describe(error);
      }
      if (problem === null) return db;
      const version = db.version;
      db.close();
      try {
        const upgraded = await openOnce(idb, version + 1);
        if (shapeProblem(upgraded) === null) return upgraded;
        upgraded.close();
      } catch (error) {
        const why = /** @type {any} */ (error)?.name;
        // Held open by a connection that ignores versionchange: a deletion would wait on it too.
        if (why === 'BlockedError') {
          stallWhat = `its shape (${problem}) could not be migrated`;
          throw storageError(stallWhat, error);
        }
        // VersionError: someone else upgraded it meanwhile; look again
        if (why !== 'VersionError') {
          firstError ??= error;
          break;
        }
      }
    }
    // Reset: the copy is a cache, the network has the filter.
    try {
      await deleteOnce(idb);
      const db = await openOnce(idb);
      const after = shapeProblem(db);
      if (after === null) return db;
      db.close();
      throw new Error(after);
    } catch (error) {
      const why = problem !== null ? `its shape (${problem}) could not be migrated` : `it could not be opened (${describe(firstError)})`;
      throw storageError(`${why}, and deleting and creating it again failed`, error);
    }
  }

  /** @returns {Promise<IDBDatabase>} */
  function database() {
    if (opening !== null) return opening;
    const pending = connect().then((db) => {
      // Another tab upgrading or deleting the database: let it, and open again on the next call.
      db.onversionchange = () => {
        db.close();
        if (opening === pending) opening = null;
      };
      db.onclose = () => {
        if (opening === pending) opening = null;
      };
      return db;
    });
    opening = pending;
    pending.catch(() => {
      if (opening === pending) opening = null; // try again on the next call
    });
    return pending;
  }

  /**
   * Run `body` in one transaction; resolves with its result once the transaction commits, or
   * rejects with E_STORAGE naming the request's error (or the aborted transaction's).
   * @template T
   * @param {IDBTransactionMode} mode
   * @param {string} what
   * @param {(files: IDBObjectStore, meta: IDBObjectStore, tx: IDBTransaction) => () => T} body returns a reader of the result
   * @returns {Promise<T>}
   */
  async function transaction(mode, what, body) {
    for (let attempt = 0; ; attempt++) {
      const db = await database();
      /** @type {IDBTransaction} */
      let tx;
      try {
        tx = db.transaction(STORES, mode);
      } catch (error) {
        // A connection closed under us (another tab's upgrade, the browser): open again once.
        if (opening !== null && (await opening.catch(() => null)) === db) opening = null;
        if (attempt === 0) continue;
        throw storageError(what, error);
      }
      return new Promise((resolve, reject) => {
        /** @type {unknown} */
        let failure = null;
        tx.onerror = (event) => {
          // The failing request's error; the transaction's own is still null while this runs.
          if (!event.defaultPrevented) failure ??= /** @type {IDBRequest} */ (event.target)?.error ?? null;
        };
        tx.onabort = () => reject(storageError(what, failure ?? tx.error ?? null));
        let result;
        try {
          result = body(tx.objectStore(FILES), tx.objectStore(META), tx);
        } catch (error) {
          failure ??= error;
          try {
            tx.abort();
          } catch {
            reject(storageError(what, error));
          }
          return;
        }
        tx.oncomplete = () => resolve(result());
      });
    }
  }

  /** The bytes as an ArrayBuffer of their own (one copy unless they fill their buffer). @param {Uint8Array} bytes */
  function bufferOf(bytes) {
    if (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer) {
      return bytes.buffer;
    }
    return bytes.slice().buffer;
  }

  /** Stored value -> Uint8Array, or null for a record of another shape (a Blob is read after the transaction). */
  async function bytesOf(value) {
    if (value instanceof Uint8Array) return value;
    if (value instanceof ArrayBuffer) return new Uint8Array(value);
    if (typeof Blob === 'function' && value instanceof Blob) {
      try {
        return new Uint8Array(await value.arrayBuffer());
      } catch (error) {
        throw storageError('reading the stored Blob failed', error);
      }
    }
    return null;
  }

  /** Is this put() failure the engine refusing a Blob? @param {unknown} error */
  const blobRefused = (error) => BLOB_REFUSED.has(/** @type {any} */ (error)?.name);

  return {
    kind: 'indexeddb',
    async get(key) {
      const found = await transaction('readonly', 'reading failed', (files, meta) => {
        const file = files.get(key);
        const info = meta.get(key);
        return () => ({ value: file.result, record: info.result });
      });
      if (found.value === undefined || found.value === null) return null;
      const bytes = await bytesOf(found.value);
      if (bytes === null) return null; // another shape of record: as if nothing were stored (the next set replaces it)
      const { record } = found;
      return { bytes, meta: record && typeof record === 'object' && !Array.isArray(record) ? record : {} };
    },
    async set(key, bytes, meta) {
      const record = { ...meta };
      const write = (/** @type {boolean} */ asBlob) => transaction('readwrite', 'writing failed', (files, store) => {
        if (asBlob) {
          /** @type {IDBRequest} */
          let request;
          try {
            request = files.put(new Blob([/** @type {BlobPart} */(bytes)], { type: 'application/octet-stream' }), key);
          } catch (error) {
            if (!blobRefused(error)) throw error;
            blobs = false; // refused at once (DataCloneError): the ArrayBuffer, same transaction
            files.put(bufferOf(bytes), key);
            store.put(record, key);
            return () => undefined;
          }
          request.onerror = (event) => {
            if (!blobRefused(request.error)) return;
            // Refused when the Blob was prepared (UnknownError): keep the transaction, store the ArrayBuffer.
            event.preventDefault();
            blobs = false;
            files.put(bufferOf(bytes), key);
          };
        } else {
          files.put(bufferOf(bytes), key);
        }
        store.put(record, key);
        return () => undefined;
      });
      if (!blobs) return write(false);
      try {
        await write(true);
      } catch (error) {
        // An engine that aborts the whole transaction over the Blob: once more, as an ArrayBuffer.
        if (!(error instanceof BloomgateError) || !blobRefused(error.cause)) throw error;
        blobs = false;
        await write(false);
      }
    },
    async setMeta(key, meta) {
      await transaction('readwrite', 'writing failed', (files, store) => {
        store.put({ ...meta }, key);
        return () => undefined;
      });
    },
    async delete(key) {
      await transaction('readwrite', 'deleting failed', (files, meta) => {
        files.delete(key);
        meta.delete(key);
        return () => undefined;
      });
    },
    close() {
      const pending = opening;
      opening = null;
      pending?.then((db) => db.close(), () => {});
    },
  };
}
