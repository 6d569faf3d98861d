// @ts-check
// Writing an exact store (.bgs) in bounded memory, whatever the row count.
//
// Records are fixed-width (hash, big-endian u32 count), exactly as the store
// holds them. While the input arrives in hash order (the HIBP downloader's
// output does), each record goes straight to the temporary output file, after
// room kept for the largest index; a histogram of the first 20 bits of each
// hash gives the index once the count is known. The first record out of order
// turns what was written so far into sorted run 0 and switches to an external
// sort: records gather in a fixed buffer (RUN_BYTES), which is sorted and
// written as a run file next to the output when full; the runs are then merged
// (at most MAX_FAN_IN at a time) into the output file. Duplicate hashes merge
// on the way, keeping the largest count, as writeStore does. Finally the header
// and index go in front of the records (moving them down when the index is
// smaller than the room kept), and one pass over the file computes the
// checksum. The bytes equal writeStore's for the same records.
//
// All I/O is synchronous: records arrive from a synchronous line callback,
// and sorting is CPU work anyway. Temporary files are `<store>.tmp-<pid>-…`,
// removed on success, on failure and on signals (output.js).
import { closeSync, ftruncateSync, openSync, readSync, writeSync } from 'node:fs';
import { unlink } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { endianness } from 'node:os';

import { HASH_TYPES, MAX_INDEX_BITS, MAX_LABELS_BYTES, STORE_HEADER_SIZE, storeHeader } from '../store.js';
import { cannotCreate } from './errors.js';
import { forgetTemporary, temporaryPath, trackTemporary } from './output.js';

const COUNT_BYTES = 4;
const HISTOGRAM_BUCKETS = 2 ** MAX_INDEX_BITS;
/** Where records start while the count (so the index size) is unknown: after the largest index. */
export const RESERVED_RECORDS_OFFSET = STORE_HEADER_SIZE + (HISTOGRAM_BUCKETS + 1) * 8;
const WRITE_BYTES = 4 << 20;
/** One sorted run: this many bytes of records in memory (plus 8 bytes a record of sort keys). */
export const RUN_BYTES = 64 << 20;
/** Runs merged at once; more runs are merged in several passes. */
const MAX_FAN_IN = 64;
/** Read buffers of all merged runs together. */
const MERGE_BUFFER_BYTES = 64 << 20;
const LITTLE_ENDIAN = endianness() === 'LE';

/**
 * Appends records in ascending hash order to a file from `start`, merging
 * equal hashes (largest count), counting records per 20-bit prefix. The last
 * record (which an equal hash may still update) waits in the write buffer
 * itself, at `fill`: a record is copied once, into the buffer, and never
 * through a temporary.
 */
class SortedSink {
  constructor(fd, path, recordSize, hashBytes, start, withHistogram) {
    this.fd = fd;
    this.path = path;
    this.recordSize = recordSize;
    this.hashBytes = hashBytes;
    this.start = start;
    this.position = start;
    this.count = 0;
    this.histogram = withHistogram ? new Float64Array(HISTOGRAM_BUCKETS) : null;
    this.buffer = new Uint8Array(Math.floor(WRITE_BYTES / recordSize) * recordSize);
    this.fill = 0; // bytes of records taken; a pending record follows them
    this.hasPending = false;
  }

  /**
   * Add the record at bytes[at, at + recordSize). Returns false, changing
   * nothing, when its hash is below the previous one.
   */
  push(bytes, at) {
    return this.pushKey(bytes, at, readCount(bytes, at + this.hashBytes));
  }

  /** push() of the hash at src[at, at + hashBytes) with `count` (at most 2^32 - 1). */
  pushKey(src, at, count) {
    const { buffer, hashBytes } = this;
    let p = this.fill;
    if (this.hasPending) {
      let order = 0;
      for (let i = 0; i < hashBytes; i++) {
        const d = src[at + i] - buffer[p + i];
        if (d !== 0) {
          order = d;
          break;
        }
      }
      if (order < 0) return false;
      if (order === 0) {
        if (count > readCount(buffer, p + hashBytes)) writeCount(buffer, p + hashBytes, count);
        return true;
      }
      this.#take();
      p = this.fill;
    }
    for (let i = 0; i < hashBytes; i++) buffer[p + i] = src[at + i];
    writeCount(buffer, p + hashBytes, count);
    this.hasPending = true;
    return true;
  }

