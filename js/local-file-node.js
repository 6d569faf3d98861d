// @ts-check
/**
 * local-file-node.js — loadFilter() of a file path or a file: URL in Node
 * (package.json maps `#local-file` here under the "node" condition; browsers
 * get local-file-browser.js, which imports no Node built-ins).
 *
 * The file is streamed from disk as a Response, so it goes through exactly
 * the checks a download does (header first, length, checksum, integrity).
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';

import { BloomgateError } from './errors.js';

/** A scheme ("https:", "file:"), but not a Windows drive letter ("C:\\"). */
const SCHEME = /^[a-z][a-z0-9+.-]*:/i;
const DRIVE = /^[a-z]:[\\/]/i;

/**
 * @param {string | URL} location
 * @returns {Promise<Response | null>} the file as a Response, or null when `location` is not local
 */
export async function openLocalFile(location) {
  let path;
  if (location instanceof URL) {
    if (location.protocol !== 'file:') return null;
    path = fileURLToPath(location);
  } else if (SCHEME.test(location) && !DRIVE.test(location)) {
    if (!/^file:/i.test(location)) return null;
    path = fileURLToPath(location);
  } else {
    path = location;
  }
  let info;
  try {
    info = await stat(path);
  } catch (/** @type {any} */ error) {
    throw new BloomgateError('E_FETCH', `could not read ${path}: ${error.code === 'ENOENT' ? 'no such file' : error.message}`, { cause: error });
  }
  if (!info.isFile()) throw new BloomgateError('E_FETCH', `could not read ${path}: not a regular file`);
  // node:stream/web's ReadableStream is the one Response takes; the DOM and Node typings name it apart.
  const stream = /** @type {ReadableStream} */ (/** @type {unknown} */ (Readable.toWeb(createReadStream(path, { highWaterMark: 1 << 20 }))));
  return new Response(stream, { headers: { 'content-length': String(info.size) } });
}
