/// <reference lib="esnext.disposable" />
// Symbol.dispose and `using` (TypeScript 5.2+), also under lib ["es2022", "dom"] (@types/node references the same lib).
/**
 * bloomgate — Bloom filters in WebAssembly for local "definitely not / maybe"
 * checks in browsers, workers, extensions and Node.
 *
 * Factories are async (they may instantiate the wasm module); once a filter
 * exists, every query is synchronous.
 */

/** An item: a string (hashed as its UTF-8 bytes) or raw bytes. */
export type Item = string | Uint8Array;

/**
 * Many byte keys in one buffer: key i is `bytes[offsets[i], offsets[i + 1])`,
 * so `offsets` holds one entry more than there are keys and never decreases.
 * Batches of packed keys cross into wasm with one copy per chunk instead of
 * one per key: the fastest batch, e.g. for 20-byte SHA-1 digests stored back
 * to back (offsets[i] = 20 * i). Keys must be adjacent: lines of a text file
 * need their separators packed away first.
 */
export interface PackedKeys {
  bytes: Uint8Array;
  offsets: Uint32Array;
}

/**
 * Key encodings stored in a filter file: `utf8` (the item's bytes), `sha1`
 * (passwords: the SHA-1 of the item), `url` (SHA-256 of the URL's Safe
 * Browsing expressions; a query asks up to 30 of them).
 */
export type KeyEncoding = 'utf8' | 'sha1' | 'url';

/**
 * Filter kinds. `fuse` picks fuse8 (2^-8 ≈ 0.39%) or fuse16 (2^-16) from the
 * error rate; fuse filters are static: add every key, then query (the first
 * query builds them; later adds are BloomgateError E_STATIC). `fuse4` is the
 * 4-wise static kind with any fingerprint width (1..32 bits, from the error
 * rate) and an optional value per key (`valueBits`).
 */
export type Kind = 'classic' | 'blocked' | 'fuse' | 'fuse8' | 'fuse16' | 'fuse4' | 'counting' | 'scalable' | 'cuckoo';

/**
 * Stable error codes. Core codes mirror the C status enum (BG_E_CHECKSUM ->
 * 'E_CHECKSUM'); E_FREED, E_INTEGRITY and E_FETCH are raised by JavaScript,
 * as are {@link openFilter}'s E_MANIFEST (a bad publication manifest), E_STALE
 * (an older generation offered), E_LIST (another list offered), E_STORAGE
 * (the persisted copy could not be read or written), E_SIGNATURE (unsigned,
 * under-signed or signed by keys not trusted), E_EXPIRED (a manifest past its
 * expiry; with onStale 'error', a query of a stale filter) and E_INSECURE (plain
 * http: off loopback).
 * init() (and the first call that instantiates the module) rejects with
 * E_FETCH when the module cannot be fetched or read (the message names the URL
 * or path and the fixes), E_WASM when the bytes are not the module, and E_CSP
 * when the page's Content-Security-Policy forbids compiling WebAssembly (add
 * 'wasm-unsafe-eval' to script-src).
 */
export type BloomgateErrorCode =
  | 'E_ARG' | 'E_RANGE' | 'E_NOMEM' | 'E_TOO_LARGE' | 'E_TRUNCATED' | 'E_MAGIC'
  | 'E_VERSION' | 'E_HEADER' | 'E_TRAILING' | 'E_CHECKSUM' | 'E_KIND' | 'E_KEY_ENCODING'
  | 'E_HASH' | 'E_PAYLOAD' | 'E_INCOMPATIBLE' | 'E_BUFFER' | 'E_METADATA'
  | 'E_URL' | 'E_FULL' | 'E_UNSUPPORTED' | 'E_NOT_FOUND' | 'E_STATIC' | 'E_DELTA_BASE' | 'E_DELTA'
  | 'E_FREED' | 'E_INTEGRITY' | 'E_FETCH' | 'E_NOT_READY' | 'E_ESCALATION' | 'E_TIMEOUT'
  | 'E_WASM' | 'E_CSP' | 'E_MANIFEST' | 'E_STALE' | 'E_LIST' | 'E_STORAGE'
  | 'E_SIGNATURE' | 'E_EXPIRED' | 'E_INSECURE'
  | (string & {});

/**
 * The error bloomgate throws for its own failures. Argument mistakes are
 * TypeError or RangeError instead.
 */
export class BloomgateError extends Error {
  constructor(code: BloomgateErrorCode, message: string, options?: { cause?: unknown });
  readonly name: 'BloomgateError';
  /** Stable, machine-readable code such as 'E_CHECKSUM'. */
  readonly code: BloomgateErrorCode;
  /** HTTP status, set on E_FETCH errors caused by a non-ok response. */
  status?: number;
}

/** Result of {@link sizeFor}. */
export interface FilterSize {
  /** Bits: ceil(-n ln p / (ln 2)^2). */
  m: number;
  /** Probes per key: max(1, round((m / n) ln 2)). */
  k: number;
  /** Payload bytes: ceil(m / 8). */
  bytes: number;
  /** m / n. */
  bitsPerItem: number;
}

