/**
 * consumer-dom.ts — what only a project with the DOM lib can write (the
 * WebAssembly namespace, the document); compiled beside consumer.ts in the
 * DOM configurations of tests/js/types.test.mjs.
 */
import { init, loadFilter } from 'bloomgate';
import wasmUrl from 'bloomgate/wasm';

export async function inThePage(bytes: Uint8Array<ArrayBuffer>): Promise<void> {
  await init(WebAssembly.compile(bytes));
  await init(await WebAssembly.compileStreaming(fetch(wasmUrl)));
  const filter = await loadFilter(new URL('words.bgf', document.baseURI));
  const link = document.createElement('a');
  link.href = URL.createObjectURL(new Blob([filter.serialize()]));
  filter.free();
}
