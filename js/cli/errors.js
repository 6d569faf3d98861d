// @ts-check
// Exit codes and the one-line error report every CLI failure ends in.
// Codes follow BSD sysexits(3), so shell scripts can tell a typo from bad data
// from a missing file without parsing messages.
import { STATUSES } from '../wasm/contract.js';

export const EXIT = Object.freeze({
  OK: 0,
  USAGE: 64, // EX_USAGE: unknown command or option, missing argument, bad number
  DATA: 65, // EX_DATAERR: bad input line, corrupt or incompatible filter
  NO_INPUT: 66, // EX_NOINPUT: an input file cannot be opened or read
  INTERNAL: 70, // EX_SOFTWARE: anything unexpected (a bug; please report it)
  NO_MEMORY: 71, // EX_OSERR: a system resource ran out: memory (E_NOMEM; WebAssembly has at most 4 GiB)
  CANT_CREATE: 73, // EX_CANTCREAT: the output file cannot be written
});

/** An error the CLI expects, carrying its code and exit status. */
export class CliError extends Error {
  constructor(message, code, exitCode) {
    super(message);
    this.name = 'CliError';
    this.code = code;
    this.exitCode = exitCode;
  }
}

export const usageError = (message) => new CliError(message, 'E_USAGE', EXIT.USAGE);
export const inputError = (message) => new CliError(message, 'E_INPUT', EXIT.DATA);

// The core's status codes carry a class (src/bloomgate.h, BG_STATUS_LIST) that
// decides the exit code; the JavaScript layers' own codes are listed here.
const EXIT_BY_CLASS = { data: EXIT.DATA, usage: EXIT.USAGE, resource: EXIT.NO_MEMORY, internal: EXIT.INTERNAL };
/** @type {Map<string, number>} */
const EXIT_BY_CODE = new Map(/** @type {Array<[string, number]>} */ ([
  ...STATUSES.map((status) => [status.name, EXIT_BY_CLASS[status.class]]),
  ['E_INPUT', EXIT.DATA], ['E_ORDER', EXIT.DATA], ['E_INDEX', EXIT.DATA], ['E_VALUE', EXIT.DATA],
]));

const SYSTEM_REASONS = {
  ENOENT: 'no such file or directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EISDIR: 'is a directory',
  ENOTDIR: 'a path component is not a directory',
  ENOSPC: 'no space left on device',
  EDQUOT: 'disk quota exceeded',
  EFBIG: 'file too large',
  EROFS: 'read-only file system',
  EMFILE: 'too many open files',
  EEXIST: 'file exists',
  EXDEV: 'cross-device rename',
  EIO: 'input/output error',
};

// System errors that only a write meets: a full disk or quota, a file too large, a read-only file system.
const OUTPUT_FAILURES = new Set(['ENOSPC', 'EDQUOT', 'EFBIG', 'EROFS']);

/** A short reason for a Node system error ("no such file or directory"). */
export function systemReason(error) {
  if (error && SYSTEM_REASONS[error.code]) return SYSTEM_REASONS[error.code];
  const text = String((error && error.message) || error);
  // "ENOENT: no such file or directory, open 'x'" -> "no such file or directory"
  const match = /^[A-Z0-9_]+: ([^,]+)/.exec(text);
  return match ? match[1] : text.split('\n')[0];
}

/** Wrap a failure to open or read an input file (exit 66). */
export function cannotOpen(path, error) {
  return new CliError(`cannot open ${quote(path)}: ${systemReason(error)}`, error?.code || 'E_OPEN', EXIT.NO_INPUT);
}

/**
 * Wrap a failure to create or write an output file (exit 73). A temporary file
 * of this process (`out.bgs.tmp-<pid>-run3`, js/cli/output.js) is named after
 * the output it becomes: `cannot write 'out.bgs' (its temporary file ...)`.
 */
export function cannotCreate(path, error) {
  const temporary = new RegExp(`^(.+)\\.tmp-${process.pid}(?:-[A-Za-z0-9]+)?$`).exec(String(path));
  const what = temporary ? `${quote(temporary[1])} (its temporary file ${quote(path)})` : quote(path);
  return new CliError(`cannot write ${what}: ${systemReason(error)}`, error?.code || 'E_CREATE', EXIT.CANT_CREATE);
}