/**
 * Size a classic filter for `capacity` items at false-positive rate `errorRate`.
 * Synchronous and pure: works before the wasm module is loaded.
 * @throws TypeError for non-number arguments; RangeError for a capacity that is
 *   not an integer in [1, 2^53], an errorRate outside (0, 1), or a k above 64;
 *   BloomgateError E_TOO_LARGE when m exceeds 2^43 bits.
 */
export function sizeFor(options: { capacity: number; errorRate: number; keyEncoding?: KeyEncoding }): FilterSize;

export interface CreateOptions {
  /** Expected number of items: an integer in [1, 2^53]. */
  capacity: number;
  /** Target false-positive rate at capacity, in (0, 1). */
  errorRate: number;
  /** Default 'classic'. An unknown kind is BloomgateError E_KIND. */
  kind?: Kind;
  /** Hash seed: a Number in [0, 2^53 - 1] or a BigInt in [0, 2^64). Default 0. */
  seed?: number | bigint;
  /** Default 'utf8'. An unknown encoding is BloomgateError E_KEY_ENCODING. */
  keyEncoding?: KeyEncoding;
  /** Any JSON-serialisable value, stored in the file's metadata block (at most 1 MiB). */
  metadata?: unknown;
  /** Identity of the list the filter is built from: 16 bytes or 32 hex digits. */
  listId?: Uint8Array | string;
  /** A number the publisher increases with each rebuild of the same list. */
  generation?: number | bigint;
  /**
   * Bits of value stored with each key, 0..8 (default 0): kind 'fuse4' only (E_UNSUPPORTED
   * for others, E_RANGE outside 0..8). With r > 0, add()/addKey() need a value in 0..2^r - 1.
   */
  valueBits?: number;
}

/** What a filter knows about itself ({@link BloomFilter.stats}). */
export interface FilterStats {
  kind: Kind | string;
  /** Bits. */
  m: number;
  /** Probes per key. */
  k: number;
  /** Items added (duplicates included; merges add counts). */
  n: number;
  capacity: number;
  /** The target false-positive rate the filter was sized for. */
  errorRate: number;
  /** bitsSet / m. */
  fillRatio: number;
  /** Items implied by the fill: -(m/k) ln(1 - bitsSet/m). */
  estimatedItems: number;
  /** The false-positive rate the current fill implies: fillRatio^k. */
  estimatedErrorRate: number;
  /** (1 - e^(-kn/m))^k. */
  theoreticalErrorRate: number;
  bitsSet: number;
  /** Payload bytes in memory: ceil(m / 8). */
  bytes: number;
  /** Size of {@link BloomFilter.serialize}'s output. */
  serializedBytes: number;
  /** A Number when below 2^53, otherwise a BigInt. */
  seed: number | bigint;
  keyEncoding: KeyEncoding | string;
  hashAlgorithm: 'xxh3-128' | string;
  /** 32 lowercase hex digits (all zero when unnamed). */
  listId: string;
  generation: number;
  /** More items were added than the filter was sized for. */
  overCapacity: boolean;
  /** The fill implies a false-positive rate above twice the target. */
  overFilled: boolean;
  /** Bits of value stored with each key (0 for kinds without values). */
  valueBits: number;
  /** Seeds a fuse4 build tried before it succeeded (1 usually; more means retries, and growth after every 4); 0 for other kinds. */
  buildAttempts: number;
}

/** A filter of any {@link Kind} living in wasm memory. */
export class BloomFilter {
  private constructor();

  /** An empty filter. Rejects with TypeError / RangeError / BloomgateError on bad options. */
  static create(options: CreateOptions): Promise<BloomFilter>;

  /**
   * A filter from the bytes of a .bgf file. Every field, the lengths and the
   * checksum are validated; the bytes are copied once into wasm memory.
   * @throws BloomgateError E_MAGIC, E_VERSION, E_TRUNCATED, E_CHECKSUM, ...
   */
  static from(bytes: Uint8Array | ArrayBuffer): Promise<BloomFilter>;

