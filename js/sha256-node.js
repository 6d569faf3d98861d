// @ts-check
/**
 * sha256-node.js — the incremental SHA-256 `integrity` uses in Node
 * (package.json maps `#sha256` here under the "node" condition; elsewhere
 * sha256-none.js). node:crypto hashes each chunk as it lands, at native
 * speed, so the digest is ready with the last byte; SubtleCrypto, the only
 * native digest browsers have, takes the whole file at the end.
 */
import { createHash } from 'node:crypto';

/** @returns {{ update(bytes: Uint8Array): void, digest(): Uint8Array }} */
export function createSha256() {
  const hash = createHash('sha256');
  return {
    update(bytes) {
      hash.update(bytes);
    },
    digest() {
      return new Uint8Array(hash.digest());
    },
  };
}
