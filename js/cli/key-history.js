// @ts-check
// A site's key history, SITE/keys.json (docs/FORMAT.md, "Key rotation"), on
// the publisher's side: read it (checked with the same parser clients use),
// and append a rotation signed by the outgoing keys.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseRotations, rotationBytes, KEYS_FORMAT } from '../update/key-rotation.js';
import { CliError, EXIT, cannotOpen } from './errors.js';
import { signAll } from './signing.js';

export const KEYS_FILE = 'keys.json';

/**
 * The site's rotations, oldest first ([] when it has none): { seq, threshold, keys: ids, signatures }.
 * @param {string} site
 */
export async function readKeyHistory(site) {
  const path = join(site, KEYS_FILE);
  let text;
  try {
    text = await readFile(path, 'utf8');
  } catch (/** @type {any} */ error) {
    if (error?.code === 'ENOENT') return [];
    throw cannotOpen(path, error);
  }
  let rotations;
  try {
    rotations = parseRotations(text, path);
  } catch (/** @type {any} */ error) {
    throw new CliError(`${path}: ${error.message}`, 'E_SIGNATURE', EXIT.DATA);
  }
  const raw = JSON.parse(text).rotations;
  return rotations.map((rotation, i) => ({
    seq: rotation.seq, threshold: rotation.threshold, keys: rotation.keys.map((key) => key.id), signatures: raw[i].signatures ?? [],
  }));
}

/**
 * The history with one more rotation: key set `seq` = `keys` with `threshold`, signed by `signers`.
 * @param {Array<{ seq: number, threshold: number, keys: string[], signatures: unknown[] }>} history
 * @param {Array<{ id: string, raw: Uint8Array }>} keys
 * @param {number} threshold
 * @param {import('./signing.js').SigningKey[]} signers
 */
export function appendRotation(history, keys, threshold, signers) {
  const seq = history.length === 0 ? 1 : history[history.length - 1].seq + 1;
  const signatures = signAll(rotationBytes({ seq, threshold, keys }), signers);
  return {
    format: KEYS_FORMAT,
    version: 1,
    rotations: [...history, { seq, threshold, keys: keys.map((key) => key.id), signatures }],
  };
}
