// @ts-check
/**
 * filter.js — BloomFilter (every kind of the family) and sizeFor().
 *
 * Factories are async (they may instantiate the wasm module); everything else
 * is synchronous. Arguments are validated here, in JavaScript, before anything
 * crosses into wasm: wrong types are TypeError, out-of-range numbers RangeError,
 * unsupported kinds or encodings BloomgateError (E_KIND, E_KEY_ENCODING).
 */
import { BloomgateError } from './errors.js';
import * as wasm from './wasm/index.js';
import {
  CLASSIC_SIZED_KIND_IDS, hashName, KEY_ENCODING_IDS, keyEncodingName, KIND_IDS, kindName, STATIC_KIND_IDS,
} from './names.js';

// The same doubles as src/sizing.c's literals, so sizeFor() and the core agree on m and k.
const LN2 = 0.6931471805599453; // src/sizing.c's 0.69314718055994530942, the same double
const LN2_SQUARED = 0.48045301391820144; // src/sizing.c's 0.48045301391820142467, the same double
const { MAX_CAPACITY, MAX_BITS, MAX_VALUE_BITS, URL_MAX_EXPRESSIONS } = wasm;
// Kinds that store a value with each key (fuse4).
const VALUE_KINDS = new Set(wasm.KINDS.filter((kind) => kind.values).map((kind) => kind.id));

// 'fuse' is not a kind of its own: it picks fuse8 or fuse16 from errorRate (parseKind).
// Looked up by any name and id: the options hold whatever the caller passed.
const KINDS = /** @type {Map<string, number>} */ (KIND_IDS);
const STATIC_KINDS = /** @type {Set<number>} */ (STATIC_KIND_IDS);
const CLASSIC_SIZED = /** @type {Set<number>} */ (CLASSIC_SIZED_KIND_IDS);
const KEY_ENCODINGS = /** @type {Map<string, number>} */ (KEY_ENCODING_IDS);
const URL_ENCODING = KEY_ENCODINGS.get('url');

const textEncoder = new TextEncoder();

/* ------------------------------------------------------------------------ */
/* Argument validation                                                        */
/* ------------------------------------------------------------------------ */

function requireOptions(options, where) {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`${where} needs an options object such as { capacity: 1000000, errorRate: 0.01 }`);
  }
}

function validateSizing(options, where) {
  const { capacity, errorRate } = options;
  if (typeof capacity !== 'number') {
    throw new TypeError(`${where}: capacity must be a number, got ${describe(capacity)}`);
  }
  if (!Number.isInteger(capacity) || capacity < 1 || capacity > MAX_CAPACITY) {
    throw new RangeError(`${where}: capacity must be an integer from 1 to 2^53, got ${capacity}`);
  }
  if (typeof errorRate !== 'number') {
    throw new TypeError(`${where}: errorRate must be a number, got ${describe(errorRate)}`);
  }
  if (!(errorRate > 0 && errorRate < 1)) {
    throw new RangeError(`${where}: errorRate must be strictly between 0 and 1, got ${errorRate}`);
  }
  return { capacity, errorRate };
}

function describe(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value;
}

// m = ceil(-n ln p / (ln 2)^2), k = max(1, round((m/n) ln 2)), as bg_size_for().
function computeSize(n, p, where) {
  const bits = Math.ceil((-n * Math.log(p)) / LN2_SQUARED);
  if (!(bits <= MAX_BITS)) {
    throw new BloomgateError('E_TOO_LARGE', `${where}: ${bits} bits exceeds the supported maximum of 2^43`);
  }
  const m = bits < 1 ? 1 : bits;
  const kReal = Math.round((m / n) * LN2);
  if (kReal > wasm.MAX_K) {
    throw new RangeError(`${where}: errorRate ${p} needs ${kReal} hash probes; the maximum is ${wasm.MAX_K} (errorRate >= ~1e-19)`);
  }
  return { m, k: kReal < 1 ? 1 : kReal };
}

