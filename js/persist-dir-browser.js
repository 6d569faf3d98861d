// @ts-check
/**
 * persist-dir-browser.js — outside Node there are no directories to keep a
 * filter in (package.json maps `#persist-dir` here for every non-Node
 * condition; pages, workers and extensions use IndexedDB, persist-idb.js).
 */
import { BloomgateError } from './errors.js';

export function defaultDirectory() {
  return null;
}

/** @returns {never} */
export function createDirectoryStorage() {
  throw new BloomgateError('E_UNSUPPORTED', 'directoryStorage() needs Node; in browsers, workers and extensions use indexedDbStorage()');
}
