// Types of js/inline-module.js, which scripts/build-inline.mjs generates from
// wasm/bloomgate.wasm (npm run build, prepack, the tests; committed, checked
// fresh by .ci/run), typed here so tsc need not read the 120 KB string.
/** wasm/bloomgate.wasm as base64. */
declare const base64: string;
export default base64;
