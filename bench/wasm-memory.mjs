// A scratch region inside the library's own wasm memory, for the "just copy the
// bytes into wasm memory" baseline of the load test. Benchmark-only: it uses
// js/wasm.js internals (WasmBuffer), which applications never import.
import { ready, WasmBuffer } from '../js/wasm.js';

/**
 * A malloc'd region of `size` bytes in the module's memory. copy(bytes) is one
 * Uint8Array.prototype.set of the bytes into a view of that region — the same
 * copy every loader must do at least once — and nothing else. release() frees it.
 */
export async function wasmScratch(size) {
  await ready();
  const buffer = new WasmBuffer(size);
  return {
    copy(bytes) {
      buffer.copyOnly(bytes); // HEAPU8.set(bytes, ptr): the copy itself, no checksum
    },
    release: () => buffer.free(),
  };
}