  /**
   * Add an item (the filter's key encoding applies). A filter with valueBits r > 0
   * needs its value, an integer in 0..2^r - 1 (BloomgateError E_ARG when missing,
   * E_RANGE when out of range); an item added twice keeps the larger value.
   */
  add(item: Item, value?: number): void;
  /**
   * Add every item of an iterable, or every packed key, with one wasm call per
   * chunk. Malformed packed keys throw (TypeError / RangeError) before any is added.
   * A filter with valueBits r > 0 needs `values`, one per item (values[i] for
   * item i, 0..2^r - 1): E_ARG when they are missing or their count differs,
   * E_RANGE for a value out of range, both before any item is added.
   */
  addAll(items: Iterable<Item> | PackedKeys, values?: readonly number[] | Uint8Array): void;
  /** false: definitely never added. true: maybe added (confirm with the source of truth). */
  mightContain(item: Item): boolean;
  /** mightContain for every item (or packed key), with one wasm call per chunk. */
  mightContainMany(items: Iterable<Item> | PackedKeys): boolean[];
  /**
   * The same, the answers written to `into` as bytes (1: maybe, 0: definitely
   * not) instead of a new array: returns `into.subarray(0, count)`. No garbage
   * per call, which matters in a page with a large live heap (JavaScriptCore).
   * E_RANGE when `into` is shorter than the batch (before any work when the
   * count is known: an array or packed keys); E_ARG when an item or the packed
   * keys share `into`'s memory.
   */
  mightContainMany(items: Iterable<Item> | PackedKeys, into: Uint8Array): Uint8Array;
  /** Add a key that is already encoded (e.g. a 20-byte SHA-1 digest for a 'sha1' filter), with its value as for add(). */
  addKey(key: Uint8Array, value?: number): void;
  /** mightContain for a key that is already encoded. */
  mightContainKey(key: Uint8Array): boolean;
  /**
   * The value stored with an item, or null when it is definitely not in the filter.
   * A member gets exactly its value; a false positive gets an arbitrary one. Kinds
   * without values answer 0 for "maybe". For a url filter: the value of the first of
   * the URL's expressions (most specific first) that might be listed.
   */
  valueOf(item: Item): number | null;
  /** valueOf for a key that is already encoded. */
  valueOfKey(key: Uint8Array): number | null;
  /** Bits of value stored with each key, 0..8 (0 for kinds without values). */
  readonly valueBits: number;
  /**
   * OR another filter into this one. Both must share kind, m, k, seed, hash
   * and key encoding (BloomgateError E_INCOMPATIBLE otherwise).
   */
  merge(other: BloomFilter): this;
  /** Remove every item. */
  clear(): void;
  /**
   * Remove an item (counting and cuckoo kinds; E_UNSUPPORTED otherwise).
   * false, changing nothing, when the filter says it was never added. Remove
   * only items you added: removing a false positive can hide other items.
   */
  remove(item: Item): boolean;
  /** remove() for a key that is already encoded. */
  removeKey(key: Uint8Array): boolean;
  /** A counting filter's classic equivalent (same m, k, seed) to publish. E_UNSUPPORTED for other kinds. */
  toClassic(): BloomFilter;
  /** Replace the metadata block (JSON-serialisable; null removes it). */
  setMetadata(value: unknown): void;
  /** The kind's name, e.g. 'classic' or 'fuse8'. */
  readonly kind: string;
  /** The key encoding: 'utf8', 'sha1' or 'url'. */
  readonly keyEncoding: KeyEncoding;
  /** The list the filter was built from: 32 hex digits, all zero when unnamed. Escalation endpoints must name it. */
  readonly listId: string;
  /** The list's generation; an endpoint must hold at least this one. */
  readonly generation: number;
  /**
   * The list's threshold (metadata `minCount`, from `bloomgate build --min-count`): the filter holds
   * the items seen at least this many times; 1 when the list is whole.
   */
  readonly minCount: number;
  stats(): FilterStats;
  /** The .bgf file bytes (a copy, in a fresh ArrayBuffer: a BlobPart, a BodyInit, a BufferSource). */
  serialize(): Uint8Array<ArrayBuffer>;
  /** The metadata block parsed as JSON (its raw text if it is not JSON), or null. */
  readonly metadata: unknown;
  /**
   * Return the wasm memory now. Idempotent. Any later call throws BloomgateError
   * E_FREED. Filters that are never freed are reclaimed by a FinalizationRegistry.
   */
  free(): void;
  [Symbol.dispose](): void;
}

export interface LoadOptions {
  /**
   * Subresource Integrity: "sha256-<base64>", several allowed (space-separated;
   * any match wins). Checked before the filter is built: E_INTEGRITY on mismatch.
   */
  integrity?: string;
  /** Called as bytes arrive; `total` is the file length from its header. */
  onProgress?: (progress: { loaded: number; total: number }) => void;
  /** Aborting rejects with the signal's reason and cancels the download. */
  signal?: AbortSignal;
  /** fetch implementation for URL sources (default: globalThis.fetch). */
  fetch?: (input: string | URL, init?: { signal?: AbortSignal }) => Promise<Response>;
  /**
   * Largest file accepted: a header claiming more fails at once (E_TOO_LARGE), and a file within it
   * is reserved in one allocation. Without it, memory grows only with the bytes that arrive.
   */
  maxBytes?: number;
}

/**
 * Load a .bgf filter. URLs, Responses and (in Node) file paths and file: URLs are streamed straight into wasm
 * memory; the header is validated from the first 128 bytes, before anything is allocated. A URL's
 * request is sent before the module is instantiated, and its body is read while the module
 * compiles (at most 8 MiB ahead).
 * @throws BloomgateError E_FETCH (network failure, non-ok status), E_INTEGRITY,
 *   E_TRUNCATED, E_TRAILING, E_MAGIC, E_VERSION, E_CHECKSUM, E_TOO_LARGE (past `maxBytes`, or
 *   past the 512 MiB wasm memory cap on iOS and iPadOS), E_UNSUPPORTED (no WebAssembly), ...
 */
export function loadFilter(
  source: string | URL | Response | ArrayBuffer | Uint8Array,
  options?: LoadOptions,
): Promise<BloomFilter>;

/* ------------------------------------------------------------------------ */
/* Filters that stay fresh: openFilter()                                      */
/* ------------------------------------------------------------------------ */

