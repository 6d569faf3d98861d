// @ts-check
/**
 * deltas.js — .bgd delta files (src/delta.c): what a delta says about
 * itself, encoding the change between two generations, and applying one.
 * Inputs are copied into wasm memory; results are fresh copies, so the
 * caller's bytes are never modified.
 */
import { DELTA_INFO_BYTES, DELTA_INFO_SLOTS, readDeltaInfo } from './contract.js';
import {
  ex, HEAPF64, HEAPU32, HEAPU8, MISC_BYTES, MISC_F64, MISC_SIZE_T, check, freePtr, mallocOrThrow, miscPtr,
  statusName,
} from './module.js';

if (DELTA_INFO_SLOTS > 64 || DELTA_INFO_BYTES > 16) throw new Error('contract.js: bg_delta_info no longer fits the misc block');

function hex(bytes) {
  let text = '';
  for (const byte of bytes) text += byte.toString(16).padStart(2, '0');
  return text;
}

const hex64 = (value) => BigInt(value).toString(16).padStart(16, '0');

/** A copy of bytes in wasm memory (at least `capacity` bytes); the caller frees it. */
function copyIn(bytes, capacity = bytes.length) {
  const ptr = mallocOrThrow(Math.max(capacity, bytes.length));
  HEAPU8.set(bytes, ptr);
  return ptr;
}

function peek(ptr, length) {
  check(ex.bgw_delta_peek(ptr, length, miscPtr + MISC_F64, miscPtr + MISC_BYTES));
  const info = readDeltaInfo(HEAPF64, (miscPtr + MISC_F64) >>> 3, HEAPU8, miscPtr + MISC_BYTES);
  return {
    ...info,
    listId: hex(info.listId),
    baseChecksum: hex64(info.baseChecksum),
    targetChecksum: hex64(info.targetChecksum),
  };
}

/**
 * What a delta names: the base it applies to and the file it makes
 * (bg_delta_peek: its own header, length and checksum are checked).
 */
export function deltaInfo(delta) {
  const ptr = copyIn(delta);
  try {
    return peek(ptr, delta.length);
  } finally {
    ex.free(ptr);
  }
}

/** The .bgd that turns `base` into `target` (two generations of one list). */
export function encodeDelta(base, target) {
  let basePtr = 0;
  let targetPtr = 0;
  let out = 0;
  try {
    basePtr = copyIn(base);
    targetPtr = copyIn(target);
    const written = miscPtr + MISC_SIZE_T;
    // The first call learns the size (BG_E_BUFFER with *written set), the second writes.
    const rc = ex.bg_delta_encode(basePtr, base.length, targetPtr, target.length, 0, 0, written);
    if (rc !== 0 && statusName(rc) !== 'E_BUFFER') check(rc);
    const size = HEAPU32[written >>> 2];
    out = mallocOrThrow(size);
    check(ex.bg_delta_encode(basePtr, base.length, targetPtr, target.length, out, size, written));
    return HEAPU8.slice(out, out + HEAPU32[written >>> 2]);
  } finally {
    freePtr(basePtr);
    freePtr(targetPtr);
    freePtr(out);
  }
}

/**
 * The target file of a delta applied to `base`, verified by the core against
 * the target's checksum and full validation. A delta for another base is
 * E_DELTA_BASE; a damaged one E_DELTA, E_CHECKSUM or E_TRUNCATED.
 */
export function applyDelta(base, delta) {
  let deltaPtr = 0;
  let filePtr = 0;
  try {
    deltaPtr = copyIn(delta);
    const info = peek(deltaPtr, delta.length);
    const capacity = Math.max(base.length, info.targetLength);
    filePtr = copyIn(base, capacity);
    const length = miscPtr + MISC_SIZE_T;
    check(ex.bg_delta_apply(filePtr, base.length, capacity, deltaPtr, delta.length, length));
    return HEAPU8.slice(filePtr, filePtr + HEAPU32[length >>> 2]);
  } finally {
    freePtr(deltaPtr);
    freePtr(filePtr);
  }
}
