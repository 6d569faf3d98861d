// @ts-check
// What an input line means, per --format:
//   lines  every non-empty line is an item; its bytes are the key (UTF-8 as typed)
//   hibp   `SHA1HEX:COUNT` (Have I Been Pwned dump); the key is the 20 decoded bytes
//   urls   a URL or a Safe Browsing expression ("evil.example/", "evil.example/login");
//          the key is the SHA-256 of its most specific canonical expression; with values
//          (js/cli/values.js) each line is `URL<TAB>THREAT`, the threat label's index its value
// Malformed lines stop the build with their line number, or with --skip-invalid
// are counted and skipped.
import { CliError, EXIT, inputError, usageError } from './errors.js';
import { excerpt, MAX_LINE_BYTES } from './lines.js';
import { MAX_LABEL_BYTES, validLabel } from '../values.js';

export const FORMATS = ['lines', 'hibp', 'urls'];
/**
 * The key encoding a format's filters use.
 * @type {{ lines: 'utf8', hibp: 'sha1', urls: 'url' }}
 */
export const KEY_ENCODING = { lines: 'utf8', hibp: 'sha1', urls: 'url' };
/** Formats whose keys are hashes an exact store (.bgs) can hold. */
export const STORE_HASH = { hibp: 'sha1', urls: 'sha256' };

const utf8 = new TextDecoder('utf-8', { fatal: true });

const SHA1_HEX = 40;
const PREFIX_HEX = 5; // per-prefix files: the name holds the first 5 digits, rows the other 35
const SUFFIX_HEX = SHA1_HEX - PREFIX_HEX;
const NTLM_HEX = 32;
const COLON = 0x3a;
const BOM = [0xef, 0xbb, 0xbf];
const ZERO = 0x30;
const LF = 10;
const CR = 13;
const TAB = 9;
const REMEMBERED_LINE_NUMBERS = 5;
const KEY_BYTES = 20;
/** Keys handed to onKeys at a time (hibp). */
export const KEY_BATCH = 4096;

const HEX_VALUE = new Int8Array(256).fill(-1);
for (let i = 0; i < 10; i++) HEX_VALUE[0x30 + i] = i;
for (let i = 0; i < 6; i++) {
  HEX_VALUE[0x41 + i] = 10 + i;
  HEX_VALUE[0x61 + i] = 10 + i;
}

// Two hex digits at once: HEX_PAIR[(a << 8) | b] is the byte they spell, -1 when either is not hex.
const HEX_PAIR = new Int16Array(1 << 16).fill(-1);
for (let a = 0; a < 256; a++) {
  if (HEX_VALUE[a] < 0) continue;
  for (let b = 0; b < 256; b++) if (HEX_VALUE[b] >= 0) HEX_PAIR[(a << 8) | b] = (HEX_VALUE[a] << 4) | HEX_VALUE[b];
}

/**
 * 40 hex digits at view[at, at + 40) into keys[to, to + 20), four digits a
 * load. Returns a negative number when one is not a hex digit. Unrolled: a
 * loop here measured 1.3x slower.
 */
