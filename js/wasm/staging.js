// @ts-check
/**
 * staging.js — putting keys into wasm memory: one scratch buffer stages single
 * keys (short ASCII strings are written straight into it), the arena
 * (arena.js) stages batches, so a query or a batch chunk is one boundary
 * crossing.
 */
import { BloomgateError } from '../errors.js';
import { ex, HEAPU8, HEAPU32, mallocOrThrow, onAttach, onMemoryGrowth } from './module.js';
import {
  BATCH_KEYS, arena, arenaReserve, arenaShrink, getBatchEncoder, isUint8Array, packWordsChunk, packedKeys, runPacked,
} from './arena.js';

export {
  BATCH_ENCODERS, BATCH_PACKED_BYTES, arena, arenaReserve, arenaShrink, getBatchEncoder, isUint8Array, packedKeys, setBatchEncoder,
  stageInPieces,
} from './arena.js';

// ASCII strings up to asciiLoopMax UTF-16 units are copied by a charCodeAt loop
// writing four characters a u32 store (writeAscii; a unit >= 0x80 hands the key
// to encodeInto), longer ones by encodeInto. The loop costs ~0.75-0.95x the
// byte-a-store loop it replaced, ~2.3-3 ns a character; an encodeInto call is
// ~60-80 ns in Node but ~300 ns in Chromium (a Web IDL call allocating
// { read, written }): the loop wins up to ~24-28 characters in Node and ~130 in
// Chromium (node bench/staging.mjs [--browser]). Chosen per runtime at load,
// not timed at start-up (browser clocks are coarse). Deno and Bun present as Node.
export const NODE_ASCII_LOOP_MAX = 24;
export const BROWSER_ASCII_LOOP_MAX = 128;
const DEFAULT_ASCII_LOOP_MAX = typeof process === 'object' && typeof process?.versions?.node === 'string' &&
  typeof window === 'undefined' && typeof importScripts !== 'function' ? NODE_ASCII_LOOP_MAX : BROWSER_ASCII_LOOP_MAX;
let asciiLoopMax = DEFAULT_ASCII_LOOP_MAX;
// The single-key scratch grows up to this size and stays; larger keys get a
// temporary buffer for the one call, so one huge key does not pin memory.
const SCRATCH_INITIAL = 1024;
const SCRATCH_KEEP_MAX = 1 << 20;
// Batches go to wasm in chunks of at most BATCH_KEYS keys (arena.js) and this
// many UTF-16 units. The unit budget keeps a chunk's joined string (see
// packChunk) below V8's large-object threshold (~128 KiB): above it every join
// is a fresh mmap and batches of 38-character keys ran 4x slower. It also keeps
// the arena small (worst case 3 bytes per unit) and the offsets well inside u32.
const BATCH_UNITS = 48 * 1024;

const encoder = new TextEncoder();

/** The charCodeAt loop's limit; setAsciiLoopMax(limit) forces it (benchmarks, tests), undefined restores it. */
export const getAsciiLoopMax = () => asciiLoopMax;
export function setAsciiLoopMax(limit) {
  const previous = asciiLoopMax;
  if (limit !== undefined && !(Number.isInteger(limit) && limit >= 0 && limit <= SCRATCH_INITIAL)) throw new RangeError(`limit: 0 to ${SCRATCH_INITIAL}`);
  asciiLoopMax = limit ?? DEFAULT_ASCII_LOOP_MAX;
  return previous;
}

/** The single-key staging buffer. */
export let scratchPtr = 0;
let scratchCap = 0;
let scratchView = HEAPU8; // HEAPU8.subarray(scratchPtr, scratchPtr + scratchCap)
let scratchWords = HEAPU32; // HEAPU32.subarray(scratchPtr >>> 2, (scratchPtr + scratchCap) >>> 2): scratchPtr is 4-aligned
/** Where stageKey() left the key: scratchPtr, or a temporary buffer (releaseKey frees it). */
export let keyPtr = 0;

