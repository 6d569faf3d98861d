// @ts-check
/**
 * load.js — loadFilter(): bytes or a download become a filter.
 *
 * A network body is streamed chunk by chunk straight into wasm memory. The
 * request is sent before the module is instantiated, and what arrives while
 * the module compiles is kept in JavaScript (at most 8 MiB) and copied in once
 * it is ready: the download and the compile overlap. The first 128 bytes (the
 * fixed .bgf header) are checked before anything is allocated or more is read,
 * so a wrong URL (an HTML error page, another format, a newer version) fails
 * at once with its code. After that the buffer grows
 * geometrically with the bytes that actually arrived (at most twice what
 * came): a header and a Content-Length that both claim 3 GiB cannot make us
 * reserve it, and wasm memory, which never shrinks, is not grown for good on
 * a claim. A caller who knows an upper bound passes `maxBytes`: a larger file
 * fails at once (E_TOO_LARGE), and one within it is reserved in one
 * allocation up front. SHA-256 for
 * `integrity` runs as chunks land where the platform can (node:crypto in Node,
 * the wasm digest on pages without SubtleCrypto), else SubtleCrypto over the
 * finished file while the filter is validated; the core's checksum and full
 * validation run in bg_filter_deserialize_owned, which then uses the buffer in
 * place (no second copy). Every failure path frees the wasm memory.
 */
import { digestListed, parseIntegrity, sriOf } from './integrity.js';
import { BloomgateError } from './errors.js';
import { asBytes, wrapFilterPointer } from './filter.js';
import * as wasm from './wasm/index.js';

const GROWTH_MIN = 64 * 1024;

/**
 * SHA-256 for `integrity`, in order of preference:
 * - a native incremental digest fed as chunks land (node:crypto, `#sha256`):
 *   ready with the last byte, where SubtleCrypto would start only then
 *   (10 ms for 12 MB here, 25-45 % of a loopback load);
 * - SubtleCrypto (~7x the wasm digest's ~110 MB/s), one call over the
 *   finished buffer;
 * - the wasm digest fed as chunks land (plain-http pages have no crypto.subtle).
 */
const subtle = globalThis.crypto?.subtle;
const useSubtle = typeof subtle?.digest === 'function';
/** @typedef {() => { update(bytes: Uint8Array): void, digest(): Uint8Array }} Sha256Factory */
/**
 * Only Node has local files. Elsewhere `#local-file` is never imported, so pages
 * that map 'bloomgate' with an import map and vendored copies need no mapping for it.
 */
const IN_NODE = typeof process === 'object' && process !== null && typeof process.versions?.node === 'string' &&
  typeof window === 'undefined' && typeof importScripts !== 'function';

function noop() {}

// The package's entries (js/entry.js) hand over the `#local-file` reader they import
// statically, so a bundle holds it in its one chunk; js/index.js alone imports it on use.
/** @type {((location: string | URL) => Promise<Response | null>) | null} */
let localFileOpener = null;

/** @param {(location: string | URL) => Promise<Response | null>} openLocalFile */
export function registerLocalFileOpener(openLocalFile) {
  localFileOpener = openLocalFile;
}

// `#sha256` the same way: registered by the entries, imported on first use in Node
// by js/index.js alone, and never imported elsewhere (it is null there anyway).
/** @type {Sha256Factory | null | undefined} */
let streamingSha256;

/**
 * @param {Sha256Factory | null | undefined} createSha256 null: none (tests use it to reach the other digests)
 * @returns {Sha256Factory | null | undefined} the one registered before
 */
export function registerStreamingSha256(createSha256) {
  const previous = streamingSha256;
  streamingSha256 = createSha256;
  return previous;
}

/**
 * @typedef {{ kind: 'native', createSha256: Sha256Factory } | { kind: 'subtle' | 'wasm' }} Digest
 * The one choice of SHA-256 for `integrity` (in the order above); null without integrity.
 * @returns {Promise<Digest | null>}
 */
async function chooseDigest(expected) {
  if (expected === null) return null;
  if (streamingSha256 === undefined) streamingSha256 = IN_NODE ? (await import('#sha256')).createSha256 : null;
  if (streamingSha256) return { kind: 'native', createSha256: streamingSha256 };
  return { kind: useSubtle ? 'subtle' : 'wasm' };
}

/**
 * A Response, or an object that behaves as one (a polyfill's).
 * @returns {value is Response}
 */
