// @ts-check
// Sharded fuse builds: fuse filters of any size in bounded memory, on one
// machine or as independent jobs (docs/kinds/fuse.md, "Sharded payloads";
// docs/CLI.md, "Fuse filters of any size").
//
// A key belongs to shard h2 >> (64 - b) of S = 2^b shards (h2: the high half
// of its XXH3-128 with the filter's seed), and each shard is the unsharded
// fuse filter of its keys. On one machine `build` hashes every key once,
// appends its h1 (8 bytes, little-endian) to the shard's temporary file next
// to the output, then builds the shards one by one in worker threads (--jobs
// N at a time), each in its own WebAssembly instance holding one shard's keys,
// and writes one file. `build --shard I/S` builds one shard's part from the
// whole input as an independent job; `join` (join.js) puts the parts together
// into the same bytes.
import { closeSync, openSync, readSync, unlinkSync, writeSync } from 'node:fs';
import { endianness } from 'node:os';
import { Worker } from 'node:worker_threads';
import { BloomgateError } from '../errors.js';
import { KEY_ENCODING_IDS, KIND_IDS } from '../names.js';
import * as wasm from '../wasm/index.js';
import { parsePositiveInteger } from './args.js';
import { cannotCreate, usageError } from './errors.js';
import { forgetTemporary, temporaryPath, trackTemporary } from './output.js';
import { formatCount } from './progress.js';

export const FUSE_KINDS = new Set(['fuse', 'fuse8', 'fuse16', 'fuse4']);
/** The fuse kinds a file names (header kind): 'fuse' is fuse8 or fuse16 by the rate. */
export const FUSE_KIND_NAMES = new Set(['fuse8', 'fuse16', 'fuse4']);
/** The default rule: the fewest shards (a power of two) with capacity / S at most 2^24 keys. */
export const SHARD_KEYS = 2 ** 24;
/** docs/kinds/fuse.md: shard_bits is 1..24 (S = 1 has no table). */
export const MAX_SHARDS = 2 ** 24;
/** Marks a part file's metadata (`build --shard I/S`): {"fuseShard": I, "fuseShards": S, "metadata": "..."}. */
export const PART_KEYS = ['fuseShard', 'fuseShards', 'metadata'];

const PAYLOAD_HEADER = 32;
const OFF_CHECKSUM = 8;
const OFF_KIND = 20;
const OFF_M = 32;
const OFF_COUNT = 56;
const OFF_PAYLOAD_OFFSET = 96;
const OFF_PAYLOAD_LENGTH = 104;
const READ_CHUNK = 4 * 1024 * 1024; // shard files are read, and the output checksummed, in 4 MiB pieces
const LITTLE_ENDIAN = endianness() === 'LE';

export const SHARD_OPTIONS = {
  shards: { type: 'string' },
  shard: { type: 'string' },
  jobs: { type: 'string' },
};

/** S for a capacity by the default rule: 1 up to 2^24 keys, then the next power of two of capacity / 2^24. */
export function defaultShards(capacity) {
  let shards = 1;
  while (shards < MAX_SHARDS && capacity > shards * SHARD_KEYS) shards *= 2;
  return shards;
}

function parseShardCount(name, text) {
  const value = parsePositiveInteger(name, text);
  if (value > MAX_SHARDS || (value & (value - 1)) !== 0) {
    throw usageError(`invalid --${name} '${text}': the shard count must be a power of two from 1 to 2^24`);
  }
  return value;
}

