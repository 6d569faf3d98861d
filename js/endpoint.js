// @ts-check
/**
 * endpoint.js — when an escalation endpoint's "nothing here" is believed.
 *
 * A "maybe" from the filter is settled by the endpoint. A reply that lists
 * the item settles it as listed, whoever sent it. A reply that does NOT list
 * it turns the answer into "clean", so it counts only from an endpoint that
 * has shown it holds this filter's list, complete:
 *
 *  1. A bloomgate endpoint proves it with its manifest, `{base}/manifest.json`
 *     (served by `bloomgate serve`, written last by `bloomgate export-ranges`):
 *     format, protocol, hash type, the list id, generation and threshold of
 *     its store, and how it pads and answers absent prefixes. It is believed
 *     when it names the filter's list id, a generation at least the filter's
 *     (an older store can lack what the filter lists) and a threshold no
 *     higher than the filter's.
 *  2. The public breached-password service (api.pwnedpasswords.com) has no
 *     manifest. What identifies it is its documented padding: asked with
 *     `Add-Padding: true`, it answers every prefix with 800 to 1,000 rows. A
 *     range endpoint without a manifest is believed only when a padded reply
 *     has at least that many rows.
 *
 * Everything else — an unknown endpoint's 404, an empty reply where padding
 * was asked, a store of another list, a half-written export (its manifest
 * comes last) — is an E_ESCALATION error for the caller's `onError`.
 *
 * Manifests are fetched once per endpoint and fetch function and kept for
 * five minutes ("no manifest" for one); a failed fetch is not kept. A new
 * `fetch` function (options.fetch) starts with an empty cache.
 */
import { BloomgateError } from './errors.js';
import { privateGet } from './http.js';

export const MANIFEST_NAME = 'manifest.json';
export const MANIFEST_FORMAT = 'bloomgate-escalation';
export const MANIFEST_VERSION = 1;
/** The public breached-password range service; see the trust rule 2 above. */
export const PUBLIC_RANGE_HOST = 'api.pwnedpasswords.com';
/** Fewest rows of a padded reply of the public service (its documentation: 800 to 1,000). */
export const PADDED_MIN_ROWS = 800;

const PROTOCOLS = { range: 'sha1', hashes: 'sha256' };
const PADDING = new Set(['none', 'request', 'static']);
const NOT_FOUND = new Set(['error', 'empty']);
const MANIFEST_TTL_MS = 5 * 60 * 1000;
/** "No manifest" is kept for less time: an export that completes meanwhile is believed soon after. */
const ABSENT_TTL_MS = 60 * 1000;
const MAX_MANIFEST_BYTES = 64 * 1024;
/** Answers to a manifest request that mean "this endpoint has none" (S3 answers 403 for a missing key). */
const NO_MANIFEST = new Set([400, 403, 404, 410]);
const UNNAMED = '0'.repeat(32);

/** fetch function -> Map(endpoint key -> { expires, promise }) */
const manifests = new WeakMap();

/** `{base}/{name}` with exactly one slash between them. */
export function endpointUrl(base, name) {
  const text = String(base);
  return `${text.endsWith('/') ? text.slice(0, -1) : text}/${name}`;
}

function isPublicRangeService(base) {
  try {
    return new URL(String(base)).hostname === PUBLIC_RANGE_HOST;
  } catch {
    return false;
  }
}

function malformed(url, problem) {
  return new BloomgateError('E_ESCALATION', `the manifest at ${url} is malformed: ${problem}`);
}

/**
 * A manifest as parseManifest returns it: every one of these fields checked.
 * @typedef {{ url: string, format: string, version: number, protocol: 'range' | 'hashes', hashType: string,
 *   listId: string, generation: number, records: number, minCount: number,
 *   padding: 'none' | 'request' | 'static', notFound: 'error' | 'empty' }} Manifest
 */

/**
 * Parse and check a manifest's fields; anything unexpected is an error, not "absent".
 * @returns {Readonly<Manifest> | null}
 */
export function parseManifest(text, url, protocol) {
  let value;
  try {
    value = JSON.parse(text);
  } catch {
    return null; // not JSON: some other server's answer to an unknown path
  }
  if (value === null || typeof value !== 'object' || value.format !== MANIFEST_FORMAT) return null;
  if (value.version !== MANIFEST_VERSION) throw malformed(url, `version ${value.version} is not ${MANIFEST_VERSION} (upgrade bloomgate)`);
  if (value.protocol !== protocol) throw malformed(url, `it describes a '${value.protocol}' endpoint, not '${protocol}'`);
  if (value.hashType !== PROTOCOLS[protocol]) throw malformed(url, `hash type '${value.hashType}', expected '${PROTOCOLS[protocol]}'`);
  if (typeof value.listId !== 'string' || !/^[0-9a-f]{32}$/.test(value.listId)) throw malformed(url, 'listId must be 32 lowercase hex digits');
  for (const field of ['generation', 'records', 'minCount']) {
    if (!Number.isSafeInteger(value[field]) || value[field] < 0) throw malformed(url, `${field} must be a non-negative integer`);
  }
  if (!PADDING.has(value.padding)) throw malformed(url, `padding must be one of ${[...PADDING].join(', ')}`);
  if (!NOT_FOUND.has(value.notFound)) throw malformed(url, `notFound must be one of ${[...NOT_FOUND].join(', ')}`);
  return Object.freeze({ ...value, url });
}

