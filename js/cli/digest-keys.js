// @ts-check
// Filters fed with keys that are already digests (hibp: the 20 decoded bytes
// of each SHA-1), in packed batches: one boundary crossing per 4,096 keys
// instead of one per key.
//
// BloomFilter.addAll({ bytes, offsets }) applies the filter's key encoding to
// each item, and a 'sha1' filter's encoding is SHA-1 of the item: a digest
// would be hashed again. Under 'utf8' an item's bytes are its key, exactly
// what addKey() adds (src/filter.c: item_key; both then hash the key bytes
// with the filter's seed), and sizing is the same for both encodings (only
// 'url' sizes differently). So the filter is built under 'utf8' and the file
// gets the real encoding: the header's key_encoding byte is set and the
// checksum recomputed, as writeFuseFile (fuse-shards.js) sets a header's
// fields. The bytes are those of the same filter built with addKey() under
// 'sha1' (tests/slow/native-build.test.mjs and build-speed.test.mjs compare).
// A fuse filter may also be built in one pass over its input and get its
// capacity (the key count) afterwards: setCapacity().
import { serializeTo } from '../filter.js';
import { KEY_ENCODING_IDS } from '../names.js';
import { FUSE_KIND_NAMES } from './fuse-shards.js';

const ENCODINGS = { utf8: KEY_ENCODING_IDS.get('utf8'), sha1: KEY_ENCODING_IDS.get('sha1') };

export class DigestKeyFilter {
  #filter;
  #encoding;
  #offsets;
  #keyBytes;
  #capacity = null;

  /**
   * @param {import('../filter.js').BloomFilter} filter created with keyEncoding 'utf8'
   * @param {'sha1'} keyEncoding what the file says
   * @param {number} keyBytes the width of every key (20 for SHA-1)
   */
  constructor(filter, keyEncoding, keyBytes) {
    if (filter.keyEncoding !== 'utf8') throw new TypeError('DigestKeyFilter wraps a utf8 filter');
    if (!(keyEncoding in ENCODINGS)) throw new TypeError(`unsupported key encoding ${keyEncoding}`);
    this.#filter = filter;
    this.#encoding = keyEncoding;
    this.#keyBytes = keyBytes;
    this.#offsets = new Uint32Array(0);
  }

  /**
   * Add n keys of keyBytes bytes each, packed back to back in bytes (with values: values[i] for key i).
   * @param {Uint8Array} bytes
   * @param {number} n
   * @param {Uint8Array} [values]
   */
  addKeys(bytes, n, values) {
    if (this.#offsets.length < n + 1) {
      const offsets = new Uint32Array(n + 1);
      for (let i = 0; i <= n; i++) offsets[i] = i * this.#keyBytes;
      this.#offsets = offsets;
    }
    this.#filter.addAll({ bytes: bytes.subarray(0, n * this.#keyBytes), offsets: this.#offsets.subarray(0, n + 1) }, values?.subarray(0, n));
  }

  /** @param {number} [value] */
  addKey(key, value) {
    this.#filter.addKey(key, value);
  }

  setMetadata(value) {
    this.#filter.setMetadata(value);
  }

  /**
   * The capacity the file states, for a fuse filter built before its keys
   * were counted: a fuse payload is built from the keys alone (src/fuse.c
   * takes the capacity only as a hint for reserving room), so the file is
   * that of a filter created with this capacity.
   */
  setCapacity(capacity) {
    if (!FUSE_KIND_NAMES.has(this.kind)) throw new TypeError('only a fuse filter\'s capacity can be set after its keys');
    if (!Number.isSafeInteger(capacity) || capacity < 1) throw new RangeError(`capacity must be a positive integer, got ${capacity}`);
    this.#capacity = capacity;
  }

  get kind() {
    return this.#filter.kind;
  }

  get keyEncoding() {
    return this.#encoding;
  }

  stats() {
    const stats = { ...this.#filter.stats(), keyEncoding: this.#encoding };
    if (this.#capacity !== null) {
      stats.capacity = this.#capacity;
      stats.overCapacity = stats.n > stats.capacity;
    }
    return stats;
  }

  /**
   * The .bgf file, with the real key encoding (and a one-pass fuse filter's
   * capacity) and the checksum that goes with them, handed to `write(view)`
   * straight from wasm memory (see serializeTo in filter.js). Returns its length.
   */
  serializeTo(write) {
    const overrides = { keyEncoding: ENCODINGS[this.#encoding] };
    if (this.#capacity !== null) overrides.capacity = this.#capacity;
    return serializeTo(this.#filter, write, overrides);
  }

  /** The .bgf bytes (a copy: serializeTo avoids it). */
  serialize() {
    let bytes = null;
    this.serializeTo((view) => {
      bytes = view.slice();
    });
    return bytes;
  }

  free() {
    this.#filter.free();
  }
}
