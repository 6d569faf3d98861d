/**
 * wasm-bytes-browser.js — where browsers, workers and extensions find the
 * module (package.json maps `#wasm-bytes` here for every non-Node condition).
 * Returns the Response so the caller can compile while the bytes arrive.
 * Pages with a strict CSP or extensions that cannot fetch may instead pass
 * bytes or a compiled WebAssembly.Module to init().
 */

/**
 * @param {string | URL} [location] URL of bloomgate.wasm; defaults to the one next to this package
 * @returns {Promise<Response>}
 */
export async function loadWasmBytes(location = new URL('../wasm/bloomgate.wasm', import.meta.url)) {
  return fetch(location);
}
