// @ts-check
/**
 * canonical.js — the byte form that signatures cover (docs/FORMAT.md,
 * "Canonical bytes").
 *
 * A signature covers bytes, not JSON: JSON has many spellings of one value
 * (key order, spaces, escapes, 1 and 1.0), so the signer and every verifier
 * rebuild the same bytes from the parsed fields instead. Each record starts
 * with a domain string and a NUL (a signature for one kind of record can
 * never pass as another's), then the fields in a fixed order: integers as
 * little-endian u8/u32/u64, digests as their raw bytes, strings and byte
 * strings as a u32 length and the bytes. Nothing is optional: an absent field
 * has a stated encoding (a count of 0, an empty string), so no two records
 * share bytes.
 */

import { decodeBase64 } from './integrity.js';

const encoder = new TextEncoder();

export class CanonicalWriter {
  /** @type {number[]} */
  #bytes = [];

  /** @param {string} domain e.g. "bloomgate-filter-manifest/2" */
  constructor(domain) {
    this.#raw(encoder.encode(domain));
    this.#bytes.push(0);
  }

  /** @param {Uint8Array} bytes */
  #raw(bytes) {
    for (const byte of bytes) this.#bytes.push(byte);
  }

  /** @param {number} value an integer in [0, 255] */
  u8(value) {
    if (!Number.isInteger(value) || value < 0 || value > 0xff) throw new RangeError(`canonical u8 out of range: ${value}`);
    this.#bytes.push(value);
    return this;
  }

  /** @param {number} value an integer in [0, 2^32) */
  u32(value) {
    if (!Number.isInteger(value) || value < 0 || value > 0xffffffff) throw new RangeError(`canonical u32 out of range: ${value}`);
    for (let i = 0; i < 4; i++) this.#bytes.push(Math.floor(value / 2 ** (8 * i)) & 0xff);
    return this;
  }

  /** @param {number} value a safe integer >= 0 (JSON carries nothing larger exactly) */
  u64(value) {
    if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`canonical u64 out of range: ${value}`);
    let rest = BigInt(value);
    for (let i = 0; i < 8; i++) {
      this.#bytes.push(Number(rest & 0xffn));
      rest >>= 8n;
    }
    return this;
  }

  /**
   * A fixed-size field (a digest, an id): its length is part of the format, not of the bytes.
   * @param {Uint8Array} bytes
   * @param {number} length
   */
  fixed(bytes, length) {
    if (!(bytes instanceof Uint8Array) || bytes.length !== length) throw new RangeError(`canonical field must be ${length} bytes`);
    this.#raw(bytes);
    return this;
  }

  /** @param {Uint8Array} bytes a variable-length byte string: u32 length, then the bytes */
  blob(bytes) {
    this.u32(bytes.length);
    this.#raw(bytes);
    return this;
  }

  /** @param {string} text UTF-8, as a blob */
  text(text) {
    return this.blob(encoder.encode(text));
  }

  /** @returns {Uint8Array} */
  finish() {
    return Uint8Array.from(this.#bytes);
  }
}

/** @param {string} hex an even number of hex digits */
export function hexBytes(hex) {
  if (!/^(?:[0-9a-fA-F]{2})*$/.test(hex)) throw new RangeError('not hex');
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return bytes;
}

/** @param {Uint8Array} bytes */
export function bytesHex(bytes) {
  let hex = '';
  for (const byte of bytes) hex += byte.toString(16).padStart(2, '0');
  return hex;
}

/** base64url without padding (RFC 4648 §5), as keys and signatures are written. */
export function base64url(bytes) {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/**
 * Strict base64url (no padding, no other alphabet): null for anything else,
 * so one value has one spelling.
 * @param {string} text
 * @returns {Uint8Array | null}
 */
export function fromBase64url(text) {
  if (typeof text !== 'string' || !/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) return null;
  const bytes = decodeBase64(text);
  if (bytes === null) return null;
  // Reject non-zero trailing bits: re-encoding must give the same text.
  return base64url(bytes) === text ? bytes : null;
}
