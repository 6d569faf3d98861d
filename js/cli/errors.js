// Exit codes and the one-line error report every CLI failure ends in.
// Codes follow BSD sysexits(3), so shell scripts can tell a typo from bad data
// from a missing file without parsing messages.

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

// Library codes that mean "the file or data is bad", as opposed to a bug.
const DATA_CODES = new Set([
  'E_TRUNCATED', 'E_MAGIC', 'E_VERSION', 'E_HEADER', 'E_TRAILING', 'E_CHECKSUM', 'E_KIND',
  'E_KEY_ENCODING', 'E_HASH', 'E_PAYLOAD', 'E_INCOMPATIBLE', 'E_METADATA', 'E_INPUT', 'E_URL',
  'E_UNSUPPORTED', 'E_STATIC', 'E_FULL', 'E_ORDER', 'E_INDEX', 'E_TOO_LARGE',
]);
// Library codes caused by the numbers the user typed. (E_TOO_LARGE is data in every command:
// a file that claims a size past the limits; build maps its own sizing failures itself.)
const USAGE_CODES = new Set(['E_RANGE']);

const SYSTEM_REASONS = {
  ENOENT: 'no such file or directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EISDIR: 'is a directory',
  ENOTDIR: 'a path component is not a directory',
  ENOSPC: 'no space left on device',
  EROFS: 'read-only file system',
  EMFILE: 'too many open files',
  EEXIST: 'file exists',
  EXDEV: 'cross-device rename',
  EIO: 'input/output error',
};

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

/** Wrap a failure to create or write an output file (exit 73). */
export function cannotCreate(path, error) {
  return new CliError(`cannot write ${quote(path)}: ${systemReason(error)}`, error?.code || 'E_CREATE', EXIT.CANT_CREATE);
}

export function quote(text) {
  return `'${String(text)}'`;
}

/** Map anything thrown to { message, code, exitCode } for the final report. */
export function describeError(error) {
  if (error instanceof CliError) return { message: error.message, code: error.code, exitCode: error.exitCode };
  if (error && error.name === 'BloomgateError' && typeof error.code === 'string') {
    const exitCode = DATA_CODES.has(error.code) ? EXIT.DATA : USAGE_CODES.has(error.code) ? EXIT.USAGE
      : error.code === 'E_NOMEM' ? EXIT.NO_MEMORY : EXIT.INTERNAL;
    return { message: stripCode(error.message, error.code), code: error.code, exitCode };
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
