// @ts-check
/**
 * wasm-bytes-inline.js — the module carried in the JavaScript, as base64 in
 * js/inline-module.js. That file is generated from wasm/bloomgate.wasm by
 * scripts/build-inline.mjs (npm run build, prepack, the tests) and is not
 * committed; it ships in the npm package.
 *
 * package.json maps `#wasm-bytes` here for bundles made for Node (no .wasm
 * file sits beside them), wasm-bytes-bundle.js uses it for browser bundlers
 * that do not emit `new URL('…', import.meta.url)` files (esbuild, rollup),
 * and js/inline.js ('bloomgate/inline') everywhere.
 * Cost: base64 is 4/3 of the module's bytes; after gzip the difference is
 * smaller (see the README).
 */
import base64 from './inline-module.js';
import { loadWasmBytes as fetchWasm } from './wasm-bytes-browser.js';

/** The module's bytes, decoded afresh (a new ArrayBuffer each call). */
export function wasmBytes() {
  const fromBase64 = /** @type {any} */ (Uint8Array).fromBase64;
  if (typeof fromBase64 === 'function') return fromBase64(base64);
  const text = atob(base64);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return bytes;
}

/**
 * @param {string | URL} [location] a URL to fetch instead of the inline bytes
 * @returns {Promise<Uint8Array | Response>}
 */
export async function loadWasmBytes(location) {
  return location === undefined ? wasmBytes() : fetchWasm(location);
}
