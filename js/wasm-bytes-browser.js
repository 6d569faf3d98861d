// @ts-check
/**
 * wasm-bytes-browser.js — the module fetched as a file: next to the package,
 * or where a bundler emitted it (package.json maps `#wasm-bytes` here for
 * webpack; wasm-bytes-bundle.js uses it in Vite builds; both bundlers turn
 * `new URL('…', import.meta.url)` into a hashed asset). Returns the Response so the caller can compile while
 * the bytes arrive. Pages with a strict CSP or extensions that cannot fetch
 * may instead pass bytes or a compiled WebAssembly.Module to init().
 */
import { moduleFetchError } from './errors.js';

/**
 * @param {string | URL} [location] URL of bloomgate.wasm; defaults to the one next to this package
 * @returns {Promise<Response>}
 */
export async function loadWasmBytes(location = new URL('../wasm/bloomgate.wasm', import.meta.url)) {
  let response;
  try {
    response = await fetch(location);
  } catch (/** @type {any} */ error) {
    throw moduleFetchError(location, String(error?.message ?? error), error);
  }
  if (!response.ok) {
    response.body?.cancel?.().catch(() => {});
    throw moduleFetchError(response.url || location, `HTTP ${response.status}`);
  }
  return response;
}
