// @ts-check
// `bloomgate merge`: the bitwise OR of filters with identical parameters, so
// partitions built anywhere (same --capacity, --error-rate, --seed) combine
// into the filter a single build over their union would give.
import { basename } from 'node:path';
import { parseCommandArgs } from './args.js';
import { CliError, EXIT, usageError } from './errors.js';
import { inFile, loadFilterFile } from './filter-file.js';
import { COMMAND_HELP } from './help.js';
import { AtomicOutput } from './output.js';
import { refuseToOverwrite } from './overwrite.js';
import { formatBytes, formatCount } from './progress.js';

// What must agree for two filters' bits to mean the same thing.
const MUST_MATCH = ['kind', 'm', 'k', 'seed', 'keyEncoding', 'hashAlgorithm'];

export async function run(argv) {
  const { values, positionals } = parseCommandArgs('merge', argv, {
    output: { type: 'string', short: 'o' },
    quiet: { type: 'boolean', short: 'q' },
  });
  if (values.help) {
    process.stdout.write(COMMAND_HELP.merge);
    return EXIT.OK;
  }
  if (values.output === undefined || values.output === '') throw usageError("missing -o/--output FILE (see 'bloomgate merge --help')");
  if (positionals.length < 2) throw usageError(`merge needs at least two filter files, got ${positionals.length} (see 'bloomgate merge --help')`);

  // Before anything is created: the output must not replace an input (a link to one included).
  refuseToOverwrite([['-o', values.output]], positionals.map((path) => ({ path })));
  const { BloomFilter } = await import('../index.js');
  const output = await AtomicOutput.create(values.output);
  let merged;
  try {
    merged = await loadFilterFile(BloomFilter, positionals[0]);
    refuseValues(positionals[0], merged);
    const firstStats = merged.stats();
    const inputs = [describeInput(positionals[0], merged)];
    for (const path of positionals.slice(1)) {
      const filter = await loadFilterFile(BloomFilter, path);
      try {
        refuseValues(path, filter);
        checkCompatible(positionals[0], firstStats, path, filter.stats());
        try {
          merged.merge(filter);
        } catch (/** @type {any} */ error) {
          if (error?.code !== 'E_UNSUPPORTED') throw error;
          throw new CliError(`filters of kind ${firstStats.kind} cannot be merged`, error.code, EXIT.DATA);
        }
        inputs.push(describeInput(path, filter));
      } catch (error) {
        throw inFile(path, error);
      } finally {
        filter.free();
      }
    }
    if (typeof merged.setMetadata === 'function') merged.setMetadata(mergedMetadata(inputs));
    const bytes = merged.serialize();
    await output.write(bytes);
    await output.commit();
    if (!values.quiet) {
      const stats = merged.stats();
      process.stderr.write(
        `wrote ${values.output} (${formatBytes(bytes.length)}): merged ${positionals.length} filters, ` +
          `${formatCount(stats.n)} items, m = ${formatCount(stats.m)} bits, k = ${stats.k}\n`,
      );
    }
    return EXIT.OK;
  } catch (error) {
    await output.abort();
    throw error;
  } finally {
    merged?.free();
  }
}

/**
 * A filter that stores a value with each key (values per key) has nothing to OR: its payload
 * is solved for its keys and their values together. Exit 65, E_UNSUPPORTED, as for other kinds
 * that cannot be merged.
 */
function refuseValues(path, filter) {
  const bits = Number(filter.valueBits) || 0;
  if (bits > 0) {
    throw new CliError(`${path}: a filter with values (${filter.kind}, ${bits} value bits per key) cannot be merged: ` +
      'its keys and values are solved together; build one filter from the joined lists instead', 'E_UNSUPPORTED', EXIT.DATA);
  }
}

function checkCompatible(firstPath, first, path, other) {
  const differences = MUST_MATCH.filter((field) => field in first && String(first[field]) !== String(other[field]))
    .map((field) => `${field} ${other[field]} vs ${first[field]}`);
  if (differences.length > 0) {
    throw new CliError(`filters are incompatible: ${path} differs from ${firstPath} in ${differences.join(', ')}`, 'E_INCOMPATIBLE', EXIT.DATA);
  }
}

function describeInput(path, filter) {
  const metadata = filter.metadata ?? null;
  return { name: basename(path), metadata, items: filter.stats().n };
}

// One record of where the merged filter came from; fields every input agrees on are kept.
function mergedMetadata(inputs) {
  const shared = (field) => {
    const values = new Set(inputs.map((input) => JSON.stringify(input.metadata?.[field])));
    return values.size === 1 ? inputs[0].metadata?.[field] : undefined;
  };
  const metadata = { source: 'merge', inputs: inputs.map((input) => input.name) };
  for (const field of ['format', 'description', 'minCount']) {
    const value = shared(field);
    if (value !== undefined) metadata[field] = value;
  }
  metadata.items = inputs.reduce((sum, input) => sum + (Number(input.metadata?.items ?? input.items) || 0), 0);
  metadata.skipped = inputs.reduce((sum, input) => sum + (Number(input.metadata?.skipped) || 0), 0);
  return metadata;
}
