// @ts-check
/**
 * store.js — the exact store (.bgs): the source of truth behind a filter's
 * "maybe". Sorted fixed-width records (hash + count) with a prefix index, so a
 * server answers a range query with one index lookup and one read, no
 * database. Node only (the reference server and the CLI use it); the byte
 * layout is specified in docs/FORMAT.md.
 */
import { createHash, randomBytes } from 'node:crypto';
import { open } from 'node:fs/promises';

import { BloomgateError } from './errors.js';

export const STORE_MAGIC = Uint8Array.of(0x89, 0x42, 0x47, 0x53, 0x0d, 0x0a, 0x1a, 0x0a); // \x89BGS\r\n\x1a\n
/** The version writers write; readers also accept version 1 (64-byte header, no list identity). */
export const STORE_VERSION = 2;
export const STORE_HEADER_SIZE = 128;
const V1_HEADER_SIZE = 64;
/** Record hash types: the hash bytes each record starts with. */
export const HASH_TYPES = { sha1: { id: 1, bytes: 20 }, sha256: { id: 2, bytes: 32 } };
const COUNT_BYTES = 4;
export const MAX_INDEX_BITS = 20;
const UNNAMED = '0'.repeat(32);

function hashTypeById(id) {
  return Object.entries(HASH_TYPES).find(([, t]) => t.id === id);
}

/** Enough index buckets for ~16 records each, at most 2^20 (8 MiB of index). */
export function indexBitsFor(count) {
  let bits = 0;
  while (bits < MAX_INDEX_BITS && count / 2 ** bits > 16) bits++;
  return bits;
}

export function bucketOf(hash, indexBits) {
  if (indexBits === 0) return 0;
  const top = ((hash[0] << 16) | (hash[1] << 8) | hash[2]) >>> 0; // first 24 bits
  return top >>> (24 - indexBits);
}

export function compareBytes(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}

/** A list id as 16 bytes: a 32-digit hex string (either case) or a 16-byte Uint8Array; all zero when absent. */
export function parseStoreListId(listId) {
  if (listId === undefined || listId === null) return new Uint8Array(16);
  if (typeof listId === 'string') {
    if (!/^[0-9a-fA-F]{32}$/.test(listId)) throw new RangeError('listId must be 32 hexadecimal digits (16 bytes)');
    return Uint8Array.from(Buffer.from(listId, 'hex'));
  }
  if (listId instanceof Uint8Array) {
    if (listId.length !== 16) throw new RangeError(`listId must be 16 bytes, got ${listId.length}`);
    return Uint8Array.from(listId);
  }
  throw new TypeError('listId must be a 16-byte Uint8Array or a 32-digit hex string');
}

function checkIdentity({ listId, generation = 0, minCount = 0 }) {
  const id = parseStoreListId(listId);
  const gen = typeof generation === 'bigint' ? Number(generation) : generation;
  if (!Number.isSafeInteger(gen) || gen < 0) throw new RangeError(`generation must be an integer in [0, 2^53 - 1], got ${generation}`);
  if (!Number.isInteger(minCount) || minCount < 0 || minCount > 0xffffffff) throw new RangeError(`minCount must be an integer in [0, 2^32 - 1], got ${minCount}`);
  return { listId: id, generation: gen, minCount };
}

/**
 * The fixed header of a version 2 store (checksum left zero), for a store of
 * `count` records. Shared by writeStore and the CLI's streaming writer.
 * @param {{ hashType: 'sha1'|'sha256', count: number, listId?: string|Uint8Array, generation?: number, minCount?: number }} options
 */
