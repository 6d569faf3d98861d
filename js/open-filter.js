// @ts-check
/**
 * open-filter.js — openFilter(): a filter that is usable at once and keeps
 * itself fresh from a publication manifest (docs/FORMAT.md, "Publication
 * manifest"), as `bloomgate publish` writes it.
 *
 * The live filter starts from the copy it persisted last time (IndexedDB in
 * pages, workers and extension service workers; a directory in Node), which
 * the core validates before it is used, so it answers offline. It asks the
 * manifest again no more often than the manifest allows (`minRefreshSeconds`,
 * or the caller's slower `refreshSeconds`), with If-None-Match, and moves to
 * a newer generation by the cheapest path the manifest offers: the one-hop
 * delta from the generation it holds when there is one smaller than the full
 * file, else the full file. Every download is bounded, checked against the
 * manifest's SRI digest and length and by the core's checksums; the new
 * filter replaces the old one in one assignment (a query sees the old filter
 * or the new one, never a mixture) and the old one is freed. Any failure —
 * network, HTTP, a bad manifest or delta, an integrity mismatch, a full disk
 * or quota, an older generation or another list offered — keeps the filter in
 * use, becomes `lastError` and an 'error' event; queries never throw for it.
 *
 * Requests follow http.js's private GET: no credentials, no referrer, no
 * redirect followed, no HTTP cache; If-None-Match is the one header sent.
 */
import { BloomgateError } from './errors.js';
import { BloomFilter, CURRENT_FILTER } from './filter.js';
import { MAX_TIMEOUT_MS, PRIVATE_REQUEST, checkTimeout, privateGet } from './http.js';
import { loadFilter } from './load.js';
import { indexedDbStorage } from './persist-idb.js';
import * as wasm from './wasm/index.js';

/** A manifest larger than this is refused (E_MANIFEST) without being read further. */
export const MAX_MANIFEST_BYTES = 64 * 1024;
const DEFAULT_MAX_BYTES = 256 * 1024 * 1024;
const DEFAULT_TIMEOUT_MS = 60 * 1000;
/** A manifest cannot make clients wait longer than a day between checks. */
const MAX_MIN_REFRESH_SECONDS = 24 * 60 * 60;
/** autoRefresh's period when neither the manifest nor the caller names one. */
const DEFAULT_POLL_SECONDS = 5 * 60;
const MAX_DELTAS = 1024;
/** Up to this size the file bytes of the filter in use are kept, as the base of the next delta. */
const KEEP_BYTES_MAX = 16 * 1024 * 1024;
const HEX32 = /^[0-9a-f]{32}$/;
const HEX16 = /^[0-9a-f]{16}$/;
const NOT_MODIFIED = new Set([304]);
const INTERNAL = Symbol('bloomgate.openFilter');

const IN_NODE = typeof process === 'object' && process !== null && typeof process.versions?.node === 'string' &&
  typeof window === 'undefined' && typeof (/** @type {any} */ (globalThis)).importScripts !== 'function';

const subtle = globalThis.crypto?.subtle;
const useSubtle = typeof subtle?.digest === 'function';

function noop() {}

/**
 * A store for the persisted copy (index.d.ts: FilterStorage).
 * @typedef {{
 *   get(key: string): any,
 *   set(key: string, bytes: Uint8Array, meta: Record<string, unknown>): any,
 *   delete(key: string): any,
 *   setMeta?: (key: string, meta: Record<string, unknown>) => any,
 *   kind?: string,
 * }} Storage
 */

/**
 * A manifest as parseManifest() returns it: every field checked, URLs absolute.
 * @typedef {{ url: string, length: number, integrity: Uint8Array[] }} ManifestFile
 * @typedef {{ listId: string, generation: number, minRefreshSeconds: number,
 *   full: ManifestFile & { checksum: string | null },
 *   deltas: Array<ManifestFile & { from: number }> }} Manifest
 */

/**
 * A filter that passed its checks, ready to swap in.
 * @typedef {{ filter: BloomFilter, bytes: Uint8Array | null, source: 'full' | 'delta',
 *   checksum: string | null, length: number, url: string }} NextFilter
 */

/* ------------------------------------------------------------------------ */
/* Storage: IndexedDB where there is one, a directory in Node                 */
/* ------------------------------------------------------------------------ */

// js/entry.js hands over the `#persist-dir` module it imports statically (one-chunk
// bundles); js/index.js alone imports it on first use, in Node only.
/** @type {any} */
let directoryModule = null;

/** @internal @param {{ createDirectoryStorage: Function, defaultDirectory: Function }} module */
export function registerDirectoryStorage(module) {
  directoryModule = module;
}

async function directoryImpl() {
  if (directoryModule === null) directoryModule = await import('#persist-dir');
  return directoryModule;
}

/**
 * A directory for openFilter()'s copies, in Node (atomic writes: temporary
 * file, fsync, rename). Default: the per-user cache directory
 * (~/.cache/bloomgate/filters, ~/Library/Caches/..., %LOCALAPPDATA%\...).
 * @param {string} [dir]
 */
export function directoryStorage(dir) {
  if (dir !== undefined && (typeof dir !== 'string' || dir === '')) throw new TypeError('directoryStorage(dir): dir must be a non-empty path');
  if (!IN_NODE) {
    throw new BloomgateError('E_UNSUPPORTED', 'directoryStorage() needs Node; in browsers, workers and extensions use indexedDbStorage()');
  }
  /** @type {any} */
  let store = null;
  const real = async () => {
    if (store === null) store = (await directoryImpl()).createDirectoryStorage(dir);
    return store;
  };
  return {
    kind: 'directory',
    get: async (key) => (await real()).get(key),
    set: async (key, bytes, meta) => (await real()).set(key, bytes, meta),
    setMeta: async (key, meta) => (await real()).setMeta(key, meta),
    delete: async (key) => (await real()).delete(key),
  };
}

