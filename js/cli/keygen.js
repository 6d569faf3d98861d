// @ts-check
// `bloomgate keygen -o publisher.key`: a new Ed25519 publisher key. The
// private key goes to the file (mode 0600, never overwriting one); the public
// key, which apps pin with openFilter(url, { keys: [...], listId }), goes to stdout.
import { parseCommandArgs } from './args.js';
import { dirname } from 'node:path';
import { CliError, EXIT, quote, usageError } from './errors.js';
import { COMMAND_HELP } from './help.js';
import { generateKeyFile } from './signing.js';
import { siteAround } from './site-paths.js';

export async function run(argv) {
  const { values, positionals } = parseCommandArgs('keygen', argv, {
    output: { type: 'string', short: 'o' },
    quiet: { type: 'boolean', short: 'q' },
  });
  if (values.help) {
    process.stdout.write(COMMAND_HELP.keygen);
    return EXIT.OK;
  }
  if (positionals.length > 0) throw usageError(`keygen takes no arguments, got ${positionals.join(' ')} (see 'bloomgate keygen --help')`);
  if (!values.output) throw usageError("missing -o/--output FILE for the private key (see 'bloomgate keygen --help')");
  // A site is served as it is: a key written into one is a key published.
  const site = siteAround(dirname(values.output));
  if (site !== null) {
    throw new CliError(`${quote(values.output)} is inside the bloomgate site ${quote(site)}, which a web server serves as it is: ` +
      'anyone could download the key and sign lists your clients believe. Write it outside the site (e.g. ~/.config/bloomgate/publisher.key)',
    'E_KEY_EXPOSED', EXIT.USAGE);
  }
  const id = await generateKeyFile(values.output);
  process.stdout.write(`${id}\n`);
  if (!values.quiet) {
    process.stderr.write(`wrote the private key to ${values.output} (mode 0600). Keep it off the web host; pin the public key above in your app,\n` +
      'with the list id: \'bloomgate publish --sign\' prints the whole "client options" line to paste, e.g.\n' +
      `  openFilter(manifestUrl, { keys: ['${id}'], threshold: 1, listId: '<32 hex: the list>' })\n`);
  }
  return EXIT.OK;
}
