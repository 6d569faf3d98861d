// @ts-check
/**
 * store.js — the exact store (.bgs): the source of truth behind a filter's
 * "maybe". Sorted fixed-width records (hash + count) with a prefix index, so a
 * server answers a range query with one index lookup and one read, no
 * database. Node only (the reference server and the CLI use it); the byte
 * layout is specified in docs/FORMAT.md.
 */
import { createHash, randomBytes, randomFillSync } from 'node:crypto';
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
/** A labelled store (threat types, docs/FORMAT.md): at most 256 labels of at most 64 bytes, each ended by LF. */
export const MAX_STORE_LABELS = 256;
export const MAX_LABELS_BYTES = MAX_STORE_LABELS * 65;
const LABELS_AT = 76; // u32: the label table's length in bytes (0: no labels; the count field is a count)

/**
 * The label table of a labelled store: each label's UTF-8 bytes and an LF. Throws RangeError on
 * more than 256 labels, an empty or repeated label, one over 64 bytes or with a control character.
 * @param {readonly string[] | null | undefined} labels
 */
export function labelTable(labels) {
  if (labels === undefined || labels === null) return new Uint8Array(0);
  if (!Array.isArray(labels) || labels.length === 0 || labels.length > MAX_STORE_LABELS) throw new RangeError(`labels must be 1 to ${MAX_STORE_LABELS} strings`);
  if (new Set(labels).size !== labels.length) throw new RangeError('labels must be distinct');
  const parts = labels.map((label) => {
    // eslint-disable-next-line no-control-regex -- control characters are what is refused
    if (typeof label !== 'string' || label === '' || /[\u0000-\u001f\u007f]/.test(label)) throw new RangeError(`label ${JSON.stringify(label)} must be a non-empty string without control characters`);
    const bytes = Buffer.from(label, 'utf8');
    if (bytes.length > 64) throw new RangeError(`label ${JSON.stringify(label)} is longer than 64 bytes`);
    return bytes;
  });
  return Uint8Array.from(Buffer.concat(parts.flatMap((bytes) => [bytes, Buffer.of(10)])));
}

/** A label table's labels; null when malformed. */
function parseLabelTable(bytes) {
  if (bytes.length === 0 || bytes[bytes.length - 1] !== 10) return null;
  let labels;
  try {
    labels = new TextDecoder('utf-8', { fatal: true }).decode(bytes).slice(0, -1).split('\n');
    labelTable(labels);
  } catch {
    return null;
  }
  return labels;
}

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
 * @param {{ hashType: 'sha1'|'sha256', count: number, listId?: string|Uint8Array, generation?: number, minCount?: number,
 *   labels?: readonly string[] | null }} options labels: a labelled store's threat labels (its table follows the index)
 */
export function storeHeader({ hashType, count, listId, generation, minCount, labels }) {
  const type = HASH_TYPES[hashType];
  if (!type) throw new TypeError(`hashType must be 'sha1' or 'sha256', got ${hashType}`);
  const identity = checkIdentity({ listId, generation, minCount });
  const indexBits = indexBitsFor(count);
  const recordSize = type.bytes + COUNT_BYTES;
  const table = labelTable(labels);
  const recordsOffset = STORE_HEADER_SIZE + (2 ** indexBits + 1) * 8 + table.length;
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
  view.setUint32(LABELS_AT, table.length, true);
  return { header, indexBits, recordSize, recordsOffset, hashBytes: type.bytes, labelTable: table };
}

/**
 * Serialize records into .bgs bytes (format version 2). Duplicate hashes are
 * merged (largest count kept). With `labels` (threat types) each record's count is its value:
 * the index of its label.
 * @param {Iterable<{ hash: Uint8Array, count: number }>} records
 * @param {{ hashType: 'sha1' | 'sha256', listId?: string | Uint8Array, generation?: number, minCount?: number, labels?: string[] }} options
 */