export function storeHeader({ hashType, count, listId, generation, minCount }) {
  const type = HASH_TYPES[hashType];
  if (!type) throw new TypeError(`hashType must be 'sha1' or 'sha256', got ${hashType}`);
  const identity = checkIdentity({ listId, generation, minCount });
  const indexBits = indexBitsFor(count);
  const recordSize = type.bytes + COUNT_BYTES;
  const recordsOffset = STORE_HEADER_SIZE + (2 ** indexBits + 1) * 8;
  const header = new Uint8Array(STORE_HEADER_SIZE);
  const view = new DataView(header.buffer);
  header.set(STORE_MAGIC, 0);
  view.setUint16(16, STORE_VERSION, true);
  view.setUint8(18, type.id);
  view.setUint8(19, indexBits);
  view.setUint32(20, recordSize, true);
  view.setBigUint64(24, BigInt(count), true);
  view.setBigUint64(32, BigInt(STORE_HEADER_SIZE), true);
  view.setBigUint64(40, BigInt(recordsOffset), true);
  header.set(identity.listId, 48);
  view.setBigUint64(64, BigInt(identity.generation), true);
  view.setUint32(72, identity.minCount, true);
  return { header, indexBits, recordSize, recordsOffset, hashBytes: type.bytes };
}

/**
 * Serialize records into .bgs bytes (format version 2). Duplicate hashes are
 * merged (largest count kept).
 * @param {Iterable<{ hash: Uint8Array, count: number }>} records
 * @param {{ hashType: 'sha1' | 'sha256', listId?: string | Uint8Array, generation?: number, minCount?: number }} options
 */
export function writeStore(records, { hashType, listId, generation, minCount } = /** @type {any} */ ({})) {
  const type = HASH_TYPES[hashType];
  if (!type) throw new TypeError(`writeStore: hashType must be 'sha1' or 'sha256', got ${hashType}`);
  checkIdentity({ listId, generation, minCount }); // fail before reading the records
  const list = [];
  for (const { hash, count } of records) {
    if (!(hash instanceof Uint8Array) || hash.length !== type.bytes) {
      throw new TypeError(`writeStore: every hash must be a ${type.bytes}-byte Uint8Array`);
    }
    if (!Number.isInteger(count) || count < 0 || count > 0xffffffff) throw new RangeError(`writeStore: count out of range: ${count}`);
    list.push({ hash, count });
  }
  list.sort((a, b) => compareBytes(a.hash, b.hash));
  const unique = [];
  for (const record of list) {
    const last = unique[unique.length - 1];
    if (last && compareBytes(last.hash, record.hash) === 0) last.count = Math.max(last.count, record.count);
    else unique.push({ ...record });
  }
  const { header, indexBits, recordSize, recordsOffset } = storeHeader({ hashType, count: unique.length, listId, generation, minCount });
  const buckets = 2 ** indexBits;
  const total = recordsOffset + unique.length * recordSize;
  const bytes = new Uint8Array(total);
  const view = new DataView(bytes.buffer);
  bytes.set(header, 0);
  // index[b] = number of records whose bucket is < b; index[buckets] = count.
  let r = 0;
  for (let b = 0; b <= buckets; b++) {
    while (r < unique.length && bucketOf(unique[r].hash, indexBits) < b) r++;
    view.setBigUint64(STORE_HEADER_SIZE + b * 8, BigInt(r), true);
  }
  unique.forEach((record, i) => {
    const at = recordsOffset + i * recordSize;
    bytes.set(record.hash, at);
    view.setUint32(at + type.bytes, record.count, false);
  });
  // Checksum: SHA-256 (first 8 bytes) of everything after the checksum field.
  bytes.set(createHash('sha256').update(bytes.subarray(16)).digest().subarray(0, 8), 8);
  return bytes;
}

function storeError(code, message) {
  return new BloomgateError(code, `exact store: ${message}`);
}

/**
 * Reads a .bgs file with positioned reads: the index stays in memory, records
 * are read per lookup, so stores larger than memory work.
 */
