// What an input line means, per --format:
//   lines  every non-empty line is an item; its bytes are the key (UTF-8 as typed)
//   hibp   `SHA1HEX:COUNT` (Have I Been Pwned dump); the key is the 20 decoded bytes
//   urls   a URL or a Safe Browsing expression ("evil.example/", "evil.example/login");
//          the key is the SHA-256 of its most specific canonical expression
// Malformed lines stop the build with their line number, or with --skip-invalid
// are counted and skipped.
import { inputError } from './errors.js';
import { excerpt, MAX_LINE_BYTES } from './lines.js';

export const FORMATS = ['lines', 'hibp', 'urls'];
/** The key encoding a format's filters use. */
export const KEY_ENCODING = { lines: 'utf8', hibp: 'sha1', urls: 'url' };
/** Formats whose keys are hashes an exact store (.bgs) can hold. */
export const STORE_HASH = { hibp: 'sha1', urls: 'sha256' };

const utf8 = new TextDecoder('utf-8', { fatal: true });

const SHA1_HEX = 40;
const COLON = 0x3a;
const ZERO = 0x30;
const REMEMBERED_LINE_NUMBERS = 5;

const HEX_VALUE = new Int8Array(256).fill(-1);
for (let i = 0; i < 10; i++) HEX_VALUE[0x30 + i] = i;
for (let i = 0; i < 6; i++) {
  HEX_VALUE[0x41 + i] = 10 + i;
  HEX_VALUE[0x61 + i] = 10 + i;
}

export class RecordReader {
  /**
   * @param {'lines'|'hibp'} format
   * @param {{ minCount: number, skipInvalid: boolean, onKey: (key: Uint8Array, count: number) => void,
   *   urlKey?: (url: string) => Uint8Array }} options
   *   onKey receives each key to insert (a view valid only during the call) and
   *   its count (1 outside hibp); null when only counting. urlKey turns a urls
   *   line into its key, throwing E_URL for a URL that cannot be canonicalized.
   */
  constructor(format, { minCount = 0, skipInvalid = false, onKey = null, urlKey = null }) {
    this.format = format;
    this.minCount = minCount;
    this.skipInvalid = skipInvalid;
    this.onKey = onKey;
    this.items = 0; // keys handed to onKey
    this.empty = 0; // empty lines (skipped, never an error)
    this.invalid = 0; // malformed lines skipped under --skip-invalid
    this.belowMinCount = 0; // hibp rows with COUNT < --min-count
    this.invalidLineNumbers = []; // the first few, for the report
    this.key = new Uint8Array(20);
    this.urlKey = urlKey;
    this.line = format === 'hibp' ? this.#hibpLine : format === 'urls' ? this.#urlLine : this.#plainLine;
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
    let key;
    try {
      key = this.urlKey(utf8.decode(buffer.subarray(start, end)));
    } catch (error) {
      if (error instanceof TypeError || error?.code === 'E_URL') {
        return this.#reject(lineNumber, `not a URL or expression: ${excerpt(buffer, start, end, false)}`);
      }
      throw error;
    }
    this.items++;
    if (this.onKey !== null) this.onKey(key, 1);
  };

  #hibpLine = (buffer, start, end, lineNumber, tooLong) => {
    if (!tooLong && end === start) {
      this.empty++;
      return;
    }
    // The key is decoded straight from the input range into one reused array.
    const count = tooLong ? -1 : decodeHibp(buffer, start, end, this.key);
    if (count < 0) return this.#reject(lineNumber, `expected SHA1HEX:COUNT, got ${excerpt(buffer, start, end, tooLong)}`);
    if (count < this.minCount) {
      this.belowMinCount++;
      return;
    }
    this.items++;
    if (this.onKey !== null) this.onKey(this.key, count);
  };

  #reject(lineNumber, message) {
    if (!this.skipInvalid) throw inputError(`line ${lineNumber}: ${message}`);
    this.invalid++;
    if (this.invalidLineNumbers.length < REMEMBERED_LINE_NUMBERS) this.invalidLineNumbers.push(lineNumber);
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
