// @ts-check
// `bloomgate build`: lines or a HIBP dump in, a .bgf file out.
//
// Memory stays near m/8 bytes whatever the input size: the input is streamed
// in 1 MiB chunks and split into lines in place. Only when --capacity is not
// given does the input have to be read twice (count, then add): a file is
// simply re-read; a pipe is held in memory in between.
import { randomBytes } from 'node:crypto';
import { basename, dirname, resolve } from 'node:path';
import { parseChoice, parseCommandArgs, parseNonNegativeInteger, parsePositiveInteger, parseProbability, parseSeed } from './args.js';
import { cannotOpen, CliError, describeError, EXIT, quote, usageError } from './errors.js';
import { COMMAND_HELP } from './help.js';
import { openInput } from './input.js';
import { LineSplitter, MAX_LINE_BYTES } from './lines.js';
import { AtomicOutput } from './output.js';
import { StoreWriter } from './store-writer.js';
import { formatBytes, formatCount, Progress } from './progress.js';
import { FORMATS, KEY_ENCODING, RecordReader, STORE_HASH } from './records.js';
import { KIND_IDS, STATIC_KIND_IDS } from '../names.js';
import { defaultShards, FUSE_KINDS, FusePart, isSharded, SHARD_KEYS, SHARD_OPTIONS, shardOptions, ShardedFuse } from './fuse-shards.js';
import { DigestKeyFilter } from './digest-keys.js';
import { loadFilterFile } from './filter-file.js';
import { fileIdentity, refuseToOverwrite, sameFile } from './overwrite.js';
import { bucketsMetadata, LabelSet, labelsMetadata, parseBuckets, parseValueBits, valueBitsFor, valueKind, VALUE_KIND } from './values.js';
import { bitsFor, bucketOf, MAX_CLASSES, MAX_VALUE_BITS } from '../values.js';

// The core's kinds (BG_KIND_LIST), with 'fuse' (fuse8 or fuse16 by the error rate) before its two widths.
export const KINDS = [...[...KIND_IDS.keys()].flatMap((name) => (name === 'fuse8' ? ['fuse', name] : [name])), 'smallest'];

/** @satisfies {import('node:util').ParseArgsOptionsConfig} */
const OPTIONS = {
  output: { type: 'string', short: 'o' },
  store: { type: 'string' },
  'list-id': { type: 'string' },
  'list-id-from': { type: 'string' },
  like: { type: 'string' },
  generation: { type: 'string' },
  capacity: { type: 'string' },
  'error-rate': { type: 'string' },
  seed: { type: 'string' },
  format: { type: 'string' },
  'min-count': { type: 'string' },
  buckets: { type: 'string' },
  'value-bits': { type: 'string' },
  kind: { type: 'string' },
  description: { type: 'string' },
  created: { type: 'boolean' },
  'skip-invalid': { type: 'boolean' },
  progress: { type: 'boolean' },
  quiet: { type: 'boolean', short: 'q' },
  ...(/** @type {{ [name in keyof typeof SHARD_OPTIONS]: { type: 'string' } }} */ (SHARD_OPTIONS)),
};

export const DEFAULT_ERROR_RATE = 0.01;
/** HIBP range responses pad with COUNT 0 rows that are not breaches. */
export const DEFAULT_MIN_COUNT = 1;