function decodeHex40(view, at, keys, to) {
  let w = view.getUint32(at);
  let x = HEX_PAIR[w >>> 16];
  let y = HEX_PAIR[w & 0xffff];
  let bad = x | y;
  keys[to] = x;
  keys[to + 1] = y;
  w = view.getUint32(at + 4); x = HEX_PAIR[w >>> 16]; y = HEX_PAIR[w & 0xffff]; bad |= x | y; keys[to + 2] = x; keys[to + 3] = y;
  w = view.getUint32(at + 8); x = HEX_PAIR[w >>> 16]; y = HEX_PAIR[w & 0xffff]; bad |= x | y; keys[to + 4] = x; keys[to + 5] = y;
  w = view.getUint32(at + 12); x = HEX_PAIR[w >>> 16]; y = HEX_PAIR[w & 0xffff]; bad |= x | y; keys[to + 6] = x; keys[to + 7] = y;
  w = view.getUint32(at + 16); x = HEX_PAIR[w >>> 16]; y = HEX_PAIR[w & 0xffff]; bad |= x | y; keys[to + 8] = x; keys[to + 9] = y;
  w = view.getUint32(at + 20); x = HEX_PAIR[w >>> 16]; y = HEX_PAIR[w & 0xffff]; bad |= x | y; keys[to + 10] = x; keys[to + 11] = y;
  w = view.getUint32(at + 24); x = HEX_PAIR[w >>> 16]; y = HEX_PAIR[w & 0xffff]; bad |= x | y; keys[to + 12] = x; keys[to + 13] = y;
  w = view.getUint32(at + 28); x = HEX_PAIR[w >>> 16]; y = HEX_PAIR[w & 0xffff]; bad |= x | y; keys[to + 14] = x; keys[to + 15] = y;
  w = view.getUint32(at + 32); x = HEX_PAIR[w >>> 16]; y = HEX_PAIR[w & 0xffff]; bad |= x | y; keys[to + 16] = x; keys[to + 17] = y;
  w = view.getUint32(at + 36); x = HEX_PAIR[w >>> 16]; y = HEX_PAIR[w & 0xffff]; bad |= x | y; keys[to + 18] = x; keys[to + 19] = y;
  return bad;
}

/** decodeHex40 without the bytes: a negative number when one of the 40 is not a hex digit. */
function checkHex40(view, at) {
  let w = view.getUint32(at);
  let bad = HEX_PAIR[w >>> 16] | HEX_PAIR[w & 0xffff];
  w = view.getUint32(at + 4); bad |= HEX_PAIR[w >>> 16] | HEX_PAIR[w & 0xffff];
  w = view.getUint32(at + 8); bad |= HEX_PAIR[w >>> 16] | HEX_PAIR[w & 0xffff];
  w = view.getUint32(at + 12); bad |= HEX_PAIR[w >>> 16] | HEX_PAIR[w & 0xffff];
  w = view.getUint32(at + 16); bad |= HEX_PAIR[w >>> 16] | HEX_PAIR[w & 0xffff];
  w = view.getUint32(at + 20); bad |= HEX_PAIR[w >>> 16] | HEX_PAIR[w & 0xffff];
  w = view.getUint32(at + 24); bad |= HEX_PAIR[w >>> 16] | HEX_PAIR[w & 0xffff];
  w = view.getUint32(at + 28); bad |= HEX_PAIR[w >>> 16] | HEX_PAIR[w & 0xffff];
  w = view.getUint32(at + 32); bad |= HEX_PAIR[w >>> 16] | HEX_PAIR[w & 0xffff];
  w = view.getUint32(at + 36); bad |= HEX_PAIR[w >>> 16] | HEX_PAIR[w & 0xffff];
  return bad;
}

/** A per-prefix row's 35 digits at view[at, at + 35) after the prefix's 5 (nibble values) into keys[to, to + 20). */
function decodeHex35(view, at, prefix, keys, to) {
  keys[to] = (prefix[0] << 4) | prefix[1];
  keys[to + 1] = (prefix[2] << 4) | prefix[3];
  const first = HEX_VALUE[view.getUint8(at)];
  keys[to + 2] = (prefix[4] << 4) | first;
  let bad = first;
  for (let i = 3, j = at + 1; i < 19; i += 2, j += 4) {
    const w = view.getUint32(j);
    const x = HEX_PAIR[w >>> 16];
    const y = HEX_PAIR[w & 0xffff];
    bad |= x | y;
    keys[to + i] = x;
    keys[to + i + 1] = y;
  }
  const last = HEX_PAIR[view.getUint16(at + 33)];
  keys[to + 19] = last;
  return bad | last;
}

