/**
 * password.js — breached-password checks with k-anonymity.
 *
 * The local filter holds SHA-1 digests of breached passwords (key encoding
 * `sha1`). "Definitely not" ends the check with no network. "Maybe" asks a
 * server speaking the public range protocol of Have I Been Pwned:
 *   GET {rangeUrl}/{first 5 hex of SHA-1, uppercase}   with  Add-Padding: true
 * which answers every known suffix for that prefix as `SUFFIX35HEX:COUNT`
 * lines (CRLF). Padding rows have count 0 and are ignored. The suffix is
 * compared here, so only the 5-hex prefix ever leaves the client.
 */
import { BloomgateError } from './errors.js';
import { fetchLimitedText } from './http.js';
import * as wasm from './wasm.js';

/** A range reply is ~800-1,000 padded lines of 40 bytes; anything far larger is not one. */
const MAX_RANGE_REPLY_BYTES = 1 << 20;
const LINE = /^([0-9A-Fa-f]{35}):(\d{1,12})$/;

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0').toUpperCase());

/**
 * SHA-1 of a password (UTF-8) as 40 uppercase hex characters; synchronous,
 * computed by the wasm core (no SubtleCrypto needed, so it works on plain
 * http pages and in every worker). The module must be instantiated first:
 * `await init()`, or any awaited filter factory, does that.
 */
export function hashPassword(password) {
  if (typeof password !== 'string') throw new TypeError('hashPassword(password): password must be a string');
  return toHex(digestOf(password));
}

function digestOf(password) {
  if (!wasm.isReady()) {
    throw new BloomgateError('E_NOT_READY', 'the wasm module is not instantiated yet: await init() (or create or load a filter) first');
  }
  return wasm.sha1(password);
}

function toHex(bytes) {
  let hex = '';
  for (const byte of bytes) hex += HEX[byte];
  return hex;
}

function keyEncodingOf(filter) {
  return typeof filter.keyEncoding === 'string' ? filter.keyEncoding : filter.stats().keyEncoding;
}

/**
 * @param {string} password
 * @param {{ filter?: import('./filter.js').BloomFilter, rangeUrl?: string | URL,
 *           fetch?: typeof fetch, signal?: AbortSignal, timeoutMs?: number }} options
 * @returns {Promise<{ breached: boolean, count: number | null, escalated: boolean, confirmed: boolean }>}
 *   `confirmed: false` means the filter said "maybe" and no server was asked:
 *   the password may be breached (count unknown).
 */
export async function checkPassword(password, options = {}) {
  if (typeof password !== 'string') throw new TypeError('checkPassword(password, options): password must be a string');
  if (options === null || typeof options !== 'object') throw new TypeError('checkPassword: options must be an object');
  const { filter, rangeUrl, signal, timeoutMs = 10000 } = options;
  if (!filter && rangeUrl === undefined) throw new TypeError('checkPassword needs a filter, a rangeUrl, or both');
  if (filter && keyEncodingOf(filter) !== 'sha1') {
    throw new BloomgateError('E_KEY_ENCODING', `password filters use key encoding 'sha1'; this filter uses '${keyEncodingOf(filter)}'`);
  }
  await wasm.ready();
  const digest = digestOf(password);
  if (filter && !filter.mightContainKey(digest)) {
    // No false negatives: absent from the filter is a definite answer for the list it was built from.
    return { breached: false, count: 0, escalated: false, confirmed: true };
  }
  if (rangeUrl === undefined) return { breached: true, count: null, escalated: false, confirmed: false };
  const hex = toHex(digest);
  const suffixes = await fetchRange(rangeUrl, hex.slice(0, 5), options.fetch ?? globalThis.fetch, signal, timeoutMs);
  const count = suffixes.get(hex.slice(5)) ?? 0;
  return { breached: count > 0, count, escalated: true, confirmed: true };
}

function rangeRequestUrl(rangeUrl, prefix) {
  const base = String(rangeUrl);
  return `${base.endsWith('/') ? base.slice(0, -1) : base}/${prefix}`;
}

/** GET one range and parse it completely, or fail: never a half-parsed answer. */
export async function fetchRange(rangeUrl, prefix, fetchImpl, signal, timeoutMs = 10000) {
  const text = await fetchLimitedText(rangeRequestUrl(rangeUrl, prefix), {
    fetch: fetchImpl,
    signal,
    timeoutMs,
    limit: MAX_RANGE_REPLY_BYTES,
    headers: { 'Add-Padding': 'true' },
    what: 'range',
  });
  return parseRange(text);
}

/** `SUFFIX:COUNT` lines, CRLF or LF; count-0 rows are padding. Any other line rejects the reply. */
export function parseRange(text) {
  const suffixes = new Map();
  const lines = text.split(/\r?\n/);
  if (lines.length && lines[lines.length - 1] === '') lines.pop();
  for (let i = 0; i < lines.length; i++) {
    const match = LINE.exec(lines[i]);
    if (!match) throw new BloomgateError('E_ESCALATION', `malformed range reply at line ${i + 1}`);
    const count = Number(match[2]);
    if (count > 0) suffixes.set(match[1].toUpperCase(), count);
  }
  return suffixes;
}