/** Options of `build`, validated; throws a usage error (exit 64) otherwise. */
export function buildOptions(argv) {
  const { values, positionals } = parseCommandArgs('build', argv, OPTIONS);
  if (values.help) return { help: /** @type {const} */ (true) };
  if (positionals.length > 1) throw usageError(`build reads one input, got ${positionals.length}: ${positionals.join(' ')} (see 'bloomgate build --help')`);
  if (values.output === undefined || values.output === '') throw usageError("missing -o/--output FILE (see 'bloomgate build --help')");
  const format = parseChoice('format', values.format ?? 'lines', FORMATS);
  if (values['min-count'] !== undefined && format !== 'hibp') throw usageError('--min-count applies only to --format hibp');
  if (values.store !== undefined && !STORE_HASH[format]) throw usageError('--store needs --format hibp or --format urls (an exact store holds hashes)');
  if (values.store !== undefined && values.store === values.output) throw usageError('--store and --output must be different files');
  if (values['list-id'] !== undefined && !/^[0-9a-fA-F]{32}$/.test(values['list-id'])) {
    throw usageError(`invalid --list-id '${values['list-id']}': expected 32 hexadecimal digits (16 bytes)`);
  }
  if (values['list-id-from'] !== undefined) {
    if (values['list-id-from'] === '') throw usageError('--list-id-from needs a store file (.bgs)');
    if (!STORE_HASH[format]) {
      throw usageError('--list-id-from names the filter after the store that answers its "maybe": it needs --format hibp or --format urls');
    }
  }
  let kind = parseChoice('kind', values.kind ?? 'classic', KINDS);
  // Values per key (values.js): --buckets (hibp), or a threat column (urls, seen in run()).
  const valueBits = values['value-bits'] === undefined ? undefined : parseValueBits(values['value-bits']);
  let buckets;
  if (values.buckets !== undefined) {
    if (format !== 'hibp') throw usageError('--buckets applies only to --format hibp (each hash\'s COUNT bucket is its value)');
    buckets = parseBuckets(values.buckets);
    kind = valueKind(values.kind, '--buckets');
    valueBitsFor(buckets.length, valueBits, `${buckets.length} buckets`);
    if (values['min-count'] !== undefined && parseNonNegativeInteger('min-count', values['min-count']) !== buckets[0]) {
      throw usageError(`--min-count ${values['min-count']} contradicts --buckets: rows below the first bound (${buckets[0]}) are dropped, so it is the threshold (leave --min-count out)`);
    }
  } else if (valueBits !== undefined && format !== 'urls') {
    throw usageError('--value-bits sets the width of values: it needs --buckets (--format hibp) or a threat column (--format urls)');
  }
  return {
    input: positionals[0],
    output: values.output,
    format,
    store: values.store,
    kind,
    // Fuse filters of any size: --shards S, --shard I/S, --jobs N (fuse-shards.js).
    ...shardOptions(values, kind, values.store),
    capacity: values.capacity === undefined ? undefined : parsePositiveInteger('capacity', values.capacity),
    errorRate: values['error-rate'] === undefined ? DEFAULT_ERROR_RATE : parseProbability('error-rate', values['error-rate']),
    seed: values.seed === undefined ? undefined : parseSeed('seed', values.seed),
    // A filter and its store share one identity. With a store and no --list-id
    // a random one pairs them; without a store the filter stays unnamed (and
    // the build reproducible) unless --list-id names it.
    // --list-id-from STORE.bgs: read in run() (listIdFromStore), before a random id is drawn.
    listId: values['list-id'] !== undefined ? values['list-id'].toLowerCase()
      : values.store !== undefined && values['list-id-from'] === undefined ? randomBytes(16).toString('hex') : undefined,
    listIdFrom: values['list-id-from'],
    generation: values.generation === undefined ? 0 : parseNonNegativeInteger('generation', values.generation),
    like: values.like,
    given: { kind: values.kind !== undefined, capacity: values.capacity !== undefined, errorRate: values['error-rate'] !== undefined,
      seed: values.seed !== undefined, listId: values['list-id'] !== undefined, generation: values.generation !== undefined },
    minCount: format !== 'hibp' ? 0 : buckets !== undefined ? buckets[0]
      : values['min-count'] === undefined ? DEFAULT_MIN_COUNT : parseNonNegativeInteger('min-count', values['min-count']),
    buckets,
    valueBits: buckets !== undefined ? valueBitsFor(buckets.length, valueBits, `${buckets.length} buckets`) : valueBits,
    /** @type {LabelSet | null} urls with a threat column: its labels (set in run()) */
    labels: null,
    description: values.description,
    created: values.created ? createdTimestamp() : undefined,
    skipInvalid: Boolean(values['skip-invalid']),
    quiet: Boolean(values.quiet),
    progress: !values.quiet && Boolean(values.progress || process.stderr.isTTY),
  };
}

/**
 * A build's options: buildOptions() without --help, and what run() learns on
 * the way (how many files a directory input holds, a urls line's key).
 * @typedef {Exclude<ReturnType<typeof buildOptions>, { help: true }> & {
 *   directoryFiles?: number, urlKey?: (text: string) => Uint8Array }} BuildOptions
 */
/** @typedef {import('./input.js').InputSource} InputSource */
/** @typedef {import('./input.js').DirectoryInput} DirectoryInput */