async function fetchManifest(base, protocol, request) {
  const url = endpointUrl(base, MANIFEST_NAME);
  const { status, text } = await privateGet(url, {
    ...request,
    limit: MAX_MANIFEST_BYTES,
    what: `${protocol} manifest`,
    passStatuses: NO_MANIFEST,
  });
  return status === 200 ? parseManifest(text, url, protocol) : null;
}

/**
 * The endpoint's manifest, or null when it has none; cached per fetch function.
 * @param {{ fetch: typeof fetch, signal?: AbortSignal, timeoutMs: number, endpoint: string }} request
 */
export async function manifestOf(base, protocol, request) {
  if (protocol === 'range' && isPublicRangeService(base)) return null;
  let cache = manifests.get(request.fetch);
  if (!cache) manifests.set(request.fetch, (cache = new Map()));
  const key = `${protocol} ${String(base)}`;
  const hit = cache.get(key);
  if (hit && hit.expires > Date.now()) return hit.promise;
  const promise = fetchManifest(base, protocol, request);
  const entry = { expires: Date.now() + MANIFEST_TTL_MS, promise };
  cache.set(key, entry);
  promise.then(
    (manifest) => {
      if (manifest === null) entry.expires = Math.min(entry.expires, Date.now() + ABSENT_TTL_MS);
    },
    () => {
      if (cache.get(key) === entry) cache.delete(key);
    },
  );
  return promise;
}

/**
 * Check that a manifest describes the filter's list; throws E_ESCALATION otherwise.
 * @param {Manifest} manifest from manifestOf
 * @param {{ listId: string, generation: number, minCount?: number } | null} list the filter's identity
 */
export function checkManifestFor(manifest, list) {
  if (list === null) return; // no filter: the caller chose the endpoint as its source of truth
  const where = `the endpoint described by ${manifest.url}`;
  if (list.listId === UNNAMED) {
    throw new BloomgateError('E_ESCALATION',
      `this filter has no list id, so no endpoint can show it serves the filter's list; rebuild it with ` +
      `'bloomgate build --store' (which names the list) or '--list-id'`);
  }
  if (manifest.listId !== list.listId) {
    throw new BloomgateError('E_ESCALATION', `${where} serves list ${manifest.listId}, not this filter's list ${list.listId}`);
  }
  if (manifest.generation < list.generation) {
    throw new BloomgateError('E_ESCALATION',
      `${where} holds generation ${manifest.generation} of the list, older than the filter's ${list.generation}`);
  }
  if (list.minCount !== undefined && manifest.minCount > list.minCount) {
    throw new BloomgateError('E_ESCALATION',
      `${where} keeps only hashes seen at least ${manifest.minCount} times, the filter ${list.minCount}: its "no" would be wrong for the rest`);
  }
}

/**
 * The manifest of an endpoint that serves `store` (a StoreReader): what
 * `bloomgate serve` answers and `bloomgate export-ranges` writes last.
 * @param {import('./store.js').StoreReader} store
 * @param {{ protocol: 'range' | 'hashes', padding: 'none' | 'request' | 'static', notFound: 'error' | 'empty' }} how
 */
export function storeManifest(store, { protocol, padding, notFound }) {
  return {
    format: MANIFEST_FORMAT,
    version: MANIFEST_VERSION,
    protocol,
    hashType: PROTOCOLS[protocol],
    listId: typeof store.listId === 'string' ? store.listId : UNNAMED,
    generation: store.generation ?? 0,
    records: store.count,
    minCount: store.minCount ?? 0,
    padding,
    notFound,
  };
}

/** A filter's identity as the trust check reads it; null without a filter. */
export function listOf(filter, withMinCount) {
  if (!filter) return null;
  const listId = typeof filter.listId === 'string' ? filter.listId : UNNAMED;
  const generation = Number.isSafeInteger(filter.generation) ? filter.generation : 0;
  return withMinCount ? { listId, generation, minCount: filter.minCount ?? 1 } : { listId, generation };
}
