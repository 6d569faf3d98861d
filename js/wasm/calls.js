// @ts-check
/**
 * calls.js — thin calls into the core: stage the arguments, call once,
 * read the results, release. One function per verb of the filter API, plus
 * the key hash of sharded builds and the URL functions.
 */
import { HEADER_FIELDS, HEADER_SIZE, INFO_BYTES, INFO_SLOTS, KINDS, URL_MATCH, readInfo } from './contract.js';
import {
  ex, HEAPF64, HEAPU32, HEAPU8, MISC_BYTES, MISC_F64, MISC_HASH, MISC_OFFSETS, MISC_OUT_PTR, MISC_SIZE_T,
  MISC_PARTS, MISC_URL_MATCH, check, checkMemoryFor, checkMemoryLimit, heapSize, mallocOrThrow, outOfMemoryNamingLimit, miscPtr, statusCode, statusError, statusName,
} from './module.js';
import {
  BATCH_PACKED_BYTES, arena, arenaReserve, arenaShrink, keyPtr, releaseKey, scratchPtr, stageBytesOnly, stageInPieces, stageKey,
} from './staging.js';
import { WasmBuffer } from './buffers.js';
import { filterAddH1Values } from './values.js';

const utf8Decoder = new TextDecoder('utf-8');
if (INFO_SLOTS > 64 || INFO_BYTES > 16) throw new Error('contract.js: bg_info no longer fits the misc block');

/* ------------------------------------------------------------------------ */
/* Single items and keys                                                     */
/* ------------------------------------------------------------------------ */

/** Insert one item (the filter's key encoding applies). */
export function filterAdd(filter, item) {
  const len = stageKey(item, 'item');
  const rc = ex.bg_filter_add(filter, keyPtr, len);
  if (keyPtr !== scratchPtr) releaseKey();
  if (rc < 0) throw statusError(rc);
}

/** Query one item: true = maybe present, false = definitely not. */
export function filterContains(filter, item) {
  const len = stageKey(item, 'item');
  const rc = ex.bg_filter_contains(filter, keyPtr, len);
  if (keyPtr !== scratchPtr) releaseKey();
  if (rc > 0) return true;
  if (rc === 0) return false;
  throw statusError(rc);
}

/** Insert an already-encoded key. */
export function filterAddKey(filter, key) {
  const len = stageBytesOnly(key, 'key');
  const rc = ex.bg_filter_add_key(filter, keyPtr, len);
  if (keyPtr !== scratchPtr) releaseKey();
  if (rc < 0) throw statusError(rc);
}

/** Query an already-encoded key. */
export function filterContainsKey(filter, key) {
  const len = stageBytesOnly(key, 'key');
  const rc = ex.bg_filter_contains_key(filter, keyPtr, len);
  if (keyPtr !== scratchPtr) releaseKey();
  if (rc > 0) return true;
  if (rc === 0) return false;
  throw statusError(rc);
}

function removed(rc) {
  if (rc === 0) return true;
  if (statusName(rc) === 'E_NOT_FOUND') return false;
  throw statusError(rc);
}

/** Remove one item (kinds that delete); false when it was not in the filter. */
export function filterRemove(filter, item) {
  const len = stageKey(item, 'item');
  const rc = ex.bg_filter_remove(filter, keyPtr, len);
  if (keyPtr !== scratchPtr) releaseKey();
  return removed(rc);
}

/** Remove an already-encoded key. */
export function filterRemoveKey(filter, key) {
  const len = stageBytesOnly(key, 'key');
  const rc = ex.bg_filter_remove_key(filter, keyPtr, len);
  if (keyPtr !== scratchPtr) releaseKey();
  return removed(rc);
}

/* ------------------------------------------------------------------------ */
/* Whole filters                                                             */
/* ------------------------------------------------------------------------ */

const E_NOMEM = statusCode('E_NOMEM');
// Kinds that take at least a classic filter's m = -n ln p / (ln 2)^2 bits when created.
const AT_LEAST_CLASSIC = new Set(KINDS.filter((k) => ['classic', 'blocked', 'counting'].includes(k.name)).map((k) => k.id));

