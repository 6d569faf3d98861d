// @ts-check
// Where a private key must never be: inside a directory a web server serves.
// A bloomgate site (`publish --dir`, `export-ranges -o`, `serve --static`) is
// public by design, so a key file under it would be served to anyone who
// asks for it by name. `keygen -o` refuses to write one there, and every
// command that reads keys refuses a key that resolves (symlinks followed)
// inside the directory it writes or serves.
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, join, relative, resolve, isAbsolute, parse } from 'node:path';
import { CliError, EXIT, quote } from './errors.js';

const SITE_FORMATS = new Set(['bloomgate-filter', 'bloomgate-escalation']);

/** The real path of `path`, or of its nearest existing ancestor joined with the rest (a file not yet written). */
export function realPathOf(path) {
  let at = resolve(path);
  const rest = [];
  for (;;) {
    try {
      return join(realpathSync(at), ...rest.reverse());
    } catch {
      const up = dirname(at);
      if (up === at) return resolve(path);
      rest.push(at.slice(up.length).replace(/^[/\\]/, ''));
      at = up;
    }
  }
}

/** Whether `inner` is `outer` or lies under it (both real paths). */
export function isInside(outer, inner) {
  const path = relative(outer, inner);
  return path === '' || (!path.startsWith('..') && !isAbsolute(path));
}

function manifestFormat(path) {
  try {
    const text = readFileSync(path, 'utf8');
    return JSON.parse(text)?.format;
  } catch {
    return undefined;
  }
}

/** Whether `dir` holds a bloomgate site: a filter or escalation manifest, an export's endpoint manifest, or a key history. */
export function isSite(dir) {
  if (existsSync(join(dir, 'keys.json'))) return true;
  for (const name of ['manifest.json', join('range', 'manifest.json'), join('hashes', 'manifest.json')]) {
    if (SITE_FORMATS.has(manifestFormat(join(dir, name)))) return true;
  }
  return false;
}

/** The bloomgate site that `dir` is or lies inside (its real path), or null. */
export function siteAround(dir) {
  let at = realPathOf(dir);
  const { root } = parse(at);
  for (;;) {
    if (isSite(at)) return at;
    if (at === root) return null;
    at = dirname(at);
  }
}

/**
 * Refuse key files that resolve inside `dir` (a directory that is or will be served).
 * @param {string} dir the site, export or static directory
 * @param {Array<{ path: string }>} keys the key files read
 * @param {string} what how the command names the directory ("the site", "the export")
 */
export function refuseKeysInside(dir, keys, what) {
  if (!existsSync(dir)) return; // a key that exists cannot be inside a directory that does not
  const outer = realPathOf(dir);
  for (const key of keys) {
    if (isInside(outer, realPathOf(key.path))) {
      throw new CliError(`the private key ${quote(key.path)} is inside ${what} ${quote(dir)}, which a web server serves as it is: ` +
        'anyone could download it and sign lists your clients believe. Move it out of the directory (and, if the site was ever ' +
        "served with it, treat it as leaked: 'bloomgate keys rotate' to a new key)", 'E_KEY_EXPOSED', EXIT.USAGE);
    }
  }
}