/**
 * Why a server could not listen on host:port, and what to do instead ("port
 * 8787 is in use; try --port 8788"), as a usage error (exit 64: the remedy is
 * another --port or --host). `bloomgate serve` and the demo share it. Returns
 * null for any other failure.
 * @param {any} error what listen() rejected with
 * @param {string} host
 * @param {number} port
 * @returns {Promise<CliError | null>}
 */
export async function cannotListen(error, host, port) {
  const code = error?.code;
  if (code === 'EADDRINUSE') {
    const free = await freePortAfter(host, port);
    const advice = free === null ? '--port 0 (any free port)' : `--port ${free} (free now), or --port 0 for any free port`;
    return new CliError(`port ${port} is in use on ${host}; try ${advice}`, code, EXIT.USAGE);
  }
  if (code === 'EACCES' || code === 'EPERM') {
    const why = port < 1024
      ? `ports below 1024 need root or CAP_NET_BIND_SERVICE; try --port ${port === 80 ? 8080 : 8787}, or --port 0 for any free port`
      : 'permission denied; try another --port, or --port 0 for any free port';
    return new CliError(`not allowed to listen on ${host}:${port}: ${why}`, code, EXIT.USAGE);
  }
  if (code === 'EADDRNOTAVAIL') {
    return new CliError(`cannot listen on ${host}:${port}: ${host} is not an address of this machine (see --host)`, code, EXIT.USAGE);
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || error?.syscall === 'getaddrinfo') {
    return new CliError(`cannot listen on ${host}:${port}: the host name does not resolve (see --host)`, code ?? 'ENOTFOUND', EXIT.USAGE);
  }
  return null;
}

/** The first of the next ten ports that can be listened on now, or null. */
async function freePortAfter(host, port) {
  const { createServer } = await import('node:net');
  for (let candidate = port + 1; candidate <= Math.min(port + 10, 65535); candidate++) {
    const free = await new Promise((resolve) => {
      const probe = createServer();
      probe.once('error', () => resolve(false));
      probe.listen(candidate, host, () => probe.close(() => resolve(true)));
    });
    if (free) return candidate;
  }
  return null;
}

export function quote(text) {
  return `'${String(text)}'`;
}

/** Map anything thrown to { message, code, exitCode } for the final report. */
export function describeError(error) {
  if (error instanceof CliError) return { message: error.message, code: error.code, exitCode: error.exitCode };
  if (error && error.name === 'BloomgateError' && typeof error.code === 'string') {
    const exitCode = EXIT_BY_CODE.get(error.code) ?? EXIT.INTERNAL;
    return { message: stripCode(error.message, error.code), code: error.code, exitCode };
  }
  // A write the command did not wrap (it should name its output): the disk, not a bug.
  if (error && OUTPUT_FAILURES.has(error.code) && typeof error.syscall === 'string') {
    const what = typeof error.path === 'string' ? ` ${quote(error.path)}` : '';
    return { message: `cannot write${what}: ${systemReason(error)}`, code: error.code, exitCode: EXIT.CANT_CREATE };
  }
  const message = firstLine(error && error.message ? error.message : String(error)) || 'unknown error';
  const code = error && typeof error.code === 'string' ? error.code : error && error.name ? error.name : 'E_INTERNAL';
  return { message: `internal error: ${message}`, code, exitCode: EXIT.INTERNAL };
}

/** The line printed on stderr: `bloomgate: <message> (<code>)`. */
export function formatError({ message, code }) {
  return `bloomgate: ${message} (${code})`;
}

function firstLine(text) {
  return String(text).split('\n')[0].trim();
}

// Library messages may already end in "(E_CODE)"; print the code once.
function stripCode(message, code) {
  const text = firstLine(message || code);
  const suffix = ` (${code})`;
  return text.endsWith(suffix) ? text.slice(0, -suffix.length) : text;
}
