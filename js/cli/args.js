// @ts-check
// Command-line parsing: node:util parseArgs in strict mode, its errors turned
// into one-line usage errors (exit 64), and the number formats options accept.
import { parseArgs } from 'node:util';
import { usageError } from './errors.js';

/**
 * Parse argv for one command. Every command accepts -h/--help.
 * @template {import('node:util').ParseArgsOptionsConfig} T
 * @param {string} command
 * @param {string[]} argv
 * @param {T} options
 */
export function parseCommandArgs(command, argv, options) {
  try {
    return parseArgs({
      args: argv,
      options: { help: { type: 'boolean', short: 'h' }, ...options },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    throw usageError(`${describeParseError(error)} (see 'bloomgate ${command} --help')`);
  }
}

function describeParseError(error) {
  const text = String(error.message || error);
  let match;
  if (error.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && (match = /Unknown option '([^']+)'/.exec(text))) {
    return `unknown option ${match[1]}`;
  }
  if (error.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    if ((match = /Option '(?:-\w, )?(--[\w-]+) <value>' argument missing/.exec(text))) {
      return `option ${match[1]} needs a value`;
    }
    if ((match = /Option '(?:-\w, )?(--[\w-]+)' does not take an argument/.exec(text))) {
      return `option ${match[1]} does not take a value`;
    }
    if ((match = /Option '(?:-\w, )?(--[\w-]+)[^']*' argument is ambiguous/.exec(text))) {
      return `option ${match[1]} needs a value (to pass one starting with '-', write ${match[1]}=VALUE)`;
    }
  }
  return text.split(/\.\s/)[0].replace(/\.$/, '');
}

const INTEGER = /^(?:0|[1-9][0-9]*)$/;
const DECIMAL = /^(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?$/;

/** A positive integer up to 2^53 (underscores allowed as digit separators: 1_000_000). */
export function parsePositiveInteger(name, text) {
  const value = parseInteger(name, text, 'a positive integer');
  if (value < 1) throw usageError(`invalid --${name} '${text}': expected a positive integer`);
  return value;
}

/** A non-negative integer up to 2^53. */
export function parseNonNegativeInteger(name, text) {
  return parseInteger(name, text, 'a non-negative integer');
}

function parseInteger(name, text, expected) {
  const digits = String(text).replace(/_/g, '');
  if (!INTEGER.test(digits)) throw usageError(`invalid --${name} '${text}': expected ${expected}`);
  const value = Number(digits);
  if (!Number.isSafeInteger(value)) throw usageError(`invalid --${name} '${text}': at most ${Number.MAX_SAFE_INTEGER}`);
  return value;
}

/** A probability strictly between 0 and 1 (0.01, 1e-3, .001). */
export function parseProbability(name, text) {
  const value = DECIMAL.test(String(text)) ? Number(text) : NaN;
  if (!(value > 0 && value < 1)) {
    throw usageError(`invalid --${name} '${text}': expected a number between 0 and 1 (exclusive), e.g. 0.01`);
  }
  return value;
}

/** A 64-bit unsigned seed, decimal or 0x-prefixed hexadecimal, as a BigInt. */
export function parseSeed(name, text) {
  const trimmed = String(text).replace(/_/g, '');
  let value;
  if (/^0[xX][0-9a-fA-F]{1,16}$/.test(trimmed) || INTEGER.test(trimmed)) value = BigInt(trimmed);
  if (value === undefined || value > 0xffffffffffffffffn) {
    throw usageError(`invalid --${name} '${text}': expected an integer from 0 to 2^64-1 (decimal or 0x hex)`);
  }
  return value;
}

/** Exactly one of the allowed words. */
export function parseChoice(name, text, choices) {
  if (!choices.includes(text)) {
    throw usageError(`invalid --${name} '${text}': expected ${choices.map((c) => `'${c}'`).join(' or ')}`);
  }
  return text;
}
