// @ts-check
/**
 * signature.js — publisher keys and threshold signatures (Ed25519).
 *
 * A publisher's public key is written `ed25519:` + base64url of its 32 bytes.
 * A caller pins one or more keys and a threshold; a record (a filter
 * manifest, a key rotation, an escalation manifest) is believed only when at
 * least `threshold` DISTINCT pinned keys signed its canonical bytes
 * (js/canonical.js). Signatures by keys that are not pinned are ignored, a
 * key that signs twice counts once, and a malformed signature is an error.
 *
 * Verification uses node:crypto in Node (synchronous), the runtime's WebCrypto
 * Ed25519 elsewhere (Chromium 137+, Firefox 129+, Safari 17+) and, where it has
 * none, the verifier written here (js/ed25519.js), which gives the same verdict. There is no
 * third path: a runtime with neither would be a bug, never "accepted".
 *
 * One verdict in every runtime. Those verifiers agree on ordinary signatures and differ on
 * edge cases (ed25519-speccheck, "Taming the many EdDSAs"; Wycheproof): WebKit's WebCrypto
 * accepts S + L, which the others refuse, and refuses some signatures under a key with a
 * small-order component that the others accept. So nothing reaches a verifier unless
 *   - the key is canonical and not of small order (key-check.js, when it is decoded: a pinned
 *     key that fails is a TypeError) and torsion-free, [L]A = identity (ed25519.js
 *     isTorsionFree), checked before the key's first verification and cached per key, pinned
 *     or reached by a key rotation alike: a key that fails verifies nothing (E_SIGNATURE saying
 *     why). Not at pin time: the scalar multiplication and the curve's constants cost 25-60 ms
 *     in a cold Chromium or WebKit page, which keySetFromOptions (openFilter, createGate) would
 *     put before a page's first answer; no keygen makes such a key, so only the verdict matters;
 *   - the signature is canonical (key-check.js isCanonicalSignature): S < L, R's y < p and R not
 *     of small order (which also excludes the "negative zero" encodings).
 * What is left has one verdict in every cofactorless verifier (OpenSSL in Node, BoringSSL in
 * Chromium, NSS in Firefox, WebKit's, ed25519.js): with S < L the scalar is the one the equation
 * means; with R canonical, comparing R's bytes and comparing decoded points are the same test;
 * and with A in the prime-order subgroup [S]B - [k]A is in it too, so no torsion term can make
 * an implementation's choice of equation or of A's decoding matter. (A cofactored verifier would
 * still accept an R with a small-order component that these refuse, but only a holder of the
 * secret key can make one, and none of these runtimes verifies cofactored.) A signature that fails
 * the checks counts as one that does not verify.
 */
import { base64url, fromBase64url } from './canonical.js';
import { isTorsionFree, verifyEd25519 } from './ed25519.js';
import { isCanonicalSignature, isUsablePublicKey } from './key-check.js';
import { BloomgateError } from './errors.js';

export const KEY_PREFIX = 'ed25519:';
/** More keys than this in one pin or key set is refused: a threshold of hundreds is a mistake. */
export const MAX_KEYS = 32;
/**
 * The longest life a signed record (a filter or escalation manifest) may claim: what the CLI signs
 * at most (`--expires-in` up to 366d). Readers refuse an expiry further ahead than this plus
 * CLOCK_SKEW_SECONDS: a replay of such a record would never end.
 */
export const MAX_SIGNED_LIFETIME_SECONDS = 366 * 86400;
/** How far a reader's clock may run behind the signer's before a fresh maximal expiry reads as too far ahead. */
export const CLOCK_SKEW_SECONDS = 3600;

/**
 * @typedef {{ id: string, raw: Uint8Array }} PublicKey
 * @typedef {{ keys: ReadonlyArray<PublicKey>, threshold: number }} KeySet
 * @typedef {{ keyid: string, sig: Uint8Array }} Signature
 */

/**
 * `ed25519:BASE64URL` -> { id, raw }; null when it is not one.
 * @param {unknown} text
 * @returns {PublicKey | null}
 */
export function decodePublicKey(text) {
  if (typeof text !== 'string' || !text.startsWith(KEY_PREFIX)) return null;
  const raw = fromBase64url(text.slice(KEY_PREFIX.length));
  // Not a point, not canonical, or of small order: no one's key, refused before anything is verified.
  if (raw === null || raw.length !== 32 || !isUsablePublicKey(raw)) return null;
  return { id: `${KEY_PREFIX}${base64url(raw)}`, raw };
}

/** @type {Map<string, boolean>} key id -> torsion-free; only trusted keys that signed something get here */
const torsionChecked = new Map();