export class StoreReader {
  static async open(path) {
    const handle = await open(path, 'r');
    try {
      const { size } = await handle.stat();
      const reader = new StoreReader(handle, size);
      await reader.#validate();
      return reader;
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  constructor(handle, size) {
    this.handle = handle;
    this.size = size;
  }

  async #read(position, length) {
    const buffer = new Uint8Array(length);
    const { bytesRead } = await this.handle.read(buffer, 0, length, position);
    if (bytesRead !== length) throw storeError('E_TRUNCATED', 'file ended early');
    return buffer;
  }

  async #validate() {
    if (this.size < V1_HEADER_SIZE) throw storeError('E_TRUNCATED', `${this.size} bytes is shorter than the header`);
    const start = await this.#read(0, V1_HEADER_SIZE);
    if (compareBytes(start.subarray(0, 8), STORE_MAGIC) !== 0) throw storeError('E_MAGIC', 'not a .bgs file');
    const version = new DataView(start.buffer).getUint16(16, true);
    if (version !== 1 && version !== 2) throw storeError('E_VERSION', `unsupported version ${version}`);
    /** @type {number} */
    this.version = version;
    const headerSize = version === 1 ? V1_HEADER_SIZE : STORE_HEADER_SIZE;
    if (this.size < headerSize) throw storeError('E_TRUNCATED', `${this.size} bytes is shorter than the header`);
    const header = version === 1 ? start : await this.#read(0, headerSize);
    const view = new DataView(header.buffer);
    const type = hashTypeById(view.getUint8(18));
    if (!type) throw storeError('E_HEADER', `unknown hash type ${view.getUint8(18)}`);
    /** @type {string} */
    this.hashType = type[0];
    /** @type {number} */
    this.hashBytes = type[1].bytes;
    /** @type {number} */
    this.indexBits = view.getUint8(19);
    /** @type {number} */
    this.recordSize = view.getUint32(20, true);
    const count = view.getBigUint64(24, true);
    const indexOffset = view.getBigUint64(32, true);
    const recordsOffset = view.getBigUint64(40, true);
    if (this.indexBits > MAX_INDEX_BITS || this.recordSize !== this.hashBytes + COUNT_BYTES || indexOffset !== BigInt(headerSize)) {
      throw storeError('E_HEADER', 'inconsistent header');
    }
    const reservedFrom = version === 1 ? 48 : 76;
    for (let i = reservedFrom; i < headerSize; i++) if (header[i] !== 0) throw storeError('E_HEADER', 'reserved bytes are not zero');
    if (version === 1) {
      /** @type {string} */
      this.listId = UNNAMED;
      /** @type {number} */
      this.generation = 0;
      /** @type {number} */
      this.minCount = 0;
    } else {
      this.listId = Buffer.from(header.subarray(48, 64)).toString('hex');
      const generation = view.getBigUint64(64, true);
      if (generation > BigInt(Number.MAX_SAFE_INTEGER)) throw storeError('E_HEADER', `generation ${generation} is above 2^53 - 1`);
      this.generation = Number(generation);
      this.minCount = view.getUint32(72, true);
    }
    const buckets = 2 ** this.indexBits;
    if (recordsOffset !== indexOffset + BigInt((buckets + 1) * 8)) throw storeError('E_HEADER', 'records offset does not follow the index');
    const expected = recordsOffset + count * BigInt(this.recordSize);
    if (BigInt(this.size) < expected) throw storeError('E_TRUNCATED', `expected ${expected} bytes, found ${this.size}`);
    if (BigInt(this.size) > expected) throw storeError('E_TRAILING', `expected ${expected} bytes, found ${this.size}`);
    /** @type {number} */
    this.count = Number(count);
    /** @type {number} */
    this.recordsOffset = Number(recordsOffset);
    const index = await this.#read(headerSize, (buckets + 1) * 8);
    const iv = new DataView(index.buffer);
    /** @type {Float64Array} */
    this.index = new Float64Array(buckets + 1);
    /** @type {string | null} */
    let indexError = null;
    for (let b = 0; b <= buckets; b++) {
      this.index[b] = Number(iv.getBigUint64(b * 8, true));
      if (indexError === null && (this.index[b] > this.count || (b > 0 && this.index[b] < this.index[b - 1]))) indexError = 'index is not monotone';
    }
    if (indexError === null && (this.index[0] !== 0 || this.index[buckets] !== this.count)) indexError = 'index does not cover the records';
    // One pass over the records, in 4 MiB pieces: the checksum, and what the
    // checksum cannot vouch for (a store crafted with a valid one): hashes in
    // strictly ascending order and each in the bucket the index puts it in.
    // A checksum mismatch is reported first, then the index, then the records.
    const sha = createHash('sha256');
    sha.update(header.subarray(16));
    sha.update(index);
    const recordError = indexError === null ? this.#recordChecker() : null;
    const piece = Math.max(this.recordSize, Math.floor((1 << 22) / this.recordSize) * this.recordSize);
    for (let at = this.recordsOffset; at < this.size; at += piece) {
      const bytes = await this.#read(at, Math.min(piece, this.size - at));
      sha.update(bytes);
      recordError?.check(bytes);
    }
    if (compareBytes(sha.digest().subarray(0, 8), header.subarray(8, 16)) !== 0) throw storeError('E_CHECKSUM', 'checksum mismatch');
    if (indexError !== null) throw storeError('E_HEADER', indexError);
    if (recordError?.error) throw storeError(recordError.error.code, recordError.error.message);
  }

