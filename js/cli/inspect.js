// @ts-check
// `bloomgate inspect`: what a .bgf file says about itself, and whether to trust it.
import { parseCommandArgs } from './args.js';
import { CliError, EXIT, usageError } from './errors.js';
import { beyondExactCounts, readFilterBytes } from './filter-file.js';
import { COMMAND_HELP } from './help.js';
import { formatBytes, formatCount } from './progress.js';
import { hashName, headerOffset, keyEncodingName, kindName } from '../names.js';
import { parseValues } from '../values.js';
import { HEADER_SIZE } from '../wasm/index.js';
import { FUSE_KIND_NAMES } from './fuse-shards.js';

// Validation steps that run after the checksum (docs/FORMAT.md): the checksum
// matched when one of these fails.

export async function run(argv) {
  const { values, positionals } = parseCommandArgs('inspect', argv, { json: { type: 'boolean' } });
  if (values.help) {
    process.stdout.write(COMMAND_HELP.inspect);
    return EXIT.OK;
  }
  if (positionals.length !== 1) {
    throw usageError(`inspect takes one filter file, got ${positionals.length} (see 'bloomgate inspect --help')`);
  }
  const path = positionals[0];
  const bytes = await readFilterBytes(path);
  const { inspectFile } = await import('../index.js');
  let result = await inspectFile(bytes);
  // Valid, but past what the other commands compute with: they refuse it, and so does inspect (65).
  const tooLarge = result.ok ? beyondExactCounts(bytes) : null;
  if (tooLarge !== null) result = { ...result, ok: false, code: 'E_TOO_LARGE', message: tooLarge };
  const report = describe(path, bytes, result);
  // What could be read goes to stdout either way; the failure also gets its error line.
  process.stdout.write(values.json ? `${JSON.stringify(report, null, 2)}\n` : formatText(report, bytes.length));
  if (!report.ok) throw new CliError(`${path}: ${report.message}`, report.code, EXIT.DATA);
  return EXIT.OK;
}

/** The report printed by --json (and, formatted, without it). */
export function describe(path, bytes, result) {
  const header = result.header && normalizeHeader(result.header, bytes);
  const stats = result.stats && {
    bitsSet: result.stats.bitsSet,
    fillRatio: result.stats.fillRatio,
    estimatedItems: result.stats.estimatedItems,
    estimatedErrorRate: result.stats.estimatedErrorRate,
    theoreticalErrorRate: result.stats.theoreticalErrorRate,
  };
  const metadata = result.metadata ?? (header ? unverifiedMetadata(header, bytes) : null);
  return {
    file: path,
    ok: result.ok,
    code: result.code,
    message: result.message,
    checksum: result.ok || result.checksumVerified ? 'ok' : result.code === 'E_CHECKSUM' ? 'mismatch' : 'not verified',
    header,
    metadata,
    minCount: minCountOf(metadata),
    ...valuesOf(result.stats, metadata),
    stats,
    ...(result.stats && FUSE_KIND_NAMES.has(header.kind) && { shards: fuseShards(header, bytes) }),
    // Seeds a static kind with retries (fuse4) tried before it built: more than 1 says the build retried.
    ...(result.stats && header.kind === 'fuse4' && { buildAttempts: fuse4Attempts(header, bytes) }),
    warnings: header && stats ? warnings(header, stats, Boolean(result.stats.overFilled)) : [],
  };
}

/**
 * Values per key (js/values.js): `values: { bits, meaning, buckets | labels }` when the filter
 * stores values (stats().valueBits) or its metadata says what they mean; nothing otherwise.
 */
function valuesOf(stats, metadata) {
  const bits = Number(stats?.valueBits) > 0 ? Number(stats.valueBits) : 0;
  const block = metadata !== null && typeof metadata === 'object' ? metadata.values : undefined;
  if (bits === 0 && block === undefined) return {};
  const meaning = parseValues(block);
  return { values: { bits, ...(meaning ?? { meaning: null }) } };
}