function parseSeed(seed) {
  if (seed === undefined) return [0, 0];
  if (typeof seed === 'number') {
    if (!Number.isInteger(seed) || seed < 0 || seed > Number.MAX_SAFE_INTEGER) {
      throw new RangeError(`seed must be a non-negative integer up to 2^53 - 1 (use a BigInt for larger seeds), got ${seed}`);
    }
    return [seed % 0x100000000, Math.floor(seed / 0x100000000)];
  }
  if (typeof seed === 'bigint') {
    if (seed < 0n || seed >= 1n << 64n) throw new RangeError(`seed must be in [0, 2^64), got ${seed}`);
    return [Number(seed & 0xffffffffn), Number(seed >> 32n)];
  }
  throw new TypeError(`seed must be a number or a BigInt, got ${describe(seed)}`);
}

function parseKind(kind, errorRate) {
  if (kind === undefined) return 1;
  if (typeof kind !== 'string') throw new TypeError(`kind must be a string, got ${describe(kind)}`);
  // A fuse filter's rate is fixed by its fingerprint: 2^-8 (0.39%) or 2^-16 (0.0015%).
  if (kind === 'fuse') return /** @type {number} */ (KINDS.get(errorRate >= 2 ** -8 ? 'fuse8' : 'fuse16')); // both in the table
  const value = KINDS.get(kind);
  if (value === undefined) {
    throw new BloomgateError('E_KIND', `unknown or unsupported filter kind '${kind}' (supported: ${[...KINDS.keys()].join(', ')})`);
  }
  return value;
}

function parseValueBits(valueBits, kind) {
  if (valueBits === undefined) return 0;
  if (typeof valueBits !== 'number') throw new TypeError(`valueBits must be a number, got ${describe(valueBits)}`);
  if (!Number.isInteger(valueBits) || valueBits < 0 || valueBits > MAX_VALUE_BITS) {
    throw new BloomgateError('E_RANGE', `valueBits must be an integer from 0 to ${MAX_VALUE_BITS}, got ${valueBits}`);
  }
  if (valueBits > 0 && !VALUE_KINDS.has(kind)) {
    throw new BloomgateError('E_UNSUPPORTED', `valueBits needs a kind that stores values (${[...VALUE_KINDS].map(kindName).join(', ')}), not ${kindName(kind)}`);
  }
  return valueBits;
}

function parseKeyEncoding(keyEncoding) {
  if (keyEncoding === undefined) return 0;
  if (typeof keyEncoding !== 'string') throw new TypeError(`keyEncoding must be a string, got ${describe(keyEncoding)}`);
  const value = KEY_ENCODINGS.get(keyEncoding);
  if (value === undefined) {
    throw new BloomgateError('E_KEY_ENCODING', `unknown key encoding '${keyEncoding}' (supported: ${[...KEY_ENCODINGS.keys()].join(', ')})`);
  }
  return value;
}

function isUint8Array(value) {
  return value instanceof Uint8Array || Object.prototype.toString.call(value) === '[object Uint8Array]';
}

function parseListId(listId) {
  if (listId === undefined) return null;
  if (typeof listId === 'string') {
    if (!/^[0-9a-fA-F]{32}$/.test(listId)) throw new RangeError('listId must be 32 hexadecimal digits (16 bytes)');
    const bytes = new Uint8Array(16);
    for (let i = 0; i < 16; i++) bytes[i] = parseInt(listId.slice(2 * i, 2 * i + 2), 16);
    return bytes;
  }
  if (isUint8Array(listId)) {
    if (listId.length !== 16) throw new RangeError(`listId must be 16 bytes, got ${listId.length}`);
    return Uint8Array.from(listId);
  }
  throw new TypeError(`listId must be a Uint8Array of 16 bytes or a 32-digit hex string, got ${describe(listId)}`);
}

function parseGeneration(generation) {
  if (generation === undefined) return 0;
  if (typeof generation === 'bigint') {
    if (generation < 0n || generation > BigInt(Number.MAX_SAFE_INTEGER)) {
      throw new RangeError(`generation must be in [0, 2^53 - 1], got ${generation}`);
    }
    return Number(generation);
  }
  if (typeof generation !== 'number') throw new TypeError(`generation must be a number, got ${describe(generation)}`);
  if (!Number.isInteger(generation) || generation < 0 || generation > Number.MAX_SAFE_INTEGER) {
    throw new RangeError(`generation must be an integer in [0, 2^53 - 1], got ${generation}`);
  }
  return generation;
}