/** A persisted copy: the .bgf bytes and what openFilter() recorded about them. */
export interface StoredFilter {
  bytes: Uint8Array;
  meta: Record<string, unknown>;
}

/**
 * Where {@link openFilter} keeps its copy between runs. Any object with these
 * methods (sync or async) will do; `setMeta`, when present, records a check
 * (a 304, say) without rewriting the bytes.
 */
export interface FilterStorage {
  get(key: string): Promise<StoredFilter | null> | StoredFilter | null;
  set(key: string, bytes: Uint8Array, meta: Record<string, unknown>): Promise<void> | void;
  delete(key: string): Promise<void> | void;
  setMeta?(key: string, meta: Record<string, unknown>): Promise<void> | void;
}

/**
 * IndexedDB storage (pages, workers, extension service workers): the bytes as
 * a Blob (`blob: false`, or an engine that refuses Blobs such as WebKit's
 * ephemeral store: an ArrayBuffer), the meta beside them, written in one
 * transaction. `name` is the database (default 'bloomgate-filters'); `indexedDB`
 * the IDBFactory to use (default globalThis.indexedDB). A database of that name
 * of another version or shape is migrated by an upgrade, or deleted and created
 * again when it cannot be opened; failures are `E_STORAGE` naming the cause.
 */
export function indexedDbStorage(options?: { name?: string; indexedDB?: object; blob?: boolean }): FilterStorage & { close(): void };

/**
 * Directory storage, Node only (elsewhere BloomgateError E_UNSUPPORTED): two
 * files per key, each written to a temporary file, flushed and renamed.
 * Default directory: the per-user cache (~/.cache/bloomgate/filters, ...).
 */
export function directoryStorage(dir?: string): FilterStorage;

/** How the filter in use arrived: loaded from storage, the `initial` option, or downloaded whole or as a delta. */
export type FreshFilterSource = 'persisted' | 'initial' | 'full' | 'delta';

export interface FreshFilterStats extends FilterStats {
  source: FreshFilterSource;
  /** When the manifest was last asked (ms since the epoch), or null. */
  lastCheck: number | null;
  /** When the filter in use was swapped in (for a persisted copy: when it was downloaded), or null. */
  lastUpdate: number | null;
  /** The failure of the latest check (or of the open), null when it went without one. */
  lastError: BloomgateError | null;
  /** Bytes of manifests, deltas and filter files downloaded since openFilter(). */
  bytesDownloaded: number;
  /** When refresh() will ask the manifest again (ms since the epoch). */
  nextCheck: number;
  /** The interval in force: max(manifest minRefreshSeconds, options.refreshSeconds). */
  minRefreshSeconds: number;
  manifestUrl: string;
  /** 'indexeddb', 'directory', 'custom', or null without storage. */
  storage: string | null;
  /** Whether the generation in use came from a manifest verified by the pinned keys (false without `keys`: unsigned). */
  signed: boolean;
  /** The keys whose signatures were verified on the manifest in use. */
  signedBy: string[];
  /** The key set trusted now (0: the pinned keys; higher after following a rotation), null without keys. */
  keySet: number | null;
  /** The Ed25519 verifier in use: node:crypto in Node, the browser's WebCrypto, or the one written here; null without keys. */
  verifier: 'node' | 'webcrypto' | 'js' | null;
  /** When the newest believed manifest expires (ms since the epoch), null when it names no expiry (version 1). */
  expires: number | null;
  /** Past `expires`: the site froze or cannot be reached, and newer listings may be missing. */
  stale: boolean;
}

/** The detail of an 'update' event (and the argument of onUpdate). */
export interface FreshFilterUpdate {
  generation: number;
  previousGeneration: number | null;
  listId: string;
  source: 'full' | 'delta';
  /** Bytes this update downloaded (manifest included). */
  bytes: number;
  /** The delta or filter file it came from. */
  url: string;
  /** Milliseconds: the manifest request, and the rest (download, checks, apply, swap, persist). */
  timings: { manifestMs: number; updateMs: number };
  /** Verified by the pinned keys. */
  signed: boolean;
  /** A signed successor moved the filter to a new list (`publish --replace-list`). */
  successor: boolean;
}

/** The detail of a 'check' event: a manifest request that succeeded. */
export interface FreshFilterCheck {
  status: 200 | 304;
  notModified: boolean;
  changed: boolean;
  generation: number;
  signed: boolean;
}

/** The detail of a 'stale' event: the newest believed manifest expired. */
export interface FreshFilterStale {
  /** The expiry that passed, ms since the epoch. */
  expires: number;
  generation: number | null;
  url: string;
}

/** The detail of an 'error' event (onError gets the error and this). */
export interface FreshFilterError {
  error: BloomgateError;
  code: BloomgateErrorCode;
  /** Where it happened: reading storage, the persisted copy, the initial file, the check, a delta, or persisting. */
  stage: 'storage' | 'persisted' | 'initial' | 'check' | 'delta' | 'persist';
  /** The generation still in use, or null before the first one. */
  generation: number | null;
  /** Whether the filter checks signatures (opened with `keys`). */
  signed: boolean;
}

