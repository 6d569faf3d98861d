// Types of js/inline-module.js, which scripts/build-inline.mjs generates from
// wasm/bloomgate.wasm (npm run build, prepack, the tests; not committed), so
// the type check runs on a fresh clone before anything is built.
/** wasm/bloomgate.wasm as base64. */
declare const base64: string;
export default base64;
