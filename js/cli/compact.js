// @ts-check
// `bloomgate compact`: publish a counting master as the classic filter it
// answers like (same m, k, seed; bit i set iff counter i is non-zero).
import { parseCommandArgs } from './args.js';
import { EXIT, usageError } from './errors.js';
import { loadFilterFile, inFile } from './filter-file.js';
import { COMMAND_HELP } from './help.js';
import { AtomicOutput } from './output.js';
import { refuseToOverwrite } from './overwrite.js';
import { formatBytes } from './progress.js';

export async function run(argv) {
  const { values, positionals } = parseCommandArgs('compact', argv, {
    output: { type: 'string', short: 'o' },
    quiet: { type: 'boolean', short: 'q' },
  });
  if (values.help) {
    process.stdout.write(COMMAND_HELP.compact);
    return EXIT.OK;
  }
  if (positionals.length !== 1) throw usageError("compact takes one counting filter (see 'bloomgate compact --help')");
  if (!values.output) throw usageError("missing -o/--output FILE (see 'bloomgate compact --help')");
  // Before anything is created: the output must not replace the input (a link to it included).
  refuseToOverwrite([['-o', values.output]], [{ path: positionals[0] }]);
  const { BloomFilter } = await import('../index.js');
  const output = await AtomicOutput.create(values.output);
  let counting;
  let classic;
  try {
    counting = await loadFilterFile(BloomFilter, positionals[0]);
    try {
      classic = counting.toClassic();
    } catch (error) {
      throw inFile(positionals[0], error);
    }
    const bytes = classic.serialize();
    await output.write(bytes);
    await output.commit();
    if (!values.quiet) process.stderr.write(`wrote ${values.output} (${formatBytes(bytes.length)}): classic, m = ${classic.stats().m}, k = ${classic.stats().k}\n`);
    return EXIT.OK;
  } catch (error) {
    await output.abort();
    throw error;
  } finally {
    counting?.free();
    classic?.free();
  }
}
