/**
 * wasm.js — the only file that touches the WebAssembly module's exports and
 * memory. Everything above it (filter.js, load.js, inspect.js) works with
 * plain JavaScript values and opaque pointers (numbers).
 *
 * Boundary rules (see wasm/bloomgate_wasm.c):
 * - every exported signature is i32/f64; 64-bit values cross as (lo, hi) u32
 *   pairs, so nothing on the query path creates a BigInt;
 * - pointers and size_t results arrive as signed i32 and are read with `>>> 0`
 *   so modules above 2 GiB work;
 * - memory views are cached and rebuilt in `env.emscripten_notify_memory_growth`,
 *   which the module calls whenever malloc grows memory, so a view is never
 *   stale after a call that allocates;
 * - one scratch buffer in wasm memory stages single keys (strings are encoded
 *   straight into it), one arena stages batches: one boundary crossing per
 *   query and per batch chunk.
 */
import { BloomgateError, instantiationError, looksLikeWasm, moduleFetchError, notWasmError } from './errors.js';

/** BG_HEADER_SIZE: the fixed .bgf header a streaming loader needs before it knows a file's length. */
export const HEADER_SIZE = 128;
/** BG_MAX_K */
export const MAX_K = 64;

// Strings up to this many UTF-16 units are copied with a charCodeAt loop; longer
// ones go through TextEncoder.encodeInto. Measured on Node 20: the loop costs ~2 ns
// a character, encodeInto ~37 ns flat (it returns a fresh {read, written} object),
// so they cross near 16–20 characters.
const ASCII_LOOP_MAX = 16;
// The single-key scratch grows up to this size and stays; larger keys get a
// temporary buffer for the one call, so one huge key does not pin memory.
const SCRATCH_INITIAL = 1024;
const SCRATCH_KEEP_MAX = 1 << 20;
// Batches go to wasm in chunks of at most this many keys / UTF-16 units. The unit
// budget keeps a chunk's joined string (see packChunk) below V8's large-object
// threshold (~128 KiB): above it every join is a fresh mmap and batches of
// 38-character keys ran 4x slower. It also keeps the arena small (worst case 3
// bytes per unit) and the offsets well inside u32.
const BATCH_KEYS = 4096;
const BATCH_UNITS = 48 * 1024;
const ARENA_INITIAL = 64 * 1024;
// Packed keys go to wasm in chunks of at most this many bytes (and BATCH_KEYS keys).
const BATCH_PACKED_BYTES = 256 * 1024;
// WasmBuffer.append copies and checksums large inputs in pieces of this size (L2-sized).
const APPEND_PIECE = 256 * 1024;

// Layout of the fixed "misc" block used for out-parameters.
const MISC_SIZE = 1024;
const MISC_F64 = 0; // 64 doubles: info / header / positions
const MISC_LIST_ID = 512; // 16 bytes
const MISC_OUT_PTR = 528; // bg_filter **
const MISC_SIZE_T = 532; // size_t *
const MISC_HASH = 536; // 4 x u32
const MISC_DIGEST = 576; // 32 bytes
const MISC_OFFSETS = 640; // 31 x u32 (URL expressions)

const REQUIRED_EXPORTS = [
  'memory', 'malloc', 'free', 'bg_strerror', 'bg_status_name', 'bg_filter_free', 'bg_filter_clear',
  'bg_filter_add', 'bg_filter_contains', 'bg_filter_add_key', 'bg_filter_contains_key',
  'bg_filter_add_many', 'bg_filter_contains_many', 'bg_filter_merge', 'bg_filter_set_metadata',
  'bg_filter_metadata', 'bg_filter_serialized_size', 'bg_filter_serialize', 'bg_filter_deserialize_owned',
  'bg_sha1', 'bg_sha256_init', 'bg_sha256_update', 'bg_sha256_final', 'bgw_filter_create',
  'bgw_filter_info', 'bgw_filter_set_identity', 'bgw_header_peek', 'bgw_file_validate', 'bgw_hash',
  'bgw_positions', 'bgw_sha256_ctx_size', 'bg_kind_name', 'bg_filter_remove', 'bg_filter_remove_key',
  'bg_filter_seal', 'bg_filter_to_classic', 'bg_url_canonicalize', 'bg_url_expressions',
  'bg_file_hasher_new', 'bg_file_hasher_free', 'bg_file_hasher_update', 'bgw_file_hasher_digest',
  'bgw_filter_deserialize_owned_checked', 'bg_filter_add_h1',
];

const encoder = new TextEncoder();
const latin1 = new TextDecoder('latin1');
const utf8Decoder = new TextDecoder('utf-8');

let ex = null; // the instance's exports once ready
let memory = null;
let HEAPU8 = new Uint8Array(0);
let HEAPU32 = new Uint32Array(0);
let HEAPF64 = new Float64Array(0);
let scratchPtr = 0; // single-key staging buffer
let scratchCap = 0;
let scratchView = HEAPU8; // HEAPU8.subarray(scratchPtr, scratchPtr + scratchCap)
let keyPtr = 0; // where stageKey() left the key: scratchPtr, or a temporary buffer
let miscPtr = 0;
let arena = null; // batch staging: { items, cap, offsets, results }
let readyPromise = null;

