// @ts-check
/**
 * update/storage.js — where a live filter keeps its copy between runs:
 * IndexedDB in pages, workers and extension service workers
 * (js/persist-idb.js), a directory in Node (js/persist-dir.js, loaded only
 * there), or a caller's own object with get/set/delete.
 */
import { BloomgateError } from '../errors.js';
import { indexedDbStorage } from '../persist-idb.js';

export const IN_NODE = typeof process === 'object' && process !== null && typeof process.versions?.node === 'string' &&
  typeof window === 'undefined' && typeof (/** @type {any} */ (globalThis)).importScripts !== 'function';

/**
 * A store for the persisted copy (index.d.ts: FilterStorage).
 * @typedef {{
 *   get(key: string): any,
 *   set(key: string, bytes: Uint8Array, meta: Record<string, unknown>): any,
 *   delete(key: string): any,
 *   setMeta?: (key: string, meta: Record<string, unknown>) => any,
 *   kind?: string,
 * }} Storage
 */

// js/entry.js hands over the `#persist-dir` module it imports statically (one-chunk
// bundles); js/index.js alone imports it on first use, in Node only.
/** @type {any} */
let directoryModule = null;

/** @internal @param {{ createDirectoryStorage: Function, defaultDirectory: Function }} module */
export function registerDirectoryStorage(module) {
  directoryModule = module;
}

async function directoryImpl() {
  if (directoryModule === null) directoryModule = await import('#persist-dir');
  return directoryModule;
}

/**
 * A directory for openFilter()'s copies, in Node (atomic writes: temporary
 * file, fsync, rename). Default: the per-user cache directory
 * (~/.cache/bloomgate/filters, ~/Library/Caches/..., %LOCALAPPDATA%\...).
 * @param {string} [dir]
 */
export function directoryStorage(dir) {
  if (dir !== undefined && (typeof dir !== 'string' || dir === '')) throw new TypeError('directoryStorage(dir): dir must be a non-empty path');
  if (!IN_NODE) {
    throw new BloomgateError('E_UNSUPPORTED', 'directoryStorage() needs Node; in browsers, workers and extensions use indexedDbStorage()');
  }
  /** @type {any} */
  let store = null;
  const real = async () => {
    if (store === null) store = (await directoryImpl()).createDirectoryStorage(dir);
    return store;
  };
  return {
    kind: 'directory',
    get: async (key) => (await real()).get(key),
    set: async (key, bytes, meta) => (await real()).set(key, bytes, meta),
    setMeta: async (key, meta) => (await real()).setMeta(key, meta),
    delete: async (key) => (await real()).delete(key),
  };
}

export { indexedDbStorage };

/** The default store, one per realm: its IndexedDB connection is opened once and shared. */
/** @type {Storage | null} */
let sharedStorage = null;

/** The default store here, or null where there is none (then the filter lives in memory only). */
export function defaultStorage() {
  if (sharedStorage !== null) return sharedStorage;
  if (IN_NODE) sharedStorage = directoryStorage();
  else if (globalThis.indexedDB && typeof globalThis.indexedDB.open === 'function') sharedStorage = indexedDbStorage();
  return sharedStorage;
}

/** @param {any} storage */
export function checkStorage(storage) {
  for (const method of ['get', 'set', 'delete']) {
    if (typeof storage[method] !== 'function') {
      throw new TypeError(`openFilter(): storage must be false or an object with get(key), set(key, bytes, meta) and delete(key); ${method} is missing`);
    }
  }
  return storage;
}