export class RecordReader {
  /**
   * @param {'lines'|'hibp'|'urls'} format
   * @param {{ minCount?: number, skipInvalid?: boolean, onKey?: ((key: Uint8Array, count: number) => void) | null,
   *   onKeys?: ((keys: Uint8Array, counts: Float64Array, n: number) => void) | null,
   *   urlKey?: ((url: string) => Uint8Array) | null, labels?: import('./values.js').LabelSet | null }} options
   *   onKey receives each key to insert (a view valid only during the call) and
   *   its count (1 outside hibp); null when only counting. urlKey turns a urls
   *   line into its key, throwing E_URL for a URL that cannot be canonicalized.
   *   onKeys (hibp, instead of onKey) receives the keys in batches of up to
   *   KEY_BATCH: key i is keys[20 i, 20 i + 20), its COUNT counts[i]; both
   *   valid only during the call. Call flush() after the last line.
   *   labels (urls): every line is `URL<TAB>THREAT`, and onKey's second argument is the
   *   label's value; without it a line with a tab is an error (the first line had no label).
   */
  constructor(format, { minCount = 0, skipInvalid = false, onKey = null, onKeys = null, urlKey = null, labels = null }) {
    this.format = format;
    this.minCount = minCount;
    this.skipInvalid = skipInvalid;
    this.onKey = onKey;
    this.onKeys = format === 'hibp' ? onKeys : null;
    // The batch being filled: decoded keys back to back, and their counts.
    this.batchKeys = new Uint8Array(KEY_BATCH * KEY_BYTES);
    this.batchCounts = new Float64Array(KEY_BATCH);
    this.batchSize = 0;
    this.rowsDone = 0; // lines taken by the last rows() call
    this.view = null; // a DataView of the buffer rows() last read
    this.viewBuffer = null;
    this.items = 0; // keys handed to onKey
    this.empty = 0; // empty lines (skipped, never an error)
    this.duplicates = 0; // urls with labels: a key listed again with the same label
    this.invalid = 0; // malformed lines skipped under --skip-invalid
    this.belowMinCount = 0; // hibp rows with COUNT < --min-count
    this.invalidLineNumbers = []; // the first few, for the report
    this.key = new Uint8Array(20);
    this.urlKey = urlKey;
    this.labels = labels;
    /** labels: each key's value and line, so a URL given two labels is an error, not a silent choice */
    this.labelled = labels === null ? null : new Map();
    // Per-prefix files (a downloader directory): the file's name and its 5 prefix digits.
    this.file = null;
    this.prefix = null;
    this.line = format === 'hibp' ? this.#hibpLine : format === 'urls' ? this.#urlLine : this.#plainLine;
    /** The LineSplitter's fast path (hibp): rows() over whole chunks. */
    this.fastPath = format === 'hibp' ? this : null;
  }

  /** Hand the keys still batched to onKeys. */
  flush() {
    const n = this.batchSize;
    this.batchSize = 0;
    if (n > 0 && this.onKeys !== null) this.onKeys(this.batchKeys, this.batchCounts, n);
  }

