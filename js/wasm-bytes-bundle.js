// @ts-check
/**
 * wasm-bytes-bundle.js — where browser bundles other than webpack's find the
 * module (package.json maps `#wasm-bytes` here by default; webpack gets
 * wasm-bytes-browser.js, Node wasm-bytes-node.js, bundles for Node
 * wasm-bytes-inline.js).
 *
 * Vite emits `new URL('…', import.meta.url)` as a hashed asset, as webpack
 * does, but sets no condition of its own: what marks a Vite build is
 * `import.meta.env`, which Vite replaces in every module. There the module is
 * fetched as a file, and the inline copy, dead code, is dropped from the
 * bundle. Elsewhere (esbuild, rollup, ...) `import.meta.env` is undefined, the
 * asset would not exist, and the bytes come inline.
 */
import { loadWasmBytes as fetchWasm } from './wasm-bytes-browser.js';
import { wasmBytes } from './wasm-bytes-inline.js';

/**
 * @param {string | URL} [location] a URL to fetch instead
 * @returns {Promise<Uint8Array | Response>}
 */
export async function loadWasmBytes(location) {
  // @ts-ignore: import.meta.env exists in Vite builds only
  if (import.meta.env !== undefined) return fetchWasm(location);
  if (location !== undefined) return fetchWasm(location);
  return wasmBytes();
}
