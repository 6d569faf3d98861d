// Diagnostics: the same bloomgate.wasm, instantiated here directly, called on
// keys that are already packed in its memory. Comparing these figures with the
// public API's separates the C core's cost (in wasm) from the JavaScript
// marshalling around it. Benchmark-only; applications never do this.
import fs from 'node:fs';

const KIND_CLASSIC = 1;

/**
 * @param {string} wasmPath path of bloomgate.wasm
 * @param {{bytes: Uint8Array, offsets: Uint32Array}} members packed member keys
 * @param {{bytes: Uint8Array, offsets: Uint32Array}} probes packed probe keys
 * @param {{ n: number, errorRate: number, kind?: number }} options kind: header id, classic by default
 */
export async function rawCore(wasmPath, members, probes, { n, errorRate, kind = KIND_CLASSIC }) {
  const { instance } = await WebAssembly.instantiate(fs.readFileSync(wasmPath), {
    env: { emscripten_notify_memory_growth() {} },
  });
  const ex = instance.exports;
  if (typeof ex._initialize === 'function') ex._initialize();
  const pick = (name) => {
    const fn = ex[`bg_filter_${name}`];
    if (typeof fn !== 'function') throw new Error(`raw wasm: no bg_filter_${name} export`);
    return fn;
  };
  const malloc = (size) => {
    const ptr = ex.malloc(size) >>> 0;
    if (ptr === 0) throw new Error(`raw wasm: malloc(${size}) failed`);
    return ptr;
  };
  const place = ({ bytes, offsets }) => {
    const items = malloc(bytes.length);
    const offs = malloc(offsets.length * 4);
    new Uint8Array(ex.memory.buffer).set(bytes, items);
    new Uint32Array(ex.memory.buffer, offs, offsets.length).set(offsets);
    return { items, offs, offsets };
  };
  const m = place(members);
  const p = place(probes);
  const out = malloc(1024); // out-parameters: filter pointer, hash words, flattened header (doubles)
  const listId = malloc(64);
  const results = malloc(1 << 16);
  const scratch = malloc(1024);
  const rc = ex.bgw_filter_create
    ? ex.bgw_filter_create(kind, n, errorRate, 0, 0, 0, out)
    : ex.bgw_bloom_create(n, errorRate, 0, 0, 0, out);
  if (rc !== 0) throw new Error(`raw wasm: creating the filter returned ${rc}`);
  const filter = new Uint32Array(ex.memory.buffer)[out >>> 2];
  const addMany = pick('add_many');
  const added = addMany(filter, m.items, m.offs, n);
  if (added < 0) throw new Error(`raw wasm: add_many returned ${added}`);
  let heapView = new Uint8Array(ex.memory.buffer);
  const heap = () => (heapView.buffer === ex.memory.buffer ? heapView : (heapView = new Uint8Array(ex.memory.buffer)));
  return {
    exports: ex,
    filter,
    contains: pick('contains'),
    containsMany: pick('contains_many'),
    members: m,
    probes: p,
    results,
    // Taken after the last allocation above; placeFile() below may grow memory, so it comes last.
    scratchView: heap().subarray(scratch, scratch + 1024),
    hashOut: out,
    heap,
    /** Copy a .bgf file into this instance's memory once; returns its address. */
    placeFile(bytes) {
      const ptr = malloc(bytes.length);
      heap().set(bytes, ptr);
      return ptr;
    },
    /** bgw_file_validate: every header check plus the XXH3-64 checksum over the file. */
    validate(ptr, length) {
      return ex.bgw_file_validate(ptr, length, out, listId);
    },
  };
}
