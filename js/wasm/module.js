// @ts-check
/**
 * module.js — instantiating bloomgate.wasm and the state every boundary file
 * shares: the exports (`ex`), the memory views, the status-code table, and
 * allocation. js/wasm/ is the only folder that touches the module's exports
 * or memory (a test enforces it); everything above it works with plain
 * JavaScript values and opaque pointers (numbers).
 *
 * Boundary rules (see wasm/bloomgate_wasm.c):
 * - every exported signature is i32/f64; 64-bit values cross as (lo, hi) u32
 *   pairs, so nothing on the query path creates a BigInt;
 * - pointers and size_t results arrive as signed i32 and are read with `>>> 0`
 *   so modules above 2 GiB work;
 * - memory views are live bindings rebuilt in `env.emscripten_notify_memory_growth`,
 *   which the module calls whenever malloc grows memory, so a view is never
 *   stale after a call that allocates;
 * - names, messages, kinds and struct layouts come from contract.js, which
 *   scripts/contract.c generates from src/bloomgate.h.
 */
import { BloomgateError, instantiationError, looksLikeWasm, moduleFetchError, notWasmError } from '../errors.js';
import { EXPORTS, STATUSES } from './contract.js';

/**
 * What the module exports: every function takes and returns i32/f64, so all
 * are numbers in and a number out (wasm/exports.txt lists the names).
 * @typedef {(...args: number[]) => number} ExportFunction
 * @typedef {{ [name: string]: ExportFunction } & { memory: WebAssembly.Memory }} WasmExports
 */

/**
 * The instance's exports once ready, else null. Typed as set: every caller in
 * js/wasm/ runs after ready() (isReady() is the one test for null).
 * @type {WasmExports}
 */
export let ex = /** @type {any} */ (null);
/** @type {WebAssembly.Memory | null} */
let memory = null;
/** Views of wasm memory, rebuilt whenever it grows. */
export let HEAPU8 = new Uint8Array(0);
export let HEAPU32 = new Uint32Array(0);
export let HEAPF64 = new Float64Array(0);
/** A fixed block for out-parameters (layout in MISC_*), allocated at instantiation. */
export let miscPtr = 0;
/** @type {Promise<void> | null} */
let readyPromise = null;
/** @type {Array<() => void>} */
const growthListeners = [];
/** @type {Array<() => void>} */
const attachListeners = [];

export const MISC_SIZE = 2048;
export const MISC_F64 = 0; // 64 doubles: info / header
export const MISC_BYTES = 512; // 16 bytes: list ids
export const MISC_OUT_PTR = 528; // bg_filter **
export const MISC_SIZE_T = 532; // size_t *
export const MISC_HASH = 536; // 4 x u32
export const MISC_DIGEST = 576; // 32 bytes
export const MISC_OFFSETS = 640; // 31 x u32 (URL expressions)
export const MISC_URL_MATCH = 768; // bg_url_match (URL_MATCH.size bytes)
export const MISC_PARTS = 1920; // 3 x u32: head length, payload pointer, payload length

/**
 * Run fn after every memory growth (views that files keep of their own).
 * @param {() => void} fn
 */
export function onMemoryGrowth(fn) {
  growthListeners.push(fn);
}

/**
 * Run fn once the module is attached, before init() resolves (buffers a file allocates up front).
 * @param {() => void} fn
 */
export function onAttach(fn) {
  attachListeners.push(fn);
}

function refreshViews() {
  const buffer = /** @type {WebAssembly.Memory} */ (memory).buffer; // set before the first call (attach)
  HEAPU8 = new Uint8Array(buffer);
  HEAPU32 = new Uint32Array(buffer);
  HEAPF64 = new Float64Array(buffer);
  for (const fn of growthListeners) fn();
}

const imports = {
  env: {
    // Called by the module's sbrk after memory.grow(): the old ArrayBuffer is now detached.
    emscripten_notify_memory_growth() {
      refreshViews();
    },
  },
};

