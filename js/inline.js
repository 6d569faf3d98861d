// @ts-check
/**
 * inline.js — 'bloomgate/inline': the same API as 'bloomgate', with the wasm
 * module carried in the JavaScript (base64, js/inline-module.js, generated at
 * build time) and instantiated from it on import. Nothing is fetched, so it
 * works with any bundler and no configuration, in a single-file bundle, and
 * on pages without a bundler (import it by relative path). Costs 4/3 of the
 * module's bytes in the JavaScript (see the README for the gzip figure).
 * A strict CSP still needs 'wasm-unsafe-eval': compiling bytes is compiling.
 */
import { init } from './wasm/index.js';
import { wasmBytes } from './wasm-bytes-inline.js';

// Started now; a failure (a CSP without 'wasm-unsafe-eval') surfaces from the
// first call that needs the module, which tries again.
init(wasmBytes()).catch(() => {});

export * from './index.js';
