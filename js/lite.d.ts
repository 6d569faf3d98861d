/**
 * 'bloomgate/lite' (js/lite.mjs): only what a page needs for its first answer, with the wasm
 * module carried in the file and compiled on import. The same declarations as 'bloomgate'.
 */
export { BloomFilter, BloomgateError, init, loadFilter, sizeFor } from './index.js';
export type {
  BloomgateErrorCode, CreateOptions, FilterSize, FilterStats, Item, KeyEncoding, Kind, LoadOptions, PackedKeys, WebAssemblyModule,
} from './index.js';