/** What refresh() resolves to; it never rejects for a failed update (see `error`). */
export interface RefreshOutcome {
  /** false: not asked, the manifest's interval has not passed (see `nextCheck`). */
  checked: boolean;
  changed: boolean;
  generation: number | null;
  notModified?: boolean;
  status?: number;
  source?: 'full' | 'delta';
  previousGeneration?: number | null;
  bytes?: number;
  url?: string;
  nextCheck?: number;
  error?: BloomgateError;
  /** The filter is past the expiry of its newest believed manifest. */
  stale?: boolean;
  /** A signed successor moved the filter to a new list. */
  successor?: boolean;
}

export interface OpenFilterOptions {
  /**
   * Where the copy lives between runs: default IndexedDB in browsers, workers and extensions, and
   * {@link directoryStorage}() in Node; `false` keeps nothing.
   */
  storage?: false | FilterStorage;
  /** The copy's key in storage (default: the manifest URL). */
  storageKey?: string;
  /** Also refresh on a timer (unref'd in Node). Default false: refresh() and the open only. */
  autoRefresh?: boolean;
  /** Ask the manifest at most this often (seconds); only ever slower than the manifest's minRefreshSeconds. */
  refreshSeconds?: number;
  /** Largest filter or delta downloaded (default 256 MiB): E_TOO_LARGE past it. */
  maxBytes?: number;
  /** One check (manifest, key history, delta or file), 1 .. 2^31 - 1 ms (default 60000): E_TIMEOUT. */
  timeoutMs?: number;
  /**
   * The list this client is bound to (32 hex digits, what `bloomgate publish` prints under "client
   * options"): a manifest or persisted copy of any other list is E_LIST. Required with `keys` (a
   * TypeError without it): one publisher key may sign several lists, and the host must not choose.
   */
  listId?: string;
  /**
   * Follow a signed successor (`bloomgate publish --replace-list`) from `listId` to the list that
   * replaces it (default false: E_LIST). Needs `keys`. A successor record is followed only when the
   * generation it says it replaced is not older than the one in use (an old one replayed: E_STALE).
   */
  followSuccessors?: boolean;
  /**
   * A .bgf file to start from when nothing is persisted (one shipped with the app or extension): the
   * open resolves at once, offline too, and the first update can be a delta from it.
   */
  initial?: Uint8Array | ArrayBuffer | (() => Uint8Array | ArrayBuffer | Promise<Uint8Array | ArrayBuffer>);
  fetch?: typeof fetch;
  onUpdate?(update: FreshFilterUpdate): void;
  onError?(error: BloomgateError, detail: FreshFilterError): void;
  onCheck?(check: FreshFilterCheck): void;
  /** Clock, ms since the epoch (tests). */
  now?(): number;
  /**
   * The publisher's public keys, 'ed25519:BASE64URL' as `bloomgate keygen` prints them. With keys, only
   * manifests signed by `threshold` of them (or by a key set they rotated to) are believed: anything
   * unsigned, under-signed or signed by other keys is E_SIGNATURE and the last good copy stays.
   * Without keys the filter runs unsigned (stats().signed === false).
   */
  keys?: string[];
  /** Distinct keys that must sign (default 1), 1 .. keys.length. */
  threshold?: number;
  /**
   * Past the manifest's expiry: 'flag' (default) keeps answering, with `stale: true` in stats() and
   * check results and one 'stale' event; 'error' makes every query throw E_EXPIRED until a fresh
   * manifest is believed; a function is called with the 'stale' event's detail (and flags).
   */
  onStale?: 'flag' | 'error' | ((detail: FreshFilterStale) => void);
  /** Accept a plain http: manifest on a network host (default false: E_INSECURE; loopback is always allowed). */
  allowHttp?: boolean;
}

/** An event of a {@link FreshFilter}: `detail` says what happened. */
export interface FreshFilterEvent<T> {
  readonly type: string;
  readonly detail: T;
}

type FreshFilterListenerOptions = boolean | { once?: boolean; signal?: AbortSignal };

/**
 * A filter that keeps itself fresh ({@link openFilter}). Queries go to the newest
 * good generation; checkPassword, checkUrl and createGate accept it as a filter.
 * It is an EventTarget: 'update', 'error' and 'check' events.
 */
