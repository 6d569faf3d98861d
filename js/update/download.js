// @ts-check
/**
 * update/download.js — fetching the files a believed manifest names, and
 * accepting them only as the manifest describes them.
 *
 * Sizes come first: a file longer than the caller's `maxBytes`, or a delta
 * that claims another target length than the manifest's, is refused before
 * anything is downloaded or allocated. Every download is bounded by its
 * manifest length, must match its SHA-256, and is validated by the core; a
 * delta is applied only to the exact file it names as its base, and its
 * result must have the manifest's SHA-256 (version 2) or checksum (version 1).
 * Requests are private (js/http.js): no credentials, no referrer, no cache,
 * no redirect followed.
 */
import { BloomgateError } from '../errors.js';
import { digestListed, sriOf } from '../integrity.js';
import { BloomFilter } from '../filter.js';
import { PRIVATE_REQUEST, privateGet } from '../http.js';
import { loadFilter } from '../load.js';
import * as wasm from '../wasm/index.js';

const subtle = globalThis.crypto?.subtle;
const useSubtle = typeof subtle?.digest === 'function';

function noop() {}

/**
 * A filter that passed its checks, ready to swap in.
 * @typedef {{ filter: BloomFilter, bytes: Uint8Array | null, source: 'full' | 'delta',
 *   checksum: string | null, sha256: Uint8Array | null, length: number, url: string }} NextFilter
 * @typedef {{ fetch: typeof fetch, timeoutMs: number, maxBytes: number }} DownloadSettings
 */

/** The stored checksum field of a .bgf (bytes 8..16, little-endian) as 16 hex digits, as inspect shows it. */
export function checksumOf(bytes) {
  if (bytes.length < 16) return null;
  return new DataView(bytes.buffer, bytes.byteOffset, 16).getBigUint64(8, true).toString(16).padStart(16, '0');
}

/** @param {Uint8Array} bytes */
export async function sha256(bytes) {
  if (useSubtle) return new Uint8Array(await subtle.digest('SHA-256', /** @type {BufferSource} */ (/** @type {unknown} */ (bytes))));
  await wasm.ready();
  return wasm.sha256(bytes);
}

/** The digest of `bytes`, which must be one of `digests`; E_INTEGRITY otherwise. */
async function checkDigest(bytes, digests, what) {
  const digest = await sha256(bytes);
  if (digestListed(digest, digests)) return digest;
  throw new BloomgateError('E_INTEGRITY', `integrity mismatch: ${what} has SHA-256 ${sriOf(digest)}, which the manifest does not list`);
}

/** Refused before any byte is fetched: a file the caller's maxBytes does not allow. */
export function checkSize(manifest, settings) {
  if (manifest.full.length > settings.maxBytes) {
    throw new BloomgateError('E_TOO_LARGE', `the filter ${manifest.full.url} is ${manifest.full.length} bytes, more than maxBytes (${settings.maxBytes})`);
  }
}

/**
 * The one-hop delta from the filter in use to the manifest's generation.
 * @param {import('./manifest.js').Manifest} manifest
 * @param {import('./manifest.js').Manifest['deltas'][number]} delta
 * @param {{ filter: BloomFilter, bytes: Uint8Array | null, checksum: string | null }} inUse
 * @param {DownloadSettings} settings
 * @param {AbortSignal} signal
 * @param {(n: number) => void} counted bytes downloaded
 * @returns {Promise<NextFilter>}
 */
export async function viaDelta(manifest, delta, inUse, settings, signal, counted) {
  if (typeof wasm.applyDelta !== 'function' || typeof wasm.deltaInfo !== 'function') {
    throw new BloomgateError('E_UNSUPPORTED', 'this build of the module cannot apply deltas');
  }
  checkSize(manifest, settings);
  const current = inUse.filter;
  const reply = await privateGet(delta.url, {
    fetch: settings.fetch,
    signal,
    timeoutMs: settings.timeoutMs,
    limit: delta.length,
    what: 'filter delta',
    endpoint: delta.url,
    binary: true,
    code: 'E_FETCH',
    bodyCode: 'E_DELTA',
  });
  const bytes = reply.bytes ?? new Uint8Array(0);
  counted(bytes.length);
  if (bytes.length !== delta.length) {
    throw new BloomgateError('E_TRUNCATED', `the delta ${delta.url} is ${bytes.length} bytes; the manifest says ${delta.length}`);
  }
  await checkDigest(bytes, delta.integrity, `the delta ${delta.url}`);
  await wasm.ready();
  const info = wasm.deltaInfo(bytes);
  if (info.listId !== current.listId) {
    throw new BloomgateError('E_LIST', `the delta ${delta.url} is for list ${info.listId}, not list ${current.listId} in use`);
  }
  if (info.targetGeneration <= current.generation) {
    throw new BloomgateError('E_STALE',
      `the delta ${delta.url} leads to generation ${info.targetGeneration}, not newer than generation ${current.generation} in use (replayed)`);
  }
  if (info.baseGeneration !== current.generation || (inUse.checksum !== null && info.baseChecksum !== inUse.checksum)) {
    throw new BloomgateError('E_DELTA_BASE',
      `the delta ${delta.url} applies to generation ${info.baseGeneration} (checksum ${info.baseChecksum}), not to the generation ${current.generation} in use (checksum ${inUse.checksum})`);
  }
  // The target's claimed size is checked against the manifest before the core allocates it.
  if (info.targetGeneration !== manifest.generation || info.targetLength !== manifest.full.length ||
    (manifest.full.checksum !== null && info.targetChecksum !== manifest.full.checksum)) {
    throw new BloomgateError('E_DELTA',
      `the delta ${delta.url} makes generation ${info.targetGeneration} (${info.targetLength} bytes, checksum ${info.targetChecksum}), not the file the manifest names`);
  }
  const target = wasm.applyDelta(inUse.bytes ?? current.serialize(), bytes);
  // Version 2: the result must be the signed file, byte for byte (XXH3 checksums prove nothing to an attacker).
  const digest = manifest.version === 2 ? await checkDigest(target, manifest.full.integrity, `the file the delta ${delta.url} makes`) : null;
  const filter = await BloomFilter.from(target);
  if (filter.listId !== manifest.listId || filter.generation !== manifest.generation) {
    filter.free();
    throw new BloomgateError('E_DELTA', `the delta ${delta.url} made a filter of another list or generation`);
  }
  return { filter, bytes: target, source: 'delta', checksum: info.targetChecksum, sha256: digest, length: target.length, url: delta.url };
}