  // The pending record is final: count it, and write the buffer out when full.
  #take() {
    const b = this.buffer;
    const p = this.fill;
    if (this.histogram) this.histogram[((b[p] << 12) | (b[p + 1] << 4) | (b[p + 2] >>> 4)) >>> 0]++;
    this.count++;
    this.hasPending = false;
    this.fill = p + this.recordSize;
    if (this.fill === b.length) this.#flush();
  }

  #flush() {
    if (this.fill === 0) return;
    writeAll(this.fd, this.path, this.buffer, this.fill, this.position);
    this.position += this.fill;
    this.fill = 0;
  }

  /** Write the last record out; the sink holds `count` records in [start, position). */
  finish() {
    if (this.hasPending) this.#take();
    this.#flush();
    return this.count;
  }
}

function writeCount(bytes, at, count) {
  bytes[at] = count >>> 24;
  bytes[at + 1] = (count >>> 16) & 0xff;
  bytes[at + 2] = (count >>> 8) & 0xff;
  bytes[at + 3] = count & 0xff;
}

function readCount(bytes, at) {
  return ((bytes[at] << 24) | (bytes[at + 1] << 16) | (bytes[at + 2] << 8) | bytes[at + 3]) >>> 0;
}

function writeAll(fd, path, buffer, length, position) {
  let offset = 0;
  try {
    while (offset < length) {
      offset += writeSync(fd, buffer, offset, length - offset, position + offset);
    }
  } catch (error) {
    throw cannotCreate(path, error);
  }
}

function readFully(fd, path, buffer, length, position) {
  let offset = 0;
  try {
    while (offset < length) {
      const n = readSync(fd, buffer, offset, length - offset, position + offset);
      if (n === 0) throw Object.assign(new Error('file ended early'), { code: 'EIO' });
      offset += n;
    }
  } catch (error) {
    throw cannotCreate(path, error);
  }
}

/**
 * Builds one .bgs file into an AtomicOutput. add() every record, then
 * `await finish()`; abort() on failure.
 */
export class StoreWriter {
  /**
   * @param {import('./output.js').AtomicOutput} output
   * @param {{ hashType: 'sha1'|'sha256', listId?: string, generation?: number, minCount?: number,
   *   progress?: import('./progress.js').Progress | null, runBytes?: number, labelled?: boolean }} options
   *   labelled: a store of threat labels (finish(labels)): each record's count is its value, and
   *   room is kept for the label table between the index and the records.
   */
  constructor(output, { hashType, listId, generation = 0, minCount = 0, progress = null, runBytes = RUN_BYTES, labelled = false }) {
    const type = HASH_TYPES[hashType];
    if (!type) throw new TypeError(`hashType must be 'sha1' or 'sha256', got ${hashType}`);
    storeHeader({ hashType, count: 0, listId, generation, minCount }); // validate the identity now
    this.output = output;
    this.identity = { hashType, listId, generation, minCount, labels: /** @type {string[] | undefined} */ (undefined) };
    this.recordsStart = RESERVED_RECORDS_OFFSET + (labelled ? MAX_LABELS_BYTES : 0);
    this.hashBytes = type.bytes;
    this.recordSize = type.bytes + COUNT_BYTES;
    this.progress = progress;
    this.runRecords = Math.max(2, Math.min(2 ** 24, Math.floor(runBytes / this.recordSize)));
    /** @type {SortedSink | null} */
    this.sink = new SortedSink(output.fd, output.temporaryPath, this.recordSize, this.hashBytes, this.recordsStart, true);
    this.sorted = true; // every record so far came in order
    this.runs = []; // { path, fd, start, end } sorted runs on disk
    this.temporaries = []; // paths to remove at the end
    /** @type {Uint8Array | null} */
    this.runBuffer = null;
    this.runFill = 0;
    this.added = 0;
  }

  /** Add one record (the key is copied). */
  add(hash, count) {
    this.#add(hash, 0, count);
  }

  /** Add n records: hash i is hashes[i * hashBytes, (i + 1) * hashBytes), its count counts[i]. */
  addKeys(hashes, counts, n) {
    const { hashBytes } = this;
    for (let i = 0, at = 0; i < n; i++, at += hashBytes) this.#add(hashes, at, counts[i]);
  }

