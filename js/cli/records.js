// What an input line means, per --format:
//   lines  every non-empty line is an item; its bytes are the key (UTF-8 as typed)
//   hibp   `SHA1HEX:COUNT` (Have I Been Pwned dump); the key is the 20 decoded bytes
//   urls   a URL or a Safe Browsing expression ("evil.example/", "evil.example/login");
//          the key is the SHA-256 of its most specific canonical expression
// Malformed lines stop the build with their line number, or with --skip-invalid
// are counted and skipped.
import { CliError, EXIT, inputError } from './errors.js';
import { excerpt, MAX_LINE_BYTES } from './lines.js';

export const FORMATS = ['lines', 'hibp', 'urls'];
/** The key encoding a format's filters use. */
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
    // Per-prefix files (a downloader directory): the file's name and its 5 prefix digits.
    this.file = null;
    this.prefix = null;
    this.line = format === 'hibp' ? this.#hibpLine : format === 'urls' ? this.#urlLine : this.#plainLine;
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
    if (this.onKey !== null) this.onKey(this.key, count);
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
