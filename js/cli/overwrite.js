// @ts-check
// No command writes over one of its own inputs: an output that is an input
// file (the same path, or a symbolic or hard link to it: the same device and
// inode) is a usage error (exit 64), found before anything is created.
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { quote, usageError } from './errors.js';

/** A file's identity ({ dev, ino, ... } through links), or null when it does not exist (yet). */
export function fileIdentity(path) {
  try {
    return statSync(path);
  } catch {
    return null;
  }
}

/** Whether two identities are one file. */
export function sameFile(a, b) {
  return a !== null && b !== null && a.dev === b.dev && a.ino === b.ino;
}

/**
 * Throws when an output is one of the inputs.
 * @param {[flag: string, path: string][]} outputs e.g. [['-o', 'out.bgf']]
 * @param {{ path: string, stat?: import('node:fs').Stats | null, described?: string }[]} inputs
 *   stat: the input's identity when already known (an open file, stdin);
 *   described: how the message names it (default: the input 'PATH')
 */
export function refuseToOverwrite(outputs, inputs) {
  const sources = inputs.map((input) => ({ ...input, stat: input.stat ?? fileIdentity(input.path) }));
  for (const [flag, path] of outputs) {
    const target = fileIdentity(path);
    for (const source of sources) {
      if (!sameFile(target, source.stat)) continue;
      const described = source.described ?? `the input ${quote(source.path)}`;
      throw usageError(`${flag} ${quote(path)} is ${described}${resolve(path) === resolve(source.path ?? '') ? '' : ' (a link to it)'}: refusing to overwrite it`);
    }
  }
}