/** bg_filter_create (with valueBits: bg_filter_create_with_values) through the i32/f64 shim; returns the filter pointer. */
export function filterCreate(kind, capacity, errorRate, seedLo, seedHi, keyEncoding, valueBits = 0) {
  const out = miscPtr + MISC_OUT_PTR;
  const what = `a filter for ${capacity} items at error rate ${errorRate}`;
  // Under a memory cap, refuse what cannot fit before anything is allocated (a lower bound).
  if (AT_LEAST_CLASSIC.has(kind)) checkMemoryFor(Math.ceil(capacity * -Math.log(errorRate) / (Math.LN2 * Math.LN2) / 8), what);
  const before = heapSize();
  const rc = ex.bgw_filter_create(kind, capacity, errorRate, seedLo, seedHi, keyEncoding, out, valueBits);
  if (rc === E_NOMEM) throw outOfMemoryNamingLimit(what);
  check(rc);
  const filter = HEAPU32[out >>> 2];
  try {
    checkMemoryLimit(what, before);
  } catch (error) {
    ex.bg_filter_free(filter);
    throw error;
  }
  return filter;
}

/** Static kinds build their structure from the keys added so far. */
export function filterSeal(filter) {
  check(ex.bg_filter_seal(filter));
}

/** A counting filter's classic equivalent; returns the new filter pointer. */
export function filterToClassic(filter) {
  const out = miscPtr + MISC_OUT_PTR;
  check(ex.bg_filter_to_classic(filter, out));
  return HEAPU32[out >>> 2];
}

export function filterFree(filter) {
  ex.bg_filter_free(filter);
}

export function filterClear(filter) {
  ex.bg_filter_clear(filter);
}

export function filterMerge(dst, src) {
  check(ex.bg_filter_merge(dst, src));
}

/** Everything bg_info holds (BG_INFO_FIELDS), as plain numbers: u64 fields are a Number below 2^53, else a BigInt. */
export function filterInfo(filter) {
  ex.bgw_filter_info(filter, miscPtr + MISC_F64, miscPtr + MISC_BYTES);
  return readInfo(HEAPF64, (miscPtr + MISC_F64) >>> 3, HEAPU8, miscPtr + MISC_BYTES);
}

/** Attach metadata bytes (copied by the core). */
export function filterSetMetadata(filter, bytes) {
  const ptr = mallocOrThrow(bytes.length);
  try {
    HEAPU8.set(bytes, ptr);
    check(ex.bg_filter_set_metadata(filter, ptr, bytes.length));
  } finally {
    ex.free(ptr);
  }
}

/** The metadata block decoded as UTF-8, or null when there is none. */
export function filterMetadataText(filter) {
  const lenPtr = miscPtr + MISC_SIZE_T;
  HEAPU32[lenPtr >>> 2] = 0;
  const ptr = ex.bg_filter_metadata(filter, lenPtr) >>> 0;
  const len = HEAPU32[lenPtr >>> 2];
  if (ptr === 0 || len === 0) return null;
  return utf8Decoder.decode(HEAPU8.subarray(ptr, ptr + len));
}

/** Set list id (16 bytes) and generation (integer < 2^53). */
export function filterSetIdentity(filter, listId, generation) {
  const at = miscPtr + MISC_BYTES;
  HEAPU8.set(listId, at);
  ex.bgw_filter_set_identity(filter, at, generation);
}

/** The .bgf file as a fresh Uint8Array (a copy out of wasm memory). */
export function filterSerialize(filter) {
  const size = ex.bg_filter_serialized_size(filter) >>> 0;
  const ptr = mallocOrThrow(size);
  try {
    const written = miscPtr + MISC_SIZE_T;
    check(ex.bg_filter_serialize(filter, ptr, size, written));
    return HEAPU8.slice(ptr, ptr + HEAPU32[written >>> 2]);
  } finally {
    ex.free(ptr);
  }
}

const headerField = (name) => HEADER_FIELDS.find((field) => field.name === name);

/** Set header fields by name in the file at ptr (overrides of filterSerializeTo). */
function overrideHeader(ptr, overrides) {
  const view = new DataView(HEAPU8.buffer, ptr, HEADER_SIZE);
  for (const [name, value] of Object.entries(overrides)) {
    const field = headerField(name);
    if (field === undefined || field.fixed) throw new RangeError(`no settable header field '${name}'`);
    if (field.type === 'u8') view.setUint8(field.offset, value);
    else if (field.type === 'u64') view.setBigUint64(field.offset, BigInt(value), true);
    else throw new RangeError(`header field '${name}' (${field.type}) cannot be overridden`);
  }
}

/** Restamp the checksum of a file whose head is at head and payload at payload (the core's hasher, no copy). */
function restampChecksum(head, headLength, payload, payloadLength) {
  const hasher = ex.bg_file_hasher_new() >>> 0;
  if (hasher === 0) throw statusError(statusCode('E_NOMEM'));
  try {
    ex.bg_file_hasher_update(hasher, head, headLength);
    if (payloadLength > 0) ex.bg_file_hasher_update(hasher, payload, payloadLength);
    const digest = miscPtr + MISC_HASH;
    ex.bgw_file_hasher_digest(hasher, digest);
    HEAPU8.copyWithin(head + /** @type {{ offset: number }} */ (headerField('checksum')).offset, digest, digest + 8); // every header has one
  } finally {
    ex.bg_file_hasher_free(hasher);
  }
}