function refreshViews() {
  const buffer = memory.buffer;
  HEAPU8 = new Uint8Array(buffer);
  HEAPU32 = new Uint32Array(buffer);
  HEAPF64 = new Float64Array(buffer);
  scratchView = HEAPU8.subarray(scratchPtr, scratchPtr + scratchCap);
}

const imports = {
  env: {
    // Called by the module's sbrk after memory.grow(): the old ArrayBuffer is now detached.
    emscripten_notify_memory_growth() {
      refreshViews();
    },
  },
};

/* ------------------------------------------------------------------------ */
/* Instantiation                                                             */
/* ------------------------------------------------------------------------ */

/**
 * Instantiate the module once. Later calls return the same promise (their
 * source is ignored); a failed attempt can be retried.
 * @param {WebAssembly.Module | BufferSource | Response | URL | string | Promise<any>} [source]
 */
export function init(source) {
  if (readyPromise === null) {
    readyPromise = instantiate(source).catch((error) => {
      readyPromise = null;
      throw instantiationError(error);
    });
  }
  return readyPromise;
}

/** The ready promise, instantiating from the default location when nobody called init(). */
export function ready() {
  return readyPromise ?? init();
}

/** Current size of wasm memory in bytes (tests use it to detect leaks). */
export function heapSize() {
  return memory === null ? 0 : memory.buffer.byteLength;
}

/** True once the module is instantiated (queries are synchronous from then on). */
export function isReady() {
  return ex !== null;
}

// The package's entries (js/entry.js) hand over the `#wasm-bytes` loader they import
// statically, so a bundle holds it in its one chunk (rollup's output.file refuses a
// dynamic import that would need a chunk of its own).
let wasmLoader = null;

/** @param {(location?: string | URL) => Promise<any>} loadWasmBytes */
export function registerWasmLoader(loadWasmBytes) {
  wasmLoader = loadWasmBytes;
}

async function locateWasm(location) {
  if (wasmLoader !== null) return wasmLoader(location);
  let loader;
  try {
    loader = await import('#wasm-bytes');
  } catch (error) {
    // Unbundled browser pages have no resolver for package "imports": fetch directly.
    if (typeof fetch !== 'function') throw error;
    const url = location ?? new URL('../wasm/bloomgate.wasm', import.meta.url);
    return fetch(url).catch((failure) => {
      throw moduleFetchError(url, String(failure?.message ?? failure), failure);
    });
  }
  return loader.loadWasmBytes(location);
}

function isResponse(value) {
  return (typeof Response === 'function' && value instanceof Response) ||
    (value !== null && typeof value === 'object' && typeof value.arrayBuffer === 'function' &&
      typeof value.ok === 'boolean' && value.headers !== undefined);
}

async function instantiate(source) {
  source = await source;
  if (source === undefined || source === null) {
    source = await locateWasm(undefined);
  } else if (typeof source === 'string' || source instanceof URL) {
    source = await locateWasm(source);
  }
  let instance;
  if (source instanceof WebAssembly.Module) {
    instance = await WebAssembly.instantiate(source, imports);
  } else if (source instanceof WebAssembly.Instance) {
    throw new TypeError('init() needs a WebAssembly.Module, not an Instance: bloomgate must supply the imports');
  } else if (source instanceof ArrayBuffer || ArrayBuffer.isView(source) ||
    (typeof SharedArrayBuffer === 'function' && source instanceof SharedArrayBuffer)) {
    // Bytes before Response: in Node the first touch of the global Response loads its fetch
    // implementation (~10 ms of every CLI run), and Node's own module source is bytes.
    ({ instance } = await WebAssembly.instantiate(source, imports));
  } else if (isResponse(source)) {
    if (!source.ok) throw moduleFetchError(source.url || 'the response given to init()', `HTTP ${source.status}`);
    const type = source.headers.get('content-type') || '';
    if (typeof WebAssembly.instantiateStreaming === 'function' && /^application\/wasm\b/i.test(type)) {
      ({ instance } = await WebAssembly.instantiateStreaming(source, imports));
    } else {
      const bytes = await source.arrayBuffer();
      if (!looksLikeWasm(bytes)) throw notWasmError(source.url, bytes, type);
      ({ instance } = await WebAssembly.instantiate(bytes, imports));
    }
  } else {
    throw new TypeError('init() accepts a WebAssembly.Module, bytes (ArrayBuffer or a view), a Response, a URL or a URL string');
  }
  attach(instance);
}

function attach(instance) {
  const exports = instance.exports;
  for (const name of REQUIRED_EXPORTS) {
    if (!(name in exports)) throw new TypeError(`not a bloomgate module: export '${name}' is missing`);
  }
  memory = exports.memory;
  ex = exports;
  if (typeof exports._initialize === 'function') exports._initialize();
  refreshViews();
  try {
    miscPtr = mallocOrThrow(MISC_SIZE);
    scratchPtr = mallocOrThrow(SCRATCH_INITIAL);
    scratchCap = SCRATCH_INITIAL;
    keyPtr = scratchPtr;
    arena = newArena(ARENA_INITIAL);
    refreshViews();
  } catch (error) {
    ex = null;
    throw error;
  }
}

/* ------------------------------------------------------------------------ */
/* Status codes                                                              */
/* ------------------------------------------------------------------------ */

const statusNames = new Map();
const statusMessages = new Map();

