// @ts-check
/**
 * key-check.js — whether 32 bytes can be someone's Ed25519 public key,
 * decided without curve arithmetic (so the verifier in ed25519.js is loaded
 * only where a runtime lacks WebCrypto's Ed25519).
 *
 * Refused: a y coordinate >= p (a non-canonical encoding) and the eight points
 * of small order. Those eight have only five y values (0, 1, p - 1 and the two
 * of the order-8 points), whatever the sign bit says; under a small-order key
 * anyone can forge a signature that verifies for some messages, in every
 * verifier. A y with no point at all is left to the verifier: nothing verifies
 * under it, so it can never count towards a threshold.
 */

const P = 2n ** 255n - 19n;
// The y of the order-8 points, and p minus it (RFC 8032's curve; checked against
// ed25519.js, which derives it from the curve, in tests/js/signature.test.mjs).
const Y8 = 0x05fc536d880238b13933c6d305acdfd5f098eff289f4c345b027b2c28f95e826n;
const SMALL_ORDER_Y = new Set([0n, 1n, P - 1n, Y8, P - Y8]);

/** @param {Uint8Array} publicKey */
export function isUsablePublicKey(publicKey) {
  if (!(publicKey instanceof Uint8Array) || publicKey.length !== 32) return false;
  let y = 0n;
  for (let i = 31; i >= 0; i--) y = (y << 8n) | BigInt(i === 31 ? publicKey[i] & 0x7f : publicKey[i]);
  return y < P && !SMALL_ORDER_Y.has(y);
}
