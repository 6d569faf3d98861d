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
 *  3. With publisher keys (the caller's `keys` and `threshold`, or the ones a
 *     filter from openFilter was opened with), rule 1 is not enough: whoever
 *     hosts the endpoint could write any manifest. The manifest must be
 *     version 2, signed by `threshold` of the keys, not expired, and rule 1
 *     must hold for its signed fields. Its `root` then authenticates every
 *     reply: the client fetches `{base}/{block}.proof` beside the reply,
 *     recomputes the prefix's leaf from the reply's real rows (js/merkle.js)
 *     and walks to the root. A reply that does not reach the signed root is an
 *     error, never "clean". Rule 2 still holds for the public service, over
 *     https only; any other endpoint without a signed manifest is refused.
 *
 * Everything else — an unknown endpoint's 404, an empty reply where padding
 * was asked, a store of another list, a half-written export (its manifest
 * comes last), an unsigned or forged manifest or reply when keys are given —
 * is an E_ESCALATION error for the caller's `onError`.
 *
 * Manifests are fetched once per endpoint and fetch function and kept for
 * five minutes ("no manifest" for one); a failed fetch is not kept. A new
 * `fetch` function (options.fetch) starts with an empty cache.
 */
import { CanonicalWriter, hexBytes } from './canonical.js';
import { BloomgateError } from './errors.js';
import { privateGet } from './http.js';
import { blockDigits, merkleHasher, validShape, verifyLeaf } from './merkle.js';
import { CLOCK_SKEW_SECONDS, keySetFromOptions, MAX_SIGNED_LIFETIME_SECONDS, parseSignatures, verifyThreshold } from './signature.js';
import { parseValues } from './values.js';
import * as wasm from './wasm/index.js';

export const MANIFEST_NAME = 'manifest.json';
export const MANIFEST_FORMAT = 'bloomgate-escalation';
/** Unsigned manifests; version 2 adds the Merkle root and signatures (rule 3). */
export const MANIFEST_VERSION = 1;
export const SIGNED_MANIFEST_VERSION = 2;
/** The domain of the canonical bytes a version 2 manifest's signatures cover. */
export const MANIFEST_DOMAIN = 'bloomgate-escalation-manifest/2';
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
/** A proof is 640 bytes (range) or ~1 KB (hashes, 16 siblings and the block's leaves); far more is not one. */
const MAX_PROOF_BYTES = 256 * 1024;
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
 * Version 2 adds `root`, `depth`, `blockBits`, `expires` (seconds since 1970, 0: none) and
 * `signatures` (kept unparsed until a caller with keys checks them). A hashes endpoint over a
 * labelled store adds `values` ({ meaning: 'threat', labels }): its reply rows are `HASH:VALUE`.
 * @typedef {{ url: string, format: string, version: number, protocol: 'range' | 'hashes', hashType: string,
 *   listId: string, generation: number, records: number, minCount: number,
 *   padding: 'none' | 'request' | 'static', notFound: 'error' | 'empty',
 *   root?: string, depth?: number, blockBits?: number, expires?: number, signatures?: unknown,
 *   values?: import('./values.js').ValueMeaning }} Manifest
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
  if (value.version !== MANIFEST_VERSION && value.version !== SIGNED_MANIFEST_VERSION) {
    throw malformed(url, `version ${value.version} is not ${MANIFEST_VERSION} or ${SIGNED_MANIFEST_VERSION} (upgrade bloomgate)`);
  }
  if (value.protocol !== protocol) throw malformed(url, `it describes a '${value.protocol}' endpoint, not '${protocol}'`);
  if (value.hashType !== PROTOCOLS[protocol]) throw malformed(url, `hash type '${value.hashType}', expected '${PROTOCOLS[protocol]}'`);
  if (typeof value.listId !== 'string' || !/^[0-9a-f]{32}$/.test(value.listId)) throw malformed(url, 'listId must be 32 lowercase hex digits');
  for (const field of ['generation', 'records', 'minCount']) {
    if (!Number.isSafeInteger(value[field]) || value[field] < 0) throw malformed(url, `${field} must be a non-negative integer`);
  }
  if (!PADDING.has(value.padding)) throw malformed(url, `padding must be one of ${[...PADDING].join(', ')}`);
  if (!NOT_FOUND.has(value.notFound)) throw malformed(url, `notFound must be one of ${[...NOT_FOUND].join(', ')}`);
  if (value.values !== undefined) {
    // Only a hashes endpoint carries values: its threat labels (docs/FORMAT.md).
    const values = parseValues(value.values);
    if (protocol !== 'hashes' || values?.meaning !== 'threat') throw malformed(url, 'values must be a hashes endpoint\'s threat labels: 1 to 256 distinct labels of 1 to 64 bytes');
    value.values = values;
  }
  if (value.version === SIGNED_MANIFEST_VERSION) {
    if (typeof value.root !== 'string' || !/^[0-9a-f]{64}$/.test(value.root)) throw malformed(url, 'root must be 64 lowercase hex digits');
    if (!validShape(protocol, value.depth, value.blockBits)) {
      throw malformed(url, `depth ${value.depth} and blockBits ${value.blockBits} are not a ${protocol} tree (depth ${protocol === 'range' ? 20 : 32}, blockBits a multiple of 4 below it)`);
    }
    if (value.expires === undefined) value.expires = 0;
    if (!Number.isSafeInteger(value.expires) || value.expires < 0) throw malformed(url, 'expires must be seconds since 1970 (0 or absent: none)');
  }
  return Object.freeze({ ...value, url });
}