function readCString(ptr) {
  ptr >>>= 0;
  let end = ptr;
  while (HEAPU8[end] !== 0) end++;
  return latin1.decode(HEAPU8.subarray(ptr, end));
}

/** 'E_CHECKSUM' for BG_E_CHECKSUM, from the module's own table. */
export function statusName(rc) {
  let name = statusNames.get(rc);
  if (name === undefined) {
    name = readCString(ex.bg_status_name(rc));
    statusNames.set(rc, name);
  }
  return name;
}

/** The module's message for a status code. */
export function statusMessage(rc) {
  let message = statusMessages.get(rc);
  if (message === undefined) {
    message = readCString(ex.bg_strerror(rc));
    statusMessages.set(rc, message);
  }
  return message;
}

/** A BloomgateError for a negative status. */
export function statusError(rc) {
  return new BloomgateError(statusName(rc), statusMessage(rc));
}

/** Throws a BloomgateError for a negative status; returns rc otherwise. */
export function check(rc) {
  if (rc < 0) throw statusError(rc);
  return rc;
}

/* ------------------------------------------------------------------------ */
/* Allocation                                                                */
/* ------------------------------------------------------------------------ */

function mallocOrThrow(size) {
  const ptr = ex.malloc(size > 0 ? size : 1) >>> 0;
  if (ptr === 0) throw statusError(-3); // BG_E_NOMEM
  return ptr;
}

function freePtr(ptr) {
  if (ptr !== 0) ex.free(ptr);
}

function growScratch(size) {
  let capacity = scratchCap;
  while (capacity < size) capacity *= 2;
  const ptr = mallocOrThrow(capacity);
  ex.free(scratchPtr);
  scratchPtr = ptr;
  keyPtr = ptr;
  scratchCap = capacity;
  scratchView = HEAPU8.subarray(scratchPtr, scratchPtr + scratchCap);
}

/** Exact UTF-8 length of a string as TextEncoder encodes it (lone surrogates become U+FFFD). */
function utf8Length(s) {
  const n = s.length;
  let bytes = n;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) bytes += 1;
    else if (c >= 0xd800 && c < 0xdc00 && i + 1 < n) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d < 0xe000) {
        bytes += 2; // 2 units -> 4 bytes
        i++;
      } else bytes += 2;
    } else bytes += 2;
  }
  return bytes;
}

/* ------------------------------------------------------------------------ */
/* Single keys                                                               */
/* ------------------------------------------------------------------------ */

function isUint8Array(value) {
  return value instanceof Uint8Array || Object.prototype.toString.call(value) === '[object Uint8Array]';
}

function itemTypeError(what) {
  return new TypeError(`${what} must be a string or a Uint8Array`);
}

// Slow path of stageKey for strings: non-ASCII or longer than ASCII_LOOP_MAX.
function stageString(s) {
  let need = s.length * 3; // UTF-8 needs at most 3 bytes per UTF-16 unit
  if (need > scratchCap) {
    if (need > SCRATCH_KEEP_MAX) need = utf8Length(s);
    if (need > SCRATCH_KEEP_MAX) {
      const ptr = mallocOrThrow(need);
      keyPtr = ptr;
      return encoder.encodeInto(s, HEAPU8.subarray(ptr, ptr + need)).written;
    }
    if (need > scratchCap) growScratch(need);
  }
  return encoder.encodeInto(s, scratchView).written;
}

function stageBytes(bytes) {
  const n = bytes.length;
  if (n > scratchCap) {
    if (n > SCRATCH_KEEP_MAX) {
      const ptr = mallocOrThrow(n);
      keyPtr = ptr;
      HEAPU8.set(bytes, ptr);
      return n;
    }
    growScratch(n);
  }
  // A byte loop costs ~1.1 ns a byte, TypedArray.prototype.set ~13 ns flat (Node 20).
  if (n <= 10) {
    const v = scratchView;
    for (let i = 0; i < n; i++) v[i] = bytes[i];
  } else {
    scratchView.set(bytes);
  }
  return n;
}

/**
 * Put a key into wasm memory at keyPtr and return its length in bytes. The
 * common case (a short ASCII string) writes straight into the scratch view.
 */
function stageKey(item, what) {
  if (typeof item === 'string') {
    const n = item.length;
    if (n <= ASCII_LOOP_MAX) {
      const v = scratchView;
      let seen = 0;
      for (let i = 0; i < n; i++) {
        const c = item.charCodeAt(i);
        seen |= c;
        v[i] = c;
      }
      if (seen < 0x80) return n;
    }
    return stageString(item);
  }
  if (isUint8Array(item)) return stageBytes(item);
  throw itemTypeError(what);
}

function stageBytesOnly(bytes, what) {
  if (!isUint8Array(bytes)) throw new TypeError(`${what} must be a Uint8Array`);
  return stageBytes(bytes);
}

// A key staged in a temporary buffer is released right after its one call.
function releaseKey() {
  if (keyPtr !== scratchPtr) {
    ex.free(keyPtr);
    keyPtr = scratchPtr;
  }
}

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

/* ------------------------------------------------------------------------ */
/* Sharded fuse builds (js/cli/fuse-shards.js)                               */
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
 */