export async function run(argv) {
  const options = /** @type {BuildOptions | { help: true }} */ (buildOptions(argv));
  if (options.help) {
    process.stdout.write(COMMAND_HELP.build);
    return EXIT.OK;
  }
  // The modules a build needs, not the whole package (index.js): ~10 ms less start-up.
  const { BloomFilter, serializeTo } = await import('../filter.js');
  const { init } = await import('../wasm/index.js');
  if (options.listIdFrom !== undefined) await listIdFromStore(options);
  if (options.like !== undefined) await likePrevious(BloomFilter, options);
  const progress = new Progress({ enabled: options.progress });
  const input = /** @type {(InputSource & { isDirectory?: undefined }) | DirectoryInput} */ (await openInput(options.input, { directories: options.format === 'hibp' }));
  if (input.isDirectory) options.directoryFiles = input.fileCount;
  try {
    refuseToOverwriteInput(input, options);
  } catch (error) {
    await input.close();
    throw error;
  }
  let output;
  let storeOutput;
  let filter;
  /** @type {{ bytes: number, records: number } | null} */
  let storeSummary = null;
  /** @type {StoreWriter | null} */
  let storeWriter = null;
  try {
    output = await AtomicOutput.create(options.output);
    if (options.store) storeOutput = await AtomicOutput.create(options.store);
    if (options.format === 'urls') {
      await init();
      options.urlKey = await urlKeyFunction();
      await detectLabels(/** @type {InputSource} */ (input), options);
    }
    let capacity = options.capacity;
    /** @type {RecordReader | null} */
    let counted = null;
    let countAfter = false; // a fuse filter in one pass: its capacity is the count, set at the end
    // A threat column without --value-bits: the labels are counted first, whatever --capacity says.
    const countLabels = options.labels !== null && options.valueBits === undefined;
    if (capacity === undefined || countLabels) {
      if (!input.rereadable) {
        progress.start('reading', undefined);
        await /** @type {InputSource} */ (input).bufferAll((bytes) => progress.update(bytes, 0)); // a directory is rereadable
      }
      const bound = countLabels ? 0 : onePassFuseBound(input, options);
      if (bound > 0) {
        capacity = bound;
        countAfter = true;
      } else {
        counted = new RecordReader(options.format, { ...options, onKey: null });
        await readRecords(input, counted, progress, 'counting');
        capacity ??= Math.max(1, counted.items);
        if (options.labels !== null) options.valueBits ??= bitsFor(Math.max(1, options.labels.size));
      }
    }

    if (options.kind === 'smallest') options.kind = await smallestKind(BloomFilter, options, capacity);
    // After a counting pass the metadata is known up front; otherwise it is
    // attached once the input has been read.
    const metadata = describeBuild(input, options, counted);
    const create = (m) => createFilter(BloomFilter, options, capacity, m);
    // A fuse filter of several shards, or one shard's part: keys go through
    // fuse-shards.js, which builds in bounded memory and writes the file itself.
    if (options.shard !== null) filter = await FusePart.create({ create, metadata, shard: options.shard, seed: options.seed });
    else if (isSharded(options, capacity)) {
      filter = await ShardedFuse.create({ create, metadata, shards: options.shards ?? defaultShards(capacity), jobs: options.jobs, output: options.output, seed: options.seed });
    } else if (options.format === 'hibp') {
      // hibp keys are the decoded SHA-1 digests, stored as they are, 4,096 a
      // call (digest-keys.js): 2.5-3x faster a key than one addKey() call each
      // (4M random keys here: classic 160-200 -> 65 ns, fuse 105 -> 36 ns).
      filter = new DigestKeyFilter(await createFilter(BloomFilter, options, capacity, metadata, 'utf8'), KEY_ENCODING.hibp, 20);
    } else filter = await create(metadata);
    // lines and urls go in one call per line (lines through the filter's utf8 key encoding).
    const target = filter;
    // The exact store keeps what the filter keys: the same hashes, with counts,
    // streamed to disk in bounded memory (store-writer.js).
    if (storeOutput) {
      storeWriter = new StoreWriter(storeOutput, {
        hashType: STORE_HASH[options.format], listId: options.listId, generation: options.generation, labelled: options.labels !== null,
        minCount: Math.min(options.minCount, 0xffffffff), progress,
        // Bytes of records sorted in memory at a time (default 64 MiB); smaller values test the merge.
        ...(Number(process.env.BLOOMGATE_STORE_RUN_BYTES) > 0 && { runBytes: Number(process.env.BLOOMGATE_STORE_RUN_BYTES) }),
      });
    }
    const store = storeWriter;
    let reader;
    if (options.buckets !== undefined) {
      // Values per key: each hash's value is its COUNT's bucket (rows below the first bound are
      // dropped before: the first bound is minCount); the store keeps the COUNT itself.
      const buckets = options.buckets;
      const onKey = (key, count) => {
        target.addKey(key, bucketOf(buckets, count));
        store?.add(key, count);
      };
      // Batched as without buckets (keyBatches), each key's bucket beside it: one addAll(keys, values) per batch.
      let values = new Uint8Array(0);
      const onKeys = (keys, counts, n) => {
        if (values.length < n) values = new Uint8Array(n);
        for (let i = 0; i < n; i++) values[i] = bucketOf(buckets, counts[i]);
        target.addKeys(keys, n, values);
        store?.addKeys(keys, counts, n);
      };
      reader = new RecordReader(options.format, { ...options, onKey, onKeys: typeof target.addKeys === 'function' ? onKeys : null });
    } else if (options.labels !== null) {
      // Values per key: each URL's value is its threat label's index; a labelled store keeps it as the count.
      const onKey = (key, value) => {
        target.addKey(key, value);
        store?.add(key, value);
      };
      reader = new RecordReader(options.format, { ...options, onKey });
    } else {
      const addKey = store
        ? (key, count) => {
          target.addKey(key);
          store.add(key, count);
        }
        : (key) => target.addKey(key);
      const onKey = options.format === 'lines' ? (item) => target.add(item) : addKey;
      reader = new RecordReader(options.format, { ...options, onKey, onKeys: options.format === 'hibp' ? keyBatches(target, store) : null });
    }
    await readRecords(input, reader, progress, 'adding');
    progress.clear();
    if (options.like !== undefined && reader.items > capacity) {
      throw new CliError(`${formatCount(reader.items)} items do not fit the geometry of ${quote(options.like)} ` +
        `(capacity ${formatCount(capacity)} at error rate ${options.errorRate}): the next generation would miss its target rate. ` +
        'Start a new list with a larger --capacity (leave headroom for growth: 1.5x the items of its first generation)', 'E_CAPACITY', EXIT.DATA);
    }
    if (!counted) filter = await withMetadata(BloomFilter, filter, options, capacity, describeBuild(input, options, reader));
    if (countAfter) filter.setCapacity(Math.max(1, reader.items));
    let fileBytes;
    if (typeof filter.writeTo === 'function') fileBytes = await filter.writeTo(output, progress);
    else {
      // Straight from wasm memory, synchronously: the file is in memory once, not twice.
      const write = (view) => output.writeSync(view); // ENOSPC and the like: exit 73 naming -o
      fileBytes = typeof filter.serializeTo === 'function' ? filter.serializeTo(write) : serializeTo(filter, write);
    }
    if (storeWriter) {
      const { count } = await storeWriter.finish(options.labels !== null ? options.labels.labels : undefined);
      await storeOutput.commit();
      storeSummary = { bytes: storeOutput.bytesCommitted, records: count };
    }
    await output.commit();
    progress.clear();
    if (!options.quiet) report(options, reader, filter, fileBytes, storeSummary);
    return EXIT.OK;
  } catch (error) {
    progress.clear();
    await output?.abort();
    await storeWriter?.abort();
    await storeOutput?.abort();
    throw error;
  } finally {
    filter?.free();
    await input.close();
  }
}