/** --shards S, --shard I/S and --jobs N of `build`, validated (usage errors otherwise). */
export function shardOptions(values, kind, store) {
  const given = ['shards', 'shard', 'jobs'].filter((name) => values[name] !== undefined);
  if (given.length === 0) return { shards: undefined, shard: null, jobs: 1 };
  if (!FUSE_KINDS.has(kind)) throw usageError(`--${given[0]} applies only to --kind fuse, fuse8, fuse16 or fuse4`);
  if (values.shards !== undefined && values.shard !== undefined) {
    throw usageError('give --shards S (build every shard here) or --shard I/S (build one part), not both');
  }
  /** @type {{ index: number, count: number } | null} */
  let shard = null;
  if (values.shard !== undefined) {
    const match = /^([0-9]+)\/([0-9]+)$/.exec(values.shard);
    if (!match) throw usageError(`invalid --shard '${values.shard}': expected I/S, e.g. 3/8 (shard 3 of 8, counted from 0)`);
    const count = parseShardCount('shard', match[2]);
    const index = Number(match[1]);
    if (index >= count) throw usageError(`invalid --shard '${values.shard}': the shard index must be below ${count}`);
    if (store !== undefined) throw usageError('--store cannot be built by a --shard job: build the store once, with a plain build or on its own');
    shard = { index, count };
  }
  return {
    shards: values.shards === undefined ? undefined : parseShardCount('shards', values.shards),
    shard,
    jobs: values.jobs === undefined ? 1 : parsePositiveInteger('jobs', values.jobs),
  };
}

/** True when `build` goes through this module: a part job, or a fuse filter of more than one shard. */
export function isSharded(options, capacity) {
  if (!FUSE_KINDS.has(options.kind)) return false;
  return options.shard !== null || (options.shards ?? defaultShards(capacity)) > 1;
}

function seedWords(seed) {
  const value = seed === undefined ? 0n : BigInt(seed);
  return [Number(value & 0xffffffffn), Number(value >> 32n)];
}

/** The shard of a key: the top `bits` bits of h2 (words[3] is h2's high half). */
function shardOf(words, bits) {
  return bits === 0 ? 0 : words[3] >>> (32 - bits);
}

/**
 * A part job (`build --shard I/S`): every key is hashed to find its shard,
 * and only those of shard I go into one unsharded fuse filter. Its file is a
 * valid filter of those keys, with the whole filter's header fields and, as
 * metadata, the part marker and the whole filter's metadata text.
 */
export class FusePart {
  #filter;
  #words = new Uint32Array(4);

  /**
   * @param {{ create: (metadata: object) => Promise<any>, metadata?: object,
   *   shard: { index: number, count: number }, seed?: bigint }} options
   *   `create` makes the filter (build.js's createFilter)
   */
  static async create({ create, metadata, shard, seed }) {
    const part = new FusePart(shard, seed);
    part.#filter = await create(partMetadata(shard, metadata));
    return part;
  }

  constructor(shard, seed) {
    this.shard = shard;
    this.bits = Math.log2(shard.count);
    const [seedLo, seedHi] = seedWords(seed);
    this.seedLo = seedLo;
    this.seedHi = seedHi;
    this.keys = 0;
  }

  add(item, value) {
    this.addKey(item, value);
  }

