// @ts-check
/**
 * wasm-bytes-node.js — where Node finds the module's bytes (package.json maps
 * `#wasm-bytes` here under the "node" condition, outside bundlers). Browsers
 * get wasm-bytes-browser.js or wasm-bytes-inline.js instead, which import no
 * Node built-ins; bundles for Node (esbuild --platform=node, webpack's node
 * target) get wasm-bytes-inline.js, as no .wasm file sits beside them.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

import { moduleFetchError } from './errors.js';

/**
 * @param {string | URL} [location] file path, file: URL or http(s) URL; defaults to the packaged module
 * @returns {Promise<Uint8Array | Response>} the bytes (local files) or the Response (remote URLs)
 */
export async function loadWasmBytes(location) {
  if (location === undefined) {
    // A CommonJS bundle has no import.meta.url: nothing tells where the package's files are.
    const here = import.meta.url;
    if (typeof here !== 'string') {
      throw moduleFetchError('../wasm/bloomgate.wasm', 'this code was bundled without import.meta.url, so the file cannot be located');
    }
    location = new URL('../wasm/bloomgate.wasm', here);
  }
  if (typeof location === 'string' && /^[a-z][a-z0-9+.-]*:/i.test(location) && !/^[a-z]:[\\/]/i.test(location)) {
    location = new URL(location);
  }
  if (location instanceof URL && location.protocol !== 'file:') {
    let response;
    try {
      response = await fetch(location);
    } catch (/** @type {any} */ error) {
      throw moduleFetchError(location, String(error?.cause?.code ?? error?.message ?? error), error);
    }
    if (!response.ok) {
      response.body?.cancel?.().catch(() => {});
      throw moduleFetchError(location, `HTTP ${response.status}`);
    }
    return response;
  }
  try {
    return await readFile(location);
  } catch (/** @type {any} */ error) {
    const path = location instanceof URL ? fileURLToPath(location) : location;
    throw moduleFetchError(path, error?.code === 'ENOENT' ? 'no such file' : String(error?.message ?? error), error);
  }
}
