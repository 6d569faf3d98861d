// @ts-check
/**
 * update/manifest.js — the publication manifest (docs/FORMAT.md,
 * "Publication manifest"): parsing with every field checked, and the
 * canonical bytes its signatures cover.
 *
 * Version 1 is unsigned. Version 2 adds what a signature must bind: an
 * expiry, the key set that signs, the SHA-256 and length of every file, the
 * lists it replaces, and `signatures`. Only what the canonical bytes cover is
 * trusted from a signed manifest; URLs are not covered because every file is
 * checked by its signed length and digest wherever it comes from.
 */
import { CanonicalWriter, hexBytes } from '../canonical.js';
import { BloomgateError } from '../errors.js';
import { parseIntegrity } from '../integrity.js';
import { parseSignatures } from '../signature.js';
import { HEADER_SIZE } from '../wasm/index.js';

export const MANIFEST_FORMAT = 'bloomgate-filter';
export const CANONICAL_DOMAIN = 'bloomgate-filter-manifest/2';
/** A manifest larger than this is refused (E_MANIFEST) without being read further. */
export const MAX_MANIFEST_BYTES = 64 * 1024;
/** A manifest cannot make clients wait longer than a day between checks. */
export const MAX_MIN_REFRESH_SECONDS = 24 * 60 * 60;
const MAX_DELTAS = 1024;
const MAX_REPLACES = 64;
const HEX32 = /^[0-9a-f]{32}$/;
const HEX16 = /^[0-9a-f]{16}$/;

/**
 * @typedef {{ url: string, length: number, integrity: Uint8Array[] }} ManifestFile
 * @typedef {{
 *   version: 1 | 2, listId: string, generation: number, minRefreshSeconds: number,
 *   expires: number | null, keySet: number, keysUrl: string | null,
 *   replaces: Array<{ listId: string, generation: number }>,
 *   full: ManifestFile & { checksum: string | null },
 *   deltas: Array<ManifestFile & { from: number }>,
 *   signatures: import('../signature.js').Signature[],
 *   canonical: Uint8Array | null,
 * }} Manifest
 */

function manifestError(url, detail) {
  return new BloomgateError('E_MANIFEST', `the filter manifest at ${url} ${detail}`);
}

/** A manifest's integrity field -> its sha256 digests, or null when it is malformed or names none. */
function integrityDigests(text) {
  try {
    return parseIntegrity(text);
  } catch {
    return null;
  }
}

