// @ts-check
// Splitting a byte stream into lines without holding more than one line.
// Lines end in LF; a CR before the LF is dropped (CRLF input); the last line
// may lack its LF. A UTF-8 byte order mark at the very start (Windows editors
// write one) is not part of the first line. Lines are handed out as byte ranges of the input, not
// strings: a key is the line's exact bytes, no decoding happens on the hot
// path, and no object is allocated per line unless the consumer needs a view.

/** Longest accepted line, in bytes (without its line ending). */
export const MAX_LINE_BYTES = 64 * 1024;

const LF = 10;
const CR = 13;
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

export class LineSplitter {
  /**
   * @param {(buffer: Uint8Array, start: number, end: number, lineNumber: number, tooLong: boolean) => void} onLine
   *   Called for every line, empty ones included: the line is buffer[start, end),
   *   valid only during the call. For a line over maxLineBytes, `tooLong` is
   *   true and the range holds only its beginning.
   */
  constructor(onLine, maxLineBytes = MAX_LINE_BYTES, fastPath = null) {
    this.onLine = onLine;
    this.maxLineBytes = maxLineBytes;
    // A consumer that reads runs of whole lines itself (records.js rows()):
    // fastPath.rows(buffer, start, end) takes lines from buffer[start, end),
    // which ends just past an LF, and returns where it stopped (a line start),
    // leaving the count of lines it took in fastPath.rowsDone. A line it does
    // not take goes to onLine as usual, then the fast path resumes.
    this.fastPath = maxLineBytes === MAX_LINE_BYTES ? fastPath : null;
    this.lineNumber = 0;
    // A line split across chunks is gathered here. Room for the longest line,
    // its CR, and one more byte, which is enough to know a line is too long.
    this.carry = Buffer.allocUnsafe(maxLineBytes + 2);
    this.carryLength = 0;
    this.overflow = false;
    this.bomBytes = 0; // bytes of a byte order mark matched so far; -1 once past the start
  }

  /** Start a new input (the next file): line numbers from 1, a byte order mark skipped again. */
  reset() {
    this.lineNumber = 0;
    this.carryLength = 0;
    this.overflow = false;
    this.bomBytes = 0;
  }

  /** Feed the next chunk of input. */
  push(chunk) {
    const length = chunk.length;
    let start = 0;
    if (this.bomBytes >= 0) {
      start = this.#skipBom(chunk);
      if (this.bomBytes >= 0) return; // the chunk ended inside a possible byte order mark
    }
    const fast = this.fastPath;
    let last = -2; // the chunk's last LF, found when first needed
    while (start < length) {
      if (fast !== null && this.carryLength === 0 && !this.overflow) {
        if (last === -2) last = chunk.lastIndexOf(LF);
        if (last < start) {
          this.#append(chunk, start, length);
          return;
        }
        const stop = fast.rows(chunk, start, last + 1);
        this.lineNumber += fast.rowsDone;
        start = stop;
        if (start >= length) return;
      }
      const end = chunk.indexOf(LF, start);
      if (end === -1) {
        this.#append(chunk, start, length);
        return;
      }
      if (this.carryLength > 0 || this.overflow) {
        this.#append(chunk, start, end);
        this.#emitCarry();
      } else {
        this.#emit(chunk, start, end, false);
      }
      start = end + 1;
    }
  }

  /** The input is over: emit a last line that had no LF. */
  end() {
    if (this.bomBytes > 0) this.#append(BOM, 0, this.bomBytes); // input was a BOM prefix only
    this.bomBytes = -1;
    if (this.carryLength > 0 || this.overflow) this.#emitCarry();
  }

  // Match the byte order mark at the input's start, even when chunks split it.
  // Returns where the data starts in this chunk.
  #skipBom(chunk) {
    let i = 0;
    while (i < chunk.length && this.bomBytes < BOM.length && chunk[i] === BOM[this.bomBytes]) {
      i++;
      this.bomBytes++;
    }
    if (this.bomBytes === BOM.length) {
      this.bomBytes = -1;
      return i;
    }
    if (i < chunk.length) {
      // Not a byte order mark: what looked like one is data.
      this.#append(BOM, 0, this.bomBytes);
      this.bomBytes = -1;
    }
    return i;
  }

  #append(chunk, start, end) {
    const room = this.carry.length - this.carryLength;
    const take = Math.min(room, end - start);
    if (take > 0) {
      chunk.copy(this.carry, this.carryLength, start, start + take);
      this.carryLength += take;
    }
    if (take < end - start) this.overflow = true;
  }

  #emitCarry() {
    const overflow = this.overflow;
    const length = this.carryLength;
    this.carryLength = 0;
    this.overflow = false;
    this.#emit(this.carry, 0, length, overflow);
  }

  #emit(buffer, start, end, overflow) {
    this.lineNumber++;
    if (!overflow && end > start && buffer[end - 1] === CR) end--;
    if (overflow || end - start > this.maxLineBytes) {
      this.onLine(buffer, start, Math.min(end, start + 80), this.lineNumber, true);
    } else {
      this.onLine(buffer, start, end, this.lineNumber, false);
    }
  }
}

/** A short printable excerpt of a line for error messages. */
export function excerpt(buffer, start, end, tooLong = false) {
  const shown = Math.min(end - start, 48);
  const text = Buffer.from(buffer.buffer, buffer.byteOffset + start, shown).toString('utf8');
  const more = tooLong || end - start > shown ? '...' : '';
  return JSON.stringify(text) + more;
}
