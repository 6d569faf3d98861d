// @ts-check
/**
 * ed25519-node.js — Ed25519 verification through node:crypto, synchronous
 * (package.json maps `#ed25519-node` here under the "node" condition;
 * elsewhere ed25519-none.js). Node's WebCrypto runs each verify as a job on
 * the thread pool and back; node:crypto answers in place, ~0.07 ms, which is
 * what a signed update should cost over an unsigned one.
 */
import { createPublicKey, verify } from 'node:crypto';

/** @type {Map<string, import('node:crypto').KeyObject | null>} */
const keys = new Map();

/**
 * @param {Uint8Array} raw the 32-byte public key
 * @param {Uint8Array} message
 * @param {Uint8Array} signature 64 bytes
 */
export function verifyWithNode(raw, message, signature) {
  const id = Buffer.from(raw).toString('base64url');
  let key = keys.get(id);
  if (key === undefined) {
    try {
      key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: id }, format: 'jwk' });
    } catch {
      key = null; // not a point: nothing verifies under it
    }
    keys.set(id, key);
  }
  return key !== null && verify(null, message, key, signature);
}