  /**
   * The fast path of the hibp format, for LineSplitter: reads the complete
   * lines of buffer[start, end) (end is just past an LF) while each is a
   * plain row (an optional byte order mark, 40 or, in a per-prefix file, 35
   * hex digits, ':', decimal digits, LF or CRLF), decoding the keys straight
   * into the batch. Returns where it stopped: at `end`, or at the start of the
   * first line that is anything else (empty, malformed, too long), which the
   * splitter then hands to line() as usual. this.rowsDone is the number of
   * lines taken. Rows, counts and keys are exactly line()'s.
   */
  rows(b, start, end) {
    const prefixed = this.prefix !== null;
    const digits = prefixed ? SUFFIX_HEX : SHA1_HEX;
    // Only counting (the first pass): the combined layout's digits are checked, not decoded.
    const checkOnly = !prefixed && this.onKeys === null && this.onKey === null;
    const prefix = this.prefix;
    const keys = this.batchKeys;
    const counts = this.batchCounts;
    const minCount = this.minCount;
    const batching = this.onKeys !== null;
    const single = this.onKey;
    // One DataView per underlying buffer (chunks are views of one read buffer).
    if (this.viewBuffer !== b.buffer) {
      this.viewBuffer = b.buffer;
      this.view = new DataView(b.buffer);
    }
    const view = this.view;
    const base = b.byteOffset;
    let n = this.batchSize;
    let p = start;
    let lines = 0;
    let items = 0;
    let below = 0;
    while (p < end) {
      let s = p;
      if (b[s] === BOM[0] && b[s + 1] === BOM[1] && b[s + 2] === BOM[2]) s += 3;
      // A colon where it belongs: the digits before it are inside b.
      if (b[s + digits] !== COLON) break;
      const at = n * KEY_BYTES;
      const bad = checkOnly ? checkHex40(view, base + s) : prefixed ? decodeHex35(view, base + s, prefix, keys, at) : decodeHex40(view, base + s, keys, at);
      if (bad < 0) break;
      let q = s + digits + 1;
      let digit = b[q] - ZERO;
      if (!(digit >= 0 && digit <= 9)) break; // no COUNT (or past the buffer: NaN)
      let count = 0;
      do {
        count = count * 10 + digit;
        digit = b[++q] - ZERO;
      } while (digit >= 0 && digit <= 9);
      let next;
      if (b[q] === LF) next = q + 1;
      else if (b[q] === CR && b[q + 1] === LF) next = q + 2;
      else break;
      if (q - p > MAX_LINE_BYTES) break; // a line too long, however well formed
      lines++;
      p = next;
      if (count < minCount) {
        below++;
        continue;
      }
      items++;
      if (batching) {
        counts[n] = count;
        if (++n === KEY_BATCH) {
          this.batchSize = n;
          this.flush();
          n = 0;
        }
      } else if (single !== null) {
        this.key.set(keys.subarray(at, at + KEY_BYTES));
        single(this.key, count);
      }
    }
    this.batchSize = n;
    this.items += items;
    this.belowMinCount += below;
    this.rowsDone = lines;
    return p;
  }

  /**
   * The next lines come from one per-prefix file of a downloader directory:
   * rows are 35-digit suffixes of hashes starting with `prefix` (5 hex digits).
   */
  beginFile(name, prefix) {
    this.file = name;
    this.prefix = new Int8Array(PREFIX_HEX);
    for (let i = 0; i < PREFIX_HEX; i++) this.prefix[i] = HEX_VALUE[prefix.charCodeAt(i)];
  }

  /** Lines read but not inserted, empty lines aside. */
  get skipped() {
    return this.invalid + this.belowMinCount;
  }

