// @ts-check
/**
 * password.js — breached-password checks with k-anonymity.
 *
 * The local filter holds SHA-1 digests of breached passwords (key encoding
 * `sha1`). "Definitely not" ends the check with no network. "Maybe" asks a
 * server speaking the public range protocol of Have I Been Pwned:
 *   GET {rangeUrl}/{first 5 hex of SHA-1, uppercase}   (Add-Padding: true when chosen)
 * which answers every known suffix for that prefix as `SUFFIX35HEX:COUNT`
 * lines (CRLF). Padding rows have count 0 and are ignored. The suffix is
 * compared here, so only the 5-hex prefix ever leaves the client. Which
 * replies may say "not breached" is decided in endpoint.js; with publisher
 * keys, `{rangeUrl}/{prefix}.proof` is fetched beside the reply and a "not
 * breached" counts only when the reply's real rows reach the signed root.
 */
import { BloomgateError } from './errors.js';
import { authorityOf, checkReply, endpointUrl, fetchProof, listOf, manifestOf, PADDED_MIN_ROWS, trustOf } from './endpoint.js';
import { checkTimeout, privateGet } from './http.js';
import { rangeLeafRecords } from './merkle.js';
import { boundOf, seenAtLeastOf, valueMeaningOf, valueOfKey } from './values.js';
import * as wasm from './wasm/index.js';

/** A range reply is ~800-1,000 padded lines of 40 bytes; anything far larger is not one. */
const MAX_RANGE_REPLY_BYTES = 1 << 20;
const LINE = /^([0-9A-Fa-f]{35}):(\d{1,12})$/;

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0').toUpperCase());

/**
 * SHA-1 of a password (UTF-8) as 40 uppercase hex characters; synchronous,
 * computed by the wasm core (no SubtleCrypto needed, so it works on plain
 * http pages and in every worker). The module must be instantiated first:
 * `await init()`, or any awaited filter factory, does that.
 * @type {typeof import('./index.js').hashPassword}
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

/** A filter's key encoding, from the property or (an older-shaped filter) its stats. */
export function keyEncodingOf(filter) {
  return typeof filter.keyEncoding === 'string' ? filter.keyEncoding : filter.stats().keyEncoding;
}

const PADDING_CHOICES = new Set([true, false, 'auto']);

/**
 * Options and result as index.d.ts declares them (PasswordCheck).
 * `breached` means "seen at least `minCount` times" (the filter's threshold,
 *   1 for a whole list), whether the filter or the server answered.
 *   `confirmed: false` means the filter said "maybe" and no server was asked.
 *   `count` is null when unknown: unconfirmed, or a subset filter's local "no"
 *   (seen fewer than minCount times, maybe never).
 * @type {typeof import('./index.js').checkPassword}
 */
export async function checkPassword(password, options = /** @type {any} */ ({})) {
  return flagStale(await checkPasswordNow(password, options), options?.filter);
}

/**
 * `stale: true` on a result from a live filter (openFilter) whose newest believed manifest has
 * expired: the answer may miss what the list added since (README, Security).
 * @template {object} T
 * @param {T} result
 * @param {any} filter
 * @returns {T}
 */
export function flagStale(result, filter) {
  return filter?.stale === true ? { ...result, stale: true } : result;
}

/** @param {string} password @param {any} options */
async function checkPasswordNow(password, options) {
  if (typeof password !== 'string') throw new TypeError('checkPassword(password, options): password must be a string');
  if (options === null || typeof options !== 'object') throw new TypeError('checkPassword: options must be an object');
  const { filter, rangeUrl, signal, timeoutMs = 10000, addPadding = 'auto' } = options;
  if (!filter && rangeUrl === undefined) throw new TypeError('checkPassword needs a filter, a rangeUrl, or both');
  if (filter && keyEncodingOf(filter) !== 'sha1') {
    throw new BloomgateError('E_KEY_ENCODING', `password filters use key encoding 'sha1'; this filter uses '${keyEncodingOf(filter)}'`);
  }
  if (!PADDING_CHOICES.has(addPadding)) throw new TypeError(`checkPassword: addPadding must be true, false or 'auto', got ${String(addPadding)}`);
  checkTimeout(timeoutMs, 'checkPassword');
  const keys = trustOf(options, filter, 'checkPassword');
  const minCount = thresholdOf(filter, options.minCount);
  await wasm.ready();
  const digest = digestOf(password);
  // A filter built with --buckets says how often each listed hash was seen: `seenAtLeast`, its
  // bucket's lower bound (a false positive's is arbitrary, settled by the server like the rest).
  const meaning = filter ? valueMeaningOf(filter) : null;
  const buckets = meaning?.meaning === 'seen-at-least' ? meaning : null;
  const seen = (seenAtLeast) => (buckets ? { seenAtLeast } : {});
  if (filter && !filter.mightContainKey(digest)) {
    // No false negatives: absent from the filter is a definite answer for the list it was built from.
    return { breached: false, count: minCount > 1 ? null : 0, escalated: false, confirmed: true, minCount, ...seen(null) };
  }
  if (rangeUrl === undefined) {
    return { breached: true, count: null, escalated: false, confirmed: false, minCount, ...seen(buckets ? boundOf(buckets, valueOfKey(filter, digest)) : null) };
  }
  const hex = toHex(digest);
  const base = String(rangeUrl);
  const request = { fetch: options.fetch ?? globalThis.fetch, signal, timeoutMs, endpoint: String(rangeUrl) };
  const manifest = await manifestOf(rangeUrl, 'range', request);
  const authority = await authorityOf(manifest, listOf(filter, true), keys, base, 'range');
  const padded = addPadding === 'auto' ? (manifest ? manifest.padding === 'request' : true) : addPadding;
  const prefix = hex.slice(0, 5);
  // The proof travels beside the reply (one round trip); a failed proof matters only for a "no".
  const proof = authority ? settle(fetchProof(base, prefix, authority.shape, request)) : null;
  const { suffixes, rows } = await fetchRangeRows(rangeUrl, prefix, request, padded);
  const count = suffixes.get(hex.slice(5)) ?? 0;
  // A listed suffix is believed from anyone; any other answer only from a proven endpoint.
  if (count < minCount) {
    requireTrust(manifest, padded, rows, rangeUrl);
    if (authority) checkReply(authority, prefix, rangeLeafRecords(replyRecords(prefix, suffixes)), await unsettle(proof), base);
  }
  return { breached: count >= minCount, count, escalated: true, confirmed: true, minCount, ...seen(count >= minCount ? seenAtLeastOf(buckets, count) : null) };
}

