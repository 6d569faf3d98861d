// @ts-check
/**
 * js/wasm/ — the WebAssembly boundary, the only code that touches the
 * module's exports and memory. One job per file:
 *   contract.js  the facts the core owns (generated from src/bloomgate.h)
 *   module.js    instantiation, memory views, status codes, allocation
 *   staging.js   keys and batches into wasm memory
 *   arena.js     the batch arena, packed keys { bytes, offsets }, ASCII batches as words
 *   buffers.js   streaming buffers, checksums and digests
 *   calls.js     one thin call per verb
 *   batches.js   the batch verbs (addAll, mightContainMany, with or without `into`)
 *   values.js    values stored with keys (fuse4)
 *   deltas.js    .bgd deltas between generations
 * This file is the folder's interface for the rest of js/.
 */
export {
  FORMAT_VERSION, HASH_ALGORITHMS, HEADER_FIELDS, HEADER_SIZE, KEY_ENCODINGS, KINDS, MAX_BITS, MAX_CAPACITY, MAX_K,
  MAX_METADATA, MAX_VALUE_BITS, STATUSES, URL_MAX_EXPRESSIONS, VERSION,
} from './contract.js';
export {
  check, checkMemoryFor, checkMemoryLimit, getMemoryLimit, heapSize, init, isReady, memoryLimitFor, ready,
  registerWasmLoader, setMemoryLimit, statusCode, statusError, statusMessage, statusName,
} from './module.js';
export { FileChecksum, Sha256, WasmBuffer, headerOf, sha1, sha256 } from './buffers.js';
export {
  filterAdd, filterAddH1, filterAddKey, filterClear, filterContains, filterContainsKey,
  filterCreate, filterFree, filterFromBytes, filterInfo, filterMatchUrl, filterMerge,
  filterMetadataText, filterRemove, filterRemoveKey, filterSeal, filterSerialize, filterSetIdentity,
  filterSerializeTo, filterSetMetadata, filterToClassic, hashWords, urlCanonicalize, urlExpressions,
} from './calls.js';
export { filterAddAll, filterContainsMany, filterContainsManyInto } from './batches.js';
export { filterAddAllValues, filterAddH1Values, filterAddKeyValue, filterAddValue, filterValue, filterValueKey } from './values.js';
export { applyDelta, deltaInfo, encodeDelta } from './deltas.js';
