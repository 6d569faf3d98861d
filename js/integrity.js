// @ts-check
/**
 * integrity.js — Subresource Integrity strings, the one parser: what
 * loadFilter's `integrity` option and a publication manifest's `integrity`
 * fields mean ("sha256-<base64> [sha256-<base64> ...]": any listed sha256
 * digest may match; other algorithms are not computed, so a string naming
 * only those is refused rather than silently skipped).
 */
import { BloomgateError } from './errors.js';

/** Standard or URL-safe base64, padding optional -> bytes, or null. */
export function decodeBase64(text) {
  let standard = text.replace(/-/g, '+').replace(/_/g, '/');
  while (standard.length % 4 !== 0) standard += '=';
  let binary;
  try {
    binary = atob(standard);
  } catch {
    return null;
  }
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** @param {Uint8Array} bytes */
export function encodeBase64(bytes) {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** `sha256-<base64>` of a 32-byte digest. @param {Uint8Array} digest */
export const sriOf = (digest) => `sha256-${encodeBase64(digest)}`;

/**
 * An integrity string -> its 32-byte SHA-256 digests. TypeError for a
 * malformed string; E_INTEGRITY for one that names only other algorithms.
 * @param {string} integrity
 * @returns {Uint8Array[]}
 */
export function parseIntegrity(integrity) {
  if (typeof integrity !== 'string') {
    throw new TypeError('integrity must be a string of the form "sha256-<base64>"');
  }
  const tokens = integrity.trim().split(/\s+/).filter(Boolean);
  if (tokens.length === 0) throw new TypeError('integrity is empty; expected "sha256-<base64>"');
  const digests = [];
  const unsupported = [];
  for (const token of tokens) {
    const match = /^([A-Za-z0-9]+)-([A-Za-z0-9+/_-]+={0,2})(\?.*)?$/.exec(token);
    if (match === null) throw new TypeError(`integrity: '${token}' is not of the form sha256-<base64>`);
    const algorithm = match[1].toLowerCase();
    if (algorithm !== 'sha256') {
      unsupported.push(algorithm);
      continue;
    }
    const digest = decodeBase64(match[2]);
    if (digest === null || digest.length !== 32) {
      throw new TypeError(`integrity: '${token}' does not hold a 32-byte SHA-256 digest in base64`);
    }
    digests.push(digest);
  }
  if (digests.length === 0) {
    throw new BloomgateError('E_INTEGRITY',
      `integrity names ${unsupported.join(', ')}, which bloomgate does not compute; use sha256-<base64>`);
  }
  return digests;
}

/** Whether `digest` is one of `digests` (compared in full, without an early exit). */
export function digestListed(digest, digests) {
  return digests.some((candidate) => {
    let same = candidate.length ^ digest.length;
    for (let i = 0; i < digest.length; i++) same |= candidate[i] ^ digest[i];
    return same === 0;
  });
}