  #plainLine = (buffer, start, end, lineNumber, tooLong) => {
    if (tooLong) return this.#reject(lineNumber, `line is longer than ${MAX_LINE_BYTES} bytes, starting ${excerpt(buffer, start, end, true)}`);
    if (end === start) {
      this.empty++;
      return;
    }
    this.items++;
    if (this.onKey !== null) this.onKey(buffer.subarray(start, end), 1);
  };

  // Every urls line is canonicalized, in the counting pass too, so a bad URL
  // is reported with its line number before anything is built.
  #urlLine = (buffer, start, end, lineNumber, tooLong) => {
    if (tooLong) return this.#reject(lineNumber, `line is longer than ${MAX_LINE_BYTES} bytes, starting ${excerpt(buffer, start, end, true)}`);
    if (end === start) {
      this.empty++;
      return;
    }
    let tab = -1;
    for (let i = start; i < end; i++) {
      if (buffer[i] === TAB) {
        tab = i;
        break;
      }
    }
    let value = 1;
    /** @type {string | null} */
    let label = null;
    const urlEnd = tab < 0 ? end : tab;
    if (this.labels === null) {
      if (tab >= 0) return this.#reject(lineNumber, `a second, tab-separated column (a threat label), but the first line has none: label every line or none, got ${excerpt(buffer, start, end, false)}`);
    } else {
      if (tab < 0) return this.#reject(lineNumber, `expected URL<TAB>THREAT (the first line has a threat label), got ${excerpt(buffer, start, end, false)}`);
      try {
        label = utf8.decode(buffer.subarray(tab + 1, end));
      } catch {
        return this.#reject(lineNumber, 'the threat label is not UTF-8');
      }
      if (label.includes('\t')) return this.#reject(lineNumber, `expected URL<TAB>THREAT, got more than two columns: ${excerpt(buffer, start, end, false)}`);
      if (tab === start) return this.#reject(lineNumber, 'no URL before the threat label');
      if (!validLabel(label)) return this.#reject(lineNumber, `threat label ${excerpt(buffer, tab + 1, end, false)} is not 1 to ${MAX_LABEL_BYTES} bytes without control characters`);
    }
    let key;
    try {
      key = /** @type {(url: string) => Uint8Array} */ (this.urlKey)(utf8.decode(buffer.subarray(start, urlEnd))); // urls readers get one
    } catch (/** @type {any} */ error) {
      if (error instanceof TypeError || error?.code === 'E_URL') {
        return this.#reject(lineNumber, `not a URL or expression: ${excerpt(buffer, start, end, false)}`);
      }
      throw error;
    }
    if (label !== null && this.labels !== null) {
      const known = this.labels.values.get(label);
      if (known !== undefined) value = known;
      else if (this.labels.size >= this.labels.limit) {
        // More classes than the values can tell apart: the build cannot go on, whatever --skip-invalid says.
        throw usageError(`${this.#where(lineNumber)}: threat label ${JSON.stringify(label)} is label ${this.labels.size + 1}, more than ${this.labels.limitText}`);
      } else value = this.labels.valueOf(label);
      const id = Buffer.from(key.buffer, key.byteOffset, key.length).toString('latin1');
      const before = /** @type {Map<string, { value: number, line: number }>} */ (this.labelled).get(id);
      if (before === undefined) /** @type {Map<string, { value: number, line: number }>} */ (this.labelled).set(id, { value, line: lineNumber });
      else if (before.value !== value) {
        throw inputError(`${this.#where(lineNumber)}: ${excerpt(buffer, start, urlEnd, false)} is labelled ${JSON.stringify(label)}, but line ${before.line} lists the same expression as ${JSON.stringify(this.labels.labels[before.value])}: one label a URL`);
      } else {
        this.duplicates++; // the same URL and label again: one key
        return;
      }
    }
    this.items++;
    if (this.onKey !== null) this.onKey(key, value);
  };

  #hibpLine = (buffer, start, end, lineNumber, tooLong) => {
    // The downloader starts every block with a byte order mark (each range it
    // appends to one file, and each per-prefix file): not part of the row.
    if (end - start >= 3 && buffer[start] === BOM[0] && buffer[start + 1] === BOM[1] && buffer[start + 2] === BOM[2]) start += 3;
    if (!tooLong && end === start) {
      this.empty++;
      return;
    }
    // The key is decoded straight from the input range into one reused array.
    const prefix = this.prefix;
    const count = tooLong ? -1 : prefix === null ? decodeHibp(buffer, start, end, this.key) : decodeHibpSuffix(buffer, start, end, prefix, this.key);
    if (count < 0) return this.#badHibpRow(buffer, start, end, lineNumber, tooLong);
    if (count < this.minCount) {
      this.belowMinCount++;
      return;
    }
    this.items++;
    if (this.onKeys !== null) {
      const n = this.batchSize;
      this.batchKeys.set(this.key, n * KEY_BYTES);
      this.batchCounts[n] = count;
      this.batchSize = n + 1;
      if (n + 1 === KEY_BATCH) this.flush();
    } else if (this.onKey !== null) this.onKey(this.key, count);
  };

  // A row that does not parse: an NTLM dump or the other layout's rows are
  // refused whatever --skip-invalid says; anything else is a bad line.
  #badHibpRow(buffer, start, end, lineNumber, tooLong) {
    const digits = tooLong ? -1 : hexDigitsBeforeColon(buffer, start, end);
    const where = this.#where(lineNumber);
    if (this.prefix === null) {
      if (digits === NTLM_HEX) throw ntlmError(`${where}: this is an NTLM dump (32-digit hashes); bloomgate builds from the SHA-1 dump (40 digits: the downloader without -n)`);
      if (digits === SUFFIX_HEX) return this.#reject(lineNumber, `expected SHA1HEX:COUNT, got a 35-digit suffix ${excerpt(buffer, start, end, false)} (per-prefix files go in a directory named by prefix: give the directory)`);
    } else {
      if (digits === NTLM_HEX - PREFIX_HEX) throw ntlmError(`${where}: this is an NTLM dump (27-digit suffixes: 32-digit hashes); bloomgate builds from the SHA-1 dump (40 digits: the downloader without -n)`);
      if (digits === SHA1_HEX) throw layoutError(`${where}: a whole 40-digit hash in a per-prefix file, whose rows are 35-digit suffixes (mixed layouts: keep a combined dump out of the directory)`);
      return this.#reject(lineNumber, `expected SUFFIX:COUNT (35 hex digits after the file's prefix), got ${excerpt(buffer, start, end, tooLong)}`);
    }
    return this.#reject(lineNumber, `expected SHA1HEX:COUNT, got ${excerpt(buffer, start, end, tooLong)}`);
  }

  #where(lineNumber) {
    return this.file === null ? `line ${lineNumber}` : `${this.file} line ${lineNumber}`;
  }

  #reject(lineNumber, message) {
    if (!this.skipInvalid) throw inputError(`${this.#where(lineNumber)}: ${message}`);
    this.invalid++;
    if (this.invalidLineNumbers.length < REMEMBERED_LINE_NUMBERS) this.invalidLineNumbers.push(this.file === null ? lineNumber : `${this.file}:${lineNumber}`);
  }
}