function isResponse(value) {
  return (typeof Response === 'function' && value instanceof Response) ||
    (value !== null && typeof value === 'object' && typeof value.arrayBuffer === 'function' &&
      typeof value.ok === 'boolean' && value.headers !== undefined && typeof value.headers.get === 'function');
}

function isBytes(value) {
  return value instanceof ArrayBuffer || ArrayBuffer.isView(value) ||
    (typeof SharedArrayBuffer === 'function' && value instanceof SharedArrayBuffer) ||
    Object.prototype.toString.call(value) === '[object ArrayBuffer]';
}

function checkAborted(signal) {
  if (signal && signal.aborted) throw signal.reason;
}

/* ------------------------------------------------------------------------ */
/* Subresource Integrity                                                      */
/* ------------------------------------------------------------------------ */

function checkDigest(digest, expected) {
  if (digestListed(digest, expected)) return;
  throw new BloomgateError('E_INTEGRITY',
    `integrity mismatch: the filter's SHA-256 is ${sriOf(digest)}, which the integrity option does not list`);
}

/** SubtleCrypto's SHA-256 of `bytes` against `expected`: rejects with E_INTEGRITY on a mismatch. */
function subtleCheck(bytes, expected) {
  return subtle.digest('SHA-256', bytes).then((digest) => checkDigest(new Uint8Array(digest), expected));
}

/* ------------------------------------------------------------------------ */
/* Streaming into wasm memory                                                 */
/* ------------------------------------------------------------------------ */

// Content-Length is the length of the body we read only when no content coding applies.
function declaredLength(headers) {
  const encoding = headers.get('content-encoding');
  if (encoding && encoding.trim().toLowerCase() !== 'identity') return -1;
  const value = headers.get('content-length');
  if (value === null || !/^\s*\d+\s*$/.test(value)) return -1;
  return Number(value);
}

class StreamingLoad {
  /** @param {Digest | null} digest */
  constructor(expected, contentLength, onProgress, maxBytes, digest) {
    this.contentLength = contentLength;
    this.maxBytes = maxBytes;
    this.onProgress = onProgress;
    this.total = -1; // file length, once the header is known
    this.hashed = 0; // bytes fed to SHA-256 so far
    this.buffer = new wasm.WasmBuffer(wasm.HEADER_SIZE);
    this.expected = expected;
    this.native = digest?.kind === 'native' ? digest.createSha256() : null;
    this.subtle = digest?.kind === 'subtle' && expected !== null;
    /**
     * @type {Promise<void> | null} SubtleCrypto's check, started on the whole body once it is in
     * (fromResponse's early chunks, or a first chunk that is the whole file); read in finish()
     */
    this.digesting = null;
    this.sha = null;
    try {
      if (digest?.kind === 'wasm') this.sha = new wasm.Sha256();
    } catch (error) {
      this.buffer.free();
      throw error;
    }
  }

  push(chunk) {
    if (!(chunk instanceof Uint8Array)) chunk = asBytes(chunk, 'a response body chunk');
    if (chunk.length === 0) return;
    // Every byte pushed is the file's or fails the load (E_TRAILING), so all of it is hashed.
    if (this.native !== null) this.native.update(chunk);
    let rest = chunk;
    if (this.total < 0) {
      const first = this.buffer.length === 0;
      const need = wasm.HEADER_SIZE - this.buffer.length;
      if (rest.length < need) {
        this.buffer.append(rest);
        return;
      }
      this.buffer.append(rest.length === need ? rest : rest.subarray(0, need));
      rest = rest.subarray(need);
      this.learnLength();
      if (first && this.subtle && this.digesting === null && chunk.length === this.total) {
        // The whole file in one chunk (WebKit hands over a body that has arrived that way):
        // SubtleCrypto digests it off the main thread while it is copied and checksummed.
        // Its verdict is read in finish(), so every other error still comes first.
        this.digesting = subtleCheck(chunk, this.expected);
        this.digesting.catch(noop);
      }
    }
    if (rest.length > 0) {
      const buffer = this.buffer;
      const loaded = buffer.length + rest.length;
      if (loaded > this.total) {
        throw new BloomgateError('E_TRAILING',
          `the download is longer than the ${this.total}-byte filter file its header describes`);
      }
      if (loaded > buffer.capacity) {
        const before = wasm.heapSize();
        buffer.reserve(Math.min(this.total, Math.max(loaded, buffer.capacity * 2, GROWTH_MIN)));
        wasm.checkMemoryLimit(`loading the ${this.total}-byte filter file`, before);
      }
      buffer.append(rest);
    }
    if (this.sha !== null) {
      this.buffer.hashRange(this.sha, this.hashed, this.buffer.length);
      this.hashed = this.buffer.length;
    }
    if (this.onProgress) this.onProgress({ loaded: this.buffer.length, total: this.total });
  }