/** A valid fuse file's shard count: 2^shard_bits, payload byte 1 (docs/kinds/fuse.md). */
function fuseShards(header, bytes) {
  return 2 ** bytes[header.payloadOffset + 1];
}

/**
 * A valid fuse4 file's build attempts (docs/FORMAT.md, kind 8: u32 at byte 32 of an unsharded
 * payload): the most any shard took, so a retry anywhere shows; 0 for an empty filter.
 */
function fuse4Attempts(header, bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const base = header.payloadOffset;
  const shardBits = bytes[base + 1];
  if (shardBits === 0) return view.getUint32(base + 32, true);
  let most = 0;
  for (let i = 0; i < 2 ** shardBits; i++) {
    const shard = base + Number(view.getBigUint64(base + 40 + 8 * i, true));
    most = Math.max(most, view.getUint32(shard + 32, true));
  }
  return most;
}

/** The list's threshold as BloomFilter#minCount reads it: metadata `minCount`, 1 when whole. */
function minCountOf(metadata) {
  const value = metadata !== null && typeof metadata === 'object' ? metadata.minCount : undefined;
  return Number.isSafeInteger(value) && value > 1 ? value : 1;
}

/**
 * The header's 64-bit fields as JSON can carry them: a number up to 2^53 - 1, and
 * past it (the library's BigInt: a corrupt or resealed header, or an absurd count)
 * a decimal string with every digit, never a rounded number or a TypeError.
 * @param {number | bigint} value
 * @returns {number | string}
 */
function exact(value) {
  return typeof value === 'bigint' ? value.toString() : value;
}

function normalizeHeader(h, bytes) {
  return {
    version: h.version,
    kind: kindName(h.kind),
    keyEncoding: keyEncodingName(h.keyEncoding),
    hashAlgorithm: hashName(h.hashAlgorithm),
    // 64-bit: a string, so JSON readers lose no digits.
    seed: String(h.seed),
    m: exact(h.m),
    k: h.k,
    capacity: exact(h.capacity),
    errorRate: h.errorRate,
    count: exact(h.count),
    listId: h.listId ?? listIdAt(bytes),
    generation: exact(h.generation),
    metadataLength: h.metadataLength,
    payloadOffset: exact(h.payloadOffset),
    payloadLength: exact(h.payloadLength),
    fileLength: exact(h.fileLength),
    checksum: h.checksum,
  };
}

/** A count with thousands separators: a number, or a 64-bit field's decimal string. */
function countText(value) {
  if (typeof value === 'number') return formatCount(value);
  return String(value).replace(/\B(?=(\d{3})+$)/g, ',');
}

// For a file that fails validation the library returns only the fixed header;
// the list id (bytes 80..96) and the metadata (right after the 128-byte header)
// are still shown when present, marked as unverified by `ok: false`.
const LIST_ID_OFFSET = headerOffset('listId');

function listIdAt(bytes) {
  if (bytes.length < LIST_ID_OFFSET + 16) return null;
  return Buffer.from(bytes.subarray(LIST_ID_OFFSET, LIST_ID_OFFSET + 16)).toString('hex');
}