export { indexedDbStorage };

/** The default store, one per realm: its IndexedDB connection is opened once and shared. */
/** @type {Storage | null} */
let sharedStorage = null;

function defaultStorage() {
  if (sharedStorage !== null) return sharedStorage;
  if (IN_NODE) sharedStorage = directoryStorage();
  else if (globalThis.indexedDB && typeof globalThis.indexedDB.open === 'function') sharedStorage = indexedDbStorage();
  return sharedStorage;
}

function checkStorage(storage) {
  for (const method of ['get', 'set', 'delete']) {
    if (typeof storage[method] !== 'function') {
      throw new TypeError(`openFilter(): storage must be false or an object with get(key), set(key, bytes, meta) and delete(key); ${method} is missing`);
    }
  }
  return storage;
}

/* ------------------------------------------------------------------------ */
/* Small helpers                                                              */
/* ------------------------------------------------------------------------ */

/** The stored checksum field of a .bgf (bytes 8..16, little-endian) as 16 hex digits, as inspect shows it. */
function checksumOf(bytes) {
  if (bytes.length < 16) return null;
  return new DataView(bytes.buffer, bytes.byteOffset, 16).getBigUint64(8, true).toString(16).padStart(16, '0');
}

function describe(error) {
  return String(error?.message ?? error);
}

/** Any failure as a BloomgateError: its own code when it has one, else `code` (its cause kept). */
function asBloomgateError(error, code, what) {
  if (error instanceof BloomgateError) return error;
  if (error !== null && typeof error === 'object' && typeof error.code === 'string' && /^E_[A-Z_]+$/.test(error.code)) {
    return new BloomgateError(error.code, describe(error), { cause: error });
  }
  const name = error?.name === 'QuotaExceededError' ? ' (storage quota exceeded)' : '';
  return new BloomgateError(code, `${what}: ${describe(error)}${name}`, { cause: error });
}

/* ------------------------------------------------------------------------ */
/* Subresource Integrity (the same rules as loadFilter's `integrity`)         */
/* ------------------------------------------------------------------------ */

function decodeBase64(text) {
  let standard = text.replace(/-/g, '+').replace(/_/g, '/');
  while (standard.length % 4 !== 0) standard += '=';
  try {
    const binary = atob(standard);
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    return bytes;
  } catch {
    return null;
  }
}