export interface FreshFilter {
  mightContain(item: Item): boolean;
  mightContainMany(items: Iterable<Item> | PackedKeys): boolean[];
  mightContainMany(items: Iterable<Item> | PackedKeys, into: Uint8Array): Uint8Array;
  mightContainKey(key: Uint8Array): boolean;
  /** The value stored with an item in the filter in use (kinds with values, e.g. fuse4), or null: definitely not. */
  valueOf(item: Item): number | null;
  valueOfKey(key: Uint8Array): number | null;
  /** Value bits per key of the filter in use (0: none). */
  readonly valueBits: number;
  readonly kind: string;
  readonly keyEncoding: KeyEncoding;
  readonly listId: string;
  readonly generation: number;
  readonly minCount: number;
  readonly metadata: unknown;
  /** The manifest URL it follows (absolute). */
  readonly manifestUrl: string;
  /** The keys trusted now (after any rotation followed), passed on to checkUrl, checkPassword and createGate; null when unsigned. */
  readonly trust: { keys: string[]; threshold: number; listId: string } | null;
  /** Past the expiry of the newest believed manifest (fires one 'stale' event when first seen). */
  readonly stale: boolean;
  /** The .bgf bytes of the generation in use (a copy). */
  serialize(): Uint8Array<ArrayBuffer>;
  stats(): FreshFilterStats;
  /** Ask the manifest now unless its interval has not passed (`force` asks anyway). */
  refresh(options?: { force?: boolean }): Promise<RefreshOutcome>;
  /** Stop refreshing and free the filter; later queries throw E_FREED. */
  close(): void;
  free(): void;
  [Symbol.dispose](): void;
  addEventListener(type: 'update', listener: (event: FreshFilterEvent<FreshFilterUpdate>) => void, options?: FreshFilterListenerOptions): void;
  addEventListener(type: 'error', listener: (event: FreshFilterEvent<FreshFilterError>) => void, options?: FreshFilterListenerOptions): void;
  addEventListener(type: 'check', listener: (event: FreshFilterEvent<FreshFilterCheck>) => void, options?: FreshFilterListenerOptions): void;
  addEventListener(type: 'stale', listener: (event: FreshFilterEvent<FreshFilterStale>) => void, options?: FreshFilterListenerOptions): void;
  removeEventListener(type: 'update' | 'error' | 'check' | 'stale', listener: (event: FreshFilterEvent<never>) => void, options?: boolean | { capture?: boolean }): void;
}

/**
 * A filter from a publication manifest (`bloomgate publish`), usable at once and kept fresh:
 * the persisted copy when there is one (validated; a corrupt copy is discarded), else the full
 * file. Later checks ask with If-None-Match, no more often than the manifest allows, and take
 * the one-hop delta from the generation in use when it is smaller than the file. Every failure
 * keeps the filter in use and becomes `lastError` and an 'error' event.
 * @throws (rejects) only when there is no persisted copy and the first download fails, with that
 *   failure's code (E_FETCH, E_MANIFEST, E_INTEGRITY, ...); TypeError/RangeError for bad options.
 */
export function openFilter(manifestUrl: string | URL, options?: OpenFilterOptions): Promise<FreshFilter>;

/** The fixed header of a .bgf file, as {@link inspectFile} reports it. */
export interface FileHeader {
  version: number;
  kind: number;
  keyEncoding: number;
  hashAlgorithm: number;
  k: number;
  metadataLength: number;
  m: number;
  capacity: number;
  count: number;
  /** A Number when below 2^53, otherwise a BigInt. */
  seed: number | bigint;
  generation: number;
  payloadOffset: number;
  payloadLength: number;
  fileLength: number;
  errorRate: number;
  /** The stored XXH3-64 checksum, 16 hex digits. */
  checksum: string;
  /** Present when the whole file validated. */
  listId?: string;
}

export interface InspectReport {
  /** True when the whole file validated (checksum included). */
  ok: boolean;
  /** 'OK' or the validation error code. */
  code: 'OK' | BloomgateErrorCode;
  message: string;
  /** The fixed header whenever it parses, even if later checks fail. */
  header: FileHeader | null;
  /** Present when ok. */
  stats: FilterStats | null;
  metadata: unknown;
  /** The file is whole and its XXH3-64 checksum holds, whatever later checks found. */
  checksumVerified: boolean;
}

/**
 * Everything a .bgf file says about itself. Never throws on bad file bytes
 * (only a TypeError for a non-bytes argument).
 */
export function inspectFile(bytes: Uint8Array | ArrayBuffer): Promise<InspectReport>;

/**
 * Instantiate the wasm module now instead of on first use. Pass a compiled
 * WebAssembly.Module, the bytes, a Response or a URL where the default
 * location does not work (strict CSP, extension service workers, bundlers).
 * Later calls return the first call's promise.
 */
export function init(
  source?: WebAssemblyModule | ArrayBuffer | ArrayBufferView | Response | URL | string
    | PromiseLike<WebAssemblyModule | ArrayBuffer | ArrayBufferView | Response>,
): Promise<void>;

/**
 * A compiled `WebAssembly.Module` (from `WebAssembly.compile()`, or posted by
 * another worker). Declared as any object rather than by the DOM lib's name,
 * so that projects without the DOM lib compile: @types/node declares no
 * WebAssembly namespace. init() checks at run time that it is a Module.
 */
export type WebAssemblyModule = object;

/* ------------------------------------------------------------------------ */
/* The front gate: local answers, escalation on "maybe"                      */
/* ------------------------------------------------------------------------ */

export interface GateResult {
  /** The final answer: confirmed by the source of truth when escalated. */
  listed: boolean;
  /** true when confirm() was asked (false for local answers and cache hits). */
  escalated: boolean;
  /** The filter said maybe and the source of truth said no. */
  falsePositive: boolean;
  /** Answered from the gate's cache of earlier confirmations. */
  cached?: boolean;
  /** The escalation error, when onError turned a failure into an answer. */
  error?: unknown;
  /** Present (true) when the filter is a live filter whose newest believed manifest has expired: the list may have grown since. */
  stale?: boolean;
}