// The views are rebuilt after every growth (the old buffer is detached) and
// whenever the scratch moves, so writeAscii never writes through a stale one.
function scratchViews() {
  scratchView = HEAPU8.subarray(scratchPtr, scratchPtr + scratchCap);
  scratchWords = HEAPU32.subarray(scratchPtr >>> 2, (scratchPtr + scratchCap) >>> 2);
}

onMemoryGrowth(scratchViews);

/** A scratch buffer: malloc aligns to 8, and writeAscii relies on 4. */
function mallocScratch(capacity) {
  const ptr = mallocOrThrow(capacity);
  if ((ptr & 3) !== 0) {
    ex.free(ptr);
    throw new Error('bloomgate: malloc returned an unaligned pointer');
  }
  return ptr;
}

onAttach(() => {
  scratchPtr = mallocScratch(SCRATCH_INITIAL);
  scratchCap = SCRATCH_INITIAL;
  keyPtr = scratchPtr;
  scratchViews();
});

function growScratch(size) {
  let capacity = scratchCap;
  while (capacity < size) capacity *= 2;
  const ptr = mallocScratch(capacity);
  ex.free(scratchPtr);
  scratchPtr = ptr;
  keyPtr = ptr;
  scratchCap = capacity;
  scratchViews();
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

function itemTypeError(what) {
  return new TypeError(`${what} must be a string or a Uint8Array`);
}

// Slow path of stageKey for strings: non-ASCII or longer than asciiLoopMax.
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
 * Write the n (<= scratchCap) units of an ASCII string to `words`, four a u32
 * store (wasm memory is little-endian, and module.js refuses big-endian hosts:
 * character i is byte i), with one test a
 * group; the last 1-3 as one word padded with zeros (the capacity is a
 * multiple of 4). False at a unit >= 0x80: what was written is garbage that
 * encodeInto overwrites. Measured against one byte a store and eight
 * characters per two stores in bench/staging.mjs.
 */
function writeAscii(s, n, words) {
  const full = n & ~3;
  let i = 0;
  let w = 0;
  for (; i < full; i += 4) {
    const a = s.charCodeAt(i);
    const b = s.charCodeAt(i + 1);
    const c = s.charCodeAt(i + 2);
    const d = s.charCodeAt(i + 3);
    if ((a | b | c | d) >= 0x80) return false;
    words[w++] = a | (b << 8) | (c << 16) | (d << 24);
  }
  if (i < n) {
    let word = 0;
    for (let shift = 0; i < n; i++, shift += 8) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) return false;
      word |= c << shift;
    }
    words[w] = word;
  }
  return true;
}

/**
 * Put a key into wasm memory at keyPtr and return its length in bytes. The
 * common case (a short ASCII string) writes straight into the scratch view.
 * The caller calls releaseKey() when keyPtr !== scratchPtr.
 */
export function stageKey(item, what) {
  if (typeof item === 'string') {
    const n = item.length;
    if (n <= asciiLoopMax && writeAscii(item, n, scratchWords)) return n;
    return stageString(item);
  }
  if (isUint8Array(item)) return stageBytes(item);
  throw itemTypeError(what);
}

/** stageKey for byte keys only. */
export function stageBytesOnly(bytes, what) {
  if (!isUint8Array(bytes)) throw new TypeError(`${what} must be a Uint8Array`);
  return stageBytes(bytes);
}

/** A key staged in a temporary buffer is released right after its one call. */
export function releaseKey() {
  if (keyPtr !== scratchPtr) {
    ex.free(keyPtr);
    keyPtr = scratchPtr;
  }
}

/* ------------------------------------------------------------------------ */
/* Batches                                                                   */
/* ------------------------------------------------------------------------ */

// Cleared when a chunk of strings turns out not to be ASCII, so the rest of the batch skips the join attempt.
let joinedAsciiLikely = true;

