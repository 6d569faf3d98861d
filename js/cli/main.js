// @ts-check
// Command dispatch and the single place where failures become exit codes.
import { readFileSync } from 'node:fs';
import { COMMAND_HELP, MAIN_HELP } from './help.js';
import { describeError, EXIT, formatError, usageError } from './errors.js';

const COMMANDS = {
  build: () => import('./build.js'),
  inspect: () => import('./inspect.js'),
  query: () => import('./query.js'),
  merge: () => import('./merge.js'),
  join: () => import('./join.js'),
  compact: () => import('./compact.js'),
  serve: () => import('./serve.js'),
  'export-ranges': () => import('./export-ranges.js'),
  diff: () => import('./diff.js'),
  patch: () => import('./patch.js'),
  publish: () => import('./publish.js'),
  keygen: () => import('./keygen.js'),
  keys: () => import('./keys.js'),
};

export function version() {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
  return pkg.version;
}

/**
 * Run the CLI. Never throws: every failure is reported on stderr as one line.
 * @param {string[]} argv arguments after the program name
 * @returns {Promise<number>} the exit code
 */
export async function main(argv) {
  try {
    const [command, ...rest] = argv;
    if (command === undefined) {
      process.stderr.write(MAIN_HELP);
      return EXIT.USAGE;
    }
    if (command === '-h' || command === '--help' || command === 'help') {
      if (rest.length > 0 && COMMAND_HELP[rest[0]]) {
        process.stdout.write(COMMAND_HELP[rest[0]]);
      } else if (rest.length > 0) {
        throw usageError(`unknown command '${rest[0]}' (see 'bloomgate --help')`);
      } else {
        process.stdout.write(MAIN_HELP);
      }
      return EXIT.OK;
    }
    if (command === '-V' || command === '--version') {
      process.stdout.write(`${version()}\n`);
      return EXIT.OK;
    }
    if (!Object.hasOwn(COMMANDS, command)) {
      const what = command.startsWith('-') ? 'option' : 'command';
      throw usageError(`unknown ${what} '${command}' (see 'bloomgate --help')`);
    }
    const module = await COMMANDS[command]();
    return await module.run(rest);
  } catch (error) {
    const report = describeError(error);
    process.stderr.write(`${formatError(report)}\n`);
    return report.exitCode;
  }
}