export function filterAddH1(filter, bytes) {
  if (bytes.length % 8 !== 0) throw new RangeError('h1 records are 8 bytes each');
  const piece = BATCH_PACKED_BYTES;
  for (let done = 0; done < bytes.length; done += piece) {
    const part = bytes.subarray(done, Math.min(bytes.length, done + piece));
    arenaReserve(part.length);
    HEAPU8.set(part, arena.items);
    check(ex.bg_filter_add_h1(filter, arena.items, part.length / 8));
  }
  arenaShrink();
}

/** The .bgf file checksum (XXH3-64 of bytes [16, end)) of a file fed in pieces from byte 0. */
export class FileChecksum {
  constructor() {
    this.hasher = ex.bg_file_hasher_new() >>> 0;
    if (this.hasher === 0) throw statusError(-3); // BG_E_NOMEM
  }

  /** Feed the next bytes of the file (any size; copied into wasm memory in pieces). */
  update(bytes) {
    for (let done = 0; done < bytes.length; done += APPEND_PIECE) {
      const part = bytes.subarray(done, Math.min(bytes.length, done + APPEND_PIECE));
      arenaReserve(part.length);
      HEAPU8.set(part, arena.items);
      ex.bg_file_hasher_update(this.hasher, arena.items, part.length);
    }
  }

  /** The checksum field's 8 bytes, little-endian, as the header stores them. */
  digestBytes() {
    const out = miscPtr + MISC_HASH;
    ex.bgw_file_hasher_digest(this.hasher, out);
    return HEAPU8.slice(out, out + 8);
  }

  free() {
    if (this.hasher !== 0) {
      ex.bg_file_hasher_free(this.hasher);
      this.hasher = 0;
    }
    arenaShrink();
  }
}

/* ------------------------------------------------------------------------ */
/* Batches                                                                   */
/* ------------------------------------------------------------------------ */

function newArena(capacity) {
  const offsets = mallocOrThrow((BATCH_KEYS + 1) * 4);
  let results = 0;
  let items = 0;
  try {
    results = mallocOrThrow(BATCH_KEYS);
    items = mallocOrThrow(capacity);
  } catch (error) {
    freePtr(results);
    ex.free(offsets);
    throw error;
  }
  return { items, cap: capacity, offsets, results };
}

function arenaReserve(size) {
  if (size <= arena.cap) return;
  let capacity = arena.cap;
  while (capacity < size) capacity *= 2;
  const ptr = mallocOrThrow(capacity);
  ex.free(arena.items);
  arena.items = ptr;
  arena.cap = capacity;
}

// After a batch needed a big arena, give the memory back (the heap keeps its size,
// but malloc can reuse it for filters).
function arenaShrink() {
  if (arena.cap > 4 * 1024 * 1024) {
    const ptr = ex.malloc(ARENA_INITIAL) >>> 0;
    if (ptr !== 0) {
      ex.free(arena.items);
      arena.items = ptr;
      arena.cap = ARENA_INITIAL;
    }
  }
}

// Cleared when a chunk of strings turns out not to be ASCII, so the rest of the
// batch skips the join attempt.
let joinedAsciiLikely = true;

/**
 * Pack items[start, end) into the arena: key bytes back to back, count + 1
 * u32 offsets. Runs no user code, so nothing can re-enter the arena meanwhile.
 */
function packChunk(items, start, end, what, indexBase) {
  const count = end - start;
  let units = 0; // UTF-16 units of the string keys
  let byteLength = 0; // bytes of the Uint8Array keys
  let allStrings = true;
  for (let i = start; i < end; i++) {
    const item = items[i];
    if (typeof item === 'string') units += item.length;
    else if (isUint8Array(item)) {
      byteLength += item.length;
      allStrings = false;
    } else throw itemTypeError(`${what}[${indexBase + i - start}]`);
  }
  let offsetIndex = arena.offsets >>> 2;
  if (units === 0) {
    // Only byte keys (or empty strings): one TypedArray.set each, no per-item type dispatch.
    arenaReserve(byteLength);
    const heap = HEAPU8;
    const offsets = HEAPU32;
    const base = arena.items;
    let at = base;
    offsets[offsetIndex++] = 0;
    for (let i = start; i < end; i++) {
      const item = items[i];
      if (typeof item !== 'string') {
        heap.set(item, at);
        at += item.length;
      }
      offsets[offsetIndex++] = at - base;
    }
    return count;
  }
  if (allStrings && joinedAsciiLikely) {
    // One encodeInto for the whole chunk into exactly `units` bytes. When it
    // consumed every unit and wrote one byte each, all keys were ASCII and their
    // offsets are their lengths. (A full buffer alone proves nothing: multi-byte
    // characters can fill it exactly before the string ends.)
    const joined = start === 0 && end === items.length ? items.join('') : items.slice(start, end).join('');
    arenaReserve(units);
    const base = arena.items;
    let ascii = true;
    if (units > 0) {
      const { read, written } = encoder.encodeInto(joined, HEAPU8.subarray(base, base + units));
      ascii = read === units && written === units;
    }
    if (ascii) {
      const offsets = HEAPU32;
      let offset = 0;
      offsets[offsetIndex++] = 0;
      for (let i = start; i < end; i++) {
        offset += items[i].length;
        offsets[offsetIndex++] = offset;
      }
      return count;
    }
    joinedAsciiLikely = false; // non-ASCII text: go key by key for the rest of this batch
  }
  // Mixed or non-ASCII: key by key, sized for the worst case first.
  arenaReserve(units * 3 + byteLength);
  const base = arena.items;
  let offset = 0;
  HEAPU32[offsetIndex++] = 0;
  for (let i = start; i < end; i++) {
    const item = items[i];
    if (typeof item === 'string') {
      const n = item.length;
      let ascii = n <= ASCII_LOOP_MAX;
      if (ascii) {
        const heap = HEAPU8;
        const at = base + offset;
        let seen = 0;
        for (let j = 0; j < n; j++) {
          const c = item.charCodeAt(j);
          seen |= c;
          heap[at + j] = c;
        }
        ascii = seen < 0x80;
        if (ascii) offset += n;
      }
      if (!ascii) {
        offset += encoder.encodeInto(item, HEAPU8.subarray(base + offset, base + arena.cap)).written;
      }
    } else {
      HEAPU8.set(item, base + offset);
      offset += item.length;
    }
    HEAPU32[offsetIndex++] = offset;
  }
  return count;
}

