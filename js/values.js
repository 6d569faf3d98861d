// @ts-check
/**
 * values.js — what a value filter's r-bit values mean (docs/FORMAT.md, "Values per key").
 *
 * A static kind that stores a value with each key (fuse4 with valueBits 1..8) says in its
 * metadata what the values are:
 *   { "values": { "meaning": "seen-at-least", "buckets": [1, 10, 100, 1000, 100000] } }
 *     value v: the key's count is at least buckets[v] (and below buckets[v + 1]); built by
 *     `bloomgate build --format hibp --buckets ...`
 *   { "values": { "meaning": "threat", "labels": ["phishing", "malware"] } }
 *     value v: the key's threat type is labels[v]; built by `--format urls` from a second,
 *     tab-separated column
 * A member's value is exact. A non-member that is a false positive gets an arbitrary value:
 * an unconfirmed value is the filter's guess, settled by the server like the "maybe" itself.
 * Browser-safe: no Node imports.
 */
import { CURRENT_FILTER } from './filter.js';

/** The widest value a filter stores: 8 bits, 256 classes. */
export const MAX_VALUE_BITS = 8;
export const MAX_CLASSES = 2 ** MAX_VALUE_BITS;
/** A threat label: 1 to 64 bytes of UTF-8, no control characters (tab and newline separate columns and rows). */
export const MAX_LABEL_BYTES = 64;
export const SEEN_AT_LEAST = 'seen-at-least';
export const THREAT = 'threat';

/** The fewest value bits (1..8) that hold `classes` distinct values; 0 when more than 256. */
export function bitsFor(classes) {
  let bits = 1;
  while (2 ** bits < classes) bits++;
  return bits <= MAX_VALUE_BITS ? bits : 0;
}

/**
 * The bucket of a count: the index of the largest bound ≤ count, or -1 when the count is
 * below the first bound. `buckets` ascending.
 * @param {readonly number[]} buckets
 * @param {number} count
 */
export function bucketOf(buckets, count) {
  let lo = 0;
  let hi = buckets.length; // answer in [lo - 1, hi - 1]
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (buckets[mid] <= count) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

/** Is `label` a threat label a file and a reply can carry? */
export function validLabel(label) {
  if (typeof label !== 'string' || label.length === 0) return false;
  // eslint-disable-next-line no-control-regex -- control characters are what is refused
  if (/[\u0000-\u001f\u007f]/.test(label)) return false;
  return new TextEncoder().encode(label).length <= MAX_LABEL_BYTES;
}

/**
 * The `values` block of a filter's metadata (or of an endpoint manifest), checked: buckets 1 to
 * 256 ascending integers >= 1, labels 1 to 256 distinct valid labels. null when there is none,
 * or it is malformed or of a meaning this version does not know.
 * @param {unknown} block
 * @returns {ValueMeaning | null}
 */
export function parseValues(block) {
  const { meaning, buckets, labels } = /** @type {any} */ (block ?? {});
  const threat = meaning === THREAT;
  const list = threat ? labels : meaning === SEEN_AT_LEAST ? buckets : null;
  if (!Array.isArray(list) || list.length === 0 || list.length > MAX_CLASSES) return null;
  const valid = threat
    ? list.every(validLabel) && new Set(list).size === list.length
    : list.every((bound, i) => Number.isSafeInteger(bound) && bound > (i > 0 ? list[i - 1] : 0));
  return valid ? /** @type {ValueMeaning} */ ({ meaning, [threat ? 'labels' : 'buckets']: [...list] }) : null;
}

/**
 * @typedef {Readonly<{ meaning: 'seen-at-least', buckets: readonly number[] }> |
 *   Readonly<{ meaning: 'threat', labels: readonly string[] }>} ValueMeaning
 */

/** The BloomFilter behind a filter or a live filter (openFilter). */
function current(filter) {
  return typeof filter?.[CURRENT_FILTER] === 'function' ? filter[CURRENT_FILTER]() : filter;
}

/**
 * What a filter's values mean, when it stores values and says what they are; null otherwise.
 * @returns {ValueMeaning | null}
 */
export function valueMeaningOf(filter) {
  const target = current(filter);
  if (!target || !(Number(target.valueBits) > 0)) return null;
  const metadata = target.metadata;
  if (metadata === null || typeof metadata !== 'object') return null;
  return parseValues(/** @type {any} */ (metadata).values);
}

/**
 * The value a filter holds for `key` (a key already encoded: a SHA-1 or SHA-256 digest), or
 * null when the filter stores none or says "definitely not".
 * @param {any} filter
 * @param {Uint8Array} key
 * @returns {number | null}
 */
export function valueOfKey(filter, key) {
  const target = current(filter);
  if (!target || !(Number(target.valueBits) > 0) || typeof target.valueOfKey !== 'function') return null;
  const value = target.valueOfKey(key);
  return typeof value === 'number' ? value : null;
}

/** The lower bound of a count's bucket, or null (no buckets, or below the first bound). */
export function seenAtLeastOf(meaning, count) {
  if (meaning?.meaning !== SEEN_AT_LEAST || count === null || count === undefined) return null;
  const bucket = bucketOf(meaning.buckets, count);
  return bucket < 0 ? null : meaning.buckets[bucket];
}

/** The label of a value, or null (no labels, or a value past them: a false positive's arbitrary value). */
export function labelOf(meaning, value) {
  if (meaning?.meaning !== THREAT || value === null || value === undefined) return null;
  return meaning.labels[value] ?? null;
}

/** The bound of a value (a bucket index), or null (no buckets, or a value past them). */
export function boundOf(meaning, value) {
  if (meaning?.meaning !== SEEN_AT_LEAST || value === null || value === undefined) return null;
  return meaning.buckets[value] ?? null;
}
