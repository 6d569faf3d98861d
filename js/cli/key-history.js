// @ts-check
// A site's key history, SITE/keys.json (docs/FORMAT.md, "Key rotation"), on
// the publisher's side: read it (the rotations checked with the same parser
// clients use), record the key set a site was first signed with (`initial`:
// its keys and threshold, signed by them; clients ignore it, the CLI needs it
// so `keys rotate` knows how many keys the current set needs), and append a
// rotation signed by the outgoing keys.
import { createPublicKey, verify } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseRotations, rotationBytes, KEYS_FORMAT } from '../update/key-rotation.js';
import { MAX_KEYS, decodePublicKey } from '../signature.js';
import { CliError, EXIT, cannotOpen } from './errors.js';
import { signAll } from './signing.js';

export const KEYS_FILE = 'keys.json';

/**
 * @typedef {{ seq: number, threshold: number, keys: string[], signatures: unknown[] }} RotationRecord
 * @typedef {{ keys: string[], threshold: number, signatures: Array<{ keyid: string, sig: string }> }} InitialRecord
 * @typedef {{ exists: boolean, rotations: RotationRecord[], initial: InitialRecord | null }} KeyDocument
 */

/**
 * SITE/keys.json: whether it exists, its rotations (oldest first) and its initial record.
 * @param {string} site
 * @returns {Promise<KeyDocument>}
 */
export async function readKeyDocument(site) {
  const path = join(site, KEYS_FILE);
  let text;
  try {
    text = await readFile(path, 'utf8');
  } catch (/** @type {any} */ error) {
    if (error?.code === 'ENOENT') return { exists: false, rotations: [], initial: null };
    throw cannotOpen(path, error);
  }
  let rotations;
  try {
    rotations = parseRotations(text, path);
  } catch (/** @type {any} */ error) {
    throw new CliError(`${path}: ${error.message}`, 'E_SIGNATURE', EXIT.DATA);
  }
  const json = JSON.parse(text);
  return {
    exists: true,
    rotations: rotations.map((rotation, i) => ({
      seq: rotation.seq, threshold: rotation.threshold, keys: rotation.keys.map((key) => key.id), signatures: json.rotations[i].signatures ?? [],
    })),
    initial: json.initial === undefined ? null : checkInitial(json.initial, path),
  };
}

/**
 * The site's rotations, oldest first ([] when it has none): { seq, threshold, keys: ids, signatures }.
 * @param {string} site
 */
export async function readKeyHistory(site) {
  return (await readKeyDocument(site)).rotations;
}

/**
 * The key set that signs the site now: the last rotation's, else the initial record's (set 0); null when nothing records it.
 * @param {KeyDocument} document
 * @returns {{ seq: number, keys: string[], threshold: number } | null}
 */
export function currentKeySet(document) {
  const last = document.rotations[document.rotations.length - 1];
  if (last) return { seq: last.seq, keys: last.keys, threshold: last.threshold };
  if (document.initial) return { seq: 0, keys: document.initial.keys, threshold: document.initial.threshold };
  return null;
}

const verifies = (raw, message, sig) => {
  try {
    const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(raw).toString('base64url') }, format: 'jwk' });
    return verify(null, message, key, Buffer.from(String(sig), 'base64url'));
  } catch {
    return false;
  }
};

/** The initial record as written, or a clear refusal: it must be its keys and threshold, signed by that threshold of them. */
function checkInitial(initial, path) {
  const damaged = (detail) => new CliError(`${path}: the initial key set ${detail}; restore keys.json from your records ` +
    '(the host may have changed it)', 'E_SIGNATURE', EXIT.DATA);
  if (initial === null || typeof initial !== 'object' || !Array.isArray(initial.keys) || initial.keys.length === 0 || initial.keys.length > MAX_KEYS) {
    throw damaged(`is not { keys: [1 to ${MAX_KEYS} keys], threshold, signatures }`);
  }
  const keys = initial.keys.map((text) => decodePublicKey(text));
  if (keys.some((key) => key === null)) throw damaged("has a key that is not an 'ed25519:' public key");
  const decoded = /** @type {Array<{ id: string, raw: Uint8Array }>} */ (keys);
  if (new Set(decoded.map((key) => key.id)).size !== decoded.length) throw damaged('lists a key twice');
  if (!Number.isInteger(initial.threshold) || initial.threshold < 1 || initial.threshold > decoded.length) {
    throw damaged(`has a threshold that is not 1 to ${decoded.length}`);
  }
  const message = rotationBytes({ seq: 0, threshold: initial.threshold, keys: decoded });
  const valid = new Set();
  for (const entry of Array.isArray(initial.signatures) ? initial.signatures : []) {
    const key = decoded.find((candidate) => candidate.id === entry?.keyid);
    if (key && verifies(key.raw, message, entry.sig)) valid.add(key.id);
  }
  if (valid.size < initial.threshold) throw damaged(`is signed by ${valid.size} of its keys, fewer than its threshold ${initial.threshold}`);
  return { keys: decoded.map((key) => key.id), threshold: initial.threshold, signatures: initial.signatures };
}

/**
 * The initial record of a site first signed with key set `ids` and `threshold`, signed by `signers`
 * (at least `threshold` of those keys) like a rotation numbered 0, so a changed record is noticed.
 * @param {string[]} ids
 * @param {number} threshold
 * @param {import('./signing.js').SigningKey[]} signers
 * @returns {InitialRecord}
 */
export function initialRecord(ids, threshold, signers) {
  const keys = ids.map((id) => /** @type {{ id: string, raw: Uint8Array }} */ (decodePublicKey(id)));
  return { keys: keys.map((key) => key.id), threshold, signatures: signAll(rotationBytes({ seq: 0, threshold, keys }), signers) };
}

/**
 * The keys.json document for these records.
 * @param {InitialRecord | null} initial
 * @param {RotationRecord[]} rotations
 */
export function keysDocument(initial, rotations) {
  return { format: KEYS_FORMAT, version: 1, ...(initial ? { initial } : {}), rotations };
}

/**
 * The document with one more rotation: key set `seq` = `keys` with `threshold`, signed by `signers`.
 * @param {KeyDocument} document
 * @param {Array<{ id: string, raw: Uint8Array }>} keys
 * @param {number} threshold
 * @param {import('./signing.js').SigningKey[]} signers
 */
export function appendRotation(document, keys, threshold, signers) {
  const history = document.rotations;
  const seq = history.length === 0 ? 1 : history[history.length - 1].seq + 1;
  const signatures = signAll(rotationBytes({ seq, threshold, keys }), signers);
  return keysDocument(document.initial, [...history, { seq, threshold, keys: keys.map((key) => key.id), signatures }]);
}