/**
 * The canonical bytes a version 2 manifest's signatures cover (docs/FORMAT.md).
 * @param {Omit<Manifest, 'url' | 'format' | 'version'>} manifest
 */
export function manifestBytes(manifest) {
  const writer = new CanonicalWriter(MANIFEST_DOMAIN)
    .text(manifest.protocol)
    .text(manifest.hashType)
    .fixed(hexBytes(manifest.listId), 16)
    .u64(manifest.generation)
    .u64(manifest.records)
    .u64(manifest.minCount)
    .text(manifest.padding)
    .text(manifest.notFound)
    .u8(/** @type {number} */ (manifest.depth))
    .u8(/** @type {number} */ (manifest.blockBits))
    .fixed(hexBytes(/** @type {string} */ (manifest.root)), 32)
    .u64(manifest.expires ?? 0);
  // A labelled store's labels, covered only when present: an unlabelled manifest's bytes are as they were.
  if (manifest.values?.meaning === 'threat') {
    writer.text('values').u32(manifest.values.labels.length);
    for (const label of manifest.values.labels) writer.text(label);
  }
  return writer.finish();
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
 * The publisher keys a check trusts and the one list they bind it to; null: no keys.
 * Keys: the caller's `keys` and `threshold`, else those a filter from openFilter was opened with
 * (its `trust`). List: the caller's `listId`, else the list that filter is bound to. With keys
 * and neither, it is a usage error: one publisher key may sign several lists, and an endpoint of
 * another list (or its older export) must never turn a listed item "clean" (rule 3).
 * @param {any} options
 * @param {any} filter
 * @param {string} where e.g. 'checkPassword'
 * @returns {Binding | null}
 */
export function trustOf(options, filter, where) {
  const listId = listIdOption(options.listId, where);
  const trust = filter?.trust ?? null;
  const keys = keySetFromOptions(options.keys, options.threshold, where) ??
    (trust ? keySetFromOptions(trust.keys, trust.threshold, `${where} (the filter's keys)`) : null);
  if (keys === null) return null;
  const bound = listId ?? (typeof trust?.listId === 'string' ? trust.listId : null);
  if (bound === null) {
    throw new TypeError(`${where}: with keys, pass listId too — the 32 hex digits 'bloomgate export-ranges' and 'bloomgate publish' print ` +
      'under "client options" — or a filter from openFilter() opened with keys and listId: it binds the check to that one list, so ' +
      'an endpoint of another list the same keys signed cannot answer "not listed"');
  }
  if (filter && typeof filter.listId === 'string' && filter.listId !== bound) {
    throw new BloomgateError('E_LIST', `${where}: the filter is of list ${filter.listId}, not list ${bound} this check is bound to (listId)`);
  }
  return Object.freeze({ keys: keys.keys, threshold: keys.threshold, listId: bound });
}

/** `listId` as given to a check: 32 hex digits (lowercased), or null when absent. */
function listIdOption(value, where) {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || !/^[0-9a-f]{32}$/i.test(value)) throw new TypeError(`${where}: listId must be 32 hex digits`);
  return value.toLowerCase();
}

