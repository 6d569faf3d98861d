// @ts-check
// `bloomgate diff OLD NEW -o DELTA`: the .bgd that turns one generation of a
// list into the next (src/delta.c; docs/FORMAT.md, "Delta files").
import { parseCommandArgs } from './args.js';
import { EXIT, usageError } from './errors.js';
import { inFile, readFilterBytes } from './filter-file.js';
import { COMMAND_HELP } from './help.js';
import { AtomicOutput } from './output.js';
import { refuseToOverwrite } from './overwrite.js';
import { formatBytes } from './progress.js';

export async function run(argv) {
  const { values, positionals } = parseCommandArgs('diff', argv, {
    output: { type: 'string', short: 'o' },
    quiet: { type: 'boolean', short: 'q' },
  });
  if (values.help) {
    process.stdout.write(COMMAND_HELP.diff);
    return EXIT.OK;
  }
  if (values.output === undefined || values.output === '') throw usageError("missing -o/--output FILE (see 'bloomgate diff --help')");
  if (positionals.length !== 2) throw usageError(`diff needs two filter files, OLD and NEW, got ${positionals.length} (see 'bloomgate diff --help')`);
  const [oldPath, newPath] = positionals;
  refuseToOverwrite([['-o', values.output]], positionals.map((path) => ({ path })));
  const delta = await encodeBetween(oldPath, newPath);
  const output = await AtomicOutput.create(values.output);
  try {
    await output.write(delta.bytes);
    await output.commit();
  } catch (error) {
    await output.abort();
    throw error;
  }
  if (!values.quiet) {
    const { info } = delta;
    process.stderr.write(`wrote ${values.output} (${formatBytes(delta.bytes.length)}, ${(100 * delta.bytes.length / info.targetLength).toFixed(2)}% of the new file): ` +
      `generation ${info.baseGeneration} -> ${info.targetGeneration}, ${info.changedBits} bits changed` +
      (info.appendedBytes > 0 ? `, ${formatBytes(info.appendedBytes)} appended` : '') + '\n');
  }
  return EXIT.OK;
}

/**
 * The delta between two filter files: { bytes, info }. Library errors name the file at fault where one is.
 * @param {string} oldPath
 * @param {string} newPath
 * @param {{ oldBytes?: Uint8Array, newBytes?: Uint8Array }} [bytes] the files' bytes when already read
 */
export async function encodeBetween(oldPath, newPath, { oldBytes, newBytes } = {}) {
  const wasm = await import('../wasm/index.js');
  await wasm.init();
  const base = oldBytes ?? await readFilterBytes(oldPath);
  const target = newBytes ?? await readFilterBytes(newPath);
  // Each file alone first, so a damaged one is named; then the pair.
  for (const [path, bytes] of [[oldPath, base], [newPath, target]]) {
    const { rc } = wasm.headerOf(bytes).validate;
    if (rc < 0) throw inFile(path, wasm.statusError(rc));
  }
  try {
    const bytes = wasm.encodeDelta(base, target);
    return { bytes, info: wasm.deltaInfo(bytes) };
  } catch (/** @type {any} */ error) {
    if (error?.code === 'E_INCOMPATIBLE') {
      error.message = `${newPath} is not the next generation of ${oldPath}'s list in the same geometry ` +
        `(same list id, kind, capacity, error rate, seed and key encoding, a higher generation: build it with --like ${oldPath})`;
    }
    throw error;
  }
}
