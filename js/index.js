// @ts-check
/**
 * bloomgate — Bloom filters in WebAssembly for local "definitely not / maybe"
 * checks. See index.d.ts for the documented API.
 */
export { BloomFilter, sizeFor } from './filter.js';
export { loadFilter } from './load.js';
export { directoryStorage, indexedDbStorage, openFilter } from './update/index.js';
export { inspectFile } from './inspect.js';
export { BloomgateError } from './errors.js';
export { init } from './wasm/index.js';
export { createGate } from './gate.js';
export { checkPassword, hashPassword } from './password.js';
export { checkUrl, canonicalizeUrl, urlExpressions } from './url.js';
export { passwordChecker, urlChecker, watchField } from './settled.js';