/**
 * Packed keys, `{ bytes, offsets }`: key i is bytes[offsets[i], offsets[i + 1]).
 * Returns null for anything else (an iterable of items). A malformed packed-keys
 * object throws here, before any chunk runs, so addAll of one adds nothing.
 */
function packedKeys(items, what) {
  if (items === null || typeof items !== 'object' || typeof items[Symbol.iterator] === 'function' ||
    !('bytes' in items || 'offsets' in items)) return null;
  const { bytes, offsets } = items;
  if (!isUint8Array(bytes)) throw new TypeError(`${what}.bytes must be a Uint8Array`);
  if (!(offsets instanceof Uint32Array)) throw new TypeError(`${what}.offsets must be a Uint32Array`);
  const count = offsets.length - 1;
  if (count < 0) throw new RangeError(`${what}.offsets must hold one entry more than there are keys`);
  for (let i = 0; i < count; i++) {
    if (offsets[i + 1] < offsets[i]) throw new RangeError(`${what}.offsets[${i + 1}] is below ${what}.offsets[${i}]`);
  }
  if (offsets[count] > bytes.length) {
    throw new RangeError(`${what}.offsets[${count}] (${offsets[count]}) is past the end of ${what}.bytes (${bytes.length} bytes)`);
  }
  return { bytes, offsets, count };
}

/**
 * runBatch for packed keys: chunks of up to BATCH_KEYS keys and
 * BATCH_PACKED_BYTES bytes (a longer key goes alone), each staged with one
 * TypedArray.set for the bytes (one per key would cost more than the wasm
 * side's hashing) and the offsets rebased to the chunk.
 */
function runPacked(handle, { bytes, offsets, count }, onChunk) {
  let start = 0;
  while (start < count) {
    const first = offsets[start];
    // The last key that still ends within the byte budget (offsets never decrease).
    let lo = start + 1;
    let hi = Math.min(count, start + BATCH_KEYS);
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (offsets[mid] - first <= BATCH_PACKED_BYTES) lo = mid;
      else hi = mid - 1;
    }
    const end = lo;
    const filter = handle.ptrOrThrow();
    const size = offsets[end] - first;
    arenaReserve(size);
    HEAPU8.set(bytes.subarray(first, first + size), arena.items);
    const heap32 = HEAPU32;
    const at = arena.offsets >>> 2;
    for (let i = start; i <= end; i++) heap32[at + i - start] = offsets[i] - first;
    onChunk(filter, end - start, start);
    start = end;
  }
  arenaShrink();
}

/**
 * Run onChunk(filter, count, indexBase) over items in chunks, each already
 * staged in the arena. `handle.ptr` is re-read before every chunk because a
 * generator feeding the batch may free the filter.
 */
function runBatch(handle, items, what, onChunk, packed = packedKeys(items, what)) {
  joinedAsciiLikely = true;
  if (packed !== null) {
    runPacked(handle, packed, onChunk);
    return;
  }
  if (items === null || items === undefined || (typeof items !== 'object' && typeof items !== 'string') ||
    typeof items[Symbol.iterator] !== 'function') {
    throw new TypeError(`${what} must be an iterable of strings or Uint8Arrays, or packed keys { bytes, offsets }`);
  }
  if (typeof items === 'string') throw new TypeError(`${what} must be an iterable of items, not a single string`);
  if (Array.isArray(items)) {
    const total = items.length;
    let start = 0;
    while (start < total) {
      let end = start;
      let units = 0;
      while (end < total && end - start < BATCH_KEYS) {
        const item = items[end];
        const n = item === null || item === undefined ? 0 : item.length | 0;
        if (end > start && units + n > BATCH_UNITS) break;
        units += n;
        end++;
      }
      const filter = handle.ptrOrThrow();
      onChunk(filter, packChunk(items, start, end, what, start), start);
      start = end;
    }
  } else {
    const chunk = [];
    let units = 0;
    let seen = 0;
    const flush = () => {
      const filter = handle.ptrOrThrow();
      const indexBase = seen - chunk.length;
      onChunk(filter, packChunk(chunk, 0, chunk.length, what, indexBase), indexBase);
      chunk.length = 0;
      units = 0;
    };
    for (const item of items) {
      const n = item === null || item === undefined ? 0 : item.length | 0;
      if (chunk.length === BATCH_KEYS || (chunk.length > 0 && units + n > BATCH_UNITS)) flush();
      chunk.push(item);
      units += n;
      seen++;
    }
    if (chunk.length > 0) flush();
  }
  arenaShrink();
}