/* ------------------------------------------------------------------------ */
/* Instantiation                                                             */
/* ------------------------------------------------------------------------ */

/**
 * Instantiate the module once. Later calls return the same promise (their
 * source is ignored); a failed attempt can be retried.
 * @param {WebAssembly.Module | BufferSource | Response | URL | string | Promise<any>} [source]
 */
export function init(source) {
  if (readyPromise === null) {
    readyPromise = instantiate(source).catch((error) => {
      readyPromise = null;
      throw instantiationError(error);
    });
  }
  return readyPromise;
}

/** The ready promise, instantiating from the default location when nobody called init(). */
export function ready() {
  return readyPromise ?? init();
}

/** Current size of wasm memory in bytes (tests use it to detect leaks). */
export function heapSize() {
  return memory === null ? 0 : memory.buffer.byteLength;
}

/* ------------------------------------------------------------------------ */
/* The memory cap (iOS)                                                      */
/* ------------------------------------------------------------------------ */

/**
 * WebKit on iOS and iPadOS (every browser there) gives a page far less wasm memory than the
 * module's 4 GiB maximum: growing past a few hundred MiB fails or gets the tab killed. There,
 * wasm memory is capped at 512 MiB and what would pass the cap is refused with an error that
 * names it, before the memory is touched.
 */
export const IOS_MEMORY_LIMIT = 512 * 1024 * 1024;

/**
 * The cap for a user agent: 512 MiB on iOS and iPadOS (an iPad asking for the desktop site
 * says "Macintosh" but has a touch screen), none (null) elsewhere.
 * @param {{ userAgent?: string, maxTouchPoints?: number } | undefined} nav
 * @returns {number | null}
 */
export function memoryLimitFor(nav) {
  const ua = typeof nav?.userAgent === 'string' ? nav.userAgent : '';
  if (/\b(iPhone|iPad|iPod)\b/.test(ua)) return IOS_MEMORY_LIMIT;
  if (/\bMacintosh\b/.test(ua) && /AppleWebKit/.test(ua) && (nav?.maxTouchPoints ?? 0) > 1) return IOS_MEMORY_LIMIT;
  return null;
}

/** @type {number | null} */
let memoryLimit = memoryLimitFor(globalThis.navigator);

/**
 * The cap on wasm memory in bytes (null: the module's own 4 GiB). Set automatically on iOS
 * and iPadOS; `setMemoryLimit(bytes)` changes it (null removes it), and returns the one before.
 * @param {number | null} bytes
 */
export function setMemoryLimit(bytes) {
  if (bytes !== null && (!Number.isSafeInteger(bytes) || bytes <= 0)) {
    throw new RangeError(`setMemoryLimit(): a positive number of bytes or null, got ${String(bytes)}`);
  }
  const previous = memoryLimit;
  memoryLimit = bytes;
  return previous;
}

/** The cap on wasm memory in bytes, or null. */
export function getMemoryLimit() {
  return memoryLimit;
}

const MiB = (bytes) => `${Math.round(bytes / 1048576)} MiB`;

function limitText() {
  const limit = /** @type {number} */ (memoryLimit);
  return `wasm memory here is capped at ${MiB(limit)} (${limit} bytes)${limit === IOS_MEMORY_LIMIT ? ', the limit bloomgate keeps to on iOS and iPadOS' : ''}`;
}

/**
 * Refuse at once (E_TOO_LARGE) a single block of `bytes` that cannot fit under the cap.
 * @param {number} bytes
 * @param {string} what e.g. 'the filter file'
 */
export function checkMemoryFor(bytes, what) {
  if (memoryLimit !== null && bytes > memoryLimit - heapFloor()) {
    throw new BloomgateError('E_TOO_LARGE', `${what} needs ${bytes} bytes of wasm memory, more than fits: ${limitText()}`);
  }
}