  // Checks records piece by piece, remembering the first fault: the previous
  // hash (order across pieces) and the current bucket's end. The first 32
  // bits decide order for nearly every pair; only equal ones compare further.
  #recordChecker() {
    const { recordSize, hashBytes, indexBits, index } = this;
    const previous = new Uint8Array(hashBytes);
    const shift = 32 - indexBits;
    let i = 0; // records seen
    let bucket = 0;
    let previousTop = 0;
    const fail = (code, message) => {
      state.error = { code, message };
    };
    const state = {
      /** @type {{ code: string, message: string } | null} */
      error: null,
      check: (bytes) => {
        if (state.error) return;
        for (let at = 0; at < bytes.length; at += recordSize, i++) {
          while (index[bucket + 1] <= i) bucket++; // past this bucket's records (and empty ones)
          const top = ((bytes[at] << 24) | (bytes[at + 1] << 16) | (bytes[at + 2] << 8) | bytes[at + 3]) >>> 0;
          if (i > 0 && top <= previousTop) {
            let order = top < previousTop ? -1 : 0;
            if (order === 0) {
              const before = at >= recordSize ? bytes.subarray(at - recordSize, at - recordSize + hashBytes) : previous;
              for (let k = 4; k < hashBytes; k++) {
                const d = bytes[at + k] - before[k];
                if (d !== 0) {
                  order = d;
                  break;
                }
              }
            }
            if (order <= 0) {
              fail('E_ORDER', `record ${i} ${order === 0 ? 'repeats the hash before it' : 'is below the one before it'} (records must be sorted, without duplicates)`);
              return;
            }
          }
          if ((indexBits === 0 ? 0 : top >>> shift) !== bucket) {
            fail('E_INDEX', `record ${i} is not in index bucket ${bucket}, where the index puts it`);
            return;
          }
          previousTop = top;
        }
        if (bytes.length >= recordSize) previous.set(bytes.subarray(bytes.length - recordSize, bytes.length - recordSize + hashBytes));
      },
    };
    return state;
  }

  /**
   * Every record whose hash starts with `prefix` (bytes; the last byte may be
   * partial when `prefixBits` is not a multiple of 8).
   * @returns {Promise<Array<{ hash: Uint8Array, count: number }>>}
   */
  async lookup(prefix, prefixBits) {
    if (prefixBits < this.indexBits) throw new RangeError(`prefix of ${prefixBits} bits is shorter than the index (${this.indexBits})`);
    const padded = new Uint8Array(3);
    padded.set(prefix.subarray(0, 3));
    const bucket = bucketOf(padded, this.indexBits);
    const first = this.index[bucket];
    const n = this.index[bucket + 1] - first;
    if (n === 0) return [];
    const bytes = await this.#read(this.recordsOffset + first * this.recordSize, n * this.recordSize);
    const view = new DataView(bytes.buffer);
    const out = [];
    for (let i = 0; i < n; i++) {
      const hash = bytes.subarray(i * this.recordSize, i * this.recordSize + this.hashBytes);
      if (matchesPrefix(hash, prefix, prefixBits)) out.push({ hash, count: view.getUint32(i * this.recordSize + this.hashBytes, false) });
    }
    return out;
  }

  /** Every record in order (export-ranges). */
  async *records(batch = 65536) {
    for (let start = 0; start < this.count; start += batch) {
      const n = Math.min(batch, this.count - start);
      const bytes = await this.#read(this.recordsOffset + start * this.recordSize, n * this.recordSize);
      const view = new DataView(bytes.buffer);
      for (let i = 0; i < n; i++) {
        yield { hash: bytes.subarray(i * this.recordSize, i * this.recordSize + this.hashBytes), count: view.getUint32(i * this.recordSize + this.hashBytes, false) };
      }
    }
  }

  close() {
    return this.handle.close();
  }
}