/** @typedef {{ kind: string, bits: number }} SmallestChoice a kind --kind smallest weighed, and its bits per key */

// Kinds --kind smallest weighs: the others are never smaller (blocked trades bits for speed,
// counting keeps 4-bit counters, scalable is classic plus growth). fuse4 (any fingerprint
// width, 4-wise) is weighed when this build has it.
const SMALLEST_CANDIDATES = /** @type {const} */ (['classic', 'cuckoo', 'fuse8', 'fuse16', 'fuse4']).filter((kind) => KIND_IDS.has(kind));
// Fuse filters' bits per key settle at 1.125 x (fuse8, fuse16) and ~1.075 x (fuse4) their
// fingerprint from 10^6 keys up, so a probe of at most this many keys gives every candidate's
// bits per key.
const SMALLEST_PROBE = 1_000_000;

/**
 * --kind smallest: of the kinds that meet the requested error rate, the one
 * whose file is smallest at this capacity, measured by building each at
 * min(capacity, 10^6) items with the core's own sizing (fuse8 cannot meet a
 * rate below 2^-8, fuse16 below 2^-16: those are refused and skipped; a static
 * kind is built from that many distinct keys). With value bits only the kinds
 * that store values are weighed.
 */
async function smallestKind(BloomFilter, options, capacity) {
  const n = Math.min(capacity, SMALLEST_PROBE);
  const valueBits = options.valueBits ?? 0;
  /** @type {SmallestChoice | null} */
  let best = null;
  for (const kind of SMALLEST_CANDIDATES) {
    let filter;
    try {
      filter = await BloomFilter.create({ capacity: n, errorRate: options.errorRate, kind, keyEncoding: FORMAT_ENCODING[options.format], ...(valueBits > 0 && { valueBits }) });
    } catch (/** @type {any} */ error) {
      // E_RANGE: cannot meet this rate; with value bits, a kind that stores none refuses them.
      if (error?.code === 'E_RANGE' || (valueBits > 0 && kind !== 'fuse4')) continue;
      throw error;
    }
    try {
      // A static kind's size needs its keys; a cuckoo filter is filled too, as it may not hold
      // its capacity (E_FULL): then it is no choice.
      if (kind === 'cuckoo' || STATIC_KIND_IDS.has(/** @type {any} */ (KIND_IDS.get(kind)))) {
        try {
          addDistinct(filter, n, valueBits);
        } catch (/** @type {any} */ error) {
          if (error?.code === 'E_FULL' && kind === 'cuckoo') continue;
          throw error;
        }
      }
      const bits = filter.stats().serializedBytes * 8 / n;
      if (best === null || bits < best.bits) best = { kind, bits };
    } finally {
      filter.free();
    }
  }
  if (best === null) throw usageError(`--kind smallest: no kind meets error rate ${options.errorRate}${valueBits > 0 ? ` with ${valueBits} value bits` : ''}`);
  if (!options.quiet) process.stderr.write(`--kind smallest: ${best.kind} (${best.bits.toFixed(2)} bits per key at error rate ${options.errorRate})\n`);
  return best.kind;
}

