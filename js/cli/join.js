// @ts-check
// `bloomgate join`: the parts of a sharded fuse build (`build … --kind fuse
// --shard I/S`, one job per shard, anywhere) into one filter file, byte for
// byte the file `build … --kind fuse --shards S` writes on one machine.
//
// A part is a valid unsharded fuse filter of its shard's keys whose header
// carries the whole filter's fields and whose metadata is
// {"fuseShard": I, "fuseShards": S, "metadata": "<the whole filter's metadata>"}.
// The parts' headers and metadata are read and cross-checked first; then each
// part is read whole (one at a time), validated by the core, and its payload
// written as shard I.
import { closeSync, openSync, readSync } from 'node:fs';
import { parseCommandArgs } from './args.js';
import { CliError, EXIT, cannotOpen, quote, usageError } from './errors.js';
import { inFile, readFilterBytes } from './filter-file.js';
import { FUSE_KIND_NAMES, PART_KEYS, writeFuseFile } from './fuse-shards.js';
import { COMMAND_HELP } from './help.js';
import { AtomicOutput } from './output.js';
import { formatBytes, formatCount, Progress } from './progress.js';
import { headerOffset, keyEncodingName, kindName } from '../names.js';
import { HEADER_SIZE } from '../wasm/index.js';

// Header fields every part shares with the whole filter (count, m and the payload are the part's own).
const SHARED_FIELDS = ['kind', 'keyEncoding', 'hashAlgorithm', 'seed', 'capacity', 'errorRate', 'listId', 'generation'];

const partError = (message) => new CliError(message, 'E_PART', EXIT.DATA);

export async function run(argv) {
  const { values, positionals } = parseCommandArgs('join', argv, {
    output: { type: 'string', short: 'o' },
    progress: { type: 'boolean' },
    quiet: { type: 'boolean', short: 'q' },
  });
  if (values.help) {
    process.stdout.write(COMMAND_HELP.join);
    return EXIT.OK;
  }
  if (values.output === undefined || values.output === '') throw usageError("missing -o/--output FILE (see 'bloomgate join --help')");
  if (positionals.length === 0) throw usageError("join needs the part files of a sharded build (see 'bloomgate join --help')");

  const { BloomFilter, init } = await import('../index.js');
  const wasm = await import('../wasm/index.js');
  await init();
  const parts = positionals.map((path) => readPartHeader(wasm, path));
  const first = parts[0];
  const shards = first.shards;
  for (const part of parts) {
    const differences = SHARED_FIELDS.filter((field) => String(part.header[field]) !== String(first.header[field]))
      .map((field) => `${field} ${part.header[field]} vs ${first.header[field]}`);
    if (part.shards !== shards) differences.push(`shard count ${part.shards} vs ${shards}`);
    if (part.metadata !== first.metadata) differences.push('the filter\'s metadata');
    if (part.valueBits !== first.valueBits) differences.push(`value bits ${part.valueBits} vs ${first.valueBits}`);
    if (differences.length > 0) {
      throw new CliError(`parts of different builds: ${part.path} differs from ${first.path} in ${differences.join(', ')}`, 'E_INCOMPATIBLE', EXIT.DATA);
    }
  }
  const byShard = new Array(shards).fill(null);
  for (const part of parts) {
    const other = byShard[part.index];
    if (other !== null) throw new CliError(`shard ${part.index} of ${shards} is given twice: ${other.path} and ${part.path}`, 'E_SHARDS', EXIT.DATA);
    byShard[part.index] = part;
  }
  const missing = byShard.flatMap((part, index) => (part === null ? [index] : []));
  if (missing.length > 0) {
    const list = missing.length > 8 ? `${missing.slice(0, 8).join(', ')}, … (${missing.length} in all)` : missing.join(', ');
    throw new CliError(`missing part${missing.length === 1 ? '' : 's'} for shard${missing.length === 1 ? '' : 's'} ${list} of ${shards}`, 'E_SHARDS', EXIT.DATA);
  }

  const template = await templateFor(BloomFilter, first);
  const progress = new Progress({ enabled: !values.quiet && Boolean(values.progress || process.stderr.isTTY) });
  const output = await AtomicOutput.create(values.output);
  try {
    progress.start('joining', undefined);
    const payloads = (async function* partPayloads() {
      for (const part of byShard) {
        const bytes = await readFilterBytes(part.path);
        const validated = wasm.headerOf(bytes).validate;
        if (validated.rc < 0) throw inFile(part.path, wasm.statusError(validated.rc));
        const header = /** @type {NonNullable<typeof validated.header>} */ (validated.header); // set when rc >= 0
        // The file validated whole: it must still be the part whose header was checked.
        if (header.checksum !== part.header.checksum) throw partError(`${part.path} changed while the parts were joined`);
        progress.setNote(`shard ${part.index + 1} of ${shards}`);
        yield { payload: bytes.subarray(header.payloadOffset), count: header.count, m: header.m };
      }
    })();
    const written = await writeFuseFile(output, template, shards, payloads, progress);
    await output.commit();
    progress.clear();
    if (!values.quiet) {
      process.stderr.write(`wrote ${values.output} (${formatBytes(written.length)}): joined ${shards} shard${shards === 1 ? '' : 's'}, ` +
        `${formatCount(written.keys)} distinct keys, m = ${formatCount(written.m)} bits, k = ${first.header.k}\n`);
    }
    return EXIT.OK;
  } catch (error) {
    progress.clear();
    await output.abort();
    throw error;
  }
}

