// @ts-check
/**
 * update/key-rotation.js — a site's key history (`keys.json`, docs/FORMAT.md
 * "Key rotation") and how a client follows it.
 *
 * `bloomgate keys rotate` appends a rotation: key set number `seq`, its keys
 * and threshold, signed by at least the threshold of key set `seq - 1`. A
 * client starts from the keys its code pins (set 0, or a later set it
 * reached and persisted) and moves one set at a time, each step verified by
 * the set it trusts already. A rotation it cannot verify is skipped, never
 * trusted; one whose keys are exactly the set it trusts is adopted as that
 * set's number (an app that already pins the new keys). Once a client has
 * moved to set N, what only older sets sign is refused.
 *
 * A client follows the history only up to the key set the manifest in hand
 * names (`target`): records past it — a host can append any — are not read,
 * so a record that repeats the current keys under a later number cannot
 * move the client past the set its publisher signs with.
 */
import { CanonicalWriter } from '../canonical.js';
import { BloomgateError } from '../errors.js';
import { MAX_KEYS, decodePublicKey, parseSignatures, verifyThreshold } from '../signature.js';

export const KEYS_FORMAT = 'bloomgate-keys';
export const ROTATION_DOMAIN = 'bloomgate-key-rotation/1';
const MAX_ROTATIONS = 256;

/**
 * @typedef {import('../signature.js').KeySet & { seq: number }} TrustedKeys
 * @typedef {{ seq: number, threshold: number, keys: import('../signature.js').PublicKey[],
 *   signatures: import('../signature.js').Signature[], canonical: Uint8Array }} Rotation
 */

/**
 * The bytes a rotation's signatures cover.
 * @param {{ seq: number, threshold: number, keys: Array<{ raw: Uint8Array }> }} rotation
 */
export function rotationBytes({ seq, threshold, keys }) {
  const out = new CanonicalWriter(ROTATION_DOMAIN).u32(seq).u8(threshold).u8(keys.length);
  for (const key of keys) out.fixed(key.raw, 32);
  return out.finish();
}

function keysError(url, detail) {
  return new BloomgateError('E_SIGNATURE', `the key history at ${url} ${detail}`);
}

/**
 * Parse `keys.json`: every rotation checked for shape (not yet for signatures).
 * @param {string} text
 * @param {string} url
 * @returns {Rotation[]}
 */
export function parseRotations(text, url) {
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    throw keysError(url, 'is not JSON');
  }
  if (json?.format !== KEYS_FORMAT || json.version !== 1 || !Array.isArray(json.rotations)) {
    throw keysError(url, `is not a "${KEYS_FORMAT}" version 1 document with a "rotations" array`);
  }
  if (json.rotations.length > MAX_ROTATIONS) throw keysError(url, `has ${json.rotations.length} rotations (at most ${MAX_ROTATIONS})`);
  let previous = 0;
  return json.rotations.map((entry, i) => {
    const where = `rotations[${i}]`;
    if (!Number.isSafeInteger(entry?.seq) || entry.seq !== previous + 1) throw keysError(url, `has ${where}.seq ${JSON.stringify(entry?.seq)}; expected ${previous + 1}`);
    previous = entry.seq;
    if (!Array.isArray(entry.keys) || entry.keys.length === 0 || entry.keys.length > MAX_KEYS) {
      throw keysError(url, `has ${where}.keys that is not 1 to ${MAX_KEYS} keys`);
    }
    const keys = entry.keys.map((text, j) => {
      const key = decodePublicKey(text);
      if (key === null) throw keysError(url, `has ${where}.keys[${j}] that is not an 'ed25519:' key`);
      return key;
    });
    if (new Set(keys.map((k) => k.id)).size !== keys.length) throw keysError(url, `lists a key twice in ${where}.keys`);
    if (!Number.isInteger(entry.threshold) || entry.threshold < 1 || entry.threshold > keys.length) {
      throw keysError(url, `has ${where}.threshold that is not 1 to ${keys.length}`);
    }
    const rotation = { seq: entry.seq, threshold: entry.threshold, keys };
    return { ...rotation, signatures: parseSignatures(entry.signatures, `${where} of the key history at ${url}`), canonical: rotationBytes(rotation) };
  });
}

const sameKeys = (a, b) => a.length === b.length && a.every((key) => b.some((other) => other.id === key.id));

/**
 * Follow the rotations from `trusted` as far as each step verifies.
 * @param {TrustedKeys} trusted
 * @param {Rotation[]} rotations
 * @param {string} url for messages
 * @param {number} target the key set the manifest names: nothing past it is followed
 * @returns {Promise<TrustedKeys>}
 */
export async function followRotations(trusted, rotations, url, target) {
  let current = trusted;
  for (const rotation of rotations) {
    if (rotation.seq <= current.seq) continue;
    if (rotation.seq > target) break;
    if (rotation.seq !== current.seq + 1) {
      // A gap: the pinned keys are those of a later set when they equal it, else nothing more verifies.
      if (sameKeys(rotation.keys, current.keys) && rotation.threshold === current.threshold) current = { ...current, seq: rotation.seq };
      continue;
    }
    if (sameKeys(rotation.keys, current.keys) && rotation.threshold === current.threshold) {
      current = { ...current, seq: rotation.seq };
      continue;
    }
    try {
      await verifyThreshold(rotation.canonical, rotation.signatures, current, `key set ${rotation.seq} in ${url}`);
    } catch {
      // Not signed by the set we trust: skipped, and nothing later can chain from it.
      continue;
    }
    current = Object.freeze({ seq: rotation.seq, keys: Object.freeze(rotation.keys), threshold: rotation.threshold });
  }
  return current;
}
