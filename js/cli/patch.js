// @ts-check
// `bloomgate patch OLD DELTA -o NEW`: apply a delta to the generation it
// names; the core checks the result against the target checksum.
import { parseCommandArgs } from './args.js';
import { EXIT, cannotOpen, usageError } from './errors.js';
import { inFile, readFilterBytes } from './filter-file.js';
import { COMMAND_HELP } from './help.js';
import { AtomicOutput } from './output.js';
import { refuseToOverwrite } from './overwrite.js';
import { formatBytes } from './progress.js';
import { readFile } from 'node:fs/promises';

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
