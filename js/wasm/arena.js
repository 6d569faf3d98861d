// @ts-check
/**
 * arena.js — the batch arena (key bytes back to back, their u32 offsets and a
 * result byte per key, reused by every batch) and packed keys
 * `{ bytes, offsets }`, which go into it with one copy a chunk, and the
 * 'words' batch encoder of ASCII strings. staging.js packs iterables of
 * strings and byte keys into the same arena.
 */
import { ex, HEAPU8, HEAPU32, freePtr, mallocOrThrow, onAttach } from './module.js';

// How a batch chunk of ASCII strings goes into the arena. 'join': one
// encodeInto of the chunk's joined string. 'words': a charCodeAt loop writing
// four characters a u32 store, streamed across key boundaries. Measured on
// 1,000-key batches of 38-character keys, per key against one call a key
// (npm run bench:browser, the two timed side by side; bench/batch-variants.mjs
// for the parts): V8 joins and encodes fast (Chromium 0.62-0.72x with 'join');
// JavaScriptCore joins at ~100-130 ns a key and encodeInto adds ~160 (WebKit
// 2-3x with 'join', 0.67-1.3x with 'words'); SpiderMonkey's 'join' ran 1.43x
// in the benchmark's page and 'words' 0.95x. So 'join' where the runtime is
// Node (Deno, Bun) or the user agent names Chrome/ (HeadlessChrome/ too),
// 'words' everywhere else.
export const BATCH_ENCODERS = Object.freeze(['join', 'words']);
const USER_AGENT = typeof navigator === 'object' && navigator !== null ? String(navigator.userAgent) : '';
const DEFAULT_BATCH_ENCODER = /Chrome\//.test(USER_AGENT) ||
  (typeof process === 'object' && process !== null && typeof process.versions?.node === 'string') ? 'join' : 'words';
let batchEncoder = DEFAULT_BATCH_ENCODER;

/** The batch encoder ('join' or 'words'); setBatchEncoder(name) forces it (benchmarks, tests), undefined restores it. */
export const getBatchEncoder = () => batchEncoder;
export function setBatchEncoder(name) {
  const previous = batchEncoder;
  if (name !== undefined && !BATCH_ENCODERS.includes(name)) throw new RangeError(`batch encoder: ${BATCH_ENCODERS.join(' or ')}`);
  batchEncoder = name ?? DEFAULT_BATCH_ENCODER;
  return previous;
}

/** A batch chunk holds at most this many keys. */
export const BATCH_KEYS = 4096;
const ARENA_INITIAL = 64 * 1024;
/** Packed keys and other large inputs go to wasm in pieces of at most this many bytes. */
export const BATCH_PACKED_BYTES = 256 * 1024;

/** @type {{ items: number, cap: number, offsets: number, results: number }} Batch staging, set at attach (typed as set). */
export let arena = /** @type {any} */ (null);

onAttach(() => {
  arena = newArena(ARENA_INITIAL);
});

export function isUint8Array(value) {
  return value instanceof Uint8Array || Object.prototype.toString.call(value) === '[object Uint8Array]';
}

