// @ts-check
/**
 * batches.js — the batch verbs: addAll and mightContainMany over an iterable
 * or packed keys, one wasm call per chunk that staging.js / arena.js packed.
 * mightContainMany answers as a boolean[] or, with `into`, as bytes in the
 * caller's Uint8Array (no array a call).
 */
import { BloomgateError } from '../errors.js';
import { ex, HEAPU8, check } from './module.js';
import { arena, isUint8Array, packedKeys, runBatch, sharedMemoryError } from './staging.js';

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

/**
 * filterContainsMany with the answers written to the caller's bytes (1: maybe,
 * 0: definitely not), one copy a chunk and no array a call: an answer array is
 * garbage the page's collector pays for, which in JavaScriptCore with a large
 * live heap costs more than the batch saves (docs/BENCHMARKS.md, "Issue 21's
 * targets, the last run"). Returns into.subarray(0, count). A batch whose
 * count is known up front (an array, packed keys) that into cannot hold fails
 * before any work; another iterable fails at the chunk that would overrun,
 * into then holding the answers before it.
 * @param {{ ptrOrThrow(): number }} handle
 * @param {Uint8Array} into
 * @returns {Uint8Array}
 */
export function filterContainsManyInto(handle, items, into) {
  if (!isUint8Array(into)) throw new TypeError(`mightContainMany(items, into): into must be a Uint8Array, got ${typeName(into)}`);
  const packed = packedKeys(items, 'items');
  const room = into.length;
  const known = packed !== null ? packed.count : Array.isArray(items) ? items.length : -1;
  if (known > room) throw intoTooSmall(room, `the batch has ${known} items`);
  const memory = into.buffer;
  if (packed !== null && (packed.bytes.buffer === memory || packed.offsets.buffer === memory)) {
    throw sharedMemoryError(packed.bytes.buffer === memory ? 'items.bytes' : 'items.offsets');
  }
  let answered = 0;
  runBatch(handle, items, 'items', (filter, count, indexBase) => {
    if (indexBase + count > room) {
      throw intoTooSmall(room, `the batch has more items (${indexBase === 0 ? 'no answer is' : `answers 0 to ${indexBase - 1} are`} written)`);
    }
    check(ex.bg_filter_contains_many(filter, arena.items, arena.offsets, count, arena.results));
    into.set(HEAPU8.subarray(arena.results, arena.results + count), indexBase);
    answered = indexBase + count;
  }, packed, memory);
  return into.subarray(0, answered);
}

/** 'null', 'an Array', an object's class ('Uint16Array', 'ArrayBuffer') or typeof. */
function typeName(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an Array';
  return typeof value === 'object' ? Object.prototype.toString.call(value).slice(8, -1) : typeof value;
}

function intoTooSmall(room, what) {
  return new BloomgateError('E_RANGE', `mightContainMany(items, into): into has room for ${room} answers and ${what}`);
}