function encodeMetadata(metadata) {
  if (metadata === undefined) return null;
  const json = JSON.stringify(metadata); // throws TypeError on cycles and BigInts
  if (typeof json !== 'string') throw new TypeError('metadata must be JSON-serialisable');
  return textEncoder.encode(json);
}

/**
 * Bytes of a file as a Uint8Array view (no copy): Uint8Array, ArrayBuffer or any view.
 * @internal shared with load.js and inspect.js
 */
export function asBytes(source, where) {
  if (isUint8Array(source)) return source;
  if (source instanceof ArrayBuffer || (typeof SharedArrayBuffer === 'function' && source instanceof SharedArrayBuffer) ||
    Object.prototype.toString.call(source) === '[object ArrayBuffer]') {
    return new Uint8Array(source);
  }
  if (ArrayBuffer.isView(source)) return new Uint8Array(source.buffer, source.byteOffset, source.byteLength);
  throw new TypeError(`${where} needs a Uint8Array or an ArrayBuffer, got ${describe(source)}`);
}

function hex(bytes) {
  let out = '';
  for (const byte of bytes) out += byte.toString(16).padStart(2, '0');
  return out;
}

/* ------------------------------------------------------------------------ */
/* sizeFor                                                                    */
/* ------------------------------------------------------------------------ */

/**
 * The false-positive rate each key is sized for. A url query asks up to 30
 * expression keys, so its per-key rate is 1 - (1 - p)^(1/30) (as
 * bg_key_error_rate in src/keys.c).
 */
function keyErrorRate(keyEncoding, errorRate) {
  return keyEncoding === URL_ENCODING ? -Math.expm1(Math.log1p(-errorRate) / URL_MAX_EXPRESSIONS) : errorRate;
}

/**
 * Size a classic filter for `capacity` items at `errorRate` (for keyEncoding
 * 'url', errorRate is the share of clean URLs that escalate). Synchronous,
 * pure JavaScript: usable before the wasm module is loaded.
 * @returns {{ m: number, k: number, bytes: number, bitsPerItem: number }}
 */
export function sizeFor(options) {
  requireOptions(options, 'sizeFor()');
  const { capacity, errorRate } = validateSizing(options, 'sizeFor()');
  const keyEncoding = parseKeyEncoding(options.keyEncoding);
  const { m, k } = computeSize(capacity, keyErrorRate(keyEncoding, errorRate), 'sizeFor()');
  return { m, k, bytes: Math.ceil(m / 8), bitsPerItem: m / capacity };
}

/* ------------------------------------------------------------------------ */
/* BloomFilter                                                                */
/* ------------------------------------------------------------------------ */

const INTERNAL = Symbol('bloomgate.internal');
const MATCH_URL = Symbol('bloomgate.matchUrl');
const SERIALIZE_TO = Symbol('bloomgate.serializeTo');
/** Implemented by wrappers that answer for a BloomFilter: returns the one in use now. */
export const CURRENT_FILTER = Symbol('bloomgate.currentFilter');

function freedError() {
  return new BloomgateError('E_FREED', 'this filter has been freed; create or load a new one');
}

/**
 * Owns the wasm pointer. Kept apart from the BloomFilter object so the
 * FinalizationRegistry can hold it without keeping the filter alive.
 */
class FilterHandle {
  constructor(ptr, unsealed = false) {
    this.ptr = ptr;
    // A static kind collecting keys: it is built (sealed) before its first query.
    this.unsealed = unsealed;
    // add(item) without a value is known to be right (valueBits 0): set by the first one, so later
    // ones skip the identity lookup (valueBits never changes).
    this.plainAdd = false;
  }

  /** The pointer, ready for queries: seals a static kind that has new keys. */
  queryPtr() {
    if (this.ptr === 0) throw freedError();
    if (this.unsealed) {
      wasm.filterSeal(this.ptr);
      this.unsealed = false;
    }
    return this.ptr;
  }

  ptrOrThrow() {
    if (this.ptr === 0) throw freedError();
    return this.ptr;
  }
}