function newArena(capacity) {
  const offsets = mallocOrThrow((BATCH_KEYS + 1) * 4);
  let results = 0;
  let items;
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

/** Make the arena's item area hold at least size bytes. */
export function arenaReserve(size) {
  if (size <= arena.cap) return;
  let capacity = arena.cap;
  while (capacity < size) capacity *= 2;
  const ptr = mallocOrThrow(capacity);
  ex.free(arena.items);
  arena.items = ptr;
  arena.cap = capacity;
}

/**
 * After a batch needed a big arena, give the memory back (the heap keeps its
 * size, but malloc can reuse it for filters).
 */
export function arenaShrink() {
  if (arena.cap > 4 * 1024 * 1024) {
    const ptr = ex.malloc(ARENA_INITIAL) >>> 0;
    if (ptr !== 0) {
      ex.free(arena.items);
      arena.items = ptr;
      arena.cap = ARENA_INITIAL;
    }
  }
}

/** Copy bytes into the arena in pieces of at most `piece` bytes, calling onPiece(ptr, length) for each. */
export function stageInPieces(bytes, piece, onPiece) {
  for (let done = 0; done < bytes.length; done += piece) {
    const part = bytes.subarray(done, Math.min(bytes.length, done + piece));
    arenaReserve(part.length);
    HEAPU8.set(part, arena.items);
    onPiece(arena.items, part.length);
  }
}

/* ------------------------------------------------------------------------ */
/* Packed keys                                                               */
/* ------------------------------------------------------------------------ */

/**
 * Packed keys, `{ bytes, offsets }`: key i is bytes[offsets[i], offsets[i + 1]).
 * Returns null for anything else (an iterable of items). A malformed packed-keys
 * object throws here, before any chunk runs, so addAll of one adds nothing.
 */
export function packedKeys(items, what) {
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
export function runPacked(handle, { bytes, offsets, count }, onChunk) {
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

/* ------------------------------------------------------------------------ */
/* ASCII strings, four characters a store                                    */
/* ------------------------------------------------------------------------ */

/**
 * The 'words' batch encoder, in the one pass that also finds the chunk's end
 * and checks the items' types: the strings from items[start] written back to
 * back into the arena four characters a u32 store, the stores streamed across
 * key boundaries (a key's first characters complete the word the previous key
 * left open), with their offsets, where the chunk ends at
 * BATCH_KEYS keys, before the key that would take it past `maxUnits` UTF-16
 * units, or before the first item that is not a string. Returns end, or
 * -(end + 1) when a unit is >= 0x80 (what was written is garbage; the caller
 * packs the same chunk key by key). Returns start (nothing packed) when the
 * first item is not a string or alone holds more than maxUnits units: the
 * caller's general path takes those.
 *
 * In JavaScriptCore every pass over a chunk costs: with the separate passes
 * (finding the chunk's end, checking types, encoding) a batch of 38-character
 * keys took 95 ns a key in its fastest round, the same work inlined in one pass
 * 76 (bench/batch-variants.mjs `many` and `streamPathInline`, WebKitGTK, load 2.7).
 */
export function packWordsChunk(items, start, total, maxUnits) {
  arenaReserve(maxUnits + 4); // the last word may carry up to 3 zero bytes past the keys
  const base = arena.items;
  if ((base & 3) !== 0) return start; // malloc aligns to 8; never taken
  const words = HEAPU32;
  let w = base >>> 2;
  let at = arena.offsets >>> 2;
  const last = Math.min(total, start + BATCH_KEYS);
  let pending = 0; // the open word's bytes, low first
  let bits = 0; // how many bits of it are filled: 0, 8, 16 or 24
  let units = 0;
  let seen = 0; // every unit ORed: >= 0x80 when one is not ASCII
  let i = start;
  words[at++] = 0;
  for (; i < last; i++) {
    const s = items[i];
    if (typeof s !== 'string') break;
    const n = s.length;
    if (units + n > maxUnits) break;
    const full = n & ~3;
    let j = 0;
    if (bits === 0) {
      for (; j < full; j += 4) {
        const a = s.charCodeAt(j);
        const b = s.charCodeAt(j + 1);
        const c = s.charCodeAt(j + 2);
        const d = s.charCodeAt(j + 3);
        seen |= a | b | c | d;
        words[w++] = a | (b << 8) | (c << 16) | (d << 24);
      }
    } else {
      const back = 32 - bits;
      for (; j < full; j += 4) {
        const a = s.charCodeAt(j);
        const b = s.charCodeAt(j + 1);
        const c = s.charCodeAt(j + 2);
        const d = s.charCodeAt(j + 3);
        seen |= a | b | c | d;
        const word = a | (b << 8) | (c << 16) | (d << 24);
        words[w++] = pending | (word << bits);
        pending = word >>> back;
      }
    }
    if (j < n) {
      // The last 1-3 characters as one word, added to the open one.
      const a = s.charCodeAt(j);
      const b = j + 1 < n ? s.charCodeAt(j + 1) : 0;
      const c = j + 2 < n ? s.charCodeAt(j + 2) : 0;
      seen |= a | b | c;
      const tail = a | (b << 8) | (c << 16);
      const filled = bits + ((n - j) << 3);
      if (filled < 32) {
        pending |= tail << bits;
        bits = filled;
      } else {
        words[w++] = pending | (tail << bits);
        pending = tail >>> (32 - bits); // bits >= 8 here: 3 characters and fewer fill no empty word
        bits = filled - 32;
      }
    }
    units += n;
    words[at++] = units;
  }
  if (bits !== 0) words[w] = pending;
  return seen < 0x80 ? i : -(i + 1);
}
