// @ts-check
// `bloomgate build`'s values per key (js/values.js says what they mean):
//   --buckets B1,B2,...  (--format hibp) each hash's value is its COUNT's bucket: the index
//                        of the largest bound <= COUNT. Rows below the first bound are
//                        dropped, as --min-count drops them: the first bound is the filter's
//                        threshold (minCount).
//   a second, tab-separated column (--format urls): the threat label, value = its index in
//                        the label set, in the order labels first appear.
//   --value-bits R       the value width, 1..8 (default: the fewest bits that hold the classes).
import { usageError } from './errors.js';
import { bitsFor, MAX_CLASSES, MAX_LABEL_BYTES, MAX_VALUE_BITS, SEEN_AT_LEAST, THREAT, validLabel } from '../values.js';

/** The one static kind that stores values. */
export const VALUE_KIND = 'fuse4';

/**
 * --buckets text -> ascending positive integers; a usage error naming the limit otherwise.
 * @param {string} text
 */
export function parseBuckets(text) {
  if (text.trim() === '') throw usageError('--buckets needs at least one bound (e.g. --buckets 1,10,100,1000,100000)');
  const parts = text.split(',');
  if (parts.length > MAX_CLASSES) {
    throw usageError(`--buckets: ${parts.length} bounds are more than ${MAX_CLASSES} (2^${MAX_VALUE_BITS}: a value holds at most ${MAX_VALUE_BITS} bits)`);
  }
  const bounds = parts.map((part, i) => {
    const trimmed = part.trim();
    if (!/^[0-9]+$/.test(trimmed)) throw usageError(`--buckets: bound ${i + 1} '${part}' is not a positive integer`);
    const value = Number(trimmed);
    if (!Number.isSafeInteger(value) || value < 1) throw usageError(`--buckets: bound ${i + 1} '${part}' must be an integer from 1 to 2^53 - 1`);
    return value;
  });
  for (let i = 1; i < bounds.length; i++) {
    if (bounds[i] <= bounds[i - 1]) throw usageError(`--buckets must be ascending: bound ${i + 1} (${bounds[i]}) is not above bound ${i} (${bounds[i - 1]})`);
  }
  return bounds;
}

/** --value-bits text -> 1..8; a usage error naming the limit otherwise. */
export function parseValueBits(text) {
  if (!/^[0-9]+$/.test(text) || Number(text) < 1 || Number(text) > MAX_VALUE_BITS) {
    throw usageError(`invalid --value-bits '${text}': a value holds 1 to ${MAX_VALUE_BITS} bits`);
  }
  return Number(text);
}

/**
 * The value bits for `classes` classes: `given` when it holds them, else the fewest that do.
 * @param {number} classes
 * @param {number | undefined} given --value-bits
 * @param {string} what the classes, for the message ('5 buckets')
 */
export function valueBitsFor(classes, given, what) {
  if (classes > MAX_CLASSES) throw usageError(`${what} are more than ${MAX_CLASSES}, the most a value holds (2^${MAX_VALUE_BITS}: at most ${MAX_VALUE_BITS} bits)`);
  if (given !== undefined) {
    if (classes > 2 ** given) throw usageError(`${what} do not fit --value-bits ${given} (at most 2^${given} = ${2 ** given} classes; give --value-bits ${bitsFor(classes)} or leave it out)`);
    return given;
  }
  return bitsFor(classes);
}

/**
 * The kind a value build uses: fuse4 (also for --kind smallest); any other explicit kind is a usage error.
 * @param {string | undefined} kind --kind as given
 * @param {string} flag what asks for values ('--buckets', 'a threat column')
 */
export function valueKind(kind, flag) {
  if (kind === undefined || kind === 'smallest' || kind === VALUE_KIND) return VALUE_KIND;
  throw usageError(`${flag} stores a value with each key, which only --kind ${VALUE_KIND} does; --kind ${kind} cannot (leave --kind out, or give fuse4 or smallest)`);
}

/** The metadata block of a bucketed filter. */
export function bucketsMetadata(buckets) {
  return { meaning: SEEN_AT_LEAST, buckets: [...buckets] };
}

/** The metadata block of a labelled filter. */
export function labelsMetadata(labels) {
  return { meaning: THREAT, labels: [...labels] };
}

/**
 * Threat labels in the order they first appear, each with its value; at most `limit` of them
 * (2^R with --value-bits R, else 256). `add` throws a message (the caller adds the line number).
 */
export class LabelSet {
  /** @param {number} limit */
  constructor(limit, limitText) {
    this.limit = limit;
    this.limitText = limitText;
    /** @type {Map<string, number>} */
    this.values = new Map();
  }

  /** The value of `label`, adding it when new. Throws an Error whose message names the problem. */
  valueOf(label) {
    const known = this.values.get(label);
    if (known !== undefined) return known;
    if (!validLabel(label)) {
      throw new Error(`threat label ${JSON.stringify(label.length > 80 ? `${label.slice(0, 80)}...` : label)} is not 1 to ${MAX_LABEL_BYTES} bytes without control characters`);
    }
    if (this.values.size >= this.limit) {
      throw new Error(`threat label ${JSON.stringify(label)} is label ${this.values.size + 1}: more than ${this.limitText}`);
    }
    const value = this.values.size;
    this.values.set(label, value);
    return value;
  }

  get labels() {
    return [...this.values.keys()];
  }

  get size() {
    return this.values.size;
  }
}