function matchesPrefix(hash, prefix, bits) {
  const whole = bits >>> 3;
  for (let i = 0; i < whole; i++) if (hash[i] !== prefix[i]) return false;
  const rest = bits & 7;
  if (rest === 0) return true;
  const mask = (0xff << (8 - rest)) & 0xff;
  return (hash[whole] & mask) === (prefix[whole] & mask);
}

/** Padded range replies hold between these many rows, as the public service's do. */
const PADDED_ROWS = [800, 1000];

/**
 * The body of a range reply (`GET /range/{5 hex}`, and the files export-ranges
 * writes): `SUFFIX:COUNT` per record, CRLF-separated; with `pad`, random
 * count-0 rows up to 800-1000 lines, sorted so they cannot be told apart.
 * `records` come in hash order (a store lookup returns them so).
 */
export function rangeReply(records, pad) {
  return /** @type {Latin1Buffer} */ (rangeReplyBytes(records, pad)).latin1Slice();
}

/**
 * Node's Buffer has latin1Slice() and latin1Write(), the fast paths under toString('latin1') and
 * write(text, 'latin1'); @types/node does not declare them.
 * @typedef {Buffer & { latin1Slice(start?: number, end?: number): string,
 *   latin1Write(text: string, offset?: number, length?: number): number }} Latin1Buffer
 */

const MAX_PAD_ROWS = 1024; // the row index packed under each sort key
const HEX_DIGITS = Buffer.from('0123456789ABCDEF', 'latin1');
const SUFFIX_DIGITS = 35; // a SHA-1 in hex less its 5-digit prefix
const PAD_BYTES = 18; // random bytes drawn a padding row: 36 hex digits, 35 used

// The first 40 bits of a row's suffix (hex digits 6..15 of the hash) as a number, for ordering.
function suffixKey(hash) {
  return (hash[2] & 0x0f) * 2 ** 36 + hash[3] * 2 ** 28 + hash[4] * 2 ** 20 + hash[5] * 2 ** 12 + hash[6] * 16 + (hash[7] >> 4);
}

// Upper-case hex digits of a byte's high and low nibble.
const HEX_HIGH = new Uint8Array(256);
const HEX_LOW = new Uint8Array(256);
for (let b = 0; b < 256; b++) {
  HEX_HIGH[b] = HEX_DIGITS[b >> 4];
  HEX_LOW[b] = HEX_DIGITS[b & 0x0f];
}

// A record's suffix: the hash's hex digits 6..40 (the low nibble of byte 2, then bytes 3..19).
function writeRecordSuffix(out, at, hash) {
  out[at++] = HEX_LOW[hash[2]];
  for (let k = 3; k < 20; k++) {
    const b = hash[k];
    out[at++] = HEX_HIGH[b];
    out[at++] = HEX_LOW[b];
  }
  return at;
}

// A padding row's suffix: 35 digits from its 18 random bytes at `base`.
function writeNoiseSuffix(out, at, noise, base) {
  for (let k = base; k < base + 17; k++) {
    const b = noise[k];
    out[at++] = HEX_HIGH[b];
    out[at++] = HEX_LOW[b];
  }
  out[at++] = HEX_HIGH[noise[base + 17]];
  return at;
}

/**
 * rangeReply as bytes, written in place: the padded reply is ~900 rows, and
 * building it from strings (hex, slices, a merge, a join) cost ~330 µs of CPU
 * a reply here against ~11 µs unpadded. Padding rows are drawn as bytes,
 * ordered by their first 40 bits with the row index packed below (40 + 10
 * bits, exact in a double), merged with the records by the same key and
 * written digit by digit into one buffer. `random(n)` draws n random bytes
 * (tests pass their own to reach the rare orderings).
 */