/** n distinct 8-byte keys into a static filter (little-endian 0 .. n-1), with value 0 each when it stores values. */
function addDistinct(filter, n, valueBits) {
  if (valueBits === 0) {
    filter.addAll(distinctKeys(n));
    return;
  }
  const key = new Uint8Array(8);
  const view = new DataView(key.buffer);
  for (let i = 0; i < n; i++) {
    view.setUint32(0, i, true);
    filter.addKey(key, 0);
  }
}

/** n distinct 8-byte keys (little-endian 0 .. n-1) as packed keys. */
function distinctKeys(n) {
  const bytes = new Uint8Array(8 * n);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < n; i++) view.setUint32(8 * i, i, true);
  return { bytes, offsets: Uint32Array.from({ length: n + 1 }, (_, i) => 8 * i) };
}

/** The key encoding each input format builds. */
const FORMAT_ENCODING = { lines: 'utf8', hibp: 'sha1', urls: 'url' };

/**
 * --like PREVIOUS.bgf: the next generation of the same list, in the same
 * geometry (kind, capacity and error rate, hence m and k; seed; key encoding;
 * list id) at generation + 1, so a delta from the previous file stays small.
 * Options that contradict the previous file are usage errors.
 */
async function likePrevious(BloomFilter, options) {
  const previous = await loadFilterFile(BloomFilter, options.like);
  let stats;
  try {
    stats = previous.stats();
  } finally {
    previous.free();
  }
  const where = `--like ${quote(options.like)}`;
  if (stats.kind === 'fuse8' || stats.kind === 'fuse16' || stats.kind === VALUE_KIND) {
    throw usageError(`${where}: a fuse filter is rebuilt whole for each generation (its layout depends on every key); build it with --list-id and --generation instead`);
  }
  if (/^0+$/.test(stats.listId)) throw usageError(`${where}: that filter names no list; build generation 0 with --list-id HEX32 (or --store) first`);
  if (stats.keyEncoding !== FORMAT_ENCODING[options.format]) {
    throw usageError(`${where}: that filter uses key encoding ${stats.keyEncoding}; --format ${options.format} builds ${FORMAT_ENCODING[options.format]}`);
  }
  const inherited = { kind: stats.kind, capacity: stats.capacity, errorRate: stats.errorRate, seed: stats.seed, listId: stats.listId };
  for (const [field, value] of Object.entries(inherited)) {
    if (options.given[field] && String(options[field]) !== String(value)) {
      throw usageError(`${where}: ${field} ${options[field]} contradicts the previous generation's ${value} (leave it out to inherit it)`);
    }
    options[field] = value;
  }
  if (options.given.generation) {
    if (options.generation <= stats.generation) throw usageError(`${where}: --generation ${options.generation} must be above the previous generation ${stats.generation}`);
  } else options.generation = stats.generation + 1;
}

/**
 * --list-id-from STORE.bgs: the filter (and its --store, if any) take the list id
 * of an existing store, so a subset filter (--min-count N) is believed by the
 * endpoint that serves the whole store: its manifest names the same list. A
 * --list-id that says otherwise, a store of the other hash type, a store that
 * names no list, and a missing or corrupt store are refused before any work.
 * @param {BuildOptions} options
 */
async function listIdFromStore(options) {
  const path = /** @type {string} */ (options.listIdFrom);
  const { StoreReader } = await import('../store.js');
  let store;
  try {
    store = await StoreReader.open(path);
  } catch (/** @type {any} */ error) {
    if (error?.name === 'BloomgateError') {
      const { message, code, exitCode } = describeError(error);
      throw new CliError(`--list-id-from ${quote(path)}: ${message}`, code, exitCode);
    }
    throw cannotOpen(path, error);
  }
  const { listId, hashType } = store;
  await store.close();
  const where = `--list-id-from ${quote(path)}`;
  if (hashType !== STORE_HASH[options.format]) {
    throw usageError(`${where}: that store holds ${hashType} hashes, but --format ${options.format} builds a filter of ${STORE_HASH[options.format]} keys: name it after the store that answers its "maybe"`);
  }
  if (/^0+$/.test(listId)) {
    throw usageError(`${where}: that store names no list (a version 1 store, or written without a list id); rebuild it with 'bloomgate build --store' or give --list-id`);
  }
  if (options.given.listId && options.listId !== listId) {
    throw usageError(`${where}: the store's list id ${listId} contradicts --list-id ${options.listId} (give one of them)`);
  }
  options.listId = listId;
  options.given.listId = true; // --like must agree with it too
}

