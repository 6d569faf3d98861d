// @ts-check
/**
 * entry.js — what `import … from 'bloomgate'` loads through package.json
 * "exports" (Node and every bundler). Same API as index.js, which browsers
 * without a bundler import by path.
 *
 * It imports the platform modules statically and hands them over, where
 * index.js alone imports them on first use. A bundler resolves them through
 * package.json "imports": `#wasm-bytes` is the .wasm file next to the package
 * (Node), a `new URL('…', import.meta.url)` asset (Vite, webpack) or the bytes
 * inline (esbuild, rollup, bundles for Node); `#local-file` reads files in
 * Node and is a stub elsewhere, as are `#sha256` (node:crypto's incremental
 * digest for `integrity`), `#ed25519-node` (node:crypto's signature check) and `#persist-dir` (openFilter's directory storage;
 * IndexedDB elsewhere). Being static, they land in the bundle's one
 * chunk, so single-file builds (rollup's output.file) work.
 */
import { loadWasmBytes } from '#wasm-bytes';
import { openLocalFile } from '#local-file';
import * as persistDir from '#persist-dir';
import { createSha256 } from '#sha256';
import { verifyWithNode } from '#ed25519-node';

import { registerLocalFileOpener, registerStreamingSha256 } from './load.js';
import { registerDirectoryStorage } from './update/index.js';
import { registerNodeVerifier } from './signature.js';
import { registerWasmLoader } from './wasm/index.js';

registerWasmLoader(loadWasmBytes);
registerLocalFileOpener(openLocalFile);
registerStreamingSha256(createSha256);
registerDirectoryStorage(persistDir);
registerNodeVerifier(verifyWithNode);

export * from './index.js';