  learnLength() {
    const { rc, header } = this.buffer.peekHeader();
    if (rc < 0) throw wasm.statusError(rc);
    this.total = /** @type {NonNullable<typeof header>} */ (header).fileLength; // set when rc >= 0
    const declared = this.contentLength;
    if (declared >= 0 && declared !== this.total) {
      throw new BloomgateError(declared < this.total ? 'E_TRUNCATED' : 'E_TRAILING',
        `the response is ${declared} bytes (Content-Length) but the filter file is ${this.total} bytes`);
    }
    wasm.checkMemoryFor(this.total, `the ${this.total}-byte filter file`);
    if (this.maxBytes !== undefined) {
      if (this.total > this.maxBytes) {
        throw new BloomgateError('E_TOO_LARGE', `the filter file is ${this.total} bytes, more than maxBytes (${this.maxBytes})`);
      }
      // Bounded by the caller: the whole file in one allocation.
      this.buffer.reserve(this.total);
    }
  }

  async finish() {
    const buffer = this.buffer;
    if (this.total < 0) {
      const { rc } = buffer.peekHeader();
      throw rc < 0 ? wasm.statusError(rc)
        : new BloomgateError('E_TRUNCATED', `the download ended after ${buffer.length} bytes, inside the header`);
    }
    if (buffer.length < this.total) {
      throw new BloomgateError('E_TRUNCATED',
        `the download ended after ${buffer.length} of ${this.total} bytes`);
    }
    if (this.expected === null) return wrapFilterPointer(buffer.takeFilter());
    if (this.native !== null || this.sha !== null) {
      checkDigest(this.native !== null ? this.native.digest() : /** @type {wasm.Sha256} */ (this.sha).digest(), this.expected);
      return wrapFilterPointer(buffer.takeFilter());
    }
    // SubtleCrypto digests off the main thread (it copies its input when called, so
    // wasm memory may change meanwhile): validate and build the filter while it runs.
    // A mismatch still wins over any other error, as with the wasm digest.
    const digesting = this.digesting ?? subtleCheck(buffer.bytes(), this.expected);
    let filter;
    try {
      filter = wrapFilterPointer(buffer.takeFilter());
    } catch (error) {
      await digesting;
      throw error;
    }
    try {
      await digesting;
    } catch (error) {
      filter.free();
      throw error;
    }
    return filter;
  }

  free() {
    this.buffer.free();
    if (this.sha !== null) this.sha.free();
  }
}

/**
 * At most this many bytes are read ahead while the module compiles; past it, reading waits
 * for the module (the network then stops at the platform's buffer).
 */
const EARLY_LIMIT = 8 * 1024 * 1024;

/**
 * Stream a response into wasm memory. `readying` (the module's instantiation, when it may
 * still be running) lets the body be read while the module compiles: the chunks that arrive
 * before it is ready are kept in JavaScript (at most EARLY_LIMIT bytes), then copied into
 * wasm memory, header first, and the rest streams in as it lands. The body is read with a
 * reader loop (getReader() + read()), never by async iteration, which no Safari supports.
 * @param {Promise<void> | null} [readying]
 */