/**
 * An output must not replace the input it is built from: the same path, a
 * symbolic or hard link to it (same device and inode), or, for a downloader
 * directory, a file inside it. Nor may -o and --store name one file.
 */
function refuseToOverwriteInput(input, options) {
  const outputs = /** @type {[flag: string, path: string][]} */ ([['-o', options.output], ['--store', options.store]].filter(([, path]) => path !== undefined));
  const source = input.stat && (input.stat.isFile() || input.stat.isDirectory()) ? input.stat : null;
  const described = input.label === 'stdin' ? 'the input (stdin)' : `the input ${quote(input.path)}`;
  if (source) refuseToOverwrite(outputs, [{ path: input.path, stat: source, described }]);
  for (const [flag, path] of outputs) {
    if (source && input.isDirectory && sameFile(fileIdentity(dirname(resolve(path))), source)) {
      throw usageError(`${flag} ${quote(path)} is inside ${described}, a per-prefix directory: write outputs elsewhere`);
    }
  }
  if (outputs.length === 2) {
    const [[, a], [, b]] = outputs;
    if (resolve(a) === resolve(b) || sameFile(fileIdentity(a), fileIdentity(b))) throw usageError('--store and --output must be different files');
  }
}

/**
 * --format urls: is there a threat column (a tab on the first non-empty line)? Then every line
 * is `URL<TAB>THREAT`, the filter stores values (fuse4) and the labels go in a LabelSet. A pipe
 * is read into memory first, to be read again.
 * @param {InputSource} input
 * @param {BuildOptions} options
 */
async function detectLabels(input, options) {
  // Most inputs tell on their first chunk; a pipe's is held for the build to read again.
  let labelled = firstLineHasTab(await input.firstChunk());
  if (labelled === null) {
    if (!input.rereadable) await input.bufferAll();
    let carry = new Uint8Array(0);
    for await (const chunk of input.chunks()) {
      const joined = new Uint8Array(carry.length + chunk.length);
      joined.set(carry);
      joined.set(chunk, carry.length);
      labelled = firstLineHasTab(joined);
      if (labelled !== null) break;
      carry = joined.subarray(joined.lastIndexOf(10) + 1);
    }
  }
  if (!labelled) {
    if (options.valueBits !== undefined) throw usageError('--value-bits: the input has no threat column (--format urls takes URL<TAB>THREAT lines for values)');
    return;
  }
  const given = options.given.kind ? options.kind : undefined;
  options.kind = valueKind(given, 'a threat column (--format urls, URL<TAB>THREAT lines)');
  const r = options.valueBits;
  options.labels = r === undefined
    ? new LabelSet(MAX_CLASSES, `${MAX_CLASSES}, the most a value holds (2^${MAX_VALUE_BITS}: at most ${MAX_VALUE_BITS} bits)`)
    : new LabelSet(2 ** r, `2^${r} = ${2 ** r}, what --value-bits ${r} holds (at most ${MAX_VALUE_BITS} bits)`);
}

/**
 * Does the first non-empty line of `bytes` have a tab? null when no non-empty line is complete in
 * them (a line without its LF that has no tab yet, or none at all).
 * @param {Uint8Array | null} bytes
 */
function firstLineHasTab(bytes) {
  if (bytes === null) return false; // an empty input
  let start = 0;
  while (start < bytes.length) {
    let end = bytes.indexOf(10, start);
    const complete = end >= 0;
    if (!complete) end = bytes.length;
    const line = bytes.subarray(start, end);
    if (line.includes(9)) return true;
    if (line.some((byte) => byte !== 13)) return complete ? false : null;
    if (!complete) return null;
    start = end + 1;
  }
  return null;
}

/** A urls line's key: SHA-256 of its most specific expression, as the core's url encoding adds it. */
async function urlKeyFunction() {
  const { urlExpressions } = await import('../url.js');
  const { sha256 } = await import('../wasm/index.js');
  return (text) => sha256(urlExpressions(text)[0]);
}

/** The shortest row that holds a key: 40 hex digits, ':', one digit, and an LF (the last row may lack it). */
const MIN_HIBP_ROW = 43;

/**
 * A fuse filter of a hibp file needs no counting pass: its payload is built
 * from the keys alone, and the capacity the file states (the key count) is
 * set once they are in (digest-keys.js). Only when the file is sure to hold
 * at most one shard's keys (2^24, by its size), as the count then decides
 * nothing else. Returns the bound to reserve for, or 0 (count first).
 */