/**
 * After an allocation: E_NOMEM naming the cap when the allocation grew wasm memory past it (the
 * caller frees what it allocated, so what is already loaded keeps working), else nothing.
 * @param {string} what
 * @param {number} before the memory's size in bytes before the allocation
 */
export function checkMemoryLimit(what, before) {
  const size = memory === null ? 0 : memory.buffer.byteLength;
  if (memoryLimit !== null && size > before && size > memoryLimit) {
    throw new BloomgateError('E_NOMEM', `${what}: out of memory, ${limitText()} and this would take it to ${size} bytes`);
  }
}

/** E_NOMEM from the core, naming the cap where one is set. */
export function outOfMemoryNamingLimit(what) {
  return memoryLimit === null ? outOfMemory() : new BloomgateError('E_NOMEM', `${what}: out of memory (${limitText()})`);
}

// What the module takes before any filter (its data, stack and first heap): 1 MiB.
function heapFloor() {
  return 1024 * 1024;
}

/** True once the module is instantiated (queries are synchronous from then on). */
export function isReady() {
  return ex !== null;
}

// The package's entries (js/entry.js) hand over the `#wasm-bytes` loader they import
// statically, so a bundle holds it in its one chunk (rollup's output.file refuses a
// dynamic import that would need a chunk of its own).
/** @type {((location?: string | URL) => Promise<any>) | null} */
let wasmLoader = null;

/** @param {(location?: string | URL) => Promise<any>} loadWasmBytes */
export function registerWasmLoader(loadWasmBytes) {
  wasmLoader = loadWasmBytes;
}

async function locateWasm(location) {
  if (wasmLoader !== null) return wasmLoader(location);
  let loader;
  try {
    loader = await import('#wasm-bytes');
  } catch (error) {
    // Unbundled browser pages have no resolver for package "imports": fetch directly.
    if (typeof fetch !== 'function') throw error;
    const url = location ?? new URL('../../wasm/bloomgate.wasm', import.meta.url);
    return fetch(url).catch((failure) => {
      throw moduleFetchError(url, String(failure?.message ?? failure), failure);
    });
  }
  return loader.loadWasmBytes(location);
}

function isResponse(value) {
  return (typeof Response === 'function' && value instanceof Response) ||
    (value !== null && typeof value === 'object' && typeof value.arrayBuffer === 'function' &&
      typeof value.ok === 'boolean' && value.headers !== undefined);
}

/**
 * Typed arrays use the host's byte order and wasm memory is little-endian. Every
 * multi-byte view of the memory (offsets, u32 key words, the info structs)
 * relies on the two agreeing, so a big-endian host (Node on s390x) is refused
 * before any filter is touched, rather than given wrong keys.
 */
export const HOST_IS_LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

async function instantiate(source) {
  if (!HOST_IS_LITTLE_ENDIAN) {
    throw new BloomgateError('E_UNSUPPORTED', 'bloomgate needs a little-endian host: typed arrays here are big-endian and wasm memory is little-endian');
  }
  if (typeof WebAssembly !== 'object' || WebAssembly === null || typeof WebAssembly.instantiate !== 'function') {
    // Turned off by a setting (Lockdown Mode on iOS and macOS, a hardened Firefox or Chromium policy).
    throw new BloomgateError('E_UNSUPPORTED',
      'this engine has no WebAssembly (turned off by a setting such as Lockdown Mode or a browser policy): ' +
      'no filter can be created, loaded or queried here, and none answers wrongly. What still works: the rest of the page, ' +
      'and asking your server (the escalation endpoint) about each item directly');
  }
  source = await source;
  if (source === undefined || source === null) {
    source = await locateWasm(undefined);
  } else if (typeof source === 'string' || source instanceof URL) {
    source = await locateWasm(source);
  }
  let instance;
  if (source instanceof WebAssembly.Module) {
    instance = await WebAssembly.instantiate(source, imports);
  } else if (source instanceof WebAssembly.Instance) {
    throw new TypeError('init() needs a WebAssembly.Module, not an Instance: bloomgate must supply the imports');
  } else if (source instanceof ArrayBuffer || ArrayBuffer.isView(source) ||
    (typeof SharedArrayBuffer === 'function' && source instanceof SharedArrayBuffer)) {
    // Bytes before Response: in Node the first touch of the global Response loads its fetch
    // implementation (~10 ms of every CLI run), and Node's own module source is bytes.
    ({ instance } = await WebAssembly.instantiate(/** @type {BufferSource} */ (source), imports));
  } else if (isResponse(source)) {
    if (!source.ok) throw moduleFetchError(source.url || 'the response given to init()', `HTTP ${source.status}`);
    const type = source.headers.get('content-type') || '';
    if (typeof WebAssembly.instantiateStreaming === 'function' && /^application\/wasm\b/i.test(type)) {
      ({ instance } = await WebAssembly.instantiateStreaming(source, imports));
    } else {
      const bytes = await source.arrayBuffer();
      if (!looksLikeWasm(bytes)) throw notWasmError(source.url, bytes, type);
      ({ instance } = await WebAssembly.instantiate(bytes, imports));
    }
  } else {
    throw new TypeError('init() accepts a WebAssembly.Module, bytes (ArrayBuffer or a view), a Response, a URL or a URL string');
  }
  attach(instance);
}