/** A promise whose rejection is held until awaited through unsettle() (never "unhandled" meanwhile). */
function settle(promise) {
  return promise.then((value) => ({ value }), (error) => ({ error }));
}

async function unsettle(settled) {
  const outcome = await settled;
  if ('error' in outcome) throw outcome.error;
  return outcome.value;
}

/** A reply's real rows as records in hash order: the leaf the proof is checked with (js/merkle.js). */
function replyRecords(prefix, suffixes) {
  return [...suffixes.keys()].sort().map((suffix) => ({ hash: hexToBytes(prefix + suffix), count: suffixes.get(suffix) }));
}

function hexToBytes(hex) {
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return bytes;
}

/** The threshold a check decides with: the filter's, or a stricter one the caller asks for. */
export function thresholdOf(filter, requested, where = 'checkPassword') {
  const own = filter ? filter.minCount ?? 1 : 1;
  if (requested === undefined) return own;
  if (!Number.isSafeInteger(requested) || requested < 1) throw new RangeError(`${where}: minCount must be a positive integer, got ${String(requested)}`);
  if (requested < own) {
    throw new RangeError(`${where}: minCount ${requested} is below the filter's ${own}: its "no" says nothing about hashes seen fewer than ${own} times`);
  }
  return requested;
}

/** Is this reply's "not breached" believable? Throws E_ESCALATION when not (see endpoint.js). */
function requireTrust(manifest, padded, rows, rangeUrl) {
  if (manifest) {
    const padsAlways = manifest.padding === 'static' || (manifest.padding === 'request' && padded);
    if (padsAlways && rows === 0) {
      throw new BloomgateError('E_ESCALATION', `range endpoint ${rangeUrl} pads its replies but sent an empty one: not trusted as "not breached"`);
    }
    return;
  }
  if (!padded) {
    throw new BloomgateError('E_ESCALATION',
      `range endpoint ${rangeUrl} has no bloomgate manifest and padding was not asked for, so its "not breached" cannot be trusted ` +
      "(serve it with 'bloomgate serve' or 'bloomgate export-ranges', or let addPadding default to 'auto')");
  }
  if (rows < PADDED_MIN_ROWS) {
    throw new BloomgateError('E_ESCALATION',
      `range endpoint ${rangeUrl} has no bloomgate manifest and answered a padded request with ${rows} rows ` +
      `(the public service sends at least ${PADDED_MIN_ROWS}): not trusted as "not breached"`);
  }
}

/** GET one range and parse it completely, or fail: never a half-parsed answer. */
async function fetchRangeRows(rangeUrl, prefix, request, padded) {
  const { text } = await privateGet(endpointUrl(rangeUrl, prefix), {
    ...request,
    limit: MAX_RANGE_REPLY_BYTES,
    headers: padded ? { 'Add-Padding': 'true' } : {},
    what: 'range',
  });
  return parseRangeRows(text);
}

/**
 * GET one range (padded) and parse it: suffix -> count. Trust is the caller's
 * business (checkPassword decides it with the endpoint's manifest).
 */
export async function fetchRange(rangeUrl, prefix, fetchImpl, signal, timeoutMs = 10000) {
  const request = { fetch: fetchImpl, signal, timeoutMs, endpoint: String(rangeUrl) };
  return (await fetchRangeRows(rangeUrl, prefix, request, true)).suffixes;
}

/** `SUFFIX:COUNT` lines, CRLF or LF; count-0 rows are padding. Any other line rejects the reply. */
export function parseRange(text) {
  return parseRangeRows(text).suffixes;
}

function parseRangeRows(text) {
  const suffixes = new Map();
  const lines = text.split(/\r?\n/);
  if (lines.length && lines[lines.length - 1] === '') lines.pop();
  for (let i = 0; i < lines.length; i++) {
    const match = LINE.exec(lines[i]);
    if (!match) throw new BloomgateError('E_ESCALATION', `malformed range reply at line ${i + 1}`);
    const count = Number(match[2]);
    if (count > 0) suffixes.set(match[1].toUpperCase(), count);
  }
  return { suffixes, rows: lines.length };
}