/**
 * Whether `key` has no small-order component ([L]A is the identity), once per key id. Every real
 * key passes; a key that fails is no one's (someone took a real key and added a point of order
 * 2, 4 or 8 to it) and the runtimes' verifiers disagree about what it signs.
 * @param {PublicKey} key from decodePublicKey
 */
export function isTorsionFreeKey(key) {
  let free = torsionChecked.get(key.id);
  if (free === undefined) {
    free = isTorsionFree(key.raw);
    if (torsionChecked.size >= 4096) torsionChecked.clear();
    torsionChecked.set(key.id, free);
  }
  return free;
}

/** @param {Uint8Array} raw 32 bytes */
export function publicKeyId(raw) {
  return `${KEY_PREFIX}${base64url(raw)}`;
}

/**
 * The caller's `keys` and `threshold` options as a key set; null when no keys
 * are given (unsigned mode). Argument mistakes are TypeError/RangeError.
 * @param {unknown} keys
 * @param {unknown} threshold
 * @param {string} where e.g. 'openFilter()'
 * @returns {KeySet | null}
 */
export function keySetFromOptions(keys, threshold, where) {
  if (keys === undefined || keys === null) {
    if (threshold !== undefined) throw new TypeError(`${where}: threshold needs keys`);
    return null;
  }
  if (!Array.isArray(keys) || keys.length === 0) {
    throw new TypeError(`${where}: keys must be a non-empty array of 'ed25519:BASE64URL' public keys (what 'bloomgate keygen' prints)`);
  }
  if (keys.length > MAX_KEYS) throw new RangeError(`${where}: at most ${MAX_KEYS} keys`);
  /** @type {PublicKey[]} */
  const decoded = [];
  for (const [i, key] of keys.entries()) {
    const one = decodePublicKey(key);
    if (one === null) {
      throw new TypeError(`${where}: keys[${i}] is not an Ed25519 public key of the form 'ed25519:' + 43 base64url characters: ${JSON.stringify(String(key).slice(0, 80))}`);
    }
    if (decoded.some((other) => other.id === one.id)) throw new TypeError(`${where}: keys[${i}] is listed twice`);
    decoded.push(one);
  }
  const count = threshold ?? 1;
  if (!Number.isInteger(count) || /** @type {number} */ (count) < 1 || /** @type {number} */ (count) > decoded.length) {
    throw new RangeError(`${where}: threshold must be an integer from 1 to ${decoded.length} (the number of keys), got ${String(threshold)}`);
  }
  return Object.freeze({ keys: Object.freeze(decoded), threshold: /** @type {number} */ (count) });
}

/**
 * A record's `signatures` array, each entry checked: [{ keyid, sig }].
 * @param {unknown} value
 * @param {string} what the record, for messages
 * @returns {Signature[]}
 */
export function parseSignatures(value, what) {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new BloomgateError('E_SIGNATURE', `${what} has a "signatures" that is not an array`);
  if (value.length > MAX_KEYS) throw new BloomgateError('E_SIGNATURE', `${what} carries ${value.length} signatures (at most ${MAX_KEYS})`);
  return value.map((entry, i) => {
    if (entry === null || typeof entry !== 'object') throw new BloomgateError('E_SIGNATURE', `${what}: signatures[${i}] is not an object`);
    const key = decodePublicKey(entry.keyid);
    if (key === null) throw new BloomgateError('E_SIGNATURE', `${what}: signatures[${i}].keyid is not an 'ed25519:' public key`);
    const sig = fromBase64url(entry.sig);
    if (sig === null || sig.length !== 64) throw new BloomgateError('E_SIGNATURE', `${what}: signatures[${i}].sig is not 64 bytes of base64url`);
    return { keyid: key.id, sig };
  });
}

/* ------------------------------------------------------------------------ */
/* One verification: the runtime's Ed25519, else ours                        */
/* ------------------------------------------------------------------------ */

const subtle = globalThis.crypto?.subtle;
/** @type {Promise<boolean> | null} whether this runtime's WebCrypto has Ed25519 */
let nativeSupport = null;
/** @type {Map<string, Promise<CryptoKey>>} */
const importedKeys = new Map();

// RFC 8032 §7.1 TEST 1's public key: importing it tells whether WebCrypto has Ed25519.
const PROBE_KEY = Uint8Array.from([
  0xd7, 0x5a, 0x98, 0x01, 0x82, 0xb1, 0x0a, 0xb7, 0xd5, 0x4b, 0xfe, 0xd3, 0xc9, 0x64, 0x07, 0x3a,
  0x0e, 0xe1, 0x72, 0xf3, 0xda, 0xa6, 0x23, 0x25, 0xaf, 0x02, 0x1a, 0x68, 0xf7, 0x07, 0x51, 0x1a,
]);

