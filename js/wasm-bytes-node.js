/**
 * wasm-bytes-node.js — where Node finds the module's bytes (package.json maps
 * `#wasm-bytes` here under the "node" condition). Browsers get
 * wasm-bytes-browser.js instead, which imports no Node built-ins.
 */
import { readFile } from 'node:fs/promises';

/**
 * @param {string | URL} [location] file path, file: URL or http(s) URL; defaults to the packaged module
 * @returns {Promise<Uint8Array | Response>} the bytes (local files) or the Response (remote URLs)
 */
export async function loadWasmBytes(location = new URL('../wasm/bloomgate.wasm', import.meta.url)) {
  if (typeof location === 'string' && /^[a-z][a-z0-9+.-]*:/i.test(location) && !/^[a-z]:[\\/]/i.test(location)) {
    location = new URL(location);
  }
  if (location instanceof URL && location.protocol !== 'file:') return fetch(location);
  return readFile(location);
}