/**
 * @typedef {import('./signature.js').KeySet & { listId: string }} Binding
 */

/** listId + key set -> the newest generation a signed endpoint manifest of it was believed at, in this page. */
const newestGeneration = new Map();

/** manifest -> Map(key set -> Promise of the verified root); one verification per manifest and key set. */
const verified = new WeakMap();

/**
 * What authenticates this endpoint's replies under `keys` (rule 3): the signed root and tree shape.
 * Without keys, null (rules 1 and 2 as they are). Throws E_ESCALATION when the manifest is
 * missing, unsigned, signed by other keys, expired, or names another list.
 * @param {Readonly<Manifest> | null} manifest
 * @param {{ listId: string, generation: number, minCount?: number } | null} list
 * @param {Binding | null} keys from trustOf: the keys and the list they bind the check to
 * @param {string} base the endpoint
 * @param {'range' | 'hashes'} protocol
 * @returns {Promise<{ root: Uint8Array, shape: import('./merkle.js').TreeShape } | null>}
 */
export async function authorityOf(manifest, list, keys, base, protocol) {
  if (manifest) checkManifestFor(manifest, list);
  if (keys === null) return null;
  if (!manifest) {
    if (protocol === 'range' && isPublicRangeService(base) && String(base).startsWith('https:')) return null; // rule 2, over TLS
    throw new BloomgateError('E_ESCALATION',
      `${protocol} endpoint ${base} has no signed manifest, and publisher keys are given: its "not listed" cannot be trusted ` +
      `(export it with 'bloomgate export-ranges --sign KEY' or serve it with 'bloomgate serve --sign KEY')`);
  }
  if (manifest.version !== SIGNED_MANIFEST_VERSION) {
    throw new BloomgateError('E_ESCALATION',
      `the manifest at ${manifest.url} is unsigned (version ${manifest.version}), and publisher keys are given: not trusted ` +
      `(re-export with 'bloomgate export-ranges --sign KEY', or serve with 'bloomgate serve --sign KEY')`,
      { cause: new BloomgateError('E_SIGNATURE', `the escalation manifest at ${manifest.url} is unsigned`) });
  }
  let byKeys = verified.get(manifest);
  if (!byKeys) verified.set(manifest, (byKeys = new Map()));
  const id = `${keys.threshold} ${keys.keys.map((key) => key.id).join(' ')}`;
  let check = byKeys.get(id);
  if (!check) {
    check = (async () => {
      const what = `the ${protocol} manifest at ${manifest.url}`;
      await verifyThreshold(manifestBytes(manifest), parseSignatures(manifest.signatures, what), keys, what);
      return hexBytes(/** @type {string} */ (manifest.root));
    })();
    byKeys.set(id, check);
  }
  let root;
  try {
    root = await check;
  } catch (/** @type {any} */ error) {
    throw new BloomgateError('E_ESCALATION', `${error?.message ?? error}: its replies are not trusted`, { cause: error });
  }
  const expires = /** @type {number} */ (manifest.expires);
  const refused = (code, detail) => new BloomgateError('E_ESCALATION', `the signed manifest at ${manifest.url} ${detail}: its replies are not trusted`,
    { cause: new BloomgateError(code, `the escalation manifest at ${manifest.url} ${detail}`) });
  if (manifest.listId !== keys.listId) throw refused('E_LIST', `serves list ${manifest.listId}, not list ${keys.listId} this check is bound to`);
  if (expires === 0) {
    throw refused('E_EXPIRED', "has no expiry, so a replay of it would work for ever (re-export with 'bloomgate export-ranges --sign', " +
      "or serve with 'bloomgate serve --sign': both sign an expiry)");
  }
  const now = Date.now();
  if (now >= expires * 1000) throw refused('E_EXPIRED', `expired at ${new Date(expires * 1000).toISOString()}`);
  if (expires * 1000 > now + (MAX_SIGNED_LIFETIME_SECONDS + CLOCK_SKEW_SECONDS) * 1000) throw refused('E_EXPIRED', 'claims an expiry more than 366 days ahead (the CLI signs at most 366 days)');
  // Never older than a generation of this list already believed here (a replayed older export).
  const seenKey = `${keys.listId} ${id}`;
  const newest = newestGeneration.get(seenKey) ?? -1;
  if (manifest.generation < newest) {
    throw refused('E_STALE', `holds generation ${manifest.generation} of list ${keys.listId}, older than generation ${newest} already believed here (a replayed export)`);
  }
  newestGeneration.set(seenKey, manifest.generation);
  return { root, shape: { depth: /** @type {number} */ (manifest.depth), blockBits: /** @type {number} */ (manifest.blockBits) } };
}