/**
 * Serialize straight to a sink, with no copy out of wasm memory: `write(view)`
 * gets the file as views of wasm memory and must consume each synchronously
 * (fs.writeSync): a view is valid only during its call. Kinds that keep their
 * payload in file layout (classic, blocked: bg_filter_serialize_parts) are
 * written as their head and then the payload where it lies, so the file is
 * never copied at all: peak memory is the filter itself. Others are
 * serialized once into wasm memory. `overrides` sets u8/u64 header fields by
 * name (the CLI's hibp fast path relabels its key encoding and sets a one-pass
 * fuse filter's capacity); the checksum is then restamped by the core's
 * hasher. Returns the file's length.
 * @param {(view: Uint8Array) => void} write
 * @param {Record<string, number>} [overrides]
 */
export function filterSerializeTo(filter, write, overrides) {
  const patch = overrides !== undefined && Object.keys(overrides).length > 0;
  const lengths = miscPtr + MISC_PARTS; // head length, then payload pointer and length
  let rc = ex.bg_filter_serialize_parts(filter, 0, 0, lengths, lengths + 4, lengths + 8);
  if (rc < 0 && statusName(rc) === 'E_BUFFER') {
    const headLength = HEAPU32[lengths >>> 2];
    const head = mallocOrThrow(headLength);
    try {
      check(ex.bg_filter_serialize_parts(filter, head, headLength, lengths, lengths + 4, lengths + 8));
      const payload = HEAPU32[(lengths + 4) >>> 2];
      const payloadLength = HEAPU32[(lengths + 8) >>> 2];
      if (patch) {
        overrideHeader(head, overrides);
        restampChecksum(head, headLength, payload, payloadLength);
      }
      write(HEAPU8.subarray(head, head + headLength));
      write(HEAPU8.subarray(payload, payload + payloadLength));
      return headLength + payloadLength;
    } finally {
      ex.free(head);
    }
  }
  if (rc < 0 && statusName(rc) !== 'E_UNSUPPORTED') check(rc);
  const size = ex.bg_filter_serialized_size(filter) >>> 0;
  const ptr = mallocOrThrow(size);
  try {
    const written = miscPtr + MISC_SIZE_T;
    check(ex.bg_filter_serialize(filter, ptr, size, written));
    const length = HEAPU32[written >>> 2];
    if (patch) {
      overrideHeader(ptr, overrides);
      restampChecksum(ptr, length, 0, 0);
    }
    write(HEAPU8.subarray(ptr, ptr + length));
    return length;
  } finally {
    ex.free(ptr);
  }
}

/**
 * Copy a .bgf file into wasm memory and build a filter that uses the copy in
 * place (bg_filter_deserialize_owned): one copy, validated by the core.
 */
export function filterFromBytes(bytes) {
  checkMemoryFor(bytes.length, `the ${bytes.length}-byte filter file`);
  const buffer = new WasmBuffer(bytes.length);
  try {
    buffer.append(bytes);
    return buffer.takeFilter();
  } finally {
    buffer.free();
  }
}

/* ------------------------------------------------------------------------ */
/* Key hashes (sharded fuse builds, js/cli/fuse-shards.js)                   */
/* ------------------------------------------------------------------------ */

/**
 * Hash one key (bytes, or a string as UTF-8) as bg_hash does with the given
 * seed and leave its words in `out` (a Uint32Array of 4): h1 low, h1 high,
 * h2 low, h2 high. No BigInt on the way: a sharded build hashes every key.
 */
export function hashWords(item, seedLo, seedHi, out) {
  const len = stageKey(item, 'key');
  const at = miscPtr + MISC_HASH;
  ex.bgw_hash(keyPtr, len, seedLo, seedHi, at);
  if (keyPtr !== scratchPtr) releaseKey();
  const words = HEAPU32;
  const i = at >>> 2;
  out[0] = words[i];
  out[1] = words[i + 1];
  out[2] = words[i + 2];
  out[3] = words[i + 3];
}

/**
 * Add keys to a fuse filter by their h1 values: `bytes` holds little-endian
 * u64 records (bg_filter_add_h1), staged through the batch arena in chunks.
 * With `values` (one byte per record), filterAddH1Values.
 * @param {number} filter
 * @param {Uint8Array} bytes
 * @param {Uint8Array | null} [values]
 */