export interface GateStats {
  checks: number;
  /** Answered "definitely not" by the filter, with no network. */
  localNegatives: number;
  escalations: number;
  cacheHits: number;
  confirmed: number;
  falsePositives: number;
  errors: number;
  inFlight: number;
  /** The filter's own estimate, refreshed every 10,000 checks. */
  expectedFalsePositiveRate: number | null;
  /** Observed false positives run well above the filter's estimate: rebuild or refresh it. */
  staleFilter: boolean;
}

export interface GateOptions {
  filter: { mightContain(item: Item): boolean; stats?(): { estimatedErrorRate: number } };
  /** Ask the source of truth; honour `signal`. May return a cache hint in ms. */
  confirm(item: Item, context: { signal: AbortSignal; keys?: string[]; threshold?: number; listId?: string }): Promise<boolean | { listed: boolean; ttlMs?: number }>;
  /** What a failed escalation means. Default 'throw' (BloomgateError E_ESCALATION); never silently clean. */
  onError?: 'throw' | 'listed' | 'clean' | ((error: unknown, item: Item) => boolean);
  /** Abort an escalation after this long, 1 .. 2^31 - 1 ms (default 5000); larger is a RangeError. */
  timeoutMs?: number;
  /** Confirmed answers: bounded LRU with a TTL (defaults 1000 entries, 10 minutes). */
  cache?: { maxEntries?: number; ttlMs?: number };
  /** Flag a stale filter when false positives exceed ratio × the estimate (default 3) after minNegatives (default 200). */
  staleness?: { ratio?: number; minNegatives?: number };
  onStale?(info: { observedFalsePositiveRate: number; expectedFalsePositiveRate: number; negatives: number }): void;
  now?(): number;
  /**
   * Publisher keys (`ed25519:BASE64URL`) for confirm(): handed to it in its context (default: the
   * keys of a filter from openFilter), for it to pass to checkPassword / checkUrl.
   */
  keys?: string[];
  /** How many of `keys` must sign (default 1). */
  threshold?: number;
  /** The list `keys` bind the checks to (default: that of a filter from openFilter); required with keys otherwise. */
  listId?: string;
}

export interface Gate {
  check(item: Item): Promise<GateResult>;
  stats(): GateStats;
  clearCache(): void;
}

/** Answer locally; on "maybe" ask `confirm` once (shared by concurrent checks, cached). */
export function createGate(options: GateOptions): Gate;

/** SHA-1 of a password (UTF-8) as 40 uppercase hex digits. Synchronous; needs the module instantiated (E_NOT_READY otherwise). */
export function hashPassword(password: string): string;

export interface PasswordCheck {
  /** Seen at least `minCount` times, whether the filter or the server answered. */
  breached: boolean;
  /**
   * Times seen in breaches, when known: 0 for a whole list's local "no"; null when unconfirmed, or
   * for a subset filter's local "no" (seen fewer than minCount times, maybe never).
   */
  count: number | null;
  /** The range server was asked (with the 5-hex SHA-1 prefix only). */
  escalated: boolean;
  /** false: the filter said maybe and no rangeUrl was given. */
  confirmed: boolean;
  /** The threshold this answer was decided with (the filter's, or a stricter `options.minCount`). */
  minCount: number;
  /**
   * Present when the filter was built with `--buckets` (values per key): the lower bound of the
   * count's bucket. Unconfirmed (from the filter), exact for a listed hash and arbitrary for a
   * false positive; confirmed, the bucket of the server's count; null for a "no".
   */
  seenAtLeast?: number | null;
  /** Present (true) when the filter is a live filter whose newest believed manifest has expired: the list may have grown since. */
  stale?: boolean;
}

export interface EscalationOptions {
  /** Defaults to globalThis.fetch. Endpoint manifests are cached per fetch function. */
  fetch?: typeof fetch;
  signal?: AbortSignal;
  /** Per request, 1 .. 2^31 - 1 ms (default 10000); E_TIMEOUT when the head or the body stalls. */
  timeoutMs?: number;
  /**
   * Publisher keys (`ed25519:BASE64URL`, what `bloomgate keygen` prints). With keys, a "not listed"
   * counts only from an endpoint whose manifest `threshold` of them signed (`export-ranges --sign`,
   * `serve --sign`) and whose reply reaches the manifest's Merkle root through its proof;
   * anything else is E_ESCALATION. The public breached-password service stays trusted by its
   * padding (over https). Default: the keys of a filter from openFilter.
   */
  keys?: string[];
  /** How many of `keys` must sign the endpoint manifest (default 1). */
  threshold?: number;
  /**
   * The list the check is bound to (32 hex digits, what `export-ranges` / `publish` print): with keys,
   * an endpoint manifest of another list is E_ESCALATION. Required with keys unless the filter is one
   * from openFilter() opened with keys and listId (its list is used); a filter of another list is E_LIST.
   */
  listId?: string;
}

/**
 * Check a password against a `sha1` filter and, on "maybe", the public range
 * protocol (`GET {rangeUrl}/{5 hex}`). Works against the public service and
 * self-hosted mirrors (`bloomgate serve`, `export-ranges`). A "not breached"
 * from the server counts only from an endpoint whose manifest names the
 * filter's list, or (no manifest) from a reply padded to at least 800 rows, as
 * the public service pads; anything else rejects with E_ESCALATION. Requests
 * carry no credentials and no referrer, follow no redirect and skip the HTTP cache.
 */
