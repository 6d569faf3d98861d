// @ts-check
/**
 * buffers.js — byte buffers in wasm memory and the digests computed over
 * them: WasmBuffer (what a streaming load fills chunk by chunk, checksummed as
 * bytes arrive), FileChecksum (the .bgf checksum of a file fed in pieces),
 * Sha256 and the one-shot sha256()/sha1().
 */
import { HEADER_BYTES, HEADER_SLOTS, SHA256_CTX_SIZE, readHeader } from './contract.js';
import {
  ex, HEAPF64, HEAPU32, HEAPU8, MISC_BYTES, MISC_DIGEST, MISC_F64, MISC_HASH, MISC_OUT_PTR,
  check, mallocOrThrow, miscPtr, outOfMemory,
} from './module.js';
import { BATCH_PACKED_BYTES, arenaShrink, keyPtr, releaseKey, scratchPtr, stageInPieces, stageKey } from './staging.js';

// WasmBuffer.append copies and checksums large inputs in pieces of this size (L2-sized).
const APPEND_PIECE = BATCH_PACKED_BYTES;

function hex(bytes) {
  let text = '';
  for (const byte of bytes) text += byte.toString(16).padStart(2, '0');
  return text;
}

/**
 * The header a bgw_header_peek / bgw_file_validate call left in the misc
 * block, as inspect shows it: the checksum and list id in hex, and fileLength.
 */
function flattenedHeader() {
  const header = readHeader(HEAPF64, (miscPtr + MISC_F64) >>> 3, HEAPU8, miscPtr + MISC_BYTES);
  header.checksum = BigInt(header.checksum).toString(16).padStart(16, '0');
  header.listId = hex(header.listId);
  header.fileLength = header.payloadOffset + header.payloadLength;
  return header;
}
if (HEADER_SLOTS > 64 || HEADER_BYTES > 16) throw new Error('contract.js: the header no longer fits the misc block');

/** The .bgf file checksum (XXH3-64 of bytes [16, end)) of a file fed in pieces from byte 0. */
export class FileChecksum {
  constructor() {
    this.hasher = ex.bg_file_hasher_new() >>> 0;
    if (this.hasher === 0) throw outOfMemory();
  }

  /** Feed the next bytes of the file (any size; copied into wasm memory in pieces). */
  update(bytes) {
    stageInPieces(bytes, APPEND_PIECE, (ptr, length) => ex.bg_file_hasher_update(this.hasher, ptr, length));
  }

  /** The checksum field's 8 bytes, little-endian, as the header stores them. */
  digestBytes() {
    const out = miscPtr + MISC_HASH;
    ex.bgw_file_hasher_digest(this.hasher, out);
    return HEAPU8.slice(out, out + 8);
  }

  free() {
    if (this.hasher !== 0) {
      ex.bg_file_hasher_free(this.hasher);
      this.hasher = 0;
    }
    arenaShrink();
  }
}

/** A malloc'd byte buffer in wasm memory that load.js fills chunk by chunk. */
export class WasmBuffer {
  /** @param {number} capacity bytes to allocate now */
  constructor(capacity) {
    this.ptr = mallocOrThrow(capacity);
    this.capacity = capacity > 0 ? capacity : 1;
    this.length = 0;
    // The file checksum, computed as bytes arrive (bg_file_hasher): each piece is
    // hashed while it is still in cache, or while the next is on the network, so
    // takeFilter() need not read the whole file again. 0: none (out of memory),
    // and takeFilter() lets the core compute it.
    this.hasher = ex.bg_file_hasher_new() >>> 0;
  }

  /** Make room for `capacity` bytes in total (exactly that many). */
  reserve(capacity) {
    if (capacity <= this.capacity) return;
    const ptr = ex.realloc(this.ptr, capacity) >>> 0;
    if (ptr === 0) throw outOfMemory();
    this.ptr = ptr;
    this.capacity = capacity;
  }

  /** Copy bytes in after what is there (growing the buffer when needed), hashing them on the way. */
  append(bytes) {
    const n = bytes.length;
    if (this.length + n > this.capacity) this.reserve(this.length + n);
    // Large inputs go in pieces that fit the L2 cache, each hashed right after its copy.
    for (let done = 0; done < n; done += APPEND_PIECE) {
      const piece = n - done <= APPEND_PIECE && done === 0 ? bytes : bytes.subarray(done, Math.min(n, done + APPEND_PIECE));
      const at = this.ptr + this.length;
      HEAPU8.set(piece, at);
      this.length += piece.length;
      if (this.hasher !== 0) ex.bg_file_hasher_update(this.hasher, at, piece.length);
    }
  }

