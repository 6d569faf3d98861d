// @ts-check
/**
 * sha256-none.js — outside Node there is no native incremental SHA-256
 * (package.json maps `#sha256` here for every non-Node condition): loadFilter
 * uses SubtleCrypto on the finished file, or the wasm digest as chunks land.
 * @type {null | (() => { update(bytes: Uint8Array): void, digest(): Uint8Array })}
 */
export const createSha256 = null;
