// @ts-check
/**
 * entry-lite.js — what scripts/build-bundle.mjs bundles into js/lite.mjs,
 * 'bloomgate/lite': only what a page needs for its first answer (loadFilter,
 * BloomFilter, sizeFor, init, BloomgateError), with the wasm module carried
 * as base64 and its compile started on import, as in js/inline.js. Pages that
 * need more (gates, passwords, URLs, openFilter) import 'bloomgate/bundle' or
 * 'bloomgate', or import the rest later: a filter from one works with the other
 * only when both are the same file, so a page picks one.
 */
import { init } from './wasm/index.js';
import { wasmBytes } from './wasm-bytes-inline.js';

// Started now; a failure (a CSP without 'wasm-unsafe-eval') surfaces from the
// first call that needs the module, which tries again.
init(wasmBytes()).catch(() => {});

export { BloomFilter, sizeFor } from './filter.js';
export { loadFilter } from './load.js';
export { BloomgateError } from './errors.js';
export { init } from './wasm/index.js';