export function checkPassword(password: string, options: EscalationOptions & {
  filter?: BloomFilter | FreshFilter;
  rangeUrl?: string | URL;
  /**
   * Send `Add-Padding: true`. 'auto' (default): where the endpoint's manifest says it pads on
   * request, and to endpoints without a manifest (the public service); never to static exports,
   * so a CORS-only host needs no preflight.
   */
  addPadding?: boolean | 'auto';
  /** A stricter threshold than the filter's (never a lower one: RangeError). */
  minCount?: number;
}): Promise<PasswordCheck>;

/** Safe Browsing canonical form (sync; IDN hosts become punycode). Schemes http, https, ftp, ws, wss (none: http); any other scheme, or an unparsable URL, is BloomgateError E_URL. */
export function canonicalizeUrl(url: string): string;
/** Host-suffix x path-prefix expressions, most specific first, at most 30 (sync). */
export function urlExpressions(url: string): string[];

export interface UrlCheck {
  listed: boolean;
  /** The listed expression that matched, or null. */
  expression: string | null;
  /** The hashes server was asked (with 4-byte SHA-256 prefixes only). */
  escalated: boolean;
  /** false: the filter said maybe and no hashesUrl was given. */
  confirmed: boolean;
  /**
   * Present when the filter or the endpoint carries threat labels (values per key): the matched
   * expression's label. Unconfirmed, the filter's (arbitrary for a false positive); confirmed, the
   * endpoint's when its manifest has `values`, else the filter's. null when not listed.
   */
  threat?: string | null;
  /** Present (true) when the filter is a live filter whose newest believed manifest has expired: the list may have grown since. */
  stale?: boolean;
}

/**
 * Check a URL against a `url` filter; on "maybe", confirm by 4-byte hash prefix at
 * `GET {hashesUrl}/{8 hex}`. A "not listed" counts only from an endpoint whose manifest
 * (`{hashesUrl}/manifest.json`) names the filter's list; anything else is E_ESCALATION.
 */
export function checkUrl(url: string, options: EscalationOptions & {
  filter: BloomFilter | FreshFilter; hashesUrl?: string | URL;
}): Promise<UrlCheck>;

/* ------------------------------------------------------------------------ */
/* Values being typed: local answers, escalation only for settled values    */
/* ------------------------------------------------------------------------ */

/** What `settle()` resolves to: the check's result, or, superseded, the value's local answer marked so. */
export type Settled<T> = T & {
  /**
   * Present (true) when a later `local()`, `settle()` or `cancel()` of another value superseded this
   * escalation before it was answered: its requests were aborted and this is the value's local answer
   * (`escalated: false`). Ignore it: the user has moved on from this value.
   */
  superseded?: true;
};

/** A value being typed, checked: every keystroke locally, only a settled value by escalation. */
export interface Checker<T> {
  /** The filter's answer, synchronous, never any network (`confirmed: false` on "maybe"). Supersedes an escalation of another value. */
  local(value: string): T;
  /**
   * The value is final (the field's change, the form's submit): "definitely not" is answered locally;
   * "maybe" is escalated to the endpoint once (settled again, in flight or answered, the same escalation
   * is shared). A later `local`, `settle` or `cancel` of another value supersedes it (see `superseded`).
   * Rejects as checkPassword / checkUrl do (TypeError for a non-string).
   */
  settle(value: string): Promise<Settled<T>>;
  /** Supersede any escalation in flight (an emptied field, a closed form). */
  cancel(): void;
}

/**
 * A checker of passwords being typed; options as checkPassword's (a `filter` is required). Without
 * `rangeUrl`, `settle()` gives the local answer. TypeError for a missing filter, E_KEY_ENCODING for
 * a filter that is not `sha1`.
 */
export function passwordChecker(options: Parameters<typeof checkPassword>[1] & { filter: BloomFilter | FreshFilter }): Checker<PasswordCheck>;
/** A checker of URLs being typed; options as checkUrl's. Without `hashesUrl`, `settle()` gives the local answer. */
export function urlChecker(options: Parameters<typeof checkUrl>[1]): Checker<UrlCheck>;

/** What watchField needs of a field: an `<input>` (its `form`, when it has one, is watched for submit). */
export interface WatchedField {
  value: string;
  form?: { addEventListener(type: string, listener: () => void): void; removeEventListener(type: string, listener: () => void): void } | null;
  addEventListener(type: string, listener: () => void): void;
  removeEventListener(type: string, listener: () => void): void;
}

/**
 * Check a page's field as it is typed: `input` -> `check.local` (an emptied field: `onResult(null)` and
 * `check.cancel()`), `change` and the enclosing form's `submit` -> `check.settle`. `onResult(result,
 * { value, final })` is never called for a settled answer the field has moved on from; `onError`
 * (default: rethrown as uncaught) gets failed checks. No timers. Returns a function that unwatches.
 */
export function watchField<T>(input: WatchedField, check: Checker<T>, options: {
  onResult(result: T | null, context: { value: string; final: boolean }): void;
  onError?(error: unknown, context: { value: string }): void;
}): () => void;