/**
 * The proof a reply for `prefix` (hex) is checked against: `{base}/{block}.proof`, binary.
 * @param {string} base
 * @param {string} prefix the reply's hex prefix
 * @param {import('./merkle.js').TreeShape} shape
 * @param {{ fetch: typeof fetch, signal?: AbortSignal, timeoutMs: number, endpoint: string }} request
 */
export async function fetchProof(base, prefix, shape, request) {
  // Named in the case of the protocol's replies: range uppercase, hashes lowercase (static hosts are case-sensitive).
  const { bytes } = await privateGet(endpointUrl(base, `${prefix.slice(0, blockDigits(shape))}.proof`), {
    ...request,
    limit: MAX_PROOF_BYTES,
    what: 'proof',
    binary: true,
  });
  return /** @type {Uint8Array} */ (bytes);
}

/**
 * The leaf and node hashing of js/merkle.js over the wasm SHA-256 (the module is ready by now).
 * @type {import('./merkle.js').Hasher | null}
 */
let hasher = null;

/**
 * Does the reply for `prefix` (its leaf's record bytes, js/merkle.js) reach the signed root?
 * Throws E_ESCALATION ("reply not authenticated") when it does not.
 * @param {{ root: Uint8Array, shape: import('./merkle.js').TreeShape }} authority from authorityOf
 * @param {string} prefix the reply's hex prefix (5 or 8 digits)
 * @param {Uint8Array} leafRecords
 * @param {Uint8Array} proof from fetchProof
 * @param {string} base the endpoint, for the message
 */
export function checkReply(authority, prefix, leafRecords, proof, base) {
  const hashing = (hasher ??= merkleHasher((bytes) => wasm.sha256(bytes)));
  const leaf = hashing.leaf(leafRecords);
  const problem = verifyLeaf(proof, parseInt(prefix, 16), leaf, authority.root, authority.shape, hashing);
  if (problem !== null) {
    throw new BloomgateError('E_ESCALATION', `the reply of ${base} for prefix ${prefix.toUpperCase()} is not authenticated: ${problem}`);
  }
}

/**
 * The manifest of an endpoint that serves `store` (a StoreReader): what
 * `bloomgate serve` answers and `bloomgate export-ranges` writes last. With a
 * `root` (hex) and tree `shape`, a version 2 manifest for `sign` to sign:
 * `sign(bytes)` returns its `signatures` array.
 * @param {import('./store.js').StoreReader} store
 * @param {{ protocol: 'range' | 'hashes', padding: 'none' | 'request' | 'static', notFound: 'error' | 'empty',
 *   root?: string, shape?: import('./merkle.js').TreeShape, expires?: number,
 *   sign?: (bytes: Uint8Array) => Array<{ keyid: string, sig: string }> }} how
 */
export function storeManifest(store, { protocol, padding, notFound, root, shape, expires, sign }) {
  if (root !== undefined && shape !== undefined) {
    const fields = {
      ...storeManifest(store, { protocol, padding, notFound }),
      version: SIGNED_MANIFEST_VERSION, depth: shape.depth, blockBits: shape.blockBits, root, expires: expires ?? 0,
    };
    return { ...fields, signatures: sign ? sign(manifestBytes(fields)) : [] };
  }
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
    ...(Array.isArray(store.labels) && { values: { meaning: 'threat', labels: [...store.labels] } }),
  };
}

/** A filter's identity as the trust check reads it; null without a filter. */
export function listOf(filter, withMinCount) {
  if (!filter) return null;
  const listId = typeof filter.listId === 'string' ? filter.listId : UNNAMED;
  const generation = Number.isSafeInteger(filter.generation) ? filter.generation : 0;
  return withMinCount ? { listId, generation, minCount: filter.minCount ?? 1 } : { listId, generation };
}