function onePassFuseBound(input, options) {
  if (options.format !== 'hibp' || !FUSE_KINDS.has(options.kind) || options.shard !== null) return 0;
  if (options.buckets !== undefined) return 0; // values go in one addKey() each, not through DigestKeyFilter
  if (options.shards !== undefined && options.shards !== 1) return 0;
  if (input.isDirectory || !(input.size >= 0)) return 0;
  const bound = Math.max(1, Math.floor((input.size + 1) / MIN_HIBP_ROW));
  return bound <= SHARD_KEYS ? bound : 0;
}

/**
 * Where a hibp build's batches of keys go (RecordReader onKeys): the filter
 * (addKeys when it takes packed keys, else one addKey per key) and the store.
 */
function keyBatches(target, store) {
  const key = new Uint8Array(20);
  const toFilter = typeof target.addKeys === 'function'
    ? (keys, n) => target.addKeys(keys, n)
    : (keys, n) => {
      for (let i = 0, at = 0; i < n; i++) {
        for (let j = 0; j < 20; j++) key[j] = keys[at++];
        target.addKey(key);
      }
    };
  if (!store) return (keys, counts, n) => toFilter(keys, n);
  return (keys, counts, n) => {
    toFilter(keys, n);
    store.addKeys(keys, counts, n);
  };
}

async function readRecords(input, reader, progress, phase) {
  const splitter = new LineSplitter(reader.line, MAX_LINE_BYTES, reader.fastPath);
  let bytes = 0;
  progress.start(phase, input.size);
  if (input.isDirectory) {
    // A downloader directory: each file is one prefix's rows, in prefix order.
    let files = 0;
    for (const file of input.files()) {
      reader.beginFile(file.path, file.prefix);
      splitter.reset();
      for (const chunk of input.fileChunks(file.path)) {
        splitter.push(chunk);
        bytes += chunk.length;
      }
      splitter.end();
      progress.update(bytes, reader.items);
      // Reads are synchronous: let signals (Ctrl-C) in now and then.
      if ((++files & 255) === 0) await new Promise(setImmediate);
    }
  } else {
    for await (const chunk of input.chunks()) {
      splitter.push(chunk);
      bytes += chunk.length;
      progress.update(bytes, reader.items);
    }
    splitter.end();
  }
  reader.flush();
  progress.update(bytes, reader.items);
}

/**
 * The metadata stored in the file: where the items came from, no timestamp
 * unless asked. Without a reader (before a single pass) the counts are left out.
 */
function describeBuild(input, options, reader) {
  return {
    source: input.label === 'stdin' ? 'stdin' : basename(input.path),
    format: options.format,
    ...(options.description !== undefined && { description: options.description }),
    ...(reader && { items: reader.items, skipped: reader.skipped }),
    ...(options.format === 'hibp' && { minCount: options.minCount }),
    ...(options.created !== undefined && { created: options.created }),
    ...(options.buckets !== undefined && { values: bucketsMetadata(options.buckets) }),
    ...(options.labels !== null && options.labels.size > 0 && { values: labelsMetadata(options.labels.labels) }),
  };
}

function filterSettings(options, capacity, metadata, keyEncoding = KEY_ENCODING[options.format]) {
  return {
    capacity,
    errorRate: options.errorRate,
    kind: options.kind,
    keyEncoding,
    ...(options.seed !== undefined && { seed: options.seed }),
    ...(options.listId !== undefined && { listId: options.listId }),
    ...(options.generation !== 0 && { generation: options.generation }),
    ...(metadata !== undefined && { metadata }),
    ...(options.valueBits !== undefined && { valueBits: options.valueBits }),
  };
}

// The lowest rate a fingerprint kind reaches: 2^-bits of its widest fingerprint.
const RATE_FLOOR_BITS = { fuse: 8, fuse8: 8, fuse16: 16, fuse4: 32 };

/** When a fingerprint kind was asked below its lowest rate, the limit by name ('' otherwise). */
function rateLimit(options) {
  const bits = RATE_FLOOR_BITS[options.kind];
  if (bits === undefined || !(options.errorRate < 2 ** -bits)) return '';
  return `; --kind ${options.kind} reaches ${bits === 32 ? 'rates down to' : 'only its natural rate'} 2^-${bits} (${(2 ** -bits).toPrecision(3)})`;
}

