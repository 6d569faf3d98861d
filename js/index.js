/**
 * bloomgate — Bloom filters in WebAssembly for local "definitely not / maybe"
 * checks. See index.d.ts for the documented API.
 */
export { BloomFilter, sizeFor } from './filter.js';
export { loadFilter } from './load.js';
export { inspectFile } from './inspect.js';
export { BloomgateError } from './errors.js';
export { init } from './wasm.js';
// The escalation layer lands here in a later issue: createGate (gate.js),
// checkPassword and hashPassword (password.js), checkUrl, canonicalizeUrl and
// urlExpressions (url.js).
