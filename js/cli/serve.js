// @ts-check
// `bloomgate serve`: the reference server (js/server.js) on 127.0.0.1 by default.
import { parseCommandArgs, parseNonNegativeInteger } from './args.js';
import { cannotListen, cannotOpen, EXIT, usageError } from './errors.js';
import { COMMAND_HELP } from './help.js';

const DEFAULT_EXPIRES_IN = '1d';

export async function run(argv) {
  const { values } = parseCommandArgs('serve', argv, {
    filter: { type: 'string', multiple: true },
    'password-store': { type: 'string' },
    'url-store': { type: 'string' },
    static: { type: 'string' },
    host: { type: 'string' },
    port: { type: 'string' },
    'max-age': { type: 'string' },
    sign: { type: 'string', multiple: true },
    'expires-in': { type: 'string' },
  });
  if (values.help) {
    process.stdout.write(COMMAND_HELP.serve);
    return EXIT.OK;
  }
  const filters = {};
  for (const spec of values.filter ?? []) {
    const at = spec.indexOf('=');
    if (at <= 0 || at === spec.length - 1) throw usageError(`--filter takes NAME=FILE.bgf, got '${spec}'`);
    filters[spec.slice(0, at)] = spec.slice(at + 1);
  }
  if (!Object.keys(filters).length && !values['password-store'] && !values['url-store'] && !values.static) {
    throw usageError("nothing to serve: give --filter, --password-store, --url-store or --static (see 'bloomgate serve --help')");
  }
  const port = values.port === undefined ? 8787 : parseNonNegativeInteger('port', values.port);
  if (port > 65535) throw usageError(`invalid --port '${values.port}': expected 0..65535`);
  // --sign KEY (repeatable): signed manifests and proofs for the stores (docs/FORMAT.md).
  let sign;
  let expiresIn;
  if (values['expires-in'] !== undefined && !values.sign?.length) throw usageError('--expires-in applies to signed endpoints (--sign KEY)');
  if (values.sign?.length) {
    if (!values['password-store'] && !values['url-store']) throw usageError('--sign signs the endpoints of --password-store or --url-store: give one');
    // Signed manifests expire (a replayed one works for at most this long) and are signed again as the server runs.
    expiresIn = (await import('./publish.js')).parseDuration('expires-in', values['expires-in'] ?? DEFAULT_EXPIRES_IN);
    const { readSigningKeys, signAll } = await import('./signing.js');
    const keys = await readSigningKeys(values.sign);
    if (values.static) (await import('./site-paths.js')).refuseKeysInside(values.static, keys, 'the --static directory');
    sign = (bytes) => signAll(bytes, keys);
  }
  const { startReferenceServer } = await import('../server.js');
  let started;
  try {
    started = await startReferenceServer({
      filters,
      passwordStore: values['password-store'],
      urlStore: values['url-store'],
      staticDir: values.static,
      host: values.host ?? '127.0.0.1',
      port,
      maxAge: values['max-age'] === undefined ? 300 : parseNonNegativeInteger('max-age', values['max-age']),
      sign,
      expiresIn,
    });
  } catch (/** @type {any} */ error) {
    // A port in use or not allowed, a host that is not ours: what to do instead (exit 64).
    if (typeof error?.path !== 'string') {
      const listening = await cannotListen(error, values.host ?? '127.0.0.1', port);
      if (listening) throw listening;
    }
    // A file named on the command line that cannot be read (missing, a directory, no permission): exit 66.
    if (typeof error?.path === 'string' && typeof error?.syscall === 'string') throw cannotOpen(error.path, error);
    if (error instanceof TypeError) throw usageError(error.message); // e.g. a store of the wrong hash type
    throw error;
  }
  const { url } = started;
  const lines = [`bloomgate: serving on ${url}`];
  for (const name of Object.keys(filters)) lines.push(`  filter       ${url}/filters/${name}.bgf`);
  if (values['password-store']) lines.push(`  range        ${url}/range/{5 hex}`);
  if (values['url-store']) lines.push(`  hashes       ${url}/hashes/{8 hex}`);
  if (values.static) lines.push(`  static       ${url}/`);
  process.stderr.write(`${lines.join('\n')}\n`);
  await new Promise((resolve) => {
    const stop = () => started.server.close(resolve);
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  return EXIT.OK;
}
