// A scratch region inside the library's own wasm memory, for the "just copy the
// bytes into wasm memory" baseline of the load test. Benchmark-only: it uses
// the boundary's WasmBuffer (js/wasm/buffers.js), which applications never import.
import { ready, WasmBuffer } from '../js/wasm/index.js';

/**
 * A malloc'd region of `size` bytes in the module's memory. copy(bytes) is one
 * Uint8Array.prototype.set of the bytes into a view of that region — the same
 * copy every loader must do at least once — and nothing else. release() frees it.
 */
export async function wasmScratch(size) {
  await ready();
  const buffer = new WasmBuffer(size);
  buffer.length = size; // the region counts as filled, so bytes() views all of it
  return {
    copy(bytes) {
      buffer.bytes().set(bytes); // the copy itself, no checksum
    },
    release: () => buffer.free(),
  };
}
