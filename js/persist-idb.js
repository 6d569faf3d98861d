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
 * object stores, written in one transaction: `files` (key -> ArrayBuffer)
 * and `meta` (key -> object), so a check that changes only the meta (a 304,
 * say) does not rewrite megabytes, and a write that fails (QuotaExceededError)
 * leaves the previous copy whole: IndexedDB commits a transaction entirely
 * or not at all.
 *
 * Nothing here imports anything: the module loads anywhere, and touches
 * `indexedDB` only when a method is called.
 */

const FILES = 'files';
const META = 'meta';

/**
 * @typedef {{ get(key: string): Promise<{ bytes: Uint8Array, meta: Record<string, unknown> } | null>,
 *   set(key: string, bytes: Uint8Array, meta: Record<string, unknown>): Promise<void>,
 *   setMeta(key: string, meta: Record<string, unknown>): Promise<void>,
 *   delete(key: string): Promise<void>, close(): void, kind: string }} IndexedDbStorage
 */

/** @param {IDBRequest | IDBTransaction} target */
function failure(target, what) {
  const error = /** @type {any} */ (target).error;
  if (error) return error;
  return new Error(`IndexedDB: ${what} failed`);
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

  /** @returns {Promise<IDBDatabase>} */
  function database() {
    if (opening !== null) return opening;
    const factory = options.indexedDB ?? /** @type {any} */ (globalThis).indexedDB;
    if (!factory || typeof factory.open !== 'function') {
      return Promise.reject(new Error('IndexedDB is not available here'));
    }
    opening = new Promise((resolve, reject) => {
      const request = factory.open(name, 1);
      request.onupgradeneeded = () => {
        const db = request.result;
        if (!db.objectStoreNames.contains(FILES)) db.createObjectStore(FILES);
        if (!db.objectStoreNames.contains(META)) db.createObjectStore(META);
      };
      request.onsuccess = () => {
        const db = request.result;
        // Another tab upgrading the database: let it, and open again on the next call.
        db.onversionchange = () => {
          db.close();
          opening = null;
        };
        db.onclose = () => {
          opening = null;
        };
        resolve(db);
      };
      request.onerror = () => {
        opening = null;
        reject(failure(request, `opening database '${name}'`));
      };
      request.onblocked = () => {
        // An older connection elsewhere holds the database; onsuccess follows once it closes.
      };
    });
    return opening;
  }

  /**
   * Run `body` in one transaction; resolves with its result once the transaction commits.
   * @template T
   * @param {IDBTransactionMode} mode
   * @param {(files: IDBObjectStore, meta: IDBObjectStore) => () => T} body returns a reader of the result
   * @returns {Promise<T>}
   */
  async function transaction(mode, body) {
    const db = await database();
    return new Promise((resolve, reject) => {
      /** @type {IDBTransaction} */
      let tx;
      try {
        tx = db.transaction([FILES, META], mode);
      } catch (error) {
        opening = null; // a closed connection: open again next time
        reject(error);
        return;
      }
      const result = body(tx.objectStore(FILES), tx.objectStore(META));
      tx.oncomplete = () => resolve(result());
      tx.onerror = () => reject(failure(tx, mode === 'readonly' ? 'reading' : 'writing'));
      tx.onabort = () => reject(failure(tx, 'a transaction'));
    });
  }

  /** What is stored for the bytes: a Blob, or a tight ArrayBuffer (one copy unless they fill their buffer). */
  function valueOf(bytes) {
    if (options.blob !== false && typeof Blob === 'function') return new Blob([bytes], { type: 'application/octet-stream' });
    if (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer) {
      return bytes.buffer;
    }
    return bytes.slice().buffer;
  }

  /** Stored value -> Uint8Array (a Blob is read after the transaction, which cannot wait for it). */
  async function bytesOf(value) {
    if (value instanceof Uint8Array) return value;
    if (value instanceof ArrayBuffer) return new Uint8Array(value);
    if (typeof Blob === 'function' && value instanceof Blob) return new Uint8Array(await value.arrayBuffer());
    throw new TypeError('IndexedDB holds something other than filter bytes under this key');
  }

  return {
    kind: 'indexeddb',
    async get(key) {
      const found = await transaction('readonly', (files, meta) => {
        const file = files.get(key);
        const info = meta.get(key);
        return () => ({ value: file.result, record: info.result });
      });
      if (found.value === undefined || found.value === null) return null;
      const { record } = found;
      return { bytes: await bytesOf(found.value), meta: record && typeof record === 'object' ? record : {} };
    },
    async set(key, bytes, meta) {
      const value = valueOf(bytes);
      await transaction('readwrite', (files, store) => {
        files.put(value, key);
        store.put({ ...meta }, key);
        return () => undefined;
      });
    },
    async setMeta(key, meta) {
      await transaction('readwrite', (files, store) => {
        store.put({ ...meta }, key);
        return () => undefined;
      });
    },
    async delete(key) {
      await transaction('readwrite', (files, meta) => {
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
