/**
 * 'bloomgate/inline': the same API as 'bloomgate', with the wasm module
 * carried in the JavaScript and instantiated on import (nothing is fetched).
 */
export * from './index.js';