/**
 * Insert every item of an iterable (or packed keys), one wasm call per chunk.
 * @param {{ ptrOrThrow(): number }} handle
 */
export function filterAddAll(handle, items) {
  runBatch(handle, items, 'items', (filter, count) => {
    check(ex.bg_filter_add_many(filter, arena.items, arena.offsets, count));
  });
}

/**
 * Query every item of an iterable (or packed keys), one wasm call per chunk.
 * @param {{ ptrOrThrow(): number }} handle
 * @returns {boolean[]}
 */
export function filterContainsMany(handle, items) {
  // Sized up front when the count is known (chunk i lands at out[indexBase + i]); grown in order otherwise.
  const packed = packedKeys(items, 'items');
  const out = packed !== null ? new Array(packed.count) : Array.isArray(items) ? new Array(items.length) : [];
  runBatch(handle, items, 'items', (filter, count, indexBase) => {
    check(ex.bg_filter_contains_many(filter, arena.items, arena.offsets, count, arena.results));
    const heap = HEAPU8;
    const results = arena.results;
    for (let i = 0; i < count; i++) out[indexBase + i] = heap[results + i] !== 0;
  }, packed);
  return out;
}

/* ------------------------------------------------------------------------ */
/* Filters                                                                   */
/* ------------------------------------------------------------------------ */

/** bg_filter_create through the i32/f64 shim; returns the filter pointer. */
export function filterCreate(kind, capacity, errorRate, seedLo, seedHi, keyEncoding) {
  const out = miscPtr + MISC_OUT_PTR;
  check(ex.bgw_filter_create(kind, capacity, errorRate, seedLo, seedHi, keyEncoding, out));
  return HEAPU32[out >>> 2];
}