async function fromResponse(response, label, expected, onProgress, signal, maxBytes, readying = null) {
  // Wait for the module, but not past an abort.
  const settle = async () => {
    checkAborted(signal);
    if (readying !== null && !wasm.isReady()) {
      if (!signal) await readying;
      else {
        let onAbort = noop;
        const aborted = new Promise((resolve, reject) => {
          onAbort = () => reject(signal.reason);
          signal.addEventListener('abort', onAbort, { once: true });
        });
        try {
          await Promise.race([readying, aborted]);
        } finally {
          signal.removeEventListener('abort', onAbort);
        }
      }
    }
    checkAborted(signal);
  };
  if (!response.ok) {
    if (response.body && typeof response.body.cancel === 'function') response.body.cancel().catch(noop);
    const status = `${response.status}${response.statusText ? ` ${response.statusText}` : ''}`;
    const error = /** @type {BloomgateError & { status?: number }} */ (new BloomgateError('E_FETCH', `HTTP ${status} while fetching ${label}`));
    error.status = response.status;
    throw error;
  }
  if (response.bodyUsed) throw new TypeError('loadFilter(): the Response body has already been read');
  const digest = await chooseDigest(expected);
  const body = response.body;
  if (body === null || body === undefined || typeof body.getReader !== 'function') {
    // A Response without a readable stream (no body, or a minimal polyfill).
    const bytes = body === null ? new Uint8Array(0) : new Uint8Array(await response.arrayBuffer());
    await settle();
    const load = new StreamingLoad(expected, declaredLength(response.headers), onProgress, maxBytes, digest);
    try {
      load.push(bytes);
      return await load.finish();
    } finally {
      load.free();
    }
  }
  const reader = body.getReader();
  const onAbort = () => {
    reader.cancel(signal.reason).catch(noop);
  };
  if (signal) signal.addEventListener('abort', onAbort, { once: true });
  let received = 0;
  const read = async () => {
    let step;
    try {
      step = await reader.read();
    } catch (error) {
      checkAborted(signal);
      throw new BloomgateError('E_FETCH',
        `the download of ${label} failed after ${received} bytes: ${describeError(error)}`, { cause: error });
    }
    checkAborted(signal);
    if (!step.done) received += step.value.byteLength;
    return step;
  };
  /** @type {StreamingLoad | null} */
  let load = null;
  try {
    /** @type {Uint8Array[]} */
    const early = [];
    /** @type {Promise<ReadableStreamReadResult<Uint8Array>> | null} */
    let pending = null;
    let done = false;
    if (readying !== null && !wasm.isReady()) {
      // Download while the module compiles: the two overlap.
      const settled = readying.then(() => null, () => null);
      while (received < EARLY_LIMIT) {
        pending ??= read();
        const step = await Promise.race([pending, settled]);
        if (step === null) break; // the module is ready (or failed): `pending` may still be in flight
        pending = null;
        if (step.done) {
          done = true;
          break;
        }
        early.push(step.value);
      }
    }
    // The whole body came before the module: SubtleCrypto digests it now, off the main
    // thread, while the module finishes and the bytes are copied and checksummed. Its
    // verdict is only read in finish(), so every other error still comes first.
    /** @type {Promise<void> | null} */
    let digesting = null;
    if (done && digest?.kind === 'subtle' && early.every((chunk) => chunk instanceof Uint8Array)) {
      digesting = subtleCheck(early.length === 1 ? early[0] : concat(early), expected);
      digesting.catch(noop); // read in finish(); any earlier failure wins
    }
    await settle();
    load = new StreamingLoad(expected, declaredLength(response.headers), onProgress, maxBytes, digest);
    load.digesting = digesting; // started above, or null
    for (let i = 0; i < early.length; i++) load.push(early[i]);
    early.length = 0;
    while (!done) {
      const step = await (pending ?? read());
      pending = null;
      if (step.done) break;
      load.push(step.value);
    }
    return await load.finish();
  } catch (error) {
    reader.cancel().catch(noop);
    throw error;
  } finally {
    if (signal) signal.removeEventListener('abort', onAbort);
    if (load !== null) load.free();
  }
}

/** @param {Uint8Array[]} chunks */
function concat(chunks) {
  let length = 0;
  for (const chunk of chunks) length += chunk.length;
  const whole = new Uint8Array(length);
  let at = 0;
  for (const chunk of chunks) {
    whole.set(chunk, at);
    at += chunk.length;
  }
  return whole;
}

async function fromBytes(bytes, expected, onProgress, maxBytes) {
  if (maxBytes !== undefined && bytes.length > maxBytes) {
    throw new BloomgateError('E_TOO_LARGE', `the filter file is ${bytes.length} bytes, more than maxBytes (${maxBytes})`);
  }
  wasm.checkMemoryFor(bytes.length, `the ${bytes.length}-byte filter file`);
  const digest = await chooseDigest(expected);
  if (digest?.kind === 'native') {
    const hash = digest.createSha256();
    hash.update(bytes);
    checkDigest(hash.digest(), expected);
  } else if (digest?.kind === 'subtle') checkDigest(new Uint8Array(await subtle.digest('SHA-256', bytes)), expected);
  const buffer = new wasm.WasmBuffer(bytes.length);
  /** @type {wasm.Sha256 | null} */
  let sha = null;
  try {
    buffer.append(bytes);
    if (digest?.kind === 'wasm') {
      sha = new wasm.Sha256();
      buffer.hashRange(sha, 0, buffer.length);
      checkDigest(sha.digest(), expected);
    }
    if (onProgress) onProgress({ loaded: bytes.length, total: bytes.length });
    return wrapFilterPointer(buffer.takeFilter());
  } finally {
    buffer.free();
    if (sha !== null) sha.free();
  }
}