/** A part's fixed header and metadata, checked to be a part: { path, header, index, shards, metadata, valueBits }. */
function readPartHeader(wasm, path) {
  let fd;
  let prefix;
  try {
    fd = openSync(path, 'r');
    const head = new Uint8Array(HEADER_SIZE);
    const n = readSync(fd, head, 0, HEADER_SIZE, 0);
    const peeked = wasm.headerOf(head.subarray(0, n)).peek;
    if (peeked.rc < 0) throw inFile(path, wasm.statusError(peeked.rc));
    prefix = new Uint8Array(HEADER_SIZE + peeked.header.metadataLength);
    prefix.set(head);
    const got = readSync(fd, prefix, HEADER_SIZE, prefix.length - HEADER_SIZE, HEADER_SIZE);
    if (got < prefix.length - HEADER_SIZE) throw inFile(path, wasm.statusError(wasm.statusCode('E_TRUNCATED')));
    const header = peeked.header;
    if (!FUSE_KIND_NAMES.has(kindName(header.kind))) throw partError(`${path} is not a fuse filter: only fuse shard parts can be joined (merge ORs classic filters)`);
    /** @type {any} */
    let metadata = null; // JSON.parse's
    try {
      metadata = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(prefix.subarray(HEADER_SIZE)));
    } catch {
      // not JSON: not a part
    }
    const isPart = metadata !== null && typeof metadata === 'object' && !Array.isArray(metadata) &&
      Object.keys(metadata).join() === PART_KEYS.join() && Number.isSafeInteger(metadata.fuseShards) &&
      metadata.fuseShards >= 1 && metadata.fuseShards <= 2 ** 24 && (metadata.fuseShards & (metadata.fuseShards - 1)) === 0 &&
      Number.isSafeInteger(metadata.fuseShard) && metadata.fuseShard >= 0 && metadata.fuseShard < metadata.fuseShards &&
      (metadata.metadata === null || typeof metadata.metadata === 'string');
    if (!isPart) throw partError(`${path} is not the part of a sharded build (build parts with 'bloomgate build … --kind fuse --shard I/S')`);
    // fuse4 keeps its value bits r in payload byte 2 (docs/kinds/fuse4.md); the whole file's are the parts'.
    const payloadHead = new Uint8Array(4);
    const kind = kindName(header.kind);
    const valueBits = kind === 'fuse4' && readSync(fd, payloadHead, 0, 4, header.payloadOffset) === 4 ? payloadHead[2] : 0;
    return { path, header, index: metadata.fuseShard, shards: metadata.fuseShards, metadata: metadata.metadata, valueBits };
  } catch (error) {
    if (error instanceof CliError) throw error;
    throw cannotOpen(path, error);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** The .bgf of an empty filter with the whole filter's header fields and metadata, as `build` creates it. */
async function templateFor(BloomFilter, part) {
  const { header } = part;
  const metadata = part.metadata === null ? undefined : JSON.parse(part.metadata);
  const filter = await BloomFilter.create({
    capacity: header.capacity,
    errorRate: header.errorRate,
    kind: kindName(header.kind),
    keyEncoding: keyEncodingName(header.keyEncoding),
    seed: header.seed,
    listId: header.listId,
    generation: header.generation,
    ...(metadata !== undefined && { metadata }),
    ...(part.valueBits > 0 && { valueBits: part.valueBits }),
  });
  try {
    const bytes = filter.serialize();
    const text = new TextDecoder().decode(bytes.subarray(HEADER_SIZE, HEADER_SIZE + new DataView(bytes.buffer, bytes.byteOffset + headerOffset('metadataLength'), 4).getUint32(0, true)));
    if (text !== (part.metadata ?? '')) throw partError(`${quote(part.path)}: its filter metadata does not read back as written`);
    return bytes;
  } finally {
    filter.free();
  }
}