/** @param {WebAssembly.Instance} instance */
function attach(instance) {
  const exports = /** @type {WasmExports} */ (instance.exports); // every name is checked below
  for (const name of ['memory', ...EXPORTS]) {
    if (!(name in exports)) throw new TypeError(`not a bloomgate module: export '${name}' is missing`);
  }
  memory = exports.memory;
  ex = exports;
  if (typeof exports._initialize === 'function') exports._initialize();
  refreshViews();
  try {
    miscPtr = mallocOrThrow(MISC_SIZE);
    for (const fn of attachListeners) fn();
    refreshViews();
  } catch (error) {
    ex = /** @type {any} */ (null); // not ready after all
    throw error;
  }
}

/* ------------------------------------------------------------------------ */
/* Status codes (from the contract: no call into the module)                 */
/* ------------------------------------------------------------------------ */

const STATUS_BY_CODE = new Map(STATUSES.map((status) => [status.code, status]));

/** 'E_CHECKSUM' for BG_E_CHECKSUM. */
export function statusName(rc) {
  return STATUS_BY_CODE.get(rc)?.name ?? 'E_UNKNOWN';
}

/** The core's message for a status code. */
export function statusMessage(rc) {
  return STATUS_BY_CODE.get(rc)?.message ?? 'unknown status code';
}

/** A BloomgateError for a negative status. */
export function statusError(rc) {
  return new BloomgateError(statusName(rc), statusMessage(rc));
}

/** Throws a BloomgateError for a negative status; returns rc otherwise. */
export function check(rc) {
  if (rc < 0) throw statusError(rc);
  return rc;
}

/** The code of a status by name ('E_TRUNCATED' -> -5). */
export function statusCode(name) {
  const status = STATUSES.find((s) => s.name === name);
  if (status === undefined) throw new Error(`no status '${name}'`);
  return status.code;
}

const E_NOMEM = statusCode('E_NOMEM');

/** BG_E_NOMEM as an error. */
export function outOfMemory() {
  return statusError(E_NOMEM);
}

/* ------------------------------------------------------------------------ */
/* Allocation                                                                */
/* ------------------------------------------------------------------------ */

export function mallocOrThrow(size) {
  const before = heapSize();
  const ptr = ex.malloc(size > 0 ? size : 1) >>> 0;
  if (ptr === 0) throw outOfMemoryNamingLimit(`allocating ${size} bytes`);
  try {
    checkMemoryLimit(`allocating ${size} bytes`, before);
  } catch (error) {
    ex.free(ptr);
    throw error;
  }
  return ptr;
}

export function freePtr(ptr) {
  if (ptr !== 0) ex.free(ptr);
}