/**
 * The manifest's full file, streamed into the module and checked as it lands.
 * @param {import('./manifest.js').Manifest} manifest
 * @param {DownloadSettings} settings
 * @param {AbortSignal} signal
 * @param {(n: number) => void} counted
 * @param {boolean} keepBytes whether the caller needs the file's bytes (to persist them)
 * @param {number | null} inUseGeneration the generation in use, of the same list (null: none)
 * @returns {Promise<NextFilter>}
 */
export async function viaFull(manifest, settings, signal, counted, keepBytes, inUseGeneration) {
  const { full } = manifest;
  checkSize(manifest, settings);
  const controller = new AbortController();
  const timeout = new BloomgateError('E_TIMEOUT', `the download of ${full.url} timed out after ${settings.timeoutMs} ms`);
  const timer = setTimeout(() => controller.abort(timeout), settings.timeoutMs);
  const onAbort = () => controller.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  let loaded = 0;
  let filter;
  try {
    filter = await loadFilter(full.url, {
      integrity: full.integrity.map(sriOf).join(' '),
      maxBytes: full.length,
      signal: controller.signal,
      fetch: privateFetch(settings.fetch),
      onProgress: (progress) => { loaded = progress.loaded; },
    });
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', onAbort);
    counted(loaded);
  }
  try {
    if (filter.listId !== manifest.listId) {
      throw new BloomgateError('E_LIST', `the filter ${full.url} is of list ${filter.listId}, not list ${manifest.listId} the manifest names`);
    }
    if (inUseGeneration !== null && filter.generation <= inUseGeneration) {
      throw new BloomgateError('E_STALE', `the filter ${full.url} is generation ${filter.generation}, not newer than generation ${inUseGeneration} in use`);
    }
    if (filter.generation !== manifest.generation) {
      throw new BloomgateError('E_MANIFEST', `the filter ${full.url} is generation ${filter.generation}; the manifest names ${manifest.generation}`);
    }
    // The bytes for the persisted copy (and the checksum the manifest names).
    const bytes = keepBytes || full.checksum !== null ? filter.serialize() : null;
    const checksum = bytes === null ? null : checksumOf(bytes);
    if (bytes !== null && bytes.length !== full.length) {
      throw new BloomgateError('E_MANIFEST', `the filter ${full.url} is ${bytes.length} bytes; the manifest says ${full.length}`);
    }
    if (full.checksum !== null && checksum !== full.checksum) {
      throw new BloomgateError('E_MANIFEST', `the filter ${full.url} has checksum ${checksum}; the manifest names ${full.checksum}`);
    }
    // loadFilter checked the bytes against the integrity; a version-2 manifest names exactly one digest.
    const digest = manifest.version === 2 ? full.integrity[0] : bytes === null ? null : await sha256(bytes);
    return { filter, bytes, source: 'full', checksum, sha256: digest, length: full.length, url: full.url };
  } catch (error) {
    filter.free();
    throw error;
  }
}

/** fetch with the private request's options; a redirect is an error, never followed. */
export function privateFetch(fetchImpl) {
  return async (input, init) => {
    const response = await fetchImpl(input, { ...PRIVATE_REQUEST, signal: init?.signal });
    if (response.type === 'opaqueredirect' || (response.status >= 300 && response.status < 400)) {
      response.body?.cancel().catch(noop);
      const to = response.headers.get('location');
      throw new BloomgateError('E_FETCH', `${String(input)} answered with a redirect${to ? ` to ${to}` : ''}; bloomgate follows no redirects`);
    }
    return response;
  };
}