  // The record of the hash at src[at, at + hashBytes) and its count.
  #add(src, at, count) {
    const c = count > 0xffffffff ? 0xffffffff : count;
    this.added++;
    if (this.sorted) {
      if (/** @type {SortedSink} */ (this.sink).pushKey(src, at, c)) return; // the sink lives while sorted
      this.#startSorting();
    }
    const { hashBytes } = this;
    const runBuffer = /** @type {Uint8Array} */ (this.runBuffer); // set once not sorted
    const to = this.runFill * this.recordSize;
    for (let i = 0; i < hashBytes; i++) runBuffer[to + i] = src[at + i];
    writeCount(runBuffer, to + hashBytes, c);
    if (++this.runFill === this.runRecords) this.#writeRun();
  }

  // The input is not in order: what the sink wrote is sorted run 0 (in the
  // output file itself); from now on records gather in the run buffer.
  #startSorting() {
    this.sorted = false;
    const sink = /** @type {SortedSink} */ (this.sink);
    const count = sink.finish();
    if (count > 0) this.runs.push({ path: this.output.temporaryPath, fd: this.output.fd, start: sink.start, end: sink.position, owned: false });
    this.sink = null;
    this.runBuffer = new Uint8Array(this.runRecords * this.recordSize);
    /** @type {BigUint64Array | null} */
    this.keys = new BigUint64Array(this.runRecords);
  }

  #newTemporary(suffix) {
    const path = temporaryPath(this.output.path, suffix);
    let fd;
    try {
      fd = openSync(path, 'w+', suffix === 'merged' ? 0o644 : 0o600);
    } catch (error) {
      throw cannotCreate(path, error);
    }
    trackTemporary(path);
    this.temporaries.push(path);
    return { path, fd };
  }

  // Sort the run buffer and write it as one run file.
  #writeRun() {
    const n = this.runFill;
    if (n === 0) return;
    const { recordSize } = this;
    const { path, fd } = this.#newTemporary(`run${this.runs.length}`);
    this.runFiles = (this.runFiles ?? 0) + 1;
    this.progress?.setNote(`sorting run ${this.runFiles}`);
    const runBuffer = /** @type {Uint8Array} */ (this.runBuffer); // a run is written only once not sorted
    const order = sortRecords(runBuffer, n, recordSize, this.hashBytes, /** @type {BigUint64Array} */ (this.keys));
    const words = recordSize / 4;
    const source = new Uint32Array(runBuffer.buffer, runBuffer.byteOffset, (n * recordSize) / 4);
    const chunkRecords = Math.floor(WRITE_BYTES / recordSize);
    const out = new Uint8Array(chunkRecords * recordSize);
    const out32 = new Uint32Array(out.buffer);
    let position = 0;
    for (let i = 0; i < n; i += chunkRecords) {
      const m = Math.min(chunkRecords, n - i);
      for (let j = 0; j < m; j++) {
        const s = order(i + j) * words;
        const d = j * words;
        for (let w = 0; w < words; w++) out32[d + w] = source[s + w];
      }
      writeAll(fd, path, out, m * recordSize, position);
      position += m * recordSize;
    }
    this.runs.push({ path, fd, start: 0, end: position, owned: true });
    this.runFill = 0;
    this.progress?.setNote(null);
  }

  /**
   * Write the store: merge the runs if any, then the header, index and checksum. A labelled
   * store gets its `labels` (every record's count is below their number: the caller's check).
   * @param {string[]} [labels]
   */
  async finish(labels) {
    this.identity.labels = labels;
    let sink = /** @type {SortedSink} */ (this.sink); // null only when not sorted, and replaced then
    if (!this.sorted) {
      this.#writeRun();
      this.runBuffer = null;
      this.keys = null;
      sink = this.#mergeRuns();
    } else {
      sink.finish();
    }
    const count = sink.count;
    this.#finalize(sink);
    if (!this.sorted) {
      closeSync(sink.fd);
      await this.output.adopt(sink.path); // the merged file replaces run 0's
      forgetTemporary(sink.path);
    }
    await this.#removeTemporaries();
    return { count, sorted: this.sorted, runs: this.runCount ?? 0 };
  }

  // k-way merges until one sorted file holds every record.
  #mergeRuns() {
    let runs = this.runs;
    this.runCount = runs.length;
    const total = runs.reduce((sum, run) => sum + run.end - run.start, 0);
    let pass = 0;
    while (runs.length > MAX_FAN_IN) {
      const group = runs.slice(0, MAX_FAN_IN);
      const { path, fd } = this.#newTemporary(`merge${pass++}`);
      const sink = new SortedSink(fd, path, this.recordSize, this.hashBytes, 0, false);
      this.#merge(group, sink, `merging (pass ${pass})`);
      sink.finish();
      this.#release(group);
      runs = [...runs.slice(MAX_FAN_IN), { path, fd, start: 0, end: sink.position, owned: true }];
    }
    const { path, fd } = this.#newTemporary('merged');
    const sink = new SortedSink(fd, path, this.recordSize, this.hashBytes, this.recordsStart, true);
    this.#merge(runs, sink, 'merging', total);
    sink.finish();
    this.#release(runs);
    return sink;
  }

  #release(runs) {
    for (const run of runs) {
      if (!run.owned) continue;
      closeSync(run.fd);
      run.closed = true;
    }
  }

  #merge(runs, sink, phase, total = runs.reduce((sum, run) => sum + run.end - run.start, 0)) {
    const { recordSize, hashBytes } = this;
    const bufferRecords = Math.max(1024, Math.floor(MERGE_BUFFER_BYTES / runs.length / recordSize));
    const cursors = runs.filter((run) => run.end > run.start).map((run) => new RunCursor(run, recordSize, bufferRecords));
    const heap = cursors.filter((cursor) => cursor.next());
    const less = (a, b) => {
      if (a.h0 !== b.h0) return a.h0 < b.h0;
      if (a.h1 !== b.h1) return a.h1 < b.h1;
      const x = a.buffer;
      const y = b.buffer;
      for (let i = 8; i < hashBytes; i++) {
        const d = x[a.at + i] - y[b.at + i];
        if (d !== 0) return d < 0;
      }
      return false;
    };
    const down = (i) => {
      const n = heap.length;
      const item = heap[i];
      for (;;) {
        let child = 2 * i + 1;
        if (child >= n) break;
        if (child + 1 < n && less(heap[child + 1], heap[child])) child++;
        if (!less(heap[child], item)) break;
        heap[i] = heap[child];
        i = child;
      }
      heap[i] = item;
    };
    for (let i = (heap.length >> 1) - 1; i >= 0; i--) down(i);
    this.progress?.start(phase, total);
    let done = 0;
    while (heap.length > 0) {
      const top = heap[0];
      sink.push(top.buffer, top.at);
      if ((++done & 0xffff) === 0) this.progress?.update(done * recordSize, done);
      if (!top.next()) {
        const last = heap.pop();
        if (heap.length === 0) break;
        heap[0] = last;
      }
      down(0);
    }
    this.progress?.update(done * recordSize, done);
  }

  // Header and index in front of the records, records moved down to where the
  // index ends, and the checksum over everything after it.
  #finalize(sink) {
    const { fd, path, count, histogram } = sink;
    const { header, indexBits, recordsOffset, labelTable } = storeHeader({ ...this.identity, count });
    const buckets = 2 ** indexBits;
    const index = new Uint8Array((buckets + 1) * 8);
    const view = new DataView(index.buffer);
    const per = HISTOGRAM_BUCKETS / buckets;
    let below = 0;
    for (let b = 0; b < buckets; b++) {
      view.setBigUint64(b * 8, BigInt(below), true);
      for (let j = b * per; j < (b + 1) * per; j++) below += histogram[j];
    }
    view.setBigUint64(buckets * 8, BigInt(below), true);
    const sha = createHash('sha256');
    sha.update(header.subarray(16));
    sha.update(index);
    sha.update(labelTable);
    const bytes = count * this.recordSize;
    const chunk = new Uint8Array(Math.floor(WRITE_BYTES / this.recordSize) * this.recordSize);
    const shift = this.recordsStart - recordsOffset;
    this.progress?.start('writing', bytes);
    for (let done = 0; done < bytes; done += chunk.length) {
      const n = Math.min(chunk.length, bytes - done);
      readFully(fd, path, chunk, n, this.recordsStart + done);
      if (shift > 0) writeAll(fd, path, chunk, n, recordsOffset + done);
      sha.update(n === chunk.length ? chunk : chunk.subarray(0, n));
      this.progress?.update(done + n, (done + n) / this.recordSize);
    }
    if (shift > 0) {
      try {
        ftruncateSync(fd, recordsOffset + bytes);
      } catch (error) {
        throw cannotCreate(path, error);
      }
    }
    header.set(sha.digest().subarray(0, 8), 8);
    writeAll(fd, path, header, header.length, 0);
    writeAll(fd, path, index, index.length, STORE_HEADER_SIZE);
    if (labelTable.length > 0) writeAll(fd, path, labelTable, labelTable.length, recordsOffset - labelTable.length);
    this.progress?.clear();
  }

  async #removeTemporaries() {
    for (const run of this.runs) {
      if (run.owned && !run.closed) {
        try {
          closeSync(run.fd);
        } catch {
          // already closed
        }
        run.closed = true;
      }
    }
    for (const path of this.temporaries) {
      forgetTemporary(path);
      await unlink(path).catch(() => {});
    }
    this.temporaries = [];
  }

  /** Give up: remove every temporary file (the output's own is the caller's). */
  async abort() {
    await this.#removeTemporaries();
  }
}