  /** A key (and its value, for a filter with value bits) when it belongs to this part's shard. */
  addKey(key, value) {
    wasm.hashWords(key, this.seedLo, this.seedHi, this.#words);
    if (shardOf(this.#words, this.bits) !== this.shard.index) return;
    try {
      if (value === undefined) this.#filter.addKey(key);
      else this.#filter.addKey(key, value);
    } catch (/** @type {any} */ error) {
      throw error?.code === 'E_NOMEM' ? tooBig(this.shard.index, this.shard.count, this.keys) : error;
    }
    this.keys++;
  }

  setMetadata(metadata) {
    this.#filter.setMetadata(partMetadata(this.shard, metadata));
  }

  stats() {
    return this.#filter.stats();
  }

  async writeTo(output) {
    const bytes = this.#filter.serialize();
    await output.write(bytes);
    return bytes.length;
  }

  summary() {
    return `part: shard ${this.shard.index} of ${this.shard.count}, ${formatCount(this.keys)} keys; join all ${this.shard.count} parts with 'bloomgate join'`;
  }

  free() {
    this.#filter?.free();
  }
}

/** A shard that does not fit one WebAssembly memory: the keys far outnumber the capacity the shard count came from. */
function tooBig(shard, shards, keys) {
  return new BloomgateError('E_NOMEM', `shard ${shard} of ${shards} (${formatCount(keys)} keys so far) does not fit in one ` +
    'WebAssembly memory (4 GiB, ~120M keys): use more shards (--shards, --shard I/S), or a --capacity near the real key count');
}

function partMetadata(shard, metadata) {
  return { fuseShard: shard.index, fuseShards: shard.count, metadata: metadata === undefined ? null : JSON.stringify(metadata) };
}

/**
 * A sharded build on one machine: keys are hashed and their h1 appended to
 * per-shard temporary files; writeTo() builds the shards in worker threads
 * and writes the file. The "filter" build.js sees: add, addKey, setMetadata,
 * writeTo, stats, free.
 */
export class ShardedFuse {
  #template; // an empty fuse filter with the file's header fields and metadata
  #words = new Uint32Array(4);
  #buffers;
  #valueBuffers; // with value bits: each shard's values, one byte a record, beside its h1 records
  #used; // u32 words used in each buffer
  /** @type {Array<string | null>} */
  #paths; // null once removed
  /** @type {Array<string | null> | null} */
  #valuePaths;
  #records;
  #bufferWords;

  static async create({ create, metadata, shards, jobs, output, seed }) {
    const sharded = new ShardedFuse(shards, jobs, output, seed);
    try {
      sharded.#template = await create(metadata);
      sharded.valueBits = sharded.#template.valueBits ?? 0;
      if (sharded.valueBits > 0) sharded.#valuePaths = sharded.#temporaryFiles(output, 'values');
    } catch (error) {
      sharded.free();
      throw error;
    }
    return sharded;
  }

  constructor(shards, jobs, output, seed) {
    this.shards = shards;
    this.bits = Math.log2(shards);
    this.jobs = Math.min(jobs, shards);
    const [seedLo, seedHi] = seedWords(seed);
    this.seedLo = seedLo;
    this.seedHi = seedHi;
    this.m = 0;
    this.keys = 0;
    this.valueBits = 0;
    // At most ~32 MiB of buffers in all, 4 KiB .. 1 MiB each, whole records.
    const bytes = Math.min(1 << 20, Math.max(4096, Math.floor((32 << 20) / shards)));
    this.#bufferWords = bytes >>> 2;
    this.#buffers = new Array(shards).fill(null);
    this.#valueBuffers = new Array(shards).fill(null);
    this.#used = new Uint32Array(shards);
    this.#records = new Float64Array(shards);
    this.#valuePaths = null;
    this.#paths = this.#temporaryFiles(output, 'shard');
  }

  /** One empty temporary file a shard next to the output (a shard without keys is a file too). */
  #temporaryFiles(output, name) {
    const paths = Array.from({ length: this.shards }, (_, i) => temporaryPath(output, `${name}${i}`));
    for (const path of paths) {
      trackTemporary(path);
      try {
        closeSync(openSync(path, 'w', 0o600));
      } catch (error) {
        throw cannotCreate(path, error);
      }
    }
    return paths;
  }

  add(item, value) {
    this.addKey(item, value);
  }

  /**
   * Hash the key, append its h1 to its shard's buffer (and, with value bits,
   * its value to the shard's values). The value is checked by the filter
   * that takes it: here only that one is given when the filter has value bits.
   */
  addKey(key, value) {
    const words = this.#words;
    if (this.valueBits > 0 ? !Number.isInteger(value) || value < 0 || value >= 2 ** this.valueBits : value !== undefined) {
      throw new RangeError(this.valueBits > 0 ? `a value of ${this.valueBits} bits is an integer from 0 to ${2 ** this.valueBits - 1}, got ${String(value)}`
        : 'this filter stores no values (valueBits 0)');
    }
    wasm.hashWords(key, this.seedLo, this.seedHi, words);
    const shard = shardOf(words, this.bits);
    let buffer = this.#buffers[shard];
    if (buffer === null) {
      buffer = this.#buffers[shard] = new Uint32Array(this.#bufferWords);
      if (this.valueBits > 0) this.#valueBuffers[shard] = new Uint8Array(this.#bufferWords >>> 1);
    }
    let used = this.#used[shard];
    if (this.valueBits > 0) this.#valueBuffers[shard][used >>> 1] = value;
    if (LITTLE_ENDIAN) {
      buffer[used] = words[0];
      buffer[used + 1] = words[1];
    } else {
      const view = new DataView(buffer.buffer);
      view.setUint32(4 * used, words[0], true);
      view.setUint32(4 * used + 4, words[1], true);
    }
    used += 2;
    this.#records[shard]++;
    this.keys++;
    if (used === buffer.length) {
      this.#flush(shard, used);
      used = 0;
    }
    this.#used[shard] = used;
  }

  #flush(shard, used) {
    if (used === 0) return;
    appendTo(/** @type {string} */ (this.#paths[shard]), new Uint8Array(this.#buffers[shard].buffer, 0, 4 * used)); // flushed before removed
    if (this.#valuePaths) appendTo(/** @type {string} */ (this.#valuePaths[shard]), this.#valueBuffers[shard].subarray(0, used >>> 1));
  }

  setMetadata(metadata) {
    this.#template.setMetadata(metadata);
  }

  stats() {
    return { ...this.#template.stats(), m: this.m };
  }

  summary() {
    return `${this.shards} shards (about ${formatCount(Math.ceil(this.keys / this.shards))} keys each), built ${this.jobs} at a time`;
  }

  /** Build every shard (in workers) and write the whole file into output; returns its length. */
  async writeTo(output, progress) {
    for (let shard = 0; shard < this.shards; shard++) {
      this.#flush(shard, this.#used[shard]);
      this.#used[shard] = 0;
      this.#buffers[shard] = null;
      this.#valueBuffers[shard] = null;
    }
    const { seedLo, seedHi, valueBits } = this;
    const kind = /** @type {number} */ (KIND_IDS.get(this.#template.kind));
    const { errorRate, keyEncoding } = this.#template.stats();
    const tasks = this.#paths.map((path, shard) => ({
      shard, path, valuesPath: this.#valuePaths?.[shard] ?? null, records: this.#records[shard],
      kind, errorRate, keyEncoding: KEY_ENCODING_IDS.get(keyEncoding), valueBits, seedLo, seedHi,
    }));
    const total = this.keys * 8;
    let done = 0;
    progress?.start('building', total);
    const built = buildInWorkers(tasks, this.jobs, (task) => {
      done += task.records * 8;
      progress?.setNote(`shard ${task.shard + 1} of ${this.shards}`);
      progress?.update(done, done / 8);
      // A built shard's records are not needed again.
      this.#remove(task.shard);
    });
    const payloads = (async function* shardPayloads() {
      for await (const result of built) yield shardOfFile(result.file, result.count);
    })();
    const written = await writeFuseFile(output, this.#template.serialize(), this.shards, payloads, progress);
    this.m = written.m;
    return written.length;
  }

  #remove(shard) {
    for (const paths of [this.#paths, this.#valuePaths]) {
      if (!paths) continue;
      const path = paths[shard];
      if (path === null || path === undefined) continue;
      paths[shard] = null;
      try {
        unlinkSync(path);
      } catch {
        // gone already
      }
      forgetTemporary(path);
    }
  }

  /** Remove the temporary files (on success they are gone already) and the template. Idempotent. */
  free() {
    for (let shard = 0; shard < this.shards; shard++) this.#remove(shard);
    this.#template?.free();
    this.#template = null;
  }
}

/**
 * Build the shards of `tasks` in `jobs` worker threads, each with its own
 * WebAssembly instance; yields the results in shard order. A few shards may
 * wait, built, for an earlier one (at most 2 × jobs ahead of the writer).
 */
export async function* buildInWorkers(tasks, jobs, onBuilt) {
  const results = new Map();
  let next = 0;
  let nextOut = 0;
  /** @type {unknown} */
  let failure = null;
  /** @type {((value?: unknown) => void) | null} */
  let wake = null;
  let closing = false;
  const notify = () => {
    if (wake !== null) {
      const resolve = wake;
      wake = null;
      resolve();
    }
  };
  const idle = [];
  const dispatch = (worker) => {
    if (failure !== null || next >= tasks.length || next >= nextOut + 2 * jobs) {
      idle.push(worker);
      return;
    }
    worker.postMessage(tasks[next++]);
  };
  const workers = [];
  for (let i = 0; i < Math.min(jobs, tasks.length); i++) {
    const worker = new Worker(new URL('./fuse-worker.js', import.meta.url));
    worker.on('message', (message) => {
      if (message.error) {
        const { code, message: text } = message.error;
        const task = tasks[message.shard];
        failure ??= code === 'E_NOMEM' ? tooBig(task.shard, tasks.length, task.records)
          : code ? new BloomgateError(code, text) : new Error(text);
      } else {
        results.set(message.shard, message);
        onBuilt(tasks[message.shard]);
        dispatch(worker);
      }
      notify();
    });
    worker.on('error', (error) => {
      failure ??= error;
      notify();
    });
    worker.on('exit', (code) => {
      if (!closing && code !== 0) failure ??= new Error(`a shard worker exited with status ${code}`);
      notify();
    });
    workers.push(worker);
    dispatch(worker);
  }
  try {
    while (nextOut < tasks.length) {
      if (failure !== null) throw failure;
      if (results.has(nextOut)) {
        const result = results.get(nextOut);
        results.delete(nextOut);
        nextOut++;
        for (const worker of idle.splice(0)) dispatch(worker);
        yield result;
        continue;
      }
      await new Promise((resolve) => {
        wake = resolve;
      });
    }
  } finally {
    closing = true;
    await Promise.all(workers.map((worker) => worker.terminate()));
  }
}

function putU64(view, offset, value) {
  view.setUint32(offset, value % 0x100000000, true);
  view.setUint32(offset + 4, Math.floor(value / 0x100000000), true);
}

function getU64(bytes, offset) {
  const view = new DataView(bytes.buffer, bytes.byteOffset + offset, 8);
  return view.getUint32(0, true) + view.getUint32(4, true) * 0x100000000;
}

function writeAll(fd, bytes, position) {
  let done = 0;
  while (done < bytes.length) done += writeSync(fd, bytes, done, bytes.length - done, position + done);
}

/** Append bytes to a file, opened for the call: any number of shards, never more than one descriptor. */
function appendTo(path, bytes) {
  let fd;
  try {
    fd = openSync(path, 'a');
    let done = 0;
    while (done < bytes.length) done += writeSync(fd, bytes, done, bytes.length - done);
  } catch (error) {
    throw cannotCreate(path, error);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** A shard filter's file as writeFuseFile takes it: its payload, adds and m (bits of cells). */
export function shardOfFile(file, count) {
  return { payload: file.subarray(getU64(file, OFF_PAYLOAD_OFFSET)), count, m: getU64(file, OFF_M) };
}

/**
 * Write a fuse file of `shardCount` shards into output (an AtomicOutput, empty):
 * `template` is the .bgf of an empty filter with the file's header fields and
 * metadata, and `shards` yields each shard's unsharded payload, its adds and
 * its m in shard order. One shard is written as the unsharded payload itself
 * (the file an unsharded build writes); more get the 32-byte header and the
 * offset table of docs/kinds/fuse.md. count, m and payload_length are set
 * from the shards, then one pass over the file computes its checksum.
 * Returns { length, m, keys }.
 */
export async function writeFuseFile(output, template, shardCount, shards, progress) {
  const fd = output.fd;
  const payloadOffset = getU64(template, OFF_PAYLOAD_OFFSET);
  const layout = payloadLayout(template[OFF_KIND]);
  const empty = template.subarray(payloadOffset);
  const tableBytes = shardCount > 1 ? layout.header + 8 * (shardCount + 1) : 0;
  const offsets = shardCount > 1 ? new Float64Array(shardCount + 1) : null;
  let position = payloadOffset + tableBytes;
  let count = 0;
  let m = 0;
  let keys = 0;
  let index = 0;
  try {
    for await (const { payload, count: adds, m: bits } of shards) {
      const unlike = shardMismatch(payload, empty, layout);
      if (unlike !== null) throw new BloomgateError('E_PAYLOAD', `shard ${index} is not an unsharded payload of this filter: ${unlike}`);
      if (offsets) offsets[index] = position - payloadOffset;
      writeAll(fd, payload, position);
      position += payload.length;
      count += adds;
      m += bits;
      keys += getU64(payload, 16);
      index++;
    }
    if (index !== shardCount) throw new Error(`${index} shards written, ${shardCount} expected`);
    if (offsets) {
      offsets[shardCount] = position - payloadOffset;
      const head = new Uint8Array(tableBytes);
      const view = new DataView(head.buffer);
      for (const at of layout.parameters) head[at] = empty[at];
      head[1] = Math.log2(shardCount);
      putU64(view, 16, keys);
      for (let i = 0; i <= shardCount; i++) putU64(view, layout.header + 8 * i, offsets[i]);
      writeAll(fd, head, payloadOffset);
    }
    const header = Uint8Array.from(template.subarray(0, payloadOffset));
    const view = new DataView(header.buffer);
    putU64(view, OFF_M, m);
    putU64(view, OFF_COUNT, count);
    putU64(view, OFF_PAYLOAD_LENGTH, position - payloadOffset);
    writeAll(fd, header, 0);
    writeAll(fd, checksumOf(fd, position, progress), OFF_CHECKSUM);
    return { length: position, m, keys };
  } catch (/** @type {any} */ error) {
    // A system error (ENOSPC, EIO) on the output is "cannot write" (exit 73).
    if (typeof error?.syscall === 'string') throw cannotCreate(output.path, error);
    throw error;
  }
}

/**
 * The payload header of a fuse kind (docs/kinds/fuse.md, docs/kinds/fuse4.md): its length
 * (the shard table follows it in a sharded payload), the bytes that name the filter's
 * parameters (fuse8/16: fingerprint_bits; fuse4: w and r), which a sharded payload's header
 * repeats, and the bytes every shard shares with the filter's empty payload (the parameters,
 * shard_bits = 0 and the reserved bytes beside them). In both, key_count is at byte 16.
 */
function payloadLayout(kind) {
  if (kind === KIND_IDS.get('fuse4')) return { header: 40, parameters: [0, 2], shared: [0, 1, 2, 3] };
  return { header: PAYLOAD_HEADER, parameters: [0], shared: [0, 1] };
}

/** Why a shard's payload is not an unsharded payload of the filter whose empty payload is `empty`, or null. */
function shardMismatch(payload, empty, layout) {
  if (payload.length < layout.header) return `${payload.length} bytes`;
  for (const at of layout.shared) {
    if (payload[at] !== empty[at]) return `payload byte ${at} is ${payload[at]}, the filter's ${empty[at]}`;
  }
  return null;
}

/** The .bgf checksum of the first `length` bytes of fd, read back in pieces. */
function checksumOf(fd, length, progress) {
  const hasher = new wasm.FileChecksum();
  const buffer = new Uint8Array(Math.min(READ_CHUNK, Math.max(length, 1)));
  progress?.start('checksum', length);
  try {
    for (let at = 0; at < length;) {
      const n = readSync(fd, buffer, 0, Math.min(buffer.length, length - at), at);
      if (n <= 0) throw new Error('the output file ended early while its checksum was computed');
      hasher.update(buffer.subarray(0, n));
      at += n;
      progress?.update(at, 0);
    }
    return hasher.digestBytes();
  } finally {
    hasher.free();
  }
}