function unverifiedMetadata(header, bytes) {
  const end = HEADER_SIZE + header.metadataLength;
  if (header.metadataLength === 0 || end > bytes.length) return null;
  const text = Buffer.from(bytes.subarray(HEADER_SIZE, end)).toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * Over capacity: more items were added than the filter was sized for.
 * Over-full: the library's judgement (stats.overFilled), so the CLI and the API
 * agree. It is not "fill > 0.5": with k rounded to an integer a correctly sized
 * filter is a little over half full at capacity (0.518 at p = 0.01), so the
 * library flags a fill whose implied error rate is past twice the target.
 */
export function warnings(header, stats, overFilled) {
  const list = [];
  if (BigInt(header.count) > BigInt(header.capacity)) {
    list.push(`over capacity: ${countText(header.count)} items inserted into a filter sized for ${countText(header.capacity)}; the error rate exceeds its target of ${header.errorRate}`);
  }
  if (overFilled) {
    list.push(`over-full: answers degrade; rebuild with a larger capacity (fill ratio ${stats.fillRatio.toFixed(4)}, error rate now about ${formatRate(stats.estimatedErrorRate)})`);
  }
  return list;
}

function formatText(report, byteLength) {
  const rows = [['file', `${report.file} (${formatCount(byteLength)} bytes)`]];
  rows.push(['status', report.ok ? 'ok' : `${report.code}: ${report.message}`]);
  const h = report.header;
  if (h) {
    rows.push(
      ['version', h.version],
      ['kind', h.kind],
      ['key encoding', h.keyEncoding],
      ['hash', h.hashAlgorithm],
      ['seed', h.seed],
      ['m', `${countText(h.m)} bits (${formatBytes(Number(h.m) / 8)})`],
      ['k', h.k],
      ['capacity', countText(h.capacity)],
      ['target error rate', h.errorRate],
      ['items inserted', countText(h.count)],
      ['list id', h.listId ?? '(unreadable)'],
      ['generation', h.generation],
      ['min count', report.minCount > 1
        ? `${formatCount(report.minCount)} (a subset: hashes seen at least ${formatCount(report.minCount)} times; its "no" means fewer)`
        : '1 (the whole list)'],
      ['metadata', `${countText(h.metadataLength)} bytes`],
    );
    if (report.values !== undefined) rows.push(['values', valuesText(report.values)]);
    if (report.metadata !== null && report.metadata !== undefined) {
      rows.push(['', JSON.stringify(report.metadata)]);
    }
    rows.push(
      ['payload', `offset ${countText(h.payloadOffset)}, length ${countText(h.payloadLength)} bytes`],
      ['file length', `${countText(h.fileLength)} bytes`],
    );
    if (report.shards !== undefined) rows.push(['shards', report.shards === 1 ? '1 (unsharded)' : `${formatCount(report.shards)} (a sharded fuse payload)`]);
    if (report.buildAttempts !== undefined) {
      const retried = `${formatCount(report.buildAttempts)} (seeds tried${report.shards > 1 ? ' by the slowest shard' : ''}: the build retried with new seeds, bounded, and never fails)`;
      rows.push(['build attempts', report.buildAttempts <= 1 ? `${report.buildAttempts} (${report.buildAttempts === 1 ? 'built with its first seed' : 'empty: nothing to build'})` : retried]);
    }
  }
  rows.push(['checksum', h ? `${report.checksum} (${h.checksum})` : report.checksum]);
  const s = report.stats;
  if (s) {
    rows.push(
      ['bits set', formatCount(s.bitsSet)],
      ['fill ratio', s.fillRatio.toFixed(6)],
      ['estimated items', Number.isFinite(s.estimatedItems) ? formatCount(s.estimatedItems) : 'unbounded (every bit is set)'],
      ['estimated error rate', formatRate(s.estimatedErrorRate)],
      ['theoretical error rate', `${formatRate(s.theoreticalErrorRate)} (at ${countText(h.count)} items)`],
    );
  }
  const width = Math.max(...rows.map(([label]) => label.length)) + 2;
  let text = rows.map(([label, value]) => `${label.padEnd(width)}${value}`.trimEnd()).join('\n');
  for (const warning of report.warnings) text += `\nwarning: ${warning}`;
  return `${text}\n`;
}

function valuesText(values) {
  const width = `${values.bits} bit${values.bits === 1 ? '' : 's'} per key`;
  const arbitrary = "(a member's exact; a false positive's arbitrary)";
  if (values.meaning === 'seen-at-least') return `${width}: seen at least ${values.buckets.map(formatCount).join(' / ')} times ${arbitrary}`;
  if (values.meaning === 'threat') return `${width}: threat ${values.labels.join(' / ')} ${arbitrary}`;
  return `${width} (the metadata does not say what they mean)`;
}

function formatRate(rate) {
  if (rate === 0) return '0';
  return rate >= 0.001 ? rate.toFixed(6) : rate.toExponential(3);
}