/** Reads one sorted run in buffered pieces; `at` is the current record's offset in `buffer`. */
class RunCursor {
  constructor(run, recordSize, bufferRecords) {
    this.run = run;
    this.recordSize = recordSize;
    this.buffer = new Uint8Array(bufferRecords * recordSize);
    this.position = run.start; // file offset of the next read
    this.length = 0;
    this.at = -recordSize;
    this.h0 = 0;
    this.h1 = 0;
  }

  /** Advance to the next record; false at the end of the run. */
  next() {
    this.at += this.recordSize;
    if (this.at >= this.length) {
      const left = this.run.end - this.position;
      if (left <= 0) return false;
      const n = Math.min(this.buffer.length, left);
      readFully(this.run.fd, this.run.path, this.buffer, n, this.position);
      this.position += n;
      this.length = n;
      this.at = 0;
    }
    const b = this.buffer;
    const at = this.at;
    this.h0 = ((b[at] << 24) | (b[at + 1] << 16) | (b[at + 2] << 8) | b[at + 3]) >>> 0;
    this.h1 = ((b[at + 4] << 24) | (b[at + 5] << 16) | (b[at + 6] << 8) | b[at + 7]) >>> 0;
    return true;
  }
}

/**
 * Sort n fixed-width records by hash (bytewise). Returns order(i): the index
 * of the i-th smallest record. The native typed-array sort orders 64-bit keys
 * holding the first 40 bits of the hash and the record index (24 bits); runs
 * of equal 40-bit prefixes (rare for real hashes, but duplicates and crafted
 * inputs have them) are then sorted on the whole hash.
 */