export function filterAddH1(filter, bytes, values) {
  if (values !== undefined && values !== null) {
    filterAddH1Values(filter, bytes, values);
    return;
  }
  if (bytes.length % 8 !== 0) throw new RangeError('h1 records are 8 bytes each');
  stageInPieces(bytes, BATCH_PACKED_BYTES, (ptr, length) => check(ex.bg_filter_add_h1(filter, ptr, length / 8)));
  arenaShrink();
}

/* ------------------------------------------------------------------------ */
/* Safe Browsing URLs                                                        */
/* ------------------------------------------------------------------------ */

// Canonicalize the staged key into a fresh malloc'd buffer: { ptr, length }. The caller frees ptr.
function canonicalizeStaged(len) {
  const capacity = 3 * len + 32; // percent-escaping at most triples a byte
  const out = mallocOrThrow(capacity);
  const lengthPtr = miscPtr + MISC_SIZE_T;
  const rc = ex.bg_url_canonicalize(keyPtr, len, out, capacity, lengthPtr);
  if (rc < 0) {
    ex.free(out);
    throw statusError(rc);
  }
  return { ptr: out, length: HEAPU32[lengthPtr >>> 2] };
}

/** Safe Browsing canonical form of a URL string (the host must already be ASCII). */
export function urlCanonicalize(url) {
  const len = stageKey(url, 'url');
  /** @type {{ ptr: number, length: number } | null} */
  let canonical = null;
  try {
    canonical = canonicalizeStaged(len);
    return utf8Decoder.decode(HEAPU8.subarray(canonical.ptr, canonical.ptr + canonical.length));
  } finally {
    if (canonical !== null) ex.free(canonical.ptr);
    if (keyPtr !== scratchPtr) releaseKey();
  }
}

/** Call `call(text, capacity)` with the arena as the text buffer, once more at the size BG_E_BUFFER asked for. */
function withTextInArena(call, countPtr, offsetsPtr) {
  let rc = call(arena.items, arena.cap);
  if (rc < 0 && statusName(rc) === 'E_BUFFER') {
    arenaReserve(HEAPU32[(offsetsPtr >>> 2) + HEAPU32[countPtr >>> 2]]);
    rc = call(arena.items, arena.cap);
  }
  return check(rc);
}

/** The host-suffix x path-prefix expressions of a URL, most specific first (at most 30). */
export function urlExpressions(url) {
  const len = stageKey(url, 'url');
  try {
    const countPtr = miscPtr + MISC_SIZE_T;
    const offsetsPtr = miscPtr + MISC_OFFSETS;
    withTextInArena((text, capacity) => ex.bg_url_expressions(keyPtr, len, text, capacity, offsetsPtr, countPtr),
      countPtr, offsetsPtr);
    const count = HEAPU32[countPtr >>> 2];
    const offsets = HEAPU32.subarray(offsetsPtr >>> 2, (offsetsPtr >>> 2) + count + 1);
    const expressions = new Array(count);
    for (let i = 0; i < count; i++) {
      expressions[i] = utf8Decoder.decode(HEAPU8.subarray(arena.items + offsets[i], arena.items + offsets[i + 1]));
    }
    return expressions;
  } finally {
    if (keyPtr !== scratchPtr) releaseKey();
    arenaShrink();
  }
}

/**
 * Check a URL against a url filter in one call (bg_filter_match_url): the
 * expressions that might be listed, most specific first, each with its
 * SHA-256 key. An empty array means definitely clean.
 * @returns {{ expression: string, digest: Uint8Array }[]}
 */
export function filterMatchUrl(filter, url) {
  const len = stageKey(url, 'url');
  const match = miscPtr + MISC_URL_MATCH;
  try {
    // The expressions' text goes to the arena (u32 count first in bg_url_match, then the offsets).
    const rc = withTextInArena((text, capacity) => ex.bg_filter_match_url(filter, keyPtr, len, text, capacity, match),
      match + URL_MATCH.count, match + URL_MATCH.offsets);
    const found = [];
    if (rc === 0) return found;
    const words = HEAPU32;
    const count = words[(match + URL_MATCH.count) >>> 2];
    const maybe = words[(match + URL_MATCH.maybe) >>> 2];
    const offsets = (match + URL_MATCH.offsets) >>> 2;
    for (let i = 0; i < count; i++) {
      if ((maybe & (1 << i)) === 0) continue;
      const text = HEAPU8.subarray(arena.items + words[offsets + i], arena.items + words[offsets + i + 1]);
      const digest = match + URL_MATCH.digests + 32 * i;
      found.push({ expression: utf8Decoder.decode(text), digest: HEAPU8.slice(digest, digest + 32) });
    }
    return found;
  } finally {
    if (keyPtr !== scratchPtr) releaseKey();
    arenaShrink();
  }
}