function encodeBase64(bytes) {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** "sha256-<base64> [...]" -> its 32-byte digests, or null when none is sha256 or a token is malformed. */
function parseIntegrity(text) {
  if (typeof text !== 'string') return null;
  const digests = [];
  for (const token of text.trim().split(/\s+/).filter(Boolean)) {
    const match = /^([A-Za-z0-9]+)-([A-Za-z0-9+/_-]+={0,2})(\?.*)?$/.exec(token);
    if (match === null) return null;
    if (match[1].toLowerCase() !== 'sha256') continue;
    const digest = decodeBase64(match[2]);
    if (digest === null || digest.length !== 32) return null;
    digests.push(digest);
  }
  return digests.length > 0 ? digests : null;
}

async function sha256(bytes) {
  if (useSubtle) return new Uint8Array(await subtle.digest('SHA-256', bytes));
  await wasm.ready();
  return wasm.sha256(bytes);
}

async function checkIntegrity(bytes, digests, what) {
  const digest = await sha256(bytes);
  for (const candidate of digests) {
    let same = 0;
    for (let i = 0; i < 32; i++) same |= candidate[i] ^ digest[i];
    if (same === 0) return;
  }
  throw new BloomgateError('E_INTEGRITY',
    `integrity mismatch: ${what} has SHA-256 sha256-${encodeBase64(digest)}, which the manifest does not list`);
}

/* ------------------------------------------------------------------------ */
/* The manifest                                                               */
/* ------------------------------------------------------------------------ */

function manifestError(url, detail) {
  return new BloomgateError('E_MANIFEST', `the filter manifest at ${url} ${detail}`);
}

function fileUrl(value, base, manifestUrl, where) {
  if (typeof value !== 'string' || value === '') throw manifestError(manifestUrl, `has no ${where}.url`);
  let url;
  try {
    url = new URL(value, base);
  } catch {
    throw manifestError(manifestUrl, `has a ${where}.url that is not a URL: ${JSON.stringify(value.slice(0, 200))}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw manifestError(manifestUrl, `names ${where}.url ${url.protocol} (only http: and https: are fetched)`);
  }
  url.hash = '';
  return url.href;
}

function fileLength(value, manifestUrl, where, min) {
  if (!Number.isSafeInteger(value) || value < min) {
    throw manifestError(manifestUrl, `has a ${where}.length that is not an integer of at least ${min}: ${JSON.stringify(value)}`);
  }
  return value;
}

function fileIntegrity(value, manifestUrl, where) {
  const digests = parseIntegrity(value);
  if (digests === null) throw manifestError(manifestUrl, `has no usable ${where}.integrity ("sha256-<base64>")`);
  return digests;
}

/**
 * Parse and check a publication manifest; every field is validated before use.
 * @param {string} text
 * @param {string} url the manifest's own URL (relative file URLs resolve against it)
 */
export function parseManifest(text, url) {
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    throw manifestError(url, 'is not JSON');
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) throw manifestError(url, 'is not a JSON object');
  if (json.format !== 'bloomgate-filter') {
    throw manifestError(url, `is not a bloomgate filter manifest (format ${JSON.stringify(json.format)}, expected "bloomgate-filter")`);
  }
  if (json.version !== 1) {
    throw manifestError(url, `has version ${JSON.stringify(json.version)}; this bloomgate reads version 1 (update the library)`);
  }
  const listId = typeof json.listId === 'string' ? json.listId.toLowerCase() : null;
  if (listId === null || !HEX32.test(listId)) throw manifestError(url, 'has no listId of 32 hex digits');
  if (!Number.isSafeInteger(json.generation) || json.generation < 0) throw manifestError(url, 'has no generation (an integer >= 0)');
  const minRefresh = json.minRefreshSeconds ?? 0;
  if (typeof minRefresh !== 'number' || !Number.isFinite(minRefresh) || minRefresh < 0) {
    throw manifestError(url, `has a minRefreshSeconds that is not a number >= 0: ${JSON.stringify(minRefresh)}`);
  }
  const full = json.full;
  if (full === null || typeof full !== 'object') throw manifestError(url, 'has no "full" file');
  /** @type {string | null} */
  let checksum = null;
  if (full.checksum !== undefined) {
    const given = typeof full.checksum === 'string' ? full.checksum.toLowerCase() : '';
    if (!HEX16.test(given)) throw manifestError(url, 'has a full.checksum that is not 16 hex digits');
    checksum = given;
  }
  const deltas = json.deltas ?? [];
  if (!Array.isArray(deltas)) throw manifestError(url, 'has a "deltas" that is not an array');
  if (deltas.length > MAX_DELTAS) throw manifestError(url, `lists ${deltas.length} deltas (at most ${MAX_DELTAS})`);
  return {
    listId,
    generation: json.generation,
    minRefreshSeconds: Math.min(minRefresh, MAX_MIN_REFRESH_SECONDS),
    full: {
      url: fileUrl(full.url, url, url, 'full'),
      length: fileLength(full.length, url, 'full', wasm.HEADER_SIZE),
      integrity: fileIntegrity(full.integrity, url, 'full'),
      checksum,
    },
    deltas: deltas.map((delta, i) => {
      const where = `deltas[${i}]`;
      if (delta === null || typeof delta !== 'object') throw manifestError(url, `has a ${where} that is not an object`);
      if (!Number.isSafeInteger(delta.from) || delta.from < 0 || delta.from >= json.generation) {
        throw manifestError(url, `has a ${where}.from that is not an earlier generation: ${JSON.stringify(delta.from)}`);
      }
      return {
        from: delta.from,
        url: fileUrl(delta.url, url, url, where),
        length: fileLength(delta.length, url, where, 1),
        integrity: fileIntegrity(delta.integrity, url, where),
      };
    }),
  };
}

/* ------------------------------------------------------------------------ */
/* Options                                                                    */
/* ------------------------------------------------------------------------ */

function resolveManifestUrl(manifestUrl) {
  if (typeof manifestUrl !== 'string' && !(manifestUrl instanceof URL)) {
    throw new TypeError('openFilter(manifestUrl): manifestUrl must be a URL string or a URL');
  }
  const base = globalThis.location?.href;
  let url;
  try {
    url = base ? new URL(manifestUrl, base) : new URL(manifestUrl);
  } catch {
    throw new TypeError(`openFilter(): '${String(manifestUrl)}' is not an absolute URL (here there is no page to resolve it against)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TypeError(`openFilter(): the manifest URL must be http: or https:, got ${url.protocol}`);
  }
  url.hash = '';
  return url.href;
}

function readOptions(options) {
  if (options === null || typeof options !== 'object') throw new TypeError('openFilter(manifestUrl, options): options must be an object');
  const settings = {
    fetch: options.fetch ?? globalThis.fetch,
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    maxBytes: options.maxBytes ?? DEFAULT_MAX_BYTES,
    refreshSeconds: options.refreshSeconds ?? 0,
    autoRefresh: options.autoRefresh ?? false,
    listId: null,
    storage: options.storage,
    storageKey: options.storageKey,
    onUpdate: options.onUpdate,
    onError: options.onError,
    onCheck: options.onCheck,
    initial: options.initial,
    now: options.now ?? (() => Date.now()),
  };
  if (typeof settings.fetch !== 'function') throw new TypeError('openFilter(): no fetch() is available here; pass options.fetch');
  checkTimeout(settings.timeoutMs, 'openFilter()');
  if (!Number.isSafeInteger(settings.maxBytes) || settings.maxBytes < wasm.HEADER_SIZE) {
    throw new RangeError(`openFilter(): maxBytes must be an integer of at least ${wasm.HEADER_SIZE}, got ${String(settings.maxBytes)}`);
  }
  if (typeof settings.refreshSeconds !== 'number' || !(settings.refreshSeconds >= 0) || settings.refreshSeconds * 1000 > MAX_TIMEOUT_MS) {
    throw new RangeError(`openFilter(): refreshSeconds must be a number in [0, ${Math.floor(MAX_TIMEOUT_MS / 1000)}], got ${String(settings.refreshSeconds)}`);
  }
  if (typeof settings.autoRefresh !== 'boolean') throw new TypeError('openFilter(): autoRefresh must be a boolean');
  if (options.listId !== undefined) {
    if (typeof options.listId !== 'string' || !HEX32.test(options.listId.toLowerCase())) {
      throw new TypeError('openFilter(): listId must be 32 hex digits');
    }
    settings.listId = options.listId.toLowerCase();
  }
  if (settings.storage !== undefined && settings.storage !== false) {
    if (settings.storage === null || typeof settings.storage !== 'object') {
      throw new TypeError('openFilter(): storage must be false or an object with get, set and delete');
    }
    checkStorage(settings.storage);
  }
  if (settings.storageKey !== undefined && (typeof settings.storageKey !== 'string' || settings.storageKey === '')) {
    throw new TypeError('openFilter(): storageKey must be a non-empty string');
  }
  const { initial } = options;
  if (initial !== undefined && typeof initial !== 'function' && !(initial instanceof Uint8Array) && !(initial instanceof ArrayBuffer)) {
    throw new TypeError('openFilter(): initial must be the bytes of a .bgf file, or a function that gives them');
  }
  for (const name of ['onUpdate', 'onError', 'onCheck', 'now']) {
    if (options[name] !== undefined && typeof options[name] !== 'function') throw new TypeError(`openFilter(): ${name} must be a function`);
  }
  return settings;
}

/* ------------------------------------------------------------------------ */
/* The live filter                                                            */
/* ------------------------------------------------------------------------ */

function closedError() {
  return new BloomgateError('E_FREED', 'this filter has been closed; open it again with openFilter()');
}

function makeEvent(type, detail) {
  if (typeof CustomEvent === 'function') return new CustomEvent(type, { detail });
  const event = new Event(type);
  Object.defineProperty(event, 'detail', { value: detail });
  return event;
}

/**
 * A filter that keeps itself fresh: what openFilter() resolves to. Queries
 * go to the BloomFilter of the newest good generation; 'update', 'error' and
 * 'check' events say what happened.
 */
class FreshFilter extends EventTarget {
  /** @type {string} */
  #url;
  /** @type {any} */
  #settings;
  /** @type {Storage | null} */
  #storage = null;
  /** @type {string} */
  #storageKey;
  /** @type {BloomFilter | null} */
  #filter = null;
  /** @type {'persisted' | 'initial' | 'full' | 'delta' | null} */
  #source = null;
  /** @type {string | null} the header checksum of the filter in use */
  #checksum = null;
  #length = 0;
  /** @type {string | null} */
  #etag = null;
  /** @type {number | null} */
  #lastCheck = null;
  /** @type {number | null} */
  #lastUpdate = null;
  /** @type {BloomgateError | null} */
  #lastError = null;
  #errorsThisCheck = 0;
  #bytesDownloaded = 0;
  #minRefreshSeconds = 0;
  /** @type {Promise<any> | null} */
  #checking = null;
  /** @type {AbortController | null} */
  #controller = null;
  /** @type {ReturnType<typeof setTimeout> | null} */
  #timer = null;
  #closed = false;
  /** Storage holds the bytes of the filter in use. */
  #persisted = false;
  /** @type {Uint8Array | null} The file bytes of the filter in use, when known and small (a delta's base without serialize()). */
  #bytes = null;

  /** @private use openFilter() */
  constructor(token, url, settings) {
    if (token !== INTERNAL) throw new TypeError('use openFilter(manifestUrl, options) to open a live filter');
    super();
    this.#url = url;
    this.#settings = settings;
    this.#storageKey = settings.storageKey ?? url;
  }

  /* ---- queries: the BloomFilter in use now ---- */

  #current() {
    if (this.#filter === null) throw closedError();
    return this.#filter;
  }

  /** The BloomFilter in use now, so checkUrl checks a URL in one call into the core. */
  [CURRENT_FILTER]() {
    return this.#current();
  }

  /** false: definitely not in the list. true: maybe. */
  mightContain(item) {
    return this.#current().mightContain(item);
  }

  mightContainMany(items) {
    return this.#current().mightContainMany(items);
  }

  mightContainKey(key) {
    return this.#current().mightContainKey(key);
  }

  get kind() {
    return this.#current().kind;
  }

  get keyEncoding() {
    return this.#current().keyEncoding;
  }

  get listId() {
    return this.#current().listId;
  }

  get generation() {
    return this.#current().generation;
  }

  get minCount() {
    return this.#current().minCount;
  }

  get metadata() {
    return this.#current().metadata;
  }

  /** The .bgf bytes of the generation in use (a copy). */
  serialize() {
    return this.#current().serialize();
  }

  /** The manifest this filter follows. */
  get manifestUrl() {
    return this.#url;
  }

  /**
   * The BloomFilter's stats plus how it stays fresh: generation, lastCheck and
   * lastUpdate (ms since the epoch, or null), lastError (a BloomgateError or
   * null), source ('persisted' | 'initial' | 'full' | 'delta'), bytesDownloaded (this session).
   */
  stats() {
    return {
      ...this.#current().stats(),
      source: this.#source,
      lastCheck: this.#lastCheck,
      lastUpdate: this.#lastUpdate,
      lastError: this.#lastError,
      bytesDownloaded: this.#bytesDownloaded,
      nextCheck: this.#nextCheckAt(),
      minRefreshSeconds: this.#interval(),
      manifestUrl: this.#url,
      storage: this.#storage === null ? null : this.#storage.kind ?? 'custom',
    };
  }

  /* ---- refresh ---- */

  /**
   * Ask the manifest now, unless it was asked less than the allowed interval
   * ago (`force: true` asks anyway: for a person pressing "update now").
   * Resolves with what happened; failures are reported, not thrown.
   * @param {{ force?: boolean }} [options]
   */
  refresh(options = {}) {
    if (this.#closed) return Promise.reject(closedError());
    return this.#check(options?.force === true, false);
  }

  /** Stop refreshing and free the filter; later queries throw E_FREED. */
  close() {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    this.#controller?.abort(closedError());
    const filter = this.#filter;
    this.#filter = null;
    this.#bytes = null;
    filter?.free();
  }

  /** close(), under the name BloomFilter uses. */
  free() {
    this.close();
  }

  #interval() {
    return Math.max(this.#minRefreshSeconds, this.#settings.refreshSeconds);
  }

  #nextCheckAt() {
    if (this.#lastCheck === null) return this.#settings.now();
    return this.#lastCheck + this.#interval() * 1000;
  }

  #due() {
    const now = this.#settings.now();
    // A clock that went back (or a copy saved under another clock) does not lock checks out.
    return this.#lastCheck === null || now < this.#lastCheck || now >= this.#nextCheckAt();
  }

  #emit(type, detail) {
    const callback = type === 'update' ? this.#settings.onUpdate : type === 'error' ? this.#settings.onError : this.#settings.onCheck;
    if (callback) {
      try {
        if (type === 'error') callback(detail.error, detail);
        else callback(detail);
      } catch {
        // a throwing callback must not break the update
      }
    }
    this.dispatchEvent(makeEvent(type, detail));
  }

  #report(error, stage) {
    this.#lastError = error;
    this.#errorsThisCheck++;
    this.#emit('error', { error, code: error.code, stage, generation: this.#filter?.generation ?? null });
  }

  #schedule() {
    if (!this.#settings.autoRefresh || this.#closed) return;
    if (this.#timer !== null) clearTimeout(this.#timer);
    const interval = this.#interval() || DEFAULT_POLL_SECONDS;
    const last = this.#lastCheck ?? this.#settings.now();
    const delay = Math.min(MAX_TIMEOUT_MS, Math.max(1000, last + interval * 1000 - this.#settings.now()));
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.#check(false, false).then(noop, noop);
    }, delay);
    // Node: a refresh timer never keeps the process alive on its own.
    if (typeof this.#timer === 'object' && this.#timer !== null && typeof this.#timer.unref === 'function') this.#timer.unref();
  }

  /** The check at open: one macrotask later; refresh() before then joins it. */
  #checkSoon() {
    let settle;
    const soon = new Promise((resolve) => { settle = resolve; });
    this.#checking = soon;
    // Not unref'd: a script that awaits refresh() right after the open waits for this check.
    setTimeout(() => {
      if (this.#checking === soon) this.#checking = null;
      if (this.#closed) {
        settle({ checked: false, changed: false, generation: null, error: closedError() });
        return;
      }
      settle(this.#check(true, false));
    }, 0);
  }

  #check(force, initial) {
    if (this.#checking !== null) return this.#checking;
    if (!force && !this.#due()) {
      this.#schedule();
      return Promise.resolve({ checked: false, changed: false, generation: this.#filter?.generation ?? null, nextCheck: this.#nextCheckAt() });
    }
    const running = this.#runCheck(initial);
    this.#checking = running;
    const settle = () => {
      if (this.#checking === running) this.#checking = null;
      this.#schedule();
    };
    running.then(settle, settle);
    return running;
  }

  /* ---- opening ---- */

  /** @internal what openFilter() runs: the persisted copy, else the first download. */
  static async open(token, url, settings) {
    const live = new FreshFilter(token, url, settings);
    // Instantiate the module while storage is read: after a reload the two overlap.
    Promise.resolve(wasm.ready()).catch(noop);
    try {
      await live.#openStorage(settings);
      if (live.#filter === null && settings.initial !== undefined) await live.#openInitial(settings);
      if (live.#filter !== null) {
        // Usable now. A due check runs in the background (its outcome is an event), started
        // after this open has resolved, so that the first queries do not wait for its start.
        if (live.#due()) live.#checkSoon();
        else live.#schedule();
        return live;
      }
      await live.#check(true, true);
      return live;
    } catch (error) {
      live.close();
      throw error;
    }
  }

  async #openStorage(settings) {
    if (settings.storage === false) return;
    try {
      this.#storage = settings.storage === undefined ? defaultStorage() : settings.storage;
    } catch (error) {
      this.#report(asBloomgateError(error, 'E_STORAGE', 'the filter storage could not be opened'), 'storage');
      this.#storage = null;
    }
    if (this.#storage === null) return;
    let record;
    try {
      record = await this.#storage.get(this.#storageKey);
    } catch (error) {
      this.#report(asBloomgateError(error, 'E_STORAGE', 'the persisted filter could not be read'), 'storage');
      return;
    }
    if (record === null || record === undefined) return;
    const meta = record.meta && typeof record.meta === 'object' ? record.meta : {};
    /** @type {BloomFilter | null} */
    let filter = null;
    const bytes = record.bytes instanceof Uint8Array ? record.bytes : new Uint8Array(record.bytes);
    try {
      filter = await BloomFilter.from(bytes);
      const pinned = settings.listId;
      if (pinned !== null && filter.listId !== pinned) {
        throw new BloomgateError('E_LIST', `the persisted copy is of list ${filter.listId}, not ${pinned}`);
      }
      this.#checksum = checksumOf(bytes);
      this.#length = bytes.length;
    } catch (error) {
      filter?.free();
      const reason = asBloomgateError(error, 'E_STORAGE', 'the persisted filter could not be loaded');
      this.#report(new BloomgateError(reason.code,
        `the persisted copy of ${this.#url} was discarded (${reason.message}); fetching the filter again`, { cause: reason }), 'persisted');
      try {
        await this.#storage.delete(this.#storageKey);
      } catch {
        // it is refused on every start until it is replaced
      }
      return;
    }
    this.#install(filter, 'persisted', Number.isFinite(meta.lastUpdate) ? meta.lastUpdate : null, bytes);
    this.#persisted = true;
    if (meta.checksum === this.#checksum) {
      // The meta describes these bytes: its ETag and schedule still hold.
      if (typeof meta.etag === 'string') this.#etag = meta.etag;
      if (Number.isFinite(meta.lastCheck)) this.#lastCheck = meta.lastCheck;
      if (Number.isFinite(meta.minRefreshSeconds)) this.#minRefreshSeconds = Math.min(Math.max(0, meta.minRefreshSeconds), MAX_MIN_REFRESH_SECONDS);
    }
  }

  /** The caller's starting file (one shipped with the app), when nothing is persisted. */
  async #openInitial(settings) {
    /** @type {BloomFilter | null} */
    let filter = null;
    let bytes;
    try {
      const given = typeof settings.initial === 'function' ? await settings.initial() : settings.initial;
      bytes = given instanceof ArrayBuffer ? new Uint8Array(given) : given;
      if (!(bytes instanceof Uint8Array)) throw new TypeError('openFilter(): initial must give the bytes of a .bgf file (Uint8Array or ArrayBuffer)');
      filter = await BloomFilter.from(bytes);
      const pinned = settings.listId;
      if (pinned !== null && filter.listId !== pinned) {
        throw new BloomgateError('E_LIST', `the initial filter is of list ${filter.listId}, not ${pinned}`);
      }
      this.#checksum = checksumOf(bytes);
      this.#length = bytes.length;
    } catch (error) {
      filter?.free();
      const reason = asBloomgateError(error, 'E_ARG', 'the initial filter could not be loaded');
      this.#report(reason, 'initial');
      return;
    }
    this.#install(/** @type {BloomFilter} */ (filter), 'initial', null, bytes);
    this.#persisted = false;
  }

  /* ---- one check ---- */

  async #runCheck(initial) {
    const controller = new AbortController();
    this.#controller = controller;
    this.#errorsThisCheck = 0;
    this.#lastCheck = this.#settings.now();
    try {
      const outcome = await this.#update(controller.signal);
      if (this.#errorsThisCheck === 0) this.#lastError = null;
      return outcome;
    } catch (error) {
      if (this.#closed) return { checked: false, changed: false, generation: null, error: closedError() };
      const reason = asBloomgateError(error, 'E_FETCH', 'the update failed');
      this.#report(reason, 'check');
      if (initial) {
        throw new BloomgateError(reason.code,
          `openFilter(${this.#url}): no persisted copy to start from, and ${reason.message}`, { cause: reason });
      }
      return { checked: true, changed: false, generation: this.#filter?.generation ?? null, error: reason };
    } finally {
      if (this.#controller === controller) this.#controller = null;
    }
  }

  async #update(signal) {
    const settings = this.#settings;
    const headers = {};
    if (this.#etag !== null && this.#filter !== null) headers['If-None-Match'] = this.#etag;
    const started = performance.now();
    const reply = await privateGet(this.#url, {
      fetch: settings.fetch,
      signal,
      timeoutMs: settings.timeoutMs,
      limit: MAX_MANIFEST_BYTES,
      headers,
      what: 'filter manifest',
      endpoint: this.#url,
      passStatuses: NOT_MODIFIED,
      binary: true,
      code: 'E_FETCH',
      bodyCode: 'E_MANIFEST',
    });
    if (this.#closed) throw closedError();
    const current = this.#filter;
    if (reply.status === 304) {
      if (current === null) throw manifestError(this.#url, 'answered 304 Not Modified to a request that named no ETag');
      await this.#saveMeta();
      const detail = { status: 304, notModified: true, changed: false, generation: current.generation };
      this.#emit('check', detail);
      return { checked: true, ...detail };
    }
    const bytes = reply.bytes ?? new Uint8Array(0);
    this.#bytesDownloaded += bytes.length;
    let text;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      throw manifestError(this.#url, 'is not UTF-8 text');
    }
    const manifest = parseManifest(text, this.#url);
    const etag = reply.headers.get('etag');

    if (settings.listId !== null && manifest.listId !== settings.listId) {
      throw new BloomgateError('E_LIST', `the manifest at ${this.#url} offers list ${manifest.listId}, not the list ${settings.listId} asked for`);
    }
    if (current !== null) {
      if (manifest.listId !== current.listId) {
        throw new BloomgateError('E_LIST',
          `the manifest at ${this.#url} offers list ${manifest.listId}, not list ${current.listId} of the filter in use; kept the filter in use`);
      }
      if (manifest.generation < current.generation) {
        throw new BloomgateError('E_STALE',
          `the manifest at ${this.#url} offers generation ${manifest.generation}, older than generation ${current.generation} in use (a replayed or rolled-back manifest); kept the filter in use`);
      }
      // A manifest of this list, not older: its interval holds from now on (a refused one's does not).
      this.#minRefreshSeconds = manifest.minRefreshSeconds;
      if (manifest.generation === current.generation) {
        if (manifest.full.checksum !== null && this.#checksum !== null && manifest.full.checksum !== this.#checksum) {
          throw manifestError(this.#url,
            `names generation ${manifest.generation} with checksum ${manifest.full.checksum}, but the generation ${current.generation} in use has checksum ${this.#checksum} (republished without a new generation?)`);
        }
        this.#etag = etag;
        await this.#saveMeta();
        const detail = { status: 200, notModified: false, changed: false, generation: current.generation };
        this.#emit('check', detail);
        return { checked: true, ...detail };
      }
    }

    if (current === null) this.#minRefreshSeconds = manifest.minRefreshSeconds;
    const previous = current === null ? null : current.generation;
    const manifestMs = performance.now() - started;
    const before = this.#bytesDownloaded;
    /** @type {NextFilter | null} */
    let next = null;
    const delta = current === null ? null
      : manifest.deltas.find((entry) => entry.from === current.generation && entry.length < manifest.full.length && entry.length <= settings.maxBytes) ?? null;
    if (delta !== null && current !== null) {
      try {
        next = await this.#viaDelta(manifest, delta, current, signal);
      } catch (error) {
        if (this.#closed) throw closedError();
        // A refused delta costs a full download, not the update.
        this.#report(asBloomgateError(error, 'E_DELTA', `the delta ${delta.url} could not be applied`), 'delta');
      }
    }
    if (next === null) next = await this.#viaFull(manifest, current, signal);
    if (this.#closed) {
      next.filter.free();
      throw closedError();
    }
    const at = this.#settings.now();
    this.#install(next.filter, next.source, at, next.bytes);
    this.#checksum = next.checksum;
    this.#length = next.length;
    this.#etag = etag;
    this.#persisted = false;
    if (next.bytes !== null) await this.#persist(next.bytes);
    const detail = {
      generation: manifest.generation, previousGeneration: previous, listId: manifest.listId, source: next.source,
      bytes: this.#bytesDownloaded - before, url: next.url,
      // How long the manifest took, and the rest: download, checks, apply, swap and persist.
      timings: { manifestMs, updateMs: performance.now() - started - manifestMs },
    };
    this.#emit('update', detail);
    this.#emit('check', { status: 200, notModified: false, changed: true, generation: manifest.generation });
    return { checked: true, status: 200, notModified: false, changed: true, ...detail };
  }

  /**
   * Swap in a new filter in one assignment; the old one is freed after it.
   * @param {BloomFilter} filter
   * @param {'persisted' | 'initial' | 'full' | 'delta'} source
   * @param {number | null} at
   * @param {Uint8Array | null} [bytes] its file, kept as the next delta's base when small
   */
  #install(filter, source, at, bytes = null) {
    const old = this.#filter;
    this.#filter = filter;
    this.#bytes = bytes !== null && bytes.length <= KEEP_BYTES_MAX ? bytes : null;
    this.#source = source;
    this.#lastUpdate = at;
    if (old !== null && old !== filter) old.free();
  }

  /**
   * @param {Manifest} manifest
   * @param {Manifest['deltas'][number]} delta
   * @param {BloomFilter} current
   * @param {AbortSignal} signal
   * @returns {Promise<NextFilter>}
   */
  async #viaDelta(manifest, delta, current, signal) {
    if (typeof wasm.applyDelta !== 'function' || typeof wasm.deltaInfo !== 'function') {
      throw new BloomgateError('E_UNSUPPORTED', 'this build of the module cannot apply deltas');
    }
    const settings = this.#settings;
    const reply = await privateGet(delta.url, {
      fetch: settings.fetch,
      signal,
      timeoutMs: settings.timeoutMs,
      limit: delta.length,
      what: 'filter delta',
      endpoint: delta.url,
      binary: true,
      code: 'E_FETCH',
      bodyCode: 'E_DELTA',
    });
    const bytes = reply.bytes ?? new Uint8Array(0);
    this.#bytesDownloaded += bytes.length;
    if (bytes.length !== delta.length) {
      throw new BloomgateError('E_TRUNCATED', `the delta ${delta.url} is ${bytes.length} bytes; the manifest says ${delta.length}`);
    }
    await checkIntegrity(bytes, delta.integrity, `the delta ${delta.url}`);
    await wasm.ready();
    const info = wasm.deltaInfo(bytes);
    if (info.listId !== current.listId) {
      throw new BloomgateError('E_LIST', `the delta ${delta.url} is for list ${info.listId}, not list ${current.listId} in use`);
    }
    if (info.targetGeneration <= current.generation) {
      throw new BloomgateError('E_STALE',
        `the delta ${delta.url} leads to generation ${info.targetGeneration}, not newer than generation ${current.generation} in use (replayed)`);
    }
    if (info.baseGeneration !== current.generation || (this.#checksum !== null && info.baseChecksum !== this.#checksum)) {
      throw new BloomgateError('E_DELTA_BASE',
        `the delta ${delta.url} applies to generation ${info.baseGeneration} (checksum ${info.baseChecksum}), not to the generation ${current.generation} in use (checksum ${this.#checksum})`);
    }
    if (info.targetGeneration !== manifest.generation || info.targetLength !== manifest.full.length ||
      (manifest.full.checksum !== null && info.targetChecksum !== manifest.full.checksum)) {
      throw new BloomgateError('E_DELTA',
        `the delta ${delta.url} makes generation ${info.targetGeneration} (${info.targetLength} bytes, checksum ${info.targetChecksum}), not the file the manifest names`);
    }
    const target = wasm.applyDelta(this.#bytes ?? current.serialize(), bytes);
    const filter = await BloomFilter.from(target);
    if (filter.listId !== manifest.listId || filter.generation !== manifest.generation) {
      filter.free();
      throw new BloomgateError('E_DELTA', `the delta ${delta.url} made a filter of another list or generation`);
    }
    return { filter, bytes: target, source: 'delta', checksum: info.targetChecksum, length: target.length, url: delta.url };
  }

  /**
   * @param {Manifest} manifest
   * @param {BloomFilter | null} current
   * @param {AbortSignal} signal
   * @returns {Promise<NextFilter>}
   */
  async #viaFull(manifest, current, signal) {
    const settings = this.#settings;
    const { full } = manifest;
    if (full.length > settings.maxBytes) {
      throw new BloomgateError('E_TOO_LARGE', `the filter ${full.url} is ${full.length} bytes, more than maxBytes (${settings.maxBytes})`);
    }
    const controller = new AbortController();
    const timeout = new BloomgateError('E_TIMEOUT', `the download of ${full.url} timed out after ${settings.timeoutMs} ms`);
    const timer = setTimeout(() => controller.abort(timeout), settings.timeoutMs);
    const onAbort = () => controller.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    let loaded = 0;
    let filter;
    try {
      filter = await loadFilter(full.url, {
        integrity: full.integrity.map((digest) => `sha256-${encodeBase64(digest)}`).join(' '),
        maxBytes: full.length,
        signal: controller.signal,
        fetch: privateFetch(settings.fetch),
        onProgress: (progress) => { loaded = progress.loaded; },
      });
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      this.#bytesDownloaded += loaded;
    }
    try {
      if (filter.listId !== manifest.listId) {
        throw new BloomgateError('E_LIST', `the filter ${full.url} is of list ${filter.listId}, not list ${manifest.listId} the manifest names`);
      }
      if (current !== null && filter.generation <= current.generation) {
        throw new BloomgateError('E_STALE', `the filter ${full.url} is generation ${filter.generation}, not newer than generation ${current.generation} in use`);
      }
      if (filter.generation !== manifest.generation) {
        throw new BloomgateError('E_MANIFEST', `the filter ${full.url} is generation ${filter.generation}; the manifest names ${manifest.generation}`);
      }
      // The bytes for the persisted copy (and the checksum the manifest names).
      const bytes = this.#storage !== null || full.checksum !== null ? filter.serialize() : null;
      const checksum = bytes === null ? null : checksumOf(bytes);
      if (bytes !== null && bytes.length !== full.length) {
        throw new BloomgateError('E_MANIFEST', `the filter ${full.url} is ${bytes.length} bytes; the manifest says ${full.length}`);
      }
      if (full.checksum !== null && checksum !== full.checksum) {
        throw new BloomgateError('E_MANIFEST', `the filter ${full.url} has checksum ${checksum}; the manifest names ${full.checksum}`);
      }
      return { filter, bytes, source: 'full', checksum, length: full.length, url: full.url };
    } catch (error) {
      filter.free();
      throw error;
    }
  }

  #meta() {
    return {
      version: 1,
      manifestUrl: this.#url,
      listId: this.#filter?.listId ?? null,
      generation: this.#filter?.generation ?? null,
      checksum: this.#checksum,
      length: this.#length,
      etag: this.#etag,
      lastCheck: this.#lastCheck,
      lastUpdate: this.#lastUpdate,
      minRefreshSeconds: this.#minRefreshSeconds,
    };
  }

  async #persist(bytes) {
    if (this.#storage === null) return;
    try {
      await this.#storage.set(this.#storageKey, bytes, this.#meta());
      this.#persisted = true;
    } catch (error) {
      this.#report(asBloomgateError(error, 'E_STORAGE',
        `generation ${this.#filter?.generation} is in use but could not be persisted (the persisted copy stays the previous one)`), 'persist');
    }
  }

  async #saveMeta() {
    if (this.#storage === null || this.#filter === null) return;
    // Not stored yet (an initial file, or a write that failed before): store the bytes with it.
    if (!this.#persisted) return this.#persist(this.#filter.serialize());
    if (typeof this.#storage.setMeta !== 'function') return;
    try {
      await this.#storage.setMeta(this.#storageKey, this.#meta());
    } catch (error) {
      this.#report(asBloomgateError(error, 'E_STORAGE', 'the check could not be recorded in storage'), 'persist');
    }
  }
}

if (typeof Symbol.dispose === 'symbol') {
  Object.defineProperty(FreshFilter.prototype, Symbol.dispose, {
    value() {
      this.close();
    },
    writable: true,
    configurable: true,
  });
}

/** fetch with the private request's options; a redirect is an error, never followed. */
function privateFetch(fetchImpl) {
  return async (input, init) => {
    const response = await fetchImpl(input, { ...PRIVATE_REQUEST, signal: init?.signal });
    if (response.type === 'opaqueredirect' || (response.status >= 300 && response.status < 400)) {
      response.body?.cancel().catch(noop);
      const to = response.headers.get('location');
      throw new BloomgateError('E_FETCH', `${String(input)} answered with a redirect${to ? ` to ${to}` : ''}; bloomgate follows no redirects`);
    }
    return response;
  };
}

/**
 * A filter that is usable at once and keeps itself fresh from a publication
 * manifest (see the README, "Filters that stay fresh").
 * @param {string | URL} manifestUrl
 * @param {object} [options]
 * @returns {Promise<FreshFilter>}
 */
export async function openFilter(manifestUrl, options = {}) {
  const url = resolveManifestUrl(manifestUrl);
  const settings = readOptions(options);
  return FreshFilter.open(INTERNAL, url, settings);
}
