/**
 * site.mjs — what the example pages need from a server: the pages, the
 * library (js/ and wasm/) and the strength estimator's ES modules, as static
 * mounts for js/server.js. Shared by the demo and the browser tests.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
export const root = join(dirname(fileURLToPath(import.meta.url)), '..');

export function siteMounts() {
  return [
    { prefix: '/', dir: join(root, 'examples') },
    { prefix: '/bloomgate/js/', dir: join(root, 'js') },
    { prefix: '/bloomgate/wasm/', dir: join(root, 'wasm') },
    { prefix: '/vendor/zxcvbn-core/', dir: dirname(require.resolve('@zxcvbn-ts/core')) },
    { prefix: '/vendor/zxcvbn-common/', dir: dirname(require.resolve('@zxcvbn-ts/language-common')) },
    { prefix: '/vendor/zxcvbn-compression/', dir: dirname(require.resolve('@zxcvbn-ts/dictionary-compression/decompress')) },
    { prefix: '/vendor/fastest-levenshtein/', dir: join(dirname(require.resolve('fastest-levenshtein')), 'esm') },
  ];
}

/** The common-password list the demo and tests build their breach filter from (most common first). */
export async function commonPasswords() {
  const { dictionary } = await import('@zxcvbn-ts/language-common');
  return dictionary['passwords-common'];
}