export function writeStore(records, { hashType, listId, generation, minCount, labels } = /** @type {any} */ ({})) {
  const type = HASH_TYPES[hashType];
  if (!type) throw new TypeError(`writeStore: hashType must be 'sha1' or 'sha256', got ${hashType}`);
  checkIdentity({ listId, generation, minCount }); // fail before reading the records
  const list = [];
  for (const { hash, count } of records) {
    if (!(hash instanceof Uint8Array) || hash.length !== type.bytes) {
      throw new TypeError(`writeStore: every hash must be a ${type.bytes}-byte Uint8Array`);
    }
    if (!Number.isInteger(count) || count < 0 || count > 0xffffffff) throw new RangeError(`writeStore: count out of range: ${count}`);
    if (labels && count >= labels.length) throw new RangeError(`writeStore: value ${count} names no label (${labels.length} labels)`);
    list.push({ hash, count });
  }
  list.sort((a, b) => compareBytes(a.hash, b.hash));
  const unique = [];
  for (const record of list) {
    const last = unique[unique.length - 1];
    if (last && compareBytes(last.hash, record.hash) === 0) last.count = Math.max(last.count, record.count);
    else unique.push({ ...record });
  }
  const { header, indexBits, recordSize, recordsOffset, labelTable: table } = storeHeader({ hashType, count: unique.length, listId, generation, minCount, labels });
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
  bytes.set(table, recordsOffset - table.length);
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
    const reservedFrom = version === 1 ? 48 : LABELS_AT + 4;
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
    const labelBytes = version === 1 ? 0 : view.getUint32(LABELS_AT, true);
    if (labelBytes > MAX_LABELS_BYTES) throw storeError('E_HEADER', `a label table of ${labelBytes} bytes is over ${MAX_LABELS_BYTES}`);
    const buckets = 2 ** this.indexBits;
    if (recordsOffset !== indexOffset + BigInt((buckets + 1) * 8 + labelBytes)) throw storeError('E_HEADER', 'records offset does not follow the index and label table');
    const expected = recordsOffset + count * BigInt(this.recordSize);
    if (BigInt(this.size) < expected) throw storeError('E_TRUNCATED', `expected ${expected} bytes, found ${this.size}`);
    if (BigInt(this.size) > expected) throw storeError('E_TRAILING', `expected ${expected} bytes, found ${this.size}`);
    /** @type {number} */
    this.count = Number(count);
    /** @type {number} */
    this.recordsOffset = Number(recordsOffset);
    const index = await this.#read(headerSize, (buckets + 1) * 8);
    const table = labelBytes > 0 ? await this.#read(headerSize + (buckets + 1) * 8, labelBytes) : null;
    /** @type {string[] | null} the threat labels of a labelled store (each record's count is its label's index) */
    this.labels = table ? parseLabelTable(table) : null;
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
    if (table) sha.update(table);
    const recordError = indexError === null ? this.#recordChecker() : null;
    const piece = Math.max(this.recordSize, Math.floor((1 << 22) / this.recordSize) * this.recordSize);
    for (let at = this.recordsOffset; at < this.size; at += piece) {
      const bytes = await this.#read(at, Math.min(piece, this.size - at));
      sha.update(bytes);
      recordError?.check(bytes);
    }
    if (compareBytes(sha.digest().subarray(0, 8), header.subarray(8, 16)) !== 0) throw storeError('E_CHECKSUM', 'checksum mismatch');
    if (indexError !== null) throw storeError('E_HEADER', indexError);
    if (table && this.labels === null) throw storeError('E_HEADER', 'the label table is not 1 to 256 distinct labels of 1 to 64 bytes, each ended by LF');
    if (recordError?.error) throw storeError(recordError.error.code, recordError.error.message);
  }

  // Checks records piece by piece, remembering the first fault: the previous
  // hash (order across pieces) and the current bucket's end. The first 32
  // bits decide order for nearly every pair; only equal ones compare further.
  #recordChecker() {
    const { recordSize, hashBytes, indexBits, index } = this;
    const labels = this.labels?.length ?? 0;
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
          if (labels > 0) {
            const value = ((bytes[at + hashBytes] << 24) | (bytes[at + hashBytes + 1] << 16) | (bytes[at + hashBytes + 2] << 8) | bytes[at + hashBytes + 3]) >>> 0;
            if (value >= labels) {
              fail('E_VALUE', `record ${i} has value ${value}, past the ${labels} labels`);
              return;
            }
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
    const padded = new Uint8Array(3);
    padded.set(prefix.subarray(0, 3));
    const bucket = bucketOf(padded, this.indexBits);
    // A prefix shorter than the index spans several buckets (proofs read a whole 16-bit block).
    const span = prefixBits < this.indexBits ? 2 ** (this.indexBits - prefixBits) : 1;
    const firstBucket = span > 1 ? bucket - (bucket % span) : bucket;
    const first = this.index[firstBucket];
    const n = this.index[firstBucket + span] - first;
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

const SUFFIX_DIGITS = 35; // a SHA-1 in hex less its 5-digit prefix
const PAD_BYTES = 18; // random bytes drawn a padding row: 36 hex digits, the first 35 used
const PAD_ROW_BYTES = SUFFIX_DIGITS + 4; // SUFFIX ':0' CRLF
const RECORD_ROW_BYTES = SUFFIX_DIGITS + 13; // SUFFIX ':' up to 10 count digits CRLF

// Upper-case hex digits of a byte's high and low nibble, and both as one 16-bit store in the
// platform's byte order (a Uint16Array over the reply's memory writes two digits at a time).
const HEX_DIGITS = Buffer.from('0123456789ABCDEF', 'latin1');
const HEX_HIGH = new Uint8Array(256);
const HEX_LOW = new Uint8Array(256);
const HEX_PAIR = new Uint16Array(256);
const HEX_PAIR_BYTES = new Uint8Array(HEX_PAIR.buffer);
for (let b = 0; b < 256; b++) {
  HEX_HIGH[b] = HEX_DIGITS[b >> 4];
  HEX_LOW[b] = HEX_DIGITS[b & 0x0f];
  HEX_PAIR_BYTES[2 * b] = HEX_HIGH[b];
  HEX_PAIR_BYTES[2 * b + 1] = HEX_LOW[b];
}
const pair = (first, second) => new Uint16Array(Uint8Array.of(first, second).buffer)[0];
const DIGIT_COLON = Uint16Array.from(HEX_DIGITS, (digit) => pair(digit, 58)); // a nibble's digit, ':'
const ZERO_CR = pair(48, 13);
const COLON_ZERO = pair(58, 48);
const CR_LF = pair(13, 10);

/**
 * Random bytes for padding from node:crypto, drawn 64 KiB at a time: a reply takes ~16 KB, and
 * each randomBytes call costs several µs whatever its size. Every byte is handed out once.
 */
const POOL_BYTES = 64 * 1024;
const pool = Buffer.allocUnsafeSlow(POOL_BYTES);
let poolAt = POOL_BYTES;
function pooledRandomBytes(n) {
  if (n > POOL_BYTES) return randomBytes(n);
  if (poolAt + n > POOL_BYTES) {
    randomFillSync(pool);
    poolAt = 0;
  }
  poolAt += n;
  return pool.subarray(poolAt - n, poolAt);
}

// Scratch for ordering the padding (a reply is built synchronously: one at a time). Each row is
// one 32-bit word: its first 22 bits (5.5 digits) above its index (10 bits, < 1,024 rows).
const SORT_BITS = 10; // padding rows are first placed by their first 10 bits
const INDEX_BITS = 10;
const INDEX_MASK = (1 << INDEX_BITS) - 1;
const bucketStarts = new Uint16Array((1 << SORT_BITS) + 1);
const padOrder = new Uint32Array(PADDED_ROWS[1]);

// Total rows of a padded reply, uniform in PADDED_ROWS (16-bit draws past the last whole multiple
// of the span are drawn again).
function paddedRows(random) {
  const span = PADDED_ROWS[1] - PADDED_ROWS[0] + 1;
  const limit = 65536 - (65536 % span);
  for (;;) {
    const bytes = random(2);
    const value = (bytes[0] << 8) | bytes[1];
    if (value < limit) return PADDED_ROWS[0] + (value % span);
  }
}

// Padding rows `i` and `j` whose first 22 bits are equal: is i's 35-digit suffix below j's?
function padBelow(noise, i, j) {
  const a = i * PAD_BYTES;
  const b = j * PAD_BYTES;
  for (let k = 2; k < PAD_BYTES - 1; k++) {
    if (noise[a + k] !== noise[b + k]) return noise[a + k] < noise[b + k];
  }
  return noise[a + PAD_BYTES - 1] >> 4 < noise[b + PAD_BYTES - 1] >> 4;
}

// A record's first 22 suffix bits (from hex digit 6 of its hash on), as a padding row's word holds its own.
function recordKeyOf(hash) {
  return (((hash[2] & 0x0f) << 18) | (hash[3] << 10) | (hash[4] << 2) | (hash[5] >> 6)) >>> 0;
}

// Does the padding row at `base` go before the record (hex digits 6..40 of its hash)? Digit by
// digit, exact; on an equal suffix (never drawn in practice) it does, as ':0' sorts first.
function padBelowRecord(noise, base, hash) {
  for (let k = 0; k < SUFFIX_DIGITS; k++) {
    const p = k & 1 ? noise[base + (k >> 1)] & 0x0f : noise[base + (k >> 1)] >> 4;
    const j = k + 5;
    const h = j & 1 ? hash[j >> 1] & 0x0f : hash[j >> 1] >> 4;
    if (p !== h) return p < h;
  }
  return true;
}

// The padding rows in suffix order into padOrder: a counting sort on the first SORT_BITS bits,
// then an insertion sort, which only moves rows within a bucket (~n^2 / 2^(SORT_BITS+2) moves):
// by their first 22 bits, and on a tie (~n^2 / 2^23 pairs a reply) by the whole suffix.
function sortPadding(noise, n) {
  const shift = 32 - SORT_BITS;
  bucketStarts.fill(0);
  for (let i = 0, base = 0; i < n; i++, base += PAD_BYTES) bucketStarts[(noise[base] << 2 | noise[base + 1] >> 6) + 1]++;
  for (let b = 1; b < bucketStarts.length; b++) bucketStarts[b] += bucketStarts[b - 1];
  for (let i = 0, base = 0; i < n; i++, base += PAD_BYTES) {
    const word = (((noise[base] << 24) | (noise[base + 1] << 16) | (noise[base + 2] << 8) | noise[base + 3]) & ~INDEX_MASK | i) >>> 0;
    padOrder[bucketStarts[word >>> shift]++] = word;
  }
  for (let j = 1; j < n; j++) {
    const word = padOrder[j];
    const key = word >>> INDEX_BITS;
    let k = j - 1;
    for (; k >= 0; k--) {
      const other = padOrder[k];
      const otherKey = other >>> INDEX_BITS;
      if (otherKey < key || (otherKey === key && !padBelow(noise, word & INDEX_MASK, other & INDEX_MASK))) break;
      padOrder[k + 1] = other;
    }
    padOrder[k + 1] = word;
  }
}

// A padding row `SUFFIX:0` CRLF at absolute byte `at` of the buffer: 35 digits from its random
// bytes at `b`, two digits a 16-bit store: at an even byte each random byte is a pair of digits,
// at an odd one the first digit stands alone and each pair is shifted a nibble. Unrolled: the
// loops ran 1.5-2x slower.
function writePadRow(bytes, words, at, noise, b) {
  const P = HEX_PAIR;
  if ((at & 1) === 0) {
    const w = at >> 1;
    words[w] = P[noise[b]];
    words[w + 1] = P[noise[b + 1]];
    words[w + 2] = P[noise[b + 2]];
    words[w + 3] = P[noise[b + 3]];
    words[w + 4] = P[noise[b + 4]];
    words[w + 5] = P[noise[b + 5]];
    words[w + 6] = P[noise[b + 6]];
    words[w + 7] = P[noise[b + 7]];
    words[w + 8] = P[noise[b + 8]];
    words[w + 9] = P[noise[b + 9]];
    words[w + 10] = P[noise[b + 10]];
    words[w + 11] = P[noise[b + 11]];
    words[w + 12] = P[noise[b + 12]];
    words[w + 13] = P[noise[b + 13]];
    words[w + 14] = P[noise[b + 14]];
    words[w + 15] = P[noise[b + 15]];
    words[w + 16] = P[noise[b + 16]];
    words[w + 17] = DIGIT_COLON[noise[b + 17] >> 4];
    words[w + 18] = ZERO_CR;
    bytes[at + PAD_ROW_BYTES - 1] = 10;
  } else {
    const w = (at + 1) >> 1;
    const n0 = noise[b];
    const n1 = noise[b + 1];
    const n2 = noise[b + 2];
    const n3 = noise[b + 3];
    const n4 = noise[b + 4];
    const n5 = noise[b + 5];
    const n6 = noise[b + 6];
    const n7 = noise[b + 7];
    const n8 = noise[b + 8];
    bytes[at] = HEX_HIGH[n0];
    words[w] = P[((n0 << 4) | (n1 >> 4)) & 0xff];
    words[w + 1] = P[((n1 << 4) | (n2 >> 4)) & 0xff];
    words[w + 2] = P[((n2 << 4) | (n3 >> 4)) & 0xff];
    words[w + 3] = P[((n3 << 4) | (n4 >> 4)) & 0xff];
    words[w + 4] = P[((n4 << 4) | (n5 >> 4)) & 0xff];
    words[w + 5] = P[((n5 << 4) | (n6 >> 4)) & 0xff];
    words[w + 6] = P[((n6 << 4) | (n7 >> 4)) & 0xff];
    words[w + 7] = P[((n7 << 4) | (n8 >> 4)) & 0xff];
    const m0 = noise[b + 9];
    const m1 = noise[b + 10];
    const m2 = noise[b + 11];
    const m3 = noise[b + 12];
    const m4 = noise[b + 13];
    const m5 = noise[b + 14];
    const m6 = noise[b + 15];
    const m7 = noise[b + 16];
    const m8 = noise[b + 17];
    words[w + 8] = P[((n8 << 4) | (m0 >> 4)) & 0xff];
    words[w + 9] = P[((m0 << 4) | (m1 >> 4)) & 0xff];
    words[w + 10] = P[((m1 << 4) | (m2 >> 4)) & 0xff];
    words[w + 11] = P[((m2 << 4) | (m3 >> 4)) & 0xff];
    words[w + 12] = P[((m3 << 4) | (m4 >> 4)) & 0xff];
    words[w + 13] = P[((m4 << 4) | (m5 >> 4)) & 0xff];
    words[w + 14] = P[((m5 << 4) | (m6 >> 4)) & 0xff];
    words[w + 15] = P[((m6 << 4) | (m7 >> 4)) & 0xff];
    words[w + 16] = P[((m7 << 4) | (m8 >> 4)) & 0xff];
    words[w + 17] = COLON_ZERO;
    words[w + 18] = CR_LF;
  }
  return at + PAD_ROW_BYTES;
}

// A record's row `SUFFIX:COUNT` CRLF at absolute byte `at`: the hash's hex digits 6..40 (the low
// nibble of byte 2, then bytes 3..19), the count in decimal.
function writeRecordRow(bytes, words, at, hash, count) {
  if ((at & 1) === 0) {
    let w = at >> 1;
    for (let k = 2; k < 19; k++) words[w++] = HEX_PAIR[((hash[k] << 4) | (hash[k + 1] >> 4)) & 0xff];
    bytes[at + SUFFIX_DIGITS - 1] = HEX_LOW[hash[19]];
  } else {
    bytes[at] = HEX_LOW[hash[2]];
    let w = (at + 1) >> 1;
    for (let k = 3; k < 20; k++) words[w++] = HEX_PAIR[hash[k]];
  }
  at += SUFFIX_DIGITS;
  bytes[at++] = 58; // ':'
  let digits = 1;
  for (let rest = count; rest >= 10; rest = Math.floor(rest / 10)) digits++;
  for (let i = at + digits - 1, rest = count; i >= at; i--, rest = Math.floor(rest / 10)) bytes[i] = 48 + (rest % 10);
  at += digits;
  bytes[at++] = 13;
  bytes[at++] = 10;
  return at;
}

/**
 * rangeReply as bytes, written in place: the padded reply is ~900 rows, ~35 KB. Padding rows
 * are 18 random bytes each (35 hex digits used), ordered by a counting sort on their first 10
 * bits and an insertion sort on their first 22 bits, then on a tie the whole suffix, merged with
 * the records likewise (so no tie is ever ordered by part of a row: the reply is exactly a plain
 * sort of its lines), and written two hex digits a 16-bit store into one buffer. ~45 µs of CPU a
 * padded reply here (2 vCPU VM), against ~190 µs when the padding was sorted as doubles and
 * written a digit at a time, and ~330 µs built from strings. `random(n)` draws n random bytes
 * (default: node:crypto, pooled; tests pass their own to reach the rare orderings): 2 at a time
 * for the row total, then 18 per padding row.
 */
export function rangeReplyBytes(records, pad, random = pooledRandomBytes) {
  const padCount = pad ? Math.max(0, paddedRows(random) - records.length) : 0;
  const noise = padCount > 0 ? random(PAD_BYTES * padCount) : null;
  if (noise) sortPadding(noise, padCount);
  const size = padCount * PAD_ROW_BYTES + records.length * RECORD_ROW_BYTES;
  // Written at absolute offsets in out.buffer, so a 16-bit store is aligned whatever out.byteOffset.
  const out = Buffer.allocUnsafe(size);
  const start = out.byteOffset;
  const bytes = new Uint8Array(out.buffer);
  const words = new Uint16Array(out.buffer, 0, out.buffer.byteLength >> 1);
  let at = start;
  let r = 0;
  let recordKey = records.length > 0 ? recordKeyOf(records[0].hash) : 0;
  for (let p = 0; p < padCount; p++) {
    const word = padOrder[p];
    const padKey = word >>> INDEX_BITS;
    const base = (word & INDEX_MASK) * PAD_BYTES;
    const n = /** @type {Buffer} */ (noise);
    while (r < records.length && (recordKey < padKey || (recordKey === padKey && !padBelowRecord(n, base, records[r].hash)))) {
      at = writeRecordRow(bytes, words, at, records[r].hash, records[r].count);
      r++;
      if (r < records.length) recordKey = recordKeyOf(records[r].hash);
    }
    at = writePadRow(bytes, words, at, n, base);
  }
  for (; r < records.length; r++) at = writeRecordRow(bytes, words, at, records[r].hash, records[r].count);
  return out.subarray(0, Math.max(0, at - start - 2)); // no CRLF after the last row
}

/** '21BD1' -> { prefix: bytes, bits: 20 }; null when not hex of the given length. */
export function parseHexPrefix(text, hexDigits) {
  if (typeof text !== 'string' || text.length !== hexDigits || !/^[0-9A-Fa-f]+$/.test(text)) return null;
  const padded = text.length % 2 ? `${text}0` : text;
  const prefix = new Uint8Array(padded.length / 2);
  for (let i = 0; i < prefix.length; i++) prefix[i] = parseInt(padded.slice(2 * i, 2 * i + 2), 16);
  return { prefix, bits: hexDigits * 4 };
}
