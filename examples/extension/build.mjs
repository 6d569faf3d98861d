#!/usr/bin/env node
/**
 * Build the example extension so Chromium can load it unpacked:
 *
 *   node examples/extension/build.mjs              # in place: vendor/ and filters/ here
 *   node examples/extension/build.mjs --out DIR    # a complete copy of the extension in DIR
 *
 * Options: --list FILE (default blocklist.txt beside this script), --generation N (default 1).
 *
 * It copies the browser half of the library (js/*.js and js/wasm/*.js without
 * the CLI, the server and the Node-only files) to vendor/js/, wasm/bloomgate.wasm to
 * vendor/wasm/, and builds filters/urls.bgf (key encoding url) from the list.
 * vendor/ and filters/ are generated: they are gitignored.
 */
import { createHash } from 'node:crypto';
import { copyFile, mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { BloomFilter, init, urlExpressions } from '../../js/index.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');

/** The extension's own files (everything else is generated). */
export const EXTENSION_FILES = [
  'manifest.json', 'background.js', 'warning.html', 'warning.js', 'popup.html', 'popup.js', 'extension.css',
];
/** Library files that need Node (or are the CLI): not shipped in the extension. */
const NODE_ONLY = new Set(['cli.js', 'server.js', 'store.js', 'wasm-bytes-node.js', 'local-file-node.js', 'persist-dir.js']);

/** The list's identity: the same for every generation of this example list. */
export const LIST_ID = createHash('sha256').update('bloomgate example phishing list').digest('hex').slice(0, 32);

/** Lines of a list file: blank lines and # comments skipped. */
export function parseList(text) {
  return text.split(/\r?\n/).map((line) => line.trim()).filter((line) => line && !line.startsWith('#'));
}

/**
 * A url filter holding the SHA-256 of each entry's most specific expression
 * (an entry "host/path/" lists every URL under that prefix).
 * @param {string[]} entries
 * @param {{ generation?: number, listId?: string, capacity?: number }} [options]
 * @returns {Promise<Uint8Array>} the .bgf bytes
 */
export async function buildUrlFilter(entries, options = {}) {
  await init();
  const filter = await BloomFilter.create({
    capacity: options.capacity ?? Math.max(1000, entries.length),
    errorRate: 0.001,
    keyEncoding: 'url',
    listId: options.listId ?? LIST_ID,
    generation: options.generation ?? 1,
    metadata: { description: 'bloomgate example phishing list', entries: entries.length },
  });
  try {
    for (const entry of entries) {
      const [expression] = urlExpressions(entry);
      filter.addKey(createHash('sha256').update(expression, 'utf8').digest());
    }
    return filter.serialize();
  } finally {
    filter.free();
  }
}

/** Library folders only Node uses (the CLI): every other folder of js/ is the browser's too. */
const NODE_FOLDERS = new Set(['cli']);

/** Copy the library into DIR/vendor/. */
async function copyLibrary(dir) {
  await mkdir(join(dir, 'vendor', 'wasm'), { recursive: true });
  const folders = (await readdir(join(root, 'js'), { withFileTypes: true }))
    .filter((entry) => entry.isDirectory() && !NODE_FOLDERS.has(entry.name)).map((entry) => entry.name);
  for (const folder of ['', ...folders]) {
    await mkdir(join(dir, 'vendor', 'js', folder), { recursive: true });
    for (const name of await readdir(join(root, 'js', folder))) {
      if (!name.endsWith('.js') || NODE_ONLY.has(name)) continue;
      await copyFile(join(root, 'js', folder, name), join(dir, 'vendor', 'js', folder, name));
    }
  }
  await copyFile(join(root, 'wasm', 'bloomgate.wasm'), join(dir, 'vendor', 'wasm', 'bloomgate.wasm'));
}

/**
 * @param {{ out?: string, list?: string, generation?: number }} [options]
 * @returns {Promise<string>} the directory to load with --load-extension
 */
export async function buildExtension(options = {}) {
  const out = resolve(options.out ?? here);
  if (out !== here) {
    await mkdir(out, { recursive: true });
    for (const name of EXTENSION_FILES) await copyFile(join(here, name), join(out, name));
  }
  await copyLibrary(out);
  const entries = parseList(await readFile(options.list ?? join(here, 'blocklist.txt'), 'utf8'));
  await mkdir(join(out, 'filters'), { recursive: true });
  await writeFile(join(out, 'filters', 'urls.bgf'), await buildUrlFilter(entries, { generation: options.generation ?? 1 }));
  return out;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: { out: { type: 'string' }, list: { type: 'string' }, generation: { type: 'string' } },
  });
  const generation = values.generation === undefined ? 1 : Number(values.generation);
  if (!Number.isSafeInteger(generation) || generation < 0) {
    process.stderr.write('build.mjs: --generation must be a non-negative integer\n');
    process.exit(2);
  }
  try {
    const out = await buildExtension({ out: values.out, list: values.list, generation });
    process.stdout.write(`extension ready in ${out} (load it unpacked, or --load-extension=${out})\n`);
  } catch (error) {
    process.stderr.write(`build.mjs: ${error.message}\n`);
    process.exit(1);
  }
}