export function sortRecords(bytes, n, recordSize, hashBytes, keys = new BigUint64Array(n)) {
  if (n > 2 ** 24) throw new RangeError('at most 2^24 records per run');
  const words = new Uint32Array(keys.buffer, keys.byteOffset, 2 * n);
  const [lowWord, highWord] = LITTLE_ENDIAN ? [0, 1] : [1, 0];
  for (let i = 0, at = 0; i < n; i++, at += recordSize) {
    words[2 * i + highWord] = ((bytes[at] << 24) | (bytes[at + 1] << 16) | (bytes[at + 2] << 8) | bytes[at + 3]) >>> 0;
    words[2 * i + lowWord] = ((bytes[at + 4] << 24) | i) >>> 0;
  }
  const sorted = keys.subarray(0, n).sort();
  const indexOf = (i) => words[2 * i + lowWord] & 0xffffff;
  // Fix up groups that share the first 40 bits.
  for (let i = 0; i < n;) {
    const high = words[2 * i + highWord];
    const top = words[2 * i + lowWord] >>> 24;
    let j = i + 1;
    while (j < n && words[2 * j + highWord] === high && words[2 * j + lowWord] >>> 24 === top) j++;
    if (j - i > 1) {
      const group = [];
      for (let g = i; g < j; g++) group.push(indexOf(g));
      group.sort((a, b) => {
        for (let k = 5; k < hashBytes; k++) {
          const d = bytes[a * recordSize + k] - bytes[b * recordSize + k];
          if (d !== 0) return d;
        }
        return a - b;
      });
      for (let g = i; g < j; g++) words[2 * g + lowWord] = ((top << 24) | group[g - i]) >>> 0;
    }
    i = j;
  }
  void sorted;
  return indexOf;
}