const registry = typeof FinalizationRegistry === 'function'
  ? new FinalizationRegistry((handle) => {
    if (handle.ptr !== 0) {
      wasm.filterFree(handle.ptr);
      handle.ptr = 0;
    }
  })
  : null;

/** A filter of any kind (classic, blocked, fuse8/16, fuse4, counting, scalable, cuckoo) living in wasm memory. */
export class BloomFilter {
  #handle;
  /** @type {{ kind: string, keyEncoding: string, listId: string, generation: number, valueBits: number } | null} read once */
  #identity = null;

  /** @private use BloomFilter.create(), BloomFilter.from() or loadFilter() */
  constructor(token, ptr, unsealed = false) {
    if (token !== INTERNAL) {
      throw new TypeError('BloomFilter has no public constructor: use BloomFilter.create(), BloomFilter.from() or loadFilter()');
    }
    this.#handle = new FilterHandle(ptr, unsealed);
    registry?.register(this, this.#handle, this.#handle);
  }

  /**
   * An empty filter sized for `capacity` items at `errorRate`.
   * `valueBits` (0..8, kinds with values: fuse4) stores a value of that many bits with each key.
   * @param {{ capacity: number, errorRate: number, kind?: 'classic', seed?: number | bigint,
   *   keyEncoding?: 'utf8' | 'sha1', metadata?: unknown, listId?: Uint8Array | string,
   *   generation?: number | bigint, valueBits?: number }} options
   */
  static async create(options) {
    requireOptions(options, 'BloomFilter.create()');
    const { capacity, errorRate } = validateSizing(options, 'BloomFilter.create()');
    const keyEncoding = parseKeyEncoding(options.keyEncoding);
    const kind = parseKind(options.kind, keyErrorRate(keyEncoding, errorRate));
    const valueBits = parseValueBits(options.valueBits, kind);
    const [seedLo, seedHi] = parseSeed(options.seed);
    const metadata = encodeMetadata(options.metadata);
    const listId = parseListId(options.listId);
    const generation = parseGeneration(options.generation);
    if (CLASSIC_SIZED.has(kind)) computeSize(capacity, keyErrorRate(keyEncoding, errorRate), 'BloomFilter.create()');
    await wasm.ready();
    const ptr = wasm.filterCreate(kind, capacity, errorRate, seedLo, seedHi, keyEncoding, valueBits);
    try {
      if (metadata !== null) wasm.filterSetMetadata(ptr, metadata);
      if (listId !== null || generation !== 0) wasm.filterSetIdentity(ptr, listId ?? new Uint8Array(16), generation);
    } catch (error) {
      wasm.filterFree(ptr);
      throw error;
    }
    return new BloomFilter(INTERNAL, ptr, STATIC_KINDS.has(kind));
  }

  /**
   * A filter from .bgf bytes, validated by the core (lengths, checksum, every
   * field). The bytes are copied once into wasm memory and used in place.
   * @param {Uint8Array | ArrayBuffer} bytes
   */
  static async from(bytes) {
    const view = asBytes(bytes, 'BloomFilter.from()');
    await wasm.ready();
    return new BloomFilter(INTERNAL, wasm.filterFromBytes(view));
  }

  /**
   * Add an item (string as UTF-8, or Uint8Array); the filter's key encoding applies.
   * A filter with valueBits r > 0 needs the item's value, an integer from 0 to 2^r - 1
   * (an item added twice with different values keeps the larger).
   */
  add(item, value) {
    const handle = this.#handle;
    const ptr = handle.ptr;
    if (value === undefined && handle.plainAdd && ptr !== 0) wasm.filterAdd(ptr, item);
    else this.#addChecked(ptr, item, value);
  }

  // add() the first time, with a value, or on a freed filter.
  #addChecked(ptr, item, value) {
    if (ptr === 0) throw freedError();
    if (value === undefined && this.#valueBits() === 0) {
      this.#handle.plainAdd = true;
      wasm.filterAdd(ptr, item);
    } else wasm.filterAddValue(ptr, item, this.#checkValue(value, 'add'));
  }

  /** r: the bits of value stored with each key (0..8; 0 for kinds without values). */
  get valueBits() {
    return this.#valueBits();
  }

  /**
   * The value stored with an item, or null when it is definitely not in the
   * filter. A member gets exactly its value; a false positive (a share
   * errorRate of non-members) gets an arbitrary one. Filters without values
   * answer 0 for "maybe". A url filter answers with the value of the first of
   * the URL's expressions (most specific first) that might be listed.
   * Called with no argument (as JavaScript does to turn an object into a
   * primitive), it is Object.prototype.valueOf and returns the filter itself.
   * @returns {number | null}
   */
  valueOf(item) {
    if (arguments.length === 0) return /** @type {number | null} */ (/** @type {unknown} */ (this));
    return wasm.filterValue(this.#handle.queryPtr(), item);
  }

  /** valueOf for a key that is already encoded. */
  valueOfKey(key) {
    return wasm.filterValueKey(this.#handle.queryPtr(), key);
  }

  #valueBits() {
    return this.#identify().valueBits;
  }

  // The value to store, checked against valueBits r: required (0..2^r - 1) when r > 0, else absent or 0.
  #checkValue(value, where) {
    const bits = this.#valueBits();
    if (value === undefined) {
      throw new BloomgateError('E_ARG', `${where}(): this ${this.kind} filter stores a ${bits}-bit value with each key: pass a value from 0 to ${2 ** bits - 1}`);
    }
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value >= 2 ** bits) {
      throw new BloomgateError('E_RANGE', bits === 0
        ? `${where}(): this ${this.kind} filter stores no values (valueBits 0): a value must be absent or 0, got ${String(value)}`
        : `${where}(): value must be an integer from 0 to ${2 ** bits - 1} (valueBits ${bits}), got ${String(value)}`);
    }
    return value;
  }