/** The kind names this module has, by header id (e.g. 1 -> 'classic'). */
export function kindNames() {
  const names = new Map();
  for (let kind = 1; kind < 256; kind++) {
    const ptr = ex.bg_kind_name(kind) >>> 0;
    if (ptr !== 0) names.set(kind, readCString(ptr));
  }
  return names;
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

function removed(rc) {
  if (rc === 0) return true;
  if (statusName(rc) === 'E_NOT_FOUND') return false;
  throw statusError(rc);
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

/** Everything bg_info holds, as plain numbers (seed as lo/hi u32, list id as bytes). */
export function filterInfo(filter) {
  const f = miscPtr + MISC_F64;
  ex.bgw_filter_info(filter, f, miscPtr + MISC_LIST_ID);
  const d = HEAPF64;
  const i = f >>> 3;
  return {
    kind: d[i],
    k: d[i + 1],
    keyEncoding: d[i + 2],
    hashAlgorithm: d[i + 3],
    m: d[i + 4],
    capacity: d[i + 5],
    count: d[i + 6],
    seedLo: d[i + 7],
    seedHi: d[i + 8],
    generation: d[i + 9],
    bitsSet: d[i + 10],
    payloadBytes: d[i + 11],
    serializedBytes: d[i + 12],
    errorRate: d[i + 13],
    fillRatio: d[i + 14],
    estimatedItems: d[i + 15],
    estimatedErrorRate: d[i + 16],
    theoreticalErrorRate: d[i + 17],
    listId: HEAPU8.slice(miscPtr + MISC_LIST_ID, miscPtr + MISC_LIST_ID + 16),
  };
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
  const at = miscPtr + MISC_LIST_ID;
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

/**
 * Copy a .bgf file into wasm memory and build a filter that uses the copy in
 * place (bg_filter_deserialize_owned): one copy, validated by the core.
 */
export function filterFromBytes(bytes) {
  const buffer = new WasmBuffer(bytes.length);
  try {
    buffer.append(bytes);
    return buffer.takeFilter();
  } finally {
    buffer.free();
  }
}

/* ------------------------------------------------------------------------ */
/* Growable buffers in wasm memory (for streaming loads) and SHA-256          */
/* ------------------------------------------------------------------------ */

/** A malloc'd byte buffer in wasm memory that load.js fills chunk by chunk. */
export class WasmBuffer {
  /** @param {number} capacity bytes to allocate now */
  constructor(capacity) {
    this.ptr = mallocOrThrow(capacity);
    this.capacity = capacity > 0 ? capacity : 1;
    this.length = 0;
    // The file checksum, computed as bytes arrive (bg_file_hasher): each piece is
    // hashed while it is still in cache, or while the next is on the network, so
    // takeFilter() need not read the whole file again. 0: none (out of memory),
    // and takeFilter() lets the core compute it.
    this.hasher = ex.bg_file_hasher_new() >>> 0;
  }

  /** Make room for `capacity` bytes in total (exactly that many). */
  reserve(capacity) {
    if (capacity <= this.capacity) return;
    let ptr;
    if (typeof ex.realloc === 'function') {
      ptr = ex.realloc(this.ptr, capacity) >>> 0;
      if (ptr === 0) throw statusError(-3);
    } else {
      ptr = mallocOrThrow(capacity);
      HEAPU8.copyWithin(ptr, this.ptr, this.ptr + this.length);
      ex.free(this.ptr);
    }
    this.ptr = ptr;
    this.capacity = capacity;
  }

  /** Copy bytes in after what is there (growing the buffer when needed), hashing them on the way. */
  append(bytes) {
    const n = bytes.length;
    if (this.length + n > this.capacity) this.reserve(this.length + n);
    // Large inputs go in pieces that fit the L2 cache, each hashed right after its copy.
    for (let done = 0; done < n; done += APPEND_PIECE) {
      const piece = n - done <= APPEND_PIECE && done === 0 ? bytes : bytes.subarray(done, Math.min(n, done + APPEND_PIECE));
      const at = this.ptr + this.length;
      HEAPU8.set(piece, at);
      this.length += piece.length;
      if (this.hasher !== 0) ex.bg_file_hasher_update(this.hasher, at, piece.length);
    }
  }

  /** Copy bytes to the start of the buffer and do nothing else (no checksum): the load benchmark's baseline. */
  copyOnly(bytes) {
    HEAPU8.set(bytes, this.ptr);
  }

  /** bg_header_peek on the bytes so far: { code: 0 | negative, header | null }. */
  peekHeader() {
    const rc = ex.bgw_header_peek(this.ptr, this.length, miscPtr + MISC_F64, miscPtr + MISC_LIST_ID);
    return rc < 0 ? { rc, header: null } : { rc, header: readHeader() };
  }

  /** bg_file_validate on the bytes so far. */
  validate() {
    const rc = ex.bgw_file_validate(this.ptr, this.length, miscPtr + MISC_F64, miscPtr + MISC_LIST_ID);
    return rc < 0 ? { rc, header: null } : { rc, header: readHeader() };
  }

  /** The bytes so far, as a view of wasm memory (valid until memory grows: copy or use at once). */
  bytes() {
    return HEAPU8.subarray(this.ptr, this.ptr + this.length);
  }

  /** Feed bytes [from, to) to a Sha256. */
  hashRange(sha, from, to) {
    ex.bg_sha256_update(sha.ctx, this.ptr + from, to - from);
  }

  /**
   * Hand the buffer to bg_filter_deserialize_owned. On success the filter owns
   * the memory (this buffer becomes empty); on failure it throws and the buffer
   * is still ours to free.
   */
  takeFilter() {
    const out = miscPtr + MISC_OUT_PTR;
    if (this.hasher !== 0) {
      const digest = miscPtr + MISC_HASH;
      ex.bgw_file_hasher_digest(this.hasher, digest);
      const words = HEAPU32;
      check(ex.bgw_filter_deserialize_owned_checked(this.ptr, this.length, words[digest >>> 2], words[(digest >>> 2) + 1], out));
    } else {
      check(ex.bg_filter_deserialize_owned(this.ptr, this.length, out));
    }
    this.ptr = 0;
    this.capacity = 0;
    this.length = 0;
    this.#freeHasher();
    return HEAPU32[out >>> 2];
  }

  /** Release the memory (idempotent). */
  free() {
    if (this.ptr !== 0) {
      ex.free(this.ptr);
      this.ptr = 0;
    }
    this.#freeHasher();
  }

  #freeHasher() {
    if (this.hasher !== 0) {
      ex.bg_file_hasher_free(this.hasher);
      this.hasher = 0;
    }
  }
}

/** Incremental SHA-256 computed in wasm (bg_sha256_*). */
export class Sha256 {
  constructor() {
    this.ctx = mallocOrThrow(ex.bgw_sha256_ctx_size() >>> 0);
    ex.bg_sha256_init(this.ctx);
  }

  /** @returns {Uint8Array} the 32-byte digest */
  digest() {
    const out = miscPtr + MISC_DIGEST;
    ex.bg_sha256_final(this.ctx, out);
    return HEAPU8.slice(out, out + 32);
  }

  free() {
    if (this.ctx !== 0) {
      ex.free(this.ctx);
      this.ctx = 0;
    }
  }
}

/** One-shot SHA-256 of a string (UTF-8) or bytes -> 32 bytes. */
export function sha256(item) {
  const len = stageKey(item, 'input');
  const sha = new Sha256();
  try {
    ex.bg_sha256_update(sha.ctx, keyPtr, len);
    return sha.digest();
  } finally {
    sha.free();
    if (keyPtr !== scratchPtr) releaseKey();
  }
}

/** One-shot SHA-1 of a string (UTF-8) or bytes -> 20 bytes. */
export function sha1(item) {
  const len = stageKey(item, 'input');
  const out = miscPtr + MISC_DIGEST;
  ex.bg_sha1(keyPtr, len, out);
  if (keyPtr !== scratchPtr) releaseKey();
  return HEAPU8.slice(out, out + 20);
}

/* ------------------------------------------------------------------------ */
/* Headers, hashes and positions (inspection and golden-vector tests)        */
/* ------------------------------------------------------------------------ */

function u64(lo, hi) {
  return hi < 0x200000 ? hi * 0x100000000 + lo : (BigInt(hi) << 32n) | BigInt(lo);
}

function hex32(value) {
  return value.toString(16).padStart(8, '0');
}

// Reads the flattened header written by bgw_header_peek / bgw_file_validate.
function readHeader() {
  const d = HEAPF64;
  const i = (miscPtr + MISC_F64) >>> 3;
  return {
    version: d[i],
    kind: d[i + 1],
    keyEncoding: d[i + 2],
    hashAlgorithm: d[i + 3],
    k: d[i + 4],
    metadataLength: d[i + 5],
    m: d[i + 6],
    capacity: d[i + 7],
    count: d[i + 8],
    seed: u64(d[i + 9], d[i + 10]),
    generation: d[i + 11],
    payloadOffset: d[i + 12],
    payloadLength: d[i + 13],
    fileLength: d[i + 14],
    errorRate: d[i + 15],
    checksum: hex32(d[i + 17]) + hex32(d[i + 16]),
    listId: Array.from(HEAPU8.subarray(miscPtr + MISC_LIST_ID, miscPtr + MISC_LIST_ID + 16), (b) => b.toString(16).padStart(2, '0')).join(''),
  };
}

/**
 * Both header checks on a byte string, without throwing on bad bytes:
 * { peek: { rc, header }, validate: { rc, header } } (rc 0 = OK).
 */
export function headerOf(bytes) {
  const buffer = new WasmBuffer(bytes.length);
  try {
    buffer.append(bytes);
    return { peek: buffer.peekHeader(), validate: buffer.validate() };
  } finally {
    buffer.free();
  }
}

function splitSeed(seed) {
  if (typeof seed === 'bigint') return [Number(seed & 0xffffffffn), Number((seed >> 32n) & 0xffffffffn)];
  return [seed % 0x100000000, Math.floor(seed / 0x100000000)];
}

/** bg_hash(bytes, seed) -> { h1, h2 } as BigInts (tests and golden vectors). */
export function hashKey(bytes, seed = 0) {
  const len = stageBytesOnly(bytes, 'bytes');
  const [lo, hi] = splitSeed(seed);
  const out = miscPtr + MISC_HASH;
  ex.bgw_hash(keyPtr, len, lo, hi, out);
  if (keyPtr !== scratchPtr) releaseKey();
  const w = HEAPU32;
  const j = out >>> 2;
  return {
    h1: (BigInt(w[j + 1]) << 32n) | BigInt(w[j]),
    h2: (BigInt(w[j + 3]) << 32n) | BigInt(w[j + 2]),
  };
}

/** The k bit positions of a key in a filter of m bits (tests and golden vectors). */
export function positions(bytes, seed, m, k) {
  if (!Number.isInteger(k) || k < 1 || k > MAX_K) throw new RangeError(`k must be an integer in [1, ${MAX_K}]`);
  if (!Number.isInteger(m) || m < 1 || m > Number.MAX_SAFE_INTEGER) throw new RangeError('m must be a positive safe integer');
  const len = stageBytesOnly(bytes, 'bytes');
  const [lo, hi] = splitSeed(seed);
  const out = miscPtr + MISC_F64;
  ex.bgw_positions(keyPtr, len, lo, hi, m, k, out);
  if (keyPtr !== scratchPtr) releaseKey();
  return Array.from(HEAPF64.subarray(out >>> 3, (out >>> 3) + k));
}

/* ------------------------------------------------------------------------ */
/* Safe Browsing URLs (bg_url_*)                                             */
/* ------------------------------------------------------------------------ */

const URL_MAX_EXPRESSIONS = 30; // BG_URL_MAX_EXPRESSIONS

function requireUrlExports() {
  if (typeof ex.bg_url_canonicalize !== 'function' || typeof ex.bg_url_expressions !== 'function') {
    throw new BloomgateError('E_UNSUPPORTED', 'this bloomgate.wasm build does not export the URL functions');
  }
}

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
  requireUrlExports();
  const len = stageKey(url, 'url');
  let canonical = null;
  try {
    canonical = canonicalizeStaged(len);
    return utf8Decoder.decode(HEAPU8.subarray(canonical.ptr, canonical.ptr + canonical.length));
  } finally {
    if (canonical !== null) ex.free(canonical.ptr);
    if (keyPtr !== scratchPtr) releaseKey();
  }
}

/** The host-suffix x path-prefix expressions of a URL, most specific first (at most 30). */
export function urlExpressions(url) {
  requireUrlExports();
  const len = stageKey(url, 'url');
  let canonical = null;
  let out = 0;
  try {
    canonical = canonicalizeStaged(len);
    // Every expression is a part of the canonical URL: 30 of them fit in 30 x its length.
    const capacity = URL_MAX_EXPRESSIONS * (canonical.length + 1);
    out = mallocOrThrow(capacity);
    const countPtr = miscPtr + MISC_SIZE_T;
    const offsetsPtr = miscPtr + MISC_OFFSETS;
    check(ex.bg_url_expressions(canonical.ptr, canonical.length, out, capacity, offsetsPtr, countPtr));
    const count = HEAPU32[countPtr >>> 2];
    const offsets = HEAPU32.subarray(offsetsPtr >>> 2, (offsetsPtr >>> 2) + count + 1);
    const expressions = new Array(count);
    for (let i = 0; i < count; i++) {
      expressions[i] = utf8Decoder.decode(HEAPU8.subarray(out + offsets[i], out + offsets[i + 1]));
    }
    return expressions;
  } finally {
    if (out !== 0) ex.free(out);
    if (canonical !== null) ex.free(canonical.ptr);
    if (keyPtr !== scratchPtr) releaseKey();
  }
}