async function createFilter(BloomFilter, options, capacity, metadata, keyEncoding) {
  const { sizeFor } = await import('../filter.js');
  try {
    return await BloomFilter.create(filterSettings(options, capacity, metadata, keyEncoding));
  } catch (/** @type {any} */ error) {
    // The sizes come from the user's numbers: out of range is a usage error (64); a size past
    // the format's limits is E_TOO_LARGE, exit 65 as in every command.
    if (error?.code === 'E_RANGE' || error?.code === 'E_TOO_LARGE' || error instanceof RangeError) {
      const code = typeof error.code === 'string' && error.code.startsWith('E_') ? error.code : 'E_RANGE';
      throw new CliError(`cannot size a filter for capacity ${capacity} at error rate ${options.errorRate}: ${error.message}${rateLimit(options)}`, code,
        code === 'E_TOO_LARGE' ? EXIT.DATA : EXIT.USAGE);
    }
    if (error?.code === 'E_NOMEM') {
      const { m } = sizeFor({ capacity, errorRate: options.errorRate });
      throw new CliError(
        `cannot allocate ${formatBytes(m / 8)} for capacity ${capacity} at error rate ${options.errorRate}: out of memory ` +
          '(WebAssembly memory is at most 4 GiB; lower --capacity or raise --error-rate)',
        'E_NOMEM', EXIT.USAGE);
    }
    throw error;
  }
}

// With --capacity the input is read once, so the item counts are known only
// at the end. Without a metadata setter on the filter, its bits are OR-ed into
// a fresh filter created with the full metadata (same m, k and seed). When
// memory does not allow a second copy, the file keeps the metadata it was
// created with (the header still records the item count).
async function withMetadata(BloomFilter, filter, options, capacity, metadata) {
  if (typeof filter.setMetadata === 'function') {
    filter.setMetadata(metadata);
    return filter;
  }
  let target;
  try {
    target = await BloomFilter.create(filterSettings(options, capacity, metadata));
  } catch (/** @type {any} */ error) {
    if (error?.code === 'E_NOMEM') return filter;
    throw error;
  }
  try {
    target.merge(filter);
  } catch (error) {
    target.free();
    throw error;
  }
  filter.free();
  return target;
}

function report(options, reader, filter, fileBytes, store) {
  const stats = filter.stats();
  const lines = [
    `wrote ${options.output} (${formatBytes(fileBytes)}): ${formatCount(reader.items)} items, capacity ${formatCount(stats.capacity)}, ` +
      `target error rate ${stats.errorRate}, m = ${formatCount(stats.m)} bits, k = ${stats.k}`,
  ];
  if (typeof filter.summary === 'function') lines.push(filter.summary());
  // A static kind with retries (fuse4) says when its build needed more than the first seed.
  if (stats.buildAttempts > 1) lines.push(`${stats.kind}: built at attempt ${stats.buildAttempts} (the seeds before it did not solve; retries are bounded and the build does not fail)`);
  const bits = `${options.valueBits} bit${options.valueBits === 1 ? '' : 's'} per key`;
  if (options.buckets !== undefined) lines.push(`values: ${bits}, seen at least ${options.buckets.join(' / ')} times`);
  else if (options.labels !== null) lines.push(`values: ${bits}, threat ${options.labels.labels.join(' / ')}`);
  if (store) {
    lines.push(`wrote ${options.store} (${formatBytes(store.bytes)}): ${formatCount(store.records)} records, ` +
      `list id ${options.listId ?? '0'.repeat(32)}, generation ${options.generation}`);
  }
  if (reader.belowMinCount > 0) lines.push(`skipped ${formatCount(reader.belowMinCount)} rows with COUNT below ${options.minCount}`);
  if (reader.invalid > 0) {
    const first = reader.invalidLineNumbers.join(', ');
    const more = reader.invalid > reader.invalidLineNumbers.length ? ', ...' : '';
    lines.push(`skipped ${formatCount(reader.invalid)} invalid line${reader.invalid === 1 ? '' : 's'} (line${reader.invalid === 1 ? '' : 's'} ${first}${more})`);
  }
  if (options.directoryFiles !== undefined && options.directoryFiles < 1 << 20) {
    lines.push(`bloomgate: warning: ${options.input} holds ${formatCount(options.directoryFiles)} of the 1,048,576 prefix files (an incomplete download?)`);
  }
  if (reader.items > stats.capacity) {
    lines.push(`bloomgate: warning: ${formatCount(reader.items)} items exceed the capacity of ${formatCount(stats.capacity)}; the error rate is above its target (rebuild with a larger --capacity)`);
  }
  process.stderr.write(`${lines.join('\n')}\n`);
}

// --created stores an ISO 8601 time; SOURCE_DATE_EPOCH (reproducible-builds.org) pins it.
function createdTimestamp() {
  const epoch = process.env.SOURCE_DATE_EPOCH;
  if (epoch !== undefined && /^[0-9]+$/.test(epoch)) return new Date(Number(epoch) * 1000).toISOString();
  return new Date().toISOString();
}