  /**
   * Remove an item (counting and cuckoo kinds; E_UNSUPPORTED otherwise).
   * Returns false, changing nothing, when the filter says it was never added.
   * Only remove items you added: removing a false positive can hide others.
   */
  remove(item) {
    return wasm.filterRemove(this.#handle.queryPtr(), item);
  }

  /** remove() for a key that is already encoded. */
  removeKey(key) {
    return wasm.filterRemoveKey(this.#handle.queryPtr(), key);
  }

  /** A counting filter's classic equivalent (same m, k, seed): publish it, keep the counting master. */
  toClassic() {
    return new BloomFilter(INTERNAL, wasm.filterToClassic(this.#handle.queryPtr()));
  }

  /** The kind's name ('classic', 'blocked', 'fuse8', ...). */
  get kind() {
    return this.#identify().kind;
  }

  /** The key encoding ('utf8', 'sha1' or 'url'). */
  get keyEncoding() {
    return this.#identify().keyEncoding;
  }

  /** The list this filter was built from: 32 hex digits, all zero when unnamed. */
  get listId() {
    return this.#identify().listId;
  }

  /** The list's generation (the publisher increases it with each rebuild). */
  get generation() {
    return this.#identify().generation;
  }

  /**
   * The list's threshold: the filter holds the items seen at least this many
   * times (metadata `minCount`, written by `bloomgate build --min-count`);
   * 1 when the list is whole. A "no" from a subset filter means "seen fewer
   * than minCount times", not "never seen".
   */
  get minCount() {
    const metadata = this.metadata;
    const value = metadata !== null && typeof metadata === 'object' ? metadata.minCount : undefined;
    return Number.isSafeInteger(value) && value > 1 ? value : 1;
  }

  // Read without stats(): that seals a static kind, and a fuse filter still
  // collecting keys must stay open to add() after its kind is asked.
  #identify() {
    if (this.#identity === null) {
      const info = wasm.filterInfo(this.#handle.ptrOrThrow());
      this.#identity = {
        kind: kindName(info.kind),
        keyEncoding: keyEncodingName(info.keyEncoding),
        listId: hex(info.listId),
        generation: info.generation,
        valueBits: info.valueBits,
      };
    }
    return this.#identity;
  }

  /**
   * Add every item of an iterable, in batches (one wasm call per chunk). A
   * filter with valueBits r > 0 needs `values`: an array or Uint8Array with
   * one value per item (values[i] for item i, each 0..2^r - 1), all checked
   * before anything is added.
   */
  addAll(items, values) {
    this.#handle.ptrOrThrow();
    const bits = this.#valueBits();
    if (values === undefined) {
      if (bits > 0) {
        throw new BloomgateError('E_ARG', `addAll(): this ${this.kind} filter stores a ${bits}-bit value with each key: pass them as addAll(items, values)`);
      }
      wasm.filterAddAll(this.#handle, items);
      return;
    }
    if (!Array.isArray(values) && !(values instanceof Uint8Array)) {
      throw new BloomgateError('E_ARG', `addAll(): values must be an array or a Uint8Array, got ${describe(values)}`);
    }
    wasm.filterAddAllValues(this.#handle, items, (count) => {
      if (values.length !== count) {
        throw new BloomgateError('E_ARG', `addAll(): ${count} items need ${count} values, got ${values.length}`);
      }
      const limit = 2 ** bits;
      for (let i = 0; i < count; i++) {
        const value = values[i];
        if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value >= limit) {
          throw new BloomgateError('E_RANGE', `addAll(): values[${i}] must be an integer from 0 to ${limit - 1} (valueBits ${bits}), got ${String(value)}`);
        }
      }
      return values instanceof Uint8Array ? values : Uint8Array.from(values);
    });
  }

  /** false: definitely not added. true: maybe added. */
  mightContain(item) {
    const handle = this.#handle;
    const ptr = handle.unsealed || handle.ptr === 0 ? handle.queryPtr() : handle.ptr;
    return wasm.filterContains(ptr, item);
  }

  /**
   * mightContain for every item, in batches: a boolean[], or with `into` (a
   * Uint8Array) the answers as bytes there, 1 maybe and 0 definitely not,
   * returned as into.subarray(0, count) with no array made.
   */
  mightContainMany(items, into) {
    this.#handle.queryPtr();
    return into === undefined ? wasm.filterContainsMany(this.#handle, items) : wasm.filterContainsManyInto(this.#handle, items, into);
  }

  /** Add a key that is already encoded (e.g. a 20-byte SHA-1 for a 'sha1' filter), with its value as for add(). */
  addKey(key, value) {
    const ptr = this.#handle.ptr;
    if (ptr === 0) throw freedError();
    if (value === undefined && this.#valueBits() === 0) wasm.filterAddKey(ptr, key);
    else wasm.filterAddKeyValue(ptr, key, this.#checkValue(value, 'addKey'));
  }

  /** mightContain for a key that is already encoded. */
  mightContainKey(key) {
    return wasm.filterContainsKey(this.#handle.queryPtr(), key);
  }

  /** serialize() into a synchronous sink, without a copy out of wasm memory (see serializeTo). */
  [SERIALIZE_TO](write, overrides) {
    return wasm.filterSerializeTo(this.#handle.queryPtr(), write, overrides);
  }

  /** The expressions of a URL this url filter might hold, with their keys: one call into the core. */
  [MATCH_URL](url) {
    return wasm.filterMatchUrl(this.#handle.queryPtr(), url);
  }

  /** OR another filter into this one (same kind, m, k, seed, hash and key encoding). */
  merge(other) {
    if (!(other instanceof BloomFilter)) throw new TypeError('merge() needs another BloomFilter');
    const ptr = this.#handle.ptrOrThrow();
    wasm.filterMerge(ptr, other.#handle.ptrOrThrow());
    return this;
  }

  /** Remove every item (all bits and the count back to zero). */
  clear() {
    wasm.filterClear(this.#handle.ptrOrThrow());
    // A cleared static kind collects keys again.
    if (STATIC_KINDS.has(/** @type {number} */ (KINDS.get(this.kind)))) this.#handle.unsealed = true; // a live filter's kind is known
  }

  /**
   * What the filter knows about itself. `seed` is a Number when below 2^53
   * and a BigInt otherwise; `listId` is 32 hex digits. `overCapacity`: more
   * items were added than it was sized for. `overFilled`: its fill implies a
   * false-positive rate above twice the target (queries are degraded).
   */
  stats() {
    const info = wasm.filterInfo(this.#handle.queryPtr());
    const seed = info.seed;
    return {
      kind: kindName(info.kind),
      m: info.m,
      k: info.k,
      n: info.count,
      capacity: info.capacity,
      errorRate: info.errorRate,
      fillRatio: info.fillRatio,
      estimatedItems: info.estimatedItems,
      estimatedErrorRate: info.estimatedErrorRate,
      theoreticalErrorRate: info.theoreticalErrorRate,
      bitsSet: info.bitsSet,
      bytes: info.payloadBytes,
      serializedBytes: info.serializedBytes,
      seed,
      keyEncoding: keyEncodingName(info.keyEncoding),
      hashAlgorithm: hashName(info.hashAlgorithm),
      listId: hex(info.listId),
      generation: info.generation,
      overCapacity: info.count > info.capacity,
      valueBits: info.valueBits,
      // Seeds a static kind with retries (fuse4) tried before it built; 0 for the others.
      buildAttempts: info.buildAttempts,
      // A filter sized by sizeFor() is about half full at capacity (0.518 in the
      // seeds' example), so "fill > 0.5" would flag correct use. Flag instead a
      // fill whose implied error rate is past twice the target (~1.15x capacity).
      overFilled: info.estimatedErrorRate > 2 * info.errorRate,
    };
  }

  /** The .bgf file bytes (a copy). */
  serialize() {
    return wasm.filterSerialize(this.#handle.queryPtr());
  }

  /** Replace the metadata block (any JSON-serialisable value; null removes it). */
  setMetadata(value) {
    const ptr = this.#handle.ptrOrThrow();
    wasm.filterSetMetadata(ptr, value === null ? new Uint8Array(0) : encodeMetadata(value));
  }

  /** The metadata block parsed as JSON; its text when it is not JSON; null when absent. */
  get metadata() {
    const text = wasm.filterMetadataText(this.#handle.ptrOrThrow());
    if (text === null) return null;
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }

  /** Give the wasm memory back now. Idempotent; any later use throws E_FREED. */
  free() {
    const handle = this.#handle;
    if (handle.ptr !== 0) {
      registry?.unregister(handle);
      const ptr = handle.ptr;
      handle.ptr = 0;
      wasm.filterFree(ptr);
    }
  }
}

if (typeof Symbol.dispose === 'symbol') {
  Object.defineProperty(BloomFilter.prototype, Symbol.dispose, {
    value() {
      this.free();
    },
    writable: true,
    configurable: true,
  });
}

/**
 * The expressions of a URL (host already ASCII) that a url filter might hold,
 * most specific first, each with its SHA-256 key: [{ expression, digest }].
 * A BloomFilter answers in one call into the core (as does a wrapper whose
 * [CURRENT_FILTER]() returns one); any other object with mightContainKey() is
 * asked key by key.
 */
export function urlCandidates(filter, url) {
  // A wrapper that answers for a BloomFilter (openFilter's live filter) hands over the one in use.
  const target = typeof filter[CURRENT_FILTER] === 'function' ? filter[CURRENT_FILTER]() : filter;
  if (target instanceof BloomFilter) return target[MATCH_URL](url);
  const candidates = [];
  for (const expression of wasm.urlExpressions(url)) {
    const digest = wasm.sha256(expression);
    if (filter.mightContainKey(digest)) candidates.push({ expression, digest });
  }
  return candidates;
}

/**
 * The .bgf file of a filter handed to `write(view)` as a view of wasm memory,
 * to be consumed synchronously (the CLI's fs.writeSync): one serialized copy
 * in memory instead of two. `overrides` sets header fields by name and
 * restamps the checksum. Returns the file's length. Not part of the public API.
 */
export function serializeTo(filter, write, overrides) {
  return filter[SERIALIZE_TO](write, overrides);
}

/**
 * Wrap a filter pointer the core just produced (load.js).
 * @internal
 * @param {number} ptr
 * @returns {BloomFilter}
 */
export function wrapFilterPointer(ptr) {
  // The constructor is @private to the checker: this is the way in from outside the class.
  return new (/** @type {new (token: symbol, ptr: number) => BloomFilter} */ (/** @type {unknown} */ (BloomFilter)))(INTERNAL, ptr);
}
