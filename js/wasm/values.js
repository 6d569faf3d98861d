// @ts-check
/**
 * values.js — the calls of filters that store a value with each key (fuse4,
 * docs/kinds/fuse4.md): add with a value, read a value back, and a sharded
 * build's h1 records with their values.
 */
import { ex, HEAPU32, HEAPU8, MISC_SIZE_T, check, miscPtr, statusError } from './module.js';
import {
  BATCH_PACKED_BYTES, arena, arenaReserve, arenaShrink, keyPtr, packedKeys, releaseKey, runBatch, scratchPtr, stageBytesOnly, stageKey,
} from './staging.js';

/** Insert one item with its value (filters with values: fuse4). */
export function filterAddValue(filter, item, value) {
  const len = stageKey(item, 'item');
  const rc = ex.bg_filter_add_value(filter, keyPtr, len, value);
  if (keyPtr !== scratchPtr) releaseKey();
  if (rc < 0) throw statusError(rc);
}

/** Insert an already-encoded key with its value. */
export function filterAddKeyValue(filter, key, value) {
  const len = stageBytesOnly(key, 'key');
  const rc = ex.bg_filter_add_key_value(filter, keyPtr, len, value);
  if (keyPtr !== scratchPtr) releaseKey();
  if (rc < 0) throw statusError(rc);
}

// The value bg_filter_value wrote, or null for "definitely not".
function valueResult(rc) {
  if (rc > 0) return HEAPU32[(miscPtr + MISC_SIZE_T) >>> 2];
  if (rc === 0) return null;
  throw statusError(rc);
}

/** The value stored with an item (0 for kinds without values), or null when it is definitely not in the filter. */
export function filterValue(filter, item) {
  const len = stageKey(item, 'item');
  const rc = ex.bg_filter_value(filter, keyPtr, len, miscPtr + MISC_SIZE_T);
  if (keyPtr !== scratchPtr) releaseKey();
  return valueResult(rc);
}

/** filterValue for an already-encoded key. */
export function filterValueKey(filter, key) {
  const len = stageBytesOnly(key, 'key');
  const rc = ex.bg_filter_value_key(filter, keyPtr, len, miscPtr + MISC_SIZE_T);
  if (keyPtr !== scratchPtr) releaseKey();
  return valueResult(rc);
}

/**
 * filterAddH1 with a value per key (bg_filter_add_h1_values): `bytes` holds
 * little-endian u64 h1 records and `values` one byte per record (each below
 * 2^valueBits), staged together through the batch arena in chunks.
 * @param {number} filter
 * @param {Uint8Array} bytes
 * @param {Uint8Array} values
 */
export function filterAddH1Values(filter, bytes, values) {
  if (bytes.length % 8 !== 0) throw new RangeError('h1 records are 8 bytes each');
  const count = bytes.length / 8;
  if (values.length !== count) throw new RangeError(`${count} h1 records need ${count} values, got ${values.length}`);
  const piece = Math.floor(BATCH_PACKED_BYTES / 9);
  for (let done = 0; done < count; done += piece) {
    const n = Math.min(piece, count - done);
    arenaReserve(9 * n);
    HEAPU8.set(bytes.subarray(8 * done, 8 * (done + n)), arena.items);
    HEAPU8.set(values.subarray(done, done + n), arena.items + 8 * n);
    check(ex.bg_filter_add_h1_values(filter, arena.items, arena.items + 8 * n, n));
  }
  arenaShrink();
}

/**
 * filterAddAll with a value per item (bg_filter_add_many_values). An iterable
 * that is not an array is read into one first; `prepare(count)` gets the
 * number of items and returns their values as a Uint8Array, checked, before
 * anything is added. Each chunk's values ride in the arena's results bytes.
 * @param {{ ptrOrThrow(): number }} handle
 * @param {(count: number) => Uint8Array} prepare
 */
export function filterAddAllValues(handle, items, prepare) {
  const packed = packedKeys(items, 'items');
  if (packed === null && !Array.isArray(items)) {
    if (items === null || typeof items !== 'object' || typeof items[Symbol.iterator] !== 'function') {
      throw new TypeError('items must be an iterable of strings or Uint8Arrays, or packed keys { bytes, offsets }');
    }
    items = Array.from(items);
  }
  const values = prepare(packed !== null ? packed.count : items.length);
  runBatch(handle, items, 'items', (filter, count, indexBase) => {
    HEAPU8.set(values.subarray(indexBase, indexBase + count), arena.results);
    check(ex.bg_filter_add_many_values(filter, arena.items, arena.offsets, arena.results, count));
  }, packed);
}