export function rangeReplyBytes(records, pad, random = randomBytes) {
  const padCount = pad ? Math.max(0, PADDED_ROWS[0] + (random(2).readUInt16BE() % (PADDED_ROWS[1] - PADDED_ROWS[0] + 1)) - records.length) : 0;
  if (padCount > MAX_PAD_ROWS) throw new RangeError(`at most ${MAX_PAD_ROWS} padding rows`);
  const noise = padCount > 0 ? random(PAD_BYTES * padCount) : null;
  const order = new Float64Array(padCount);
  for (let i = 0; i < padCount; i++) order[i] = /** @type {Buffer} */ (noise).readUIntBE(PAD_BYTES * i, 5) * MAX_PAD_ROWS + i;
  order.sort();
  const recordKeys = records.map(({ hash }) => suffixKey(hash));
  // Equal 40-bit keys (about once in 10^6 replies) need the whole suffix to order: the string path does that.
  for (let j = 1; j < padCount; j++) if (order[j] - order[j - 1] < MAX_PAD_ROWS) return Buffer.from(slowPaddedReply(records, noise, padCount), 'latin1');
  const counts = records.map(({ count }) => String(count));
  let size = padCount * (SUFFIX_DIGITS + 4);
  for (const count of counts) size += SUFFIX_DIGITS + 3 + count.length;
  const out = /** @type {Latin1Buffer} */ (Buffer.allocUnsafe(size));
  let at = 0;
  let r = 0;
  let p = 0;
  const rows = records.length + padCount;
  for (let row = 0; row < rows; row++) {
    if (row > 0) {
      out[at++] = 13;
      out[at++] = 10;
    }
    const padKey = p < padCount ? Math.floor(order[p] / MAX_PAD_ROWS) : Infinity;
    if (r < records.length && (recordKeys[r] < padKey || (recordKeys[r] === padKey && !padFirst(records[r].hash, noise, order[p] % MAX_PAD_ROWS)))) {
      at = writeRecordSuffix(out, at, records[r].hash);
      out[at++] = 58; // ':'
      at += out.latin1Write(counts[r], at);
      r++;
    } else {
      const i = order[p] % MAX_PAD_ROWS;
      at = writeNoiseSuffix(out, at, noise, PAD_BYTES * i);
      out[at++] = 58;
      out[at++] = 48; // '0'
      p++;
    }
  }
  return out.subarray(0, at);
}

// A record and a padding row with equal first 40 bits: is the padding row's whole suffix the smaller?
function padFirst(hash, noise, i) {
  const a = Buffer.allocUnsafe(SUFFIX_DIGITS);
  const b = Buffer.allocUnsafe(SUFFIX_DIGITS);
  writeRecordSuffix(a, 0, hash);
  writeNoiseSuffix(b, 0, noise, PAD_BYTES * i);
  return Buffer.compare(b, a) < 0;
}

// The same reply from strings, sorted whole: for the rare padding draws whose first 40 bits tie.
function slowPaddedReply(records, noise, padCount) {
  const text = (write) => {
    const digits = /** @type {Latin1Buffer} */ (Buffer.allocUnsafe(SUFFIX_DIGITS));
    write(digits);
    return digits.latin1Slice();
  };
  const rows = records.map(({ hash, count }) => `${text((d) => writeRecordSuffix(d, 0, hash))}:${count}`);
  for (let i = 0; i < padCount; i++) rows.push(`${text((d) => writeNoiseSuffix(d, 0, noise, PAD_BYTES * i))}:0`);
  rows.sort();
  return rows.join('\r\n');
}

/** '21BD1' -> { prefix: bytes, bits: 20 }; null when not hex of the given length. */
export function parseHexPrefix(text, hexDigits) {
  if (typeof text !== 'string' || text.length !== hexDigits || !/^[0-9A-Fa-f]+$/.test(text)) return null;
  const padded = text.length % 2 ? `${text}0` : text;
  const prefix = new Uint8Array(padded.length / 2);
  for (let i = 0; i < prefix.length; i++) prefix[i] = parseInt(padded.slice(2 * i, 2 * i + 2), 16);
  return { prefix, bits: hexDigits * 4 };
}