function describeError(error) {
  if (error === null || typeof error !== 'object') return String(error);
  const cause = error.cause;
  const detail = cause && typeof cause === 'object' ? cause.code || cause.message : undefined;
  return detail && detail !== error.message ? `${error.message} (${detail})` : String(error.message || error);
}

/**
 * Load a .bgf filter from a URL, a Response or bytes; in Node also from a
 * file path or a file: URL (streamed from disk).
 * @param {string | URL | Response | ArrayBuffer | Uint8Array} source
 * @param {{ integrity?: string, onProgress?: (p: { loaded: number, total: number }) => void,
 *   signal?: AbortSignal, fetch?: typeof fetch, maxBytes?: number }} [options]
 * @returns {Promise<import('./filter.js').BloomFilter>}
 */
export async function loadFilter(source, options = {}) {
  if (options === null || typeof options !== 'object') throw new TypeError('loadFilter() options must be an object');
  const { integrity, onProgress, signal } = options;
  if (onProgress !== undefined && typeof onProgress !== 'function') {
    throw new TypeError('loadFilter(): onProgress must be a function');
  }
  if (signal !== undefined && signal !== null &&
    (typeof signal !== 'object' || typeof signal.aborted !== 'boolean' || typeof signal.addEventListener !== 'function')) {
    throw new TypeError('loadFilter(): signal must be an AbortSignal');
  }
  if (options.fetch !== undefined && typeof options.fetch !== 'function') {
    throw new TypeError('loadFilter(): fetch must be a function');
  }
  const { maxBytes } = options;
  if (maxBytes !== undefined && (!Number.isSafeInteger(maxBytes) || maxBytes < wasm.HEADER_SIZE)) {
    throw new RangeError(`loadFilter(): maxBytes must be an integer of at least ${wasm.HEADER_SIZE}, got ${String(maxBytes)}`);
  }
  const expected = integrity === undefined || integrity === null ? null : parseIntegrity(integrity);
  checkAborted(signal);

  if ((typeof source === 'string' || source instanceof URL) && options.fetch === undefined && IN_NODE) {
    // In Node a path or a file: URL is read from disk, through the same checks as a download.
    const openLocalFile = localFileOpener ?? (await import('#local-file')).openLocalFile;
    const local = await openLocalFile(source);
    if (local !== null) {
      await wasm.ready();
      checkAborted(signal);
      return fromResponse(local, String(source), expected, onProgress, signal, maxBytes);
    }
  }
  if (typeof source === 'string' || source instanceof URL) {
    const fetchImpl = options.fetch ?? globalThis.fetch;
    if (typeof fetchImpl !== 'function') {
      throw new BloomgateError('E_UNSUPPORTED', `loadFilter(${JSON.stringify(String(source))}): this environment has no fetch(), ` +
        'so a URL cannot be downloaded here. What still works: options.fetch, a Response, or the file\'s bytes');
    }
    const label = String(source);
    // The request first, then the module: the download starts before the module has
    // compiled, and its body is read while the module compiles (fromResponse).
    let fetching;
    try {
      fetching = fetchImpl(source, signal ? { signal } : undefined);
    } catch (error) {
      fetching = Promise.reject(error);
    }
    const readying = wasm.ready();
    readying.catch(noop);
    let response;
    try {
      response = await fetching;
    } catch (error) {
      checkAborted(signal);
      throw new BloomgateError('E_FETCH', `could not fetch ${label}: ${describeError(error)}`, { cause: error });
    }
    return fromResponse(response, label, expected, onProgress, signal, maxBytes, readying);
  }
  if (isResponse(source)) {
    const readying = wasm.ready();
    readying.catch(noop);
    checkAborted(signal);
    return fromResponse(source, source.url || 'the response', expected, onProgress, signal, maxBytes, readying);
  }
  if (isBytes(source)) {
    const bytes = asBytes(source, 'loadFilter()');
    await wasm.ready();
    checkAborted(signal);
    return fromBytes(bytes, expected, onProgress, maxBytes);
  }
  throw new TypeError('loadFilter() source must be a URL string, a URL, a Response, an ArrayBuffer or a Uint8Array');
}
