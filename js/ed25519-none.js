// @ts-check
/** ed25519-none.js — outside Node there is no node:crypto: js/signature.js uses WebCrypto (or ed25519.js). */
export const verifyWithNode = null;