/** An item that is a view of the buffer a batch writes its answers to (mightContainMany's `into`). */
export function sharedMemoryError(what) {
  return new BloomgateError('E_ARG', `${what} shares memory with mightContainMany's \`into\`: answers written there would change the keys still to be read; pass an \`into\` of its own`);
}

/**
 * Pack items[start, end) into the arena: key bytes back to back, count + 1
 * u32 offsets. Runs no user code, so nothing can re-enter the arena meanwhile.
 * A Uint8Array item over `avoid` (runBatch) throws.
 * @param {ArrayBufferLike | null} avoid
 */
function packChunk(items, start, end, what, indexBase, avoid) {
  const count = end - start;
  let units = 0; // UTF-16 units of the string keys
  let byteLength = 0; // bytes of the Uint8Array keys
  let allStrings = true;
  for (let i = start; i < end; i++) {
    const item = items[i];
    if (typeof item === 'string') units += item.length;
    else if (isUint8Array(item)) {
      // An item over the memory answers are written to would change before it is read.
      if (avoid !== null && item.buffer === avoid) throw sharedMemoryError(`${what}[${indexBase + i - start}]`);
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
  if (allStrings && joinedAsciiLikely && getBatchEncoder() === 'words') {
    // All strings, `units` in all: the chunk is exactly items[start, end) unless a unit is >= 0x80.
    if (packWordsChunk(items, start, end, units) === end) return count;
    joinedAsciiLikely = false; // non-ASCII text: go key by key for the rest of this batch
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
      let ascii = n <= asciiLoopMax;
      if (ascii) {
        const heap = HEAPU8;
        const at = base + offset;
        let j = 0;
        for (; j < n; j++) {
          const c = item.charCodeAt(j);
          if (c >= 0x80) break;
          heap[at + j] = c;
        }
        ascii = j === n;
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
 * Run onChunk(filter, count, indexBase) over items in chunks, each already
 * staged in the arena (arena.items, arena.offsets). `handle.ptrOrThrow()` is
 * called before every chunk because a generator feeding the batch may free
 * the filter. `avoid`: an ArrayBuffer that onChunk writes to, which no
 * Uint8Array item may view (a later chunk's keys would change before they
 * are read); packed keys are the caller's to check.
 * @param {ArrayBufferLike | null} [avoid]
 */
export function runBatch(handle, items, what, onChunk, packed = packedKeys(items, what), avoid = null) {
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
    const words = getBatchEncoder() === 'words';
    while (start < total) {
      if (words && joinedAsciiLikely) {
        // Find the chunk's end, check its types and encode it in one pass.
        const filter = handle.ptrOrThrow();
        const packedEnd = packWordsChunk(items, start, total, BATCH_UNITS);
        const stop = packedEnd < 0 ? -packedEnd - 1 : packedEnd;
        if (stop < total && stop - start < BATCH_KEYS) {
          // A bad item fails its whole chunk before any of it runs, as on the path below.
          const next = items[stop];
          if (typeof next !== 'string' && !isUint8Array(next)) throw itemTypeError(`${what}[${stop}]`);
        }
        if (packedEnd > start) {
          onChunk(filter, packedEnd - start, start);
          start = packedEnd;
          continue;
        }
        if (packedEnd < 0) {
          // Not ASCII: this chunk again key by key, and the rest of the batch too.
          joinedAsciiLikely = false;
          onChunk(filter, packChunk(items, start, stop, what, start, avoid), start);
          start = stop;
          continue;
        }
        // A non-string first item, or one longer than a chunk: the path below.
      }
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
      onChunk(filter, packChunk(items, start, end, what, start, avoid), start);
      start = end;
    }
  } else {
    const chunk = [];
    let units = 0;
    let seen = 0;
    const flush = () => {
      const filter = handle.ptrOrThrow();
      const indexBase = seen - chunk.length;
      onChunk(filter, packChunk(chunk, 0, chunk.length, what, indexBase, avoid), indexBase);
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