function fileUrl(value, base, where) {
  if (typeof value !== 'string' || value === '') throw manifestError(base, `has no ${where}.url`);
  let url;
  try {
    url = new URL(value, base);
  } catch {
    throw manifestError(base, `has a ${where}.url that is not a URL: ${JSON.stringify(value.slice(0, 200))}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw manifestError(base, `names ${where}.url ${url.protocol} (only http: and https: are fetched)`);
  }
  url.hash = '';
  return url.href;
}

function fileLength(value, base, where, min) {
  if (!Number.isSafeInteger(value) || value < min) {
    throw manifestError(base, `has a ${where}.length that is not an integer of at least ${min}: ${JSON.stringify(value)}`);
  }
  return value;
}

function fileIntegrity(value, base, where, version) {
  const digests = integrityDigests(value);
  if (digests === null) throw manifestError(base, `has no usable ${where}.integrity ("sha256-<base64>")`);
  // A signed manifest binds one digest per file: several would leave the choice to the host.
  if (version === 2 && digests.length !== 1) throw manifestError(base, `has ${digests.length} digests in ${where}.integrity; version 2 names exactly one sha256`);
  return digests;
}

function integer(value, base, name, { min = 0, max = Number.MAX_SAFE_INTEGER } = {}) {
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw manifestError(base, `has a ${name} that is not an integer in [${min}, ${max}]: ${JSON.stringify(value)}`);
  }
  return value;
}

/**
 * Parse and check a publication manifest; every field is validated before use.
 * @param {string} text
 * @param {string} url the manifest's own URL (relative file URLs resolve against it)
 * @returns {Manifest}
 */
export function parseManifest(text, url) {
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    throw manifestError(url, 'is not JSON');
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) throw manifestError(url, 'is not a JSON object');
  if (json.format !== MANIFEST_FORMAT) {
    throw manifestError(url, `is not a bloomgate filter manifest (format ${JSON.stringify(json.format)}, expected "${MANIFEST_FORMAT}")`);
  }
  const version = json.version;
  if (version !== 1 && version !== 2) {
    throw manifestError(url, `has version ${JSON.stringify(version)}; this bloomgate reads versions 1 and 2 (update the library)`);
  }
  const listId = typeof json.listId === 'string' ? json.listId.toLowerCase() : null;
  if (listId === null || !HEX32.test(listId)) throw manifestError(url, 'has no listId of 32 hex digits');
  if (!Number.isSafeInteger(json.generation) || json.generation < 0) throw manifestError(url, 'has no generation (an integer >= 0)');
  const minRefresh = json.minRefreshSeconds ?? 0;
  if (version === 2) integer(minRefresh, url, 'minRefreshSeconds', { max: 0xffffffff });
  else if (typeof minRefresh !== 'number' || !Number.isFinite(minRefresh) || minRefresh < 0) {
    throw manifestError(url, `has a minRefreshSeconds that is not a number >= 0: ${JSON.stringify(minRefresh)}`);
  }
  const full = json.full;
  if (full === null || typeof full !== 'object') throw manifestError(url, 'has no "full" file');
  /** @type {string | null} */
  let checksum = null;
  if (full.checksum !== undefined || version === 2) {
    const given = typeof full.checksum === 'string' ? full.checksum.toLowerCase() : '';
    if (!HEX16.test(given)) throw manifestError(url, 'has a full.checksum that is not 16 hex digits');
    checksum = given;
  }
  const deltas = json.deltas ?? [];
  if (!Array.isArray(deltas)) throw manifestError(url, 'has a "deltas" that is not an array');
  if (deltas.length > MAX_DELTAS) throw manifestError(url, `lists ${deltas.length} deltas (at most ${MAX_DELTAS})`);

  /** @type {number | null} */
  let expires = null;
  let keySet = 0;
  let keysUrl = null;
  /** @type {Manifest['replaces']} */
  let replaces = [];
  /** @type {import('../signature.js').Signature[]} */
  let signatures = [];
  if (version === 2) {
    expires = integer(json.expires, url, 'expires (seconds since 1970)', { min: 1 });
    keySet = integer(json.keySet ?? 0, url, 'keySet', { max: 0xffffffff });
    if (json.keys !== undefined) keysUrl = fileUrl(json.keys, url, 'keys');
    const given = json.replaces ?? [];
    if (!Array.isArray(given) || given.length > MAX_REPLACES) throw manifestError(url, `has a "replaces" that is not an array of at most ${MAX_REPLACES}`);
    replaces = given.map((entry, i) => {
      const id = typeof entry?.listId === 'string' ? entry.listId.toLowerCase() : '';
      if (!HEX32.test(id)) throw manifestError(url, `has a replaces[${i}].listId that is not 32 hex digits`);
      return { listId: id, generation: integer(entry.generation, url, `replaces[${i}].generation`) };
    });
    signatures = parseSignatures(json.signatures, `the filter manifest at ${url}`);
  }
  /** @type {Manifest} */
  const manifest = {
    version,
    listId,
    generation: json.generation,
    minRefreshSeconds: Math.min(minRefresh, MAX_MIN_REFRESH_SECONDS),
    expires,
    keySet,
    keysUrl,
    replaces,
    full: {
      url: fileUrl(full.url, url, 'full'),
      length: fileLength(full.length, url, 'full', HEADER_SIZE),
      integrity: fileIntegrity(full.integrity, url, 'full', version),
      checksum,
    },
    deltas: deltas.map((delta, i) => {
      const where = `deltas[${i}]`;
      if (delta === null || typeof delta !== 'object') throw manifestError(url, `has a ${where} that is not an object`);
      if (!Number.isSafeInteger(delta.from) || delta.from < 0 || delta.from >= json.generation) {
        throw manifestError(url, `has a ${where}.from that is not an earlier generation: ${JSON.stringify(delta.from)}`);
      }
      return {
        from: delta.from,
        url: fileUrl(delta.url, url, where),
        length: fileLength(delta.length, url, where, 1),
        integrity: fileIntegrity(delta.integrity, url, where, version),
      };
    }),
    signatures,
    canonical: null,
  };
  if (version === 2) {
    manifest.canonical = canonicalBytes({
      listId,
      generation: manifest.generation,
      expires: /** @type {number} */ (expires),
      minRefreshSeconds: minRefresh,
      keySet,
      full: { length: manifest.full.length, sha256: manifest.full.integrity[0], checksum: /** @type {string} */ (checksum) },
      deltas: manifest.deltas.map((d) => ({ from: d.from, length: d.length, sha256: d.integrity[0] })),
      replaces,
    });
  }
  return manifest;
}

/**
 * The bytes a version-2 manifest's signatures cover (docs/FORMAT.md,
 * "Canonical bytes of a filter manifest"). The publisher and every reader
 * build them from the same fields with this one function.
 * @param {{ listId: string, generation: number, expires: number, minRefreshSeconds: number, keySet: number,
 *   full: { length: number, sha256: Uint8Array, checksum: string },
 *   deltas: Array<{ from: number, length: number, sha256: Uint8Array }>,
 *   replaces: Array<{ listId: string, generation: number }> }} fields
 */
export function canonicalBytes(fields) {
  const out = new CanonicalWriter(CANONICAL_DOMAIN)
    .fixed(hexBytes(fields.listId), 16)
    .u64(fields.generation)
    .u64(fields.expires)
    .u32(fields.minRefreshSeconds)
    .u32(fields.keySet)
    .u64(fields.full.length)
    .fixed(fields.full.sha256, 32)
    .fixed(hexBytes(fields.full.checksum), 8)
    .u32(fields.deltas.length);
  for (const delta of fields.deltas) out.u64(delta.from).u64(delta.length).fixed(delta.sha256, 32);
  out.u32(fields.replaces.length);
  for (const entry of fields.replaces) out.fixed(hexBytes(entry.listId), 16).u64(entry.generation);
  return out.finish();
}