function hasNativeEd25519() {
  if (nativeSupport === null) {
    nativeSupport = typeof subtle?.importKey !== 'function' ? Promise.resolve(false)
      : subtle.importKey('raw', PROBE_KEY, { name: 'Ed25519' }, false, ['verify']).then(() => true, () => false);
  }
  return nativeSupport;
}

const IN_NODE = typeof process === 'object' && process !== null && typeof process.versions?.node === 'string' &&
  typeof window === 'undefined';
/** @type {((raw: Uint8Array, message: Uint8Array, sig: Uint8Array) => boolean) | null | undefined} node:crypto's, where there is one */
let nodeVerify;

/** @internal entry.js hands over `#ed25519-node` (bundles); js/index.js imports it on first use, in Node only. */
export function registerNodeVerifier(verify) {
  nodeVerify = verify;
}

async function nodeVerifier() {
  if (nodeVerify === undefined) nodeVerify = IN_NODE ? (await import('#ed25519-node')).verifyWithNode : null;
  return nodeVerify;
}

/** 'node', 'webcrypto' or 'js': which verifier this runtime uses (stats() reports it). */
export async function verifierName() {
  if (await nodeVerifier()) return 'node';
  return (await hasNativeEd25519()) ? 'webcrypto' : 'js';
}

/**
 * @param {PublicKey} key
 * @param {Uint8Array} sig
 * @param {Uint8Array} message
 */
async function verifyOne(key, sig, message) {
  const node = await nodeVerifier();
  if (node) return node(key.raw, message, sig);
  if (await hasNativeEd25519()) {
    let imported = importedKeys.get(key.id);
    if (imported === undefined) {
      imported = /** @type {SubtleCrypto} */ (subtle).importKey('raw', /** @type {BufferSource} */ (/** @type {unknown} */ (key.raw)), { name: 'Ed25519' }, false, ['verify']);
      importedKeys.set(key.id, imported);
      imported.catch(() => importedKeys.delete(key.id));
    }
    let cryptoKey;
    try {
      cryptoKey = await imported;
    } catch {
      return false; // not a point on the curve: nothing it signs is valid
    }
    return /** @type {SubtleCrypto} */ (subtle).verify({ name: 'Ed25519' }, cryptoKey,
      /** @type {BufferSource} */ (/** @type {unknown} */ (sig)), /** @type {BufferSource} */ (/** @type {unknown} */ (message)));
  }
  return verifyEd25519(key.raw, message, sig);
}

/**
 * Check that at least `trusted.threshold` distinct trusted keys signed
 * `message`; resolve with the ids that did, or reject with E_SIGNATURE.
 * @param {Uint8Array} message the record's canonical bytes
 * @param {Signature[]} signatures from parseSignatures
 * @param {KeySet} trusted
 * @param {string} what the record, for messages
 * @returns {Promise<string[]>}
 */
export async function verifyThreshold(message, signatures, trusted, what) {
  /** @type {string[]} */
  const signedBy = [];
  let invalid = 0;
  let foreign = 0;
  /** @type {Array<{ key: PublicKey, sig: Uint8Array }>} */
  const checks = [];
  for (const { keyid, sig } of signatures) {
    const key = trusted.keys.find((candidate) => candidate.id === keyid);
    if (key === undefined) foreign++;
    else if (!checks.some((check) => check.key.id === key.id)) checks.push({ key, sig });
  }
  // A non-canonical signature, or a key with a small-order component, never reaches a verifier
  // (see the header). The rest all at once: WebCrypto verifies off the main thread, so k
  // signatures cost about one round trip.
  const mixed = checks.filter(({ key }) => !isTorsionFreeKey(key)).map(({ key }) => key.id);
  const verdicts = await Promise.all(checks.map(({ key, sig }) =>
    (isCanonicalSignature(sig) && !mixed.includes(key.id) ? verifyOne(key, sig, message) : false)));
  verdicts.forEach((valid, i) => {
    if (valid) signedBy.push(checks[i].key.id);
    else invalid++;
  });
  if (signedBy.length >= trusted.threshold) return signedBy;
  const need = `${trusted.threshold} of the ${trusted.keys.length} trusted key(s)`;
  let detail;
  if (signatures.length === 0) detail = 'is unsigned';
  else if (invalid > 0) detail = `has ${invalid} signature(s) that do not verify`;
  else if (signedBy.length === 0 && foreign > 0) detail = `is signed only by key(s) that are not trusted here (${signatures.map((s) => s.keyid).join(', ')})`;
  else detail = `is signed by ${signedBy.length}`;
  const why = mixed.length === 0 ? ''
    : ` (${mixed.join(', ')}: a key with a small-order component, no one's real key, under which runtimes disagree; nothing it signs is believed)`;
  throw new BloomgateError('E_SIGNATURE', `${what} ${detail}; ${need} must sign it${why}`);
}