/**
 * Parse `SHA1HEX:COUNT` (hex in either case, COUNT a decimal integer) from
 * bytes[start, end) into key[0..20). Returns COUNT (approximate above 2^53,
 * which only matters for comparing with --min-count), or -1 when the line is
 * malformed.
 */
export function decodeHibp(bytes, start, end, key) {
  if (end - start < SHA1_HEX + 2 || bytes[start + SHA1_HEX] !== COLON) return -1;
  for (let i = 0, j = start; i < 20; i++, j += 2) {
    const high = HEX_VALUE[bytes[j]];
    const low = HEX_VALUE[bytes[j + 1]];
    if ((high | low) < 0) return -1;
    key[i] = (high << 4) | low;
  }
  let count = 0;
  for (let i = start + SHA1_HEX + 1; i < end; i++) {
    const digit = bytes[i] - ZERO;
    if (digit < 0 || digit > 9) return -1;
    count = count * 10 + digit;
  }
  return count;
}

/**
 * A per-prefix row: 35 hex digits, a colon, COUNT; the key's first 5 digits
 * are `prefix` (nibble values). Returns COUNT or -1, as decodeHibp.
 */
export function decodeHibpSuffix(bytes, start, end, prefix, key) {
  if (end - start < SUFFIX_HEX + 2 || bytes[start + SUFFIX_HEX] !== COLON) return -1;
  let bad = 0;
  for (let i = 0; i < 20; i++) {
    const a = 2 * i;
    const high = a < PREFIX_HEX ? prefix[a] : HEX_VALUE[bytes[start + a - PREFIX_HEX]];
    const low = a + 1 < PREFIX_HEX ? prefix[a + 1] : HEX_VALUE[bytes[start + a + 1 - PREFIX_HEX]];
    bad |= high | low;
    key[i] = (high << 4) | low;
  }
  if (bad < 0) return -1;
  let count = 0;
  for (let i = start + SUFFIX_HEX + 1; i < end; i++) {
    const digit = bytes[i] - ZERO;
    if (digit < 0 || digit > 9) return -1;
    count = count * 10 + digit;
  }
  return count;
}

/** How many hex digits a row has before its colon (-1 when something else comes first, or no colon). */
function hexDigitsBeforeColon(bytes, start, end) {
  for (let i = start; i < end; i++) {
    if (bytes[i] === COLON) return i - start;
    if (HEX_VALUE[bytes[i]] < 0) return -1;
  }
  return -1;
}

const ntlmError = (message) => new CliError(message, 'E_NTLM', EXIT.DATA);
export const layoutError = (message) => new CliError(message, 'E_LAYOUT', EXIT.DATA);