  /** bg_header_peek on the bytes so far: { rc: 0 | negative, header | null }. */
  peekHeader() {
    const rc = ex.bgw_header_peek(this.ptr, this.length, miscPtr + MISC_F64, miscPtr + MISC_BYTES);
    return rc < 0 ? { rc, header: null } : { rc, header: flattenedHeader() };
  }

  /** bg_file_validate on the bytes so far. */
  validate() {
    const rc = ex.bgw_file_validate(this.ptr, this.length, miscPtr + MISC_F64, miscPtr + MISC_BYTES);
    return rc < 0 ? { rc, header: null } : { rc, header: flattenedHeader() };
  }

  /** The bytes so far, as a view of wasm memory (valid until memory grows: copy or use at once). */
  bytes() {
    return HEAPU8.subarray(this.ptr, this.ptr + this.length);
  }

  /** Feed bytes [from, to) to a Sha256. */
  hashRange(sha, from, to) {
    ex.bg_sha256_update(sha.ctx, this.ptr + from, to - from);
  }

  /**
   * Hand the buffer to bg_filter_deserialize_owned. On success the filter owns
   * the memory (this buffer becomes empty); on failure it throws and the buffer
   * is still ours to free.
   */
  takeFilter() {
    const out = miscPtr + MISC_OUT_PTR;
    if (this.hasher !== 0) {
      const digest = miscPtr + MISC_HASH;
      ex.bgw_file_hasher_digest(this.hasher, digest);
      const words = HEAPU32;
      check(ex.bgw_filter_deserialize_owned_checked(this.ptr, this.length, words[digest >>> 2], words[(digest >>> 2) + 1], out));
    } else {
      check(ex.bg_filter_deserialize_owned(this.ptr, this.length, out));
    }
    this.ptr = 0;
    this.capacity = 0;
    this.length = 0;
    this.#freeHasher();
    return HEAPU32[out >>> 2];
  }

  /** Release the memory (idempotent). */
  free() {
    if (this.ptr !== 0) {
      ex.free(this.ptr);
      this.ptr = 0;
    }
    this.#freeHasher();
  }

  #freeHasher() {
    if (this.hasher !== 0) {
      ex.bg_file_hasher_free(this.hasher);
      this.hasher = 0;
    }
  }
}

/**
 * Both header checks on a byte string, without throwing on bad bytes:
 * { peek: { rc, header }, validate: { rc, header } } (rc 0 = OK).
 */
export function headerOf(bytes) {
  const buffer = new WasmBuffer(bytes.length);
  try {
    buffer.append(bytes);
    return { peek: buffer.peekHeader(), validate: buffer.validate() };
  } finally {
    buffer.free();
  }
}

/** Incremental SHA-256 computed in wasm (bg_sha256_*). */
export class Sha256 {
  constructor() {
    this.ctx = mallocOrThrow(SHA256_CTX_SIZE);
    ex.bg_sha256_init(this.ctx);
  }

  /** @returns {Uint8Array} the 32-byte digest */
  digest() {
    const out = miscPtr + MISC_DIGEST;
    ex.bg_sha256_final(this.ctx, out);
    return HEAPU8.slice(out, out + 32);
  }

  free() {
    if (this.ctx !== 0) {
      ex.free(this.ctx);
      this.ctx = 0;
    }
  }
}

/** One-shot SHA-256 of a string (UTF-8) or bytes -> 32 bytes. */
export function sha256(item) {
  const len = stageKey(item, 'input');
  const sha = new Sha256();
  try {
    ex.bg_sha256_update(sha.ctx, keyPtr, len);
    return sha.digest();
  } finally {
    sha.free();
    if (keyPtr !== scratchPtr) releaseKey();
  }
}

/** One-shot SHA-1 of a string (UTF-8) or bytes -> 20 bytes. */
export function sha1(item) {
  const len = stageKey(item, 'input');
  const out = miscPtr + MISC_DIGEST;
  ex.bg_sha1(keyPtr, len, out);
  if (keyPtr !== scratchPtr) releaseKey();
  return HEAPU8.slice(out, out + 20);
}
