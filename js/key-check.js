// @ts-check
/**
 * key-check.js — whether 32 bytes can be someone's Ed25519 public key, and
 * whether 64 bytes are a canonically encoded signature, decided without curve
 * arithmetic (microseconds: every signature passes here before any verifier).
 *
 * A key: refused when its y is >= p (a non-canonical encoding) or it is one of
 * the eight points of small order. Those eight have only five y values (0, 1,
 * p - 1 and the two of the order-8 points), whatever the sign bit says; under a
 * small-order key anyone can forge a signature that verifies for some messages,
 * in every verifier. A y with no point at all is left to the verifier: nothing
 * verifies under it, so it can never count towards a threshold. (A key with a
 * small-order component, A + T, needs a scalar multiplication to see:
 * ed25519.js isTorsionFree, which js/signature.js runs once per pinned key.)
 *
 * A signature R || S: refused when S >= L, or when R fails the key's test
 * above (y >= p, or a small-order point, which covers the "negative zero"
 * encodings: x = 0 with the sign bit set exists only for y = 1 and y = p - 1).
 * Those are exactly the inputs on which the runtimes' verifiers have been seen
 * or are known to differ: WebKit's WebCrypto accepts S + L where OpenSSL,
 * BoringSSL, NSS and ed25519.js refuse it; a verifier that decodes R and
 * compares points (rather than R's bytes) accepts a non-canonical R; and a
 * small-order R is what the published small-key forgeries use. No genuine
 * signer produces any of them (S is reduced mod L, R = [r]B is encoded
 * canonically and has order L), so refusing them loses nothing.
 */

const P = 2n ** 255n - 19n;
const L = 2n ** 252n + 27742317777372353535851937790883648493n; // the order of B
// The y of the order-8 points, and p minus it (RFC 8032's curve; checked against
// ed25519.js, which derives it from the curve, in tests/js/signature.test.mjs).
const Y8 = 0x05fc536d880238b13933c6d305acdfd5f098eff289f4c345b027b2c28f95e826n;
const SMALL_ORDER_Y = new Set([0n, 1n, P - 1n, Y8, P - Y8]);

/**
 * bytes[start, start + 32) as a little-endian number, the top bit dropped when `low255`.
 * @param {Uint8Array} bytes
 * @param {number} start
 * @param {boolean} low255
 */
function littleEndian(bytes, start, low255) {
  let n = 0n;
  for (let i = start + 31; i >= start; i--) n = (n << 8n) | BigInt(low255 && i === start + 31 ? bytes[i] & 0x7f : bytes[i]);
  return n;
}

/**
 * Whether the 32 bytes at `start` encode a point canonically (y < p) and not one of small order.
 * @param {Uint8Array} bytes
 * @param {number} start
 */
function canonicalLargePoint(bytes, start) {
  const y = littleEndian(bytes, start, true);
  return y < P && !SMALL_ORDER_Y.has(y);
}

/** @param {Uint8Array} publicKey */
export function isUsablePublicKey(publicKey) {
  if (!(publicKey instanceof Uint8Array) || publicKey.length !== 32) return false;
  return canonicalLargePoint(publicKey, 0);
}

/**
 * Whether 64 bytes are a canonically encoded Ed25519 signature: S < L, and R canonical and not of
 * small order. One that is not is invalid, whatever a verifier would say about it.
 * @param {Uint8Array} signature
 */
export function isCanonicalSignature(signature) {
  if (!(signature instanceof Uint8Array) || signature.length !== 64) return false;
  return littleEndian(signature, 32, false) < L && canonicalLargePoint(signature, 0);
}
