// @ts-check
/**
 * arena.js — the batch arena (key bytes back to back, their u32 offsets and a
 * result byte per key, reused by every batch) and packed keys
 * `{ bytes, offsets }`, which go into it with one copy a chunk. staging.js
 * packs iterables of strings and byte keys into the same arena.
 */
import { ex, HEAPU8, HEAPU32, freePtr, mallocOrThrow, onAttach } from './module.js';

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
