// @ts-check
// `bloomgate patch OLD DELTA -o NEW`: apply a delta to the generation it
// names; the core checks the result against the target checksum.
import { parseCommandArgs } from './args.js';
import { CliError, EXIT, cannotOpen, quote, usageError } from './errors.js';
import { inFile, readFilterBytes } from './filter-file.js';
import { COMMAND_HELP } from './help.js';
import { AtomicOutput } from './output.js';
import { refuseToOverwrite } from './overwrite.js';
import { formatBytes } from './progress.js';
import { readFile } from 'node:fs/promises';

/** The largest target a delta may claim, as a multiple of its base's length (plus the delta's own bytes). */
const MAX_GROWTH = 8;

export async function run(argv) {
  const { values, positionals } = parseCommandArgs('patch', argv, {
    output: { type: 'string', short: 'o' },
    quiet: { type: 'boolean', short: 'q' },
  });
  if (values.help) {
    process.stdout.write(COMMAND_HELP.patch);
    return EXIT.OK;
  }
  if (values.output === undefined || values.output === '') throw usageError("missing -o/--output FILE (see 'bloomgate patch --help')");
  if (positionals.length !== 2) throw usageError(`patch needs OLD.bgf and DELTA.bgd, got ${positionals.length} argument(s) (see 'bloomgate patch --help')`);
  const [oldPath, deltaPath] = positionals;
  refuseToOverwrite([['-o', values.output]], positionals.map((path) => ({ path })));
  const wasm = await import('../wasm/index.js');
  await wasm.init();
  const base = await readFilterBytes(oldPath);
  let delta;
  try {
    delta = await readFile(deltaPath);
  } catch (error) {
    throw cannotOpen(deltaPath, error);
  }
  let info;
  let result;
  try {
    info = wasm.deltaInfo(delta);
  } catch (error) {
    throw inFile(deltaPath, error);
  }
  // Checked before the core allocates the target: a small delta may claim any length (a 3 GB
  // target from 552 bytes), and clients refuse such a claim against their manifest before
  // allocating. Here the base is the reference: the delta must name it exactly, and a delta
  // between generations of one geometry grows a file by appended layers (a scalable filter's next
  // layers, each about the size of all the earlier ones together) at most: MAX_GROWTH times the base.
  const validated = wasm.headerOf(base).validate;
  const header = validated.rc >= 0 ? validated.header : null;
  if (header && (info.baseLength !== base.length || info.listId !== header.listId || info.baseGeneration !== header.generation ||
      info.baseChecksum !== header.checksum)) {
    throw new CliError(`${deltaPath} applies to generation ${info.baseGeneration} of list ${info.listId} ` +
      `(${info.baseLength} bytes, checksum ${info.baseChecksum}), which ${oldPath} is not`, 'E_DELTA_BASE', EXIT.DATA);
  }
  if (info.targetLength > MAX_GROWTH * base.length + delta.length) {
    throw new CliError(`${quote(deltaPath)} claims a target of ${formatBytes(info.targetLength)} (${info.targetLength} bytes) from a base of ` +
      `${formatBytes(base.length)}: more than ${MAX_GROWTH} times its base, which no delta between generations of one list makes; ` +
      'refused before allocating it (a damaged or hostile delta: fetch the full file instead)', 'E_DELTA', EXIT.DATA);
  }
  try {
    result = wasm.applyDelta(base, delta);
  } catch (/** @type {any} */ error) {
    if (error?.code === 'E_DELTA_BASE') {
      error.message = `${deltaPath} applies to generation ${info.baseGeneration} of list ${info.listId} ` +
        `(${info.baseLength} bytes, checksum ${info.baseChecksum}), which ${oldPath} is not`;
      throw error;
    }
    throw inFile(deltaPath, error);
  }
  const output = await AtomicOutput.create(values.output);
  try {
    await output.write(result);
    await output.commit();
  } catch (error) {
    await output.abort();
    throw error;
  }
  if (!values.quiet) {
    process.stderr.write(`wrote ${values.output} (${formatBytes(result.length)}): generation ${info.baseGeneration} -> ${info.targetGeneration}, checksum ${info.targetChecksum} verified\n`);
  }
  return EXIT.OK;
}
