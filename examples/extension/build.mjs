#!/usr/bin/env node
/**
 * Build the example extension so Chromium can load it unpacked:
 *
 *   node examples/extension/build.mjs --key ed25519:... --list-id HEX32           # in place
 *   node examples/extension/build.mjs --key ed25519:... --list-id HEX32 --out DIR # a copy in DIR
 *
 * Options: --key ed25519:... (the publisher's public key, what `bloomgate keygen` prints; repeat
 * it for k-of-n), --threshold N (how many of the keys must sign; default 1), --list-id HEX32 (the
 * list the extension follows, what `bloomgate publish` prints under "client options"), --list FILE
 * (default blocklist.txt beside this script), --generation N (default 1).
 *
 * It copies the browser half of the library (js/*.js and js/wasm/*.js without
 * the CLI, the server and the Node-only files) to vendor/js/, wasm/bloomgate.wasm to
 * vendor/wasm/, builds filters/urls.bgf (key encoding url, named by the list id) from the
 * list, and writes publisher.js: the keys, threshold and list id background.js passes to
 * openFilter(). Without --key the extension follows no filter site (an update nobody signed
 * could come from anyone): it answers from its bundled filter only.
 * vendor/, filters/ and publisher.js are generated: they are gitignored.
 */
import { createHash } from 'node:crypto';
import { copyFile, mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { BloomFilter, init, urlExpressions } from '../../js/index.js';
import { keySetFromOptions } from '../../js/signature.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');

/** The extension's own files (everything else is generated). */
export const EXTENSION_FILES = [
  'manifest.json', 'background.js', 'warning.html', 'warning.js', 'popup.html', 'popup.js', 'extension.css',
];
/** Written by the build (beside the files above): the publisher this build trusts. */
export const PUBLISHER_FILE = 'publisher.js';
/** Library files that need Node (or are the CLI): not shipped in the extension. */
const NODE_ONLY = new Set(['cli.js', 'server.js', 'store.js', 'wasm-bytes-node.js', 'local-file-node.js', 'persist-dir.js']);

/** The list's identity when no --list-id is given (a build without a publisher key). */
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

const WHERE_KEY = "the publisher's public key is the line 'bloomgate keygen' prints (ed25519: and 43 characters), " +
  'also under "client options" when \'bloomgate publish --sign\' runs';
const WHERE_LIST = 'the list id is the 32 hex digits \'bloomgate publish\' prints under "client options" ' +
  "(also the site's manifest.json \"listId\", or 'bloomgate inspect FILE.bgf')";

/**
 * The publisher a build pins, checked: { keys, threshold, listId } with keys, or
 * { keys: null, threshold: null, listId } without (the extension then follows no filter site).
 * Throws a TypeError that says where the right value is.
 * @param {{ keys?: string[], threshold?: number, listId?: string }} options
 */
export function checkPublisher({ keys, threshold, listId } = {}) {
  if (listId !== undefined && (typeof listId !== 'string' || !/^[0-9a-f]{32}$/i.test(listId))) {
    throw new TypeError(`--list-id ${JSON.stringify(String(listId))} is not 32 hex digits: ${WHERE_LIST}`);
  }
  const noKeys = keys === undefined || keys === null || (Array.isArray(keys) && keys.length === 0);
  if (noKeys) {
    if (threshold !== undefined) throw new TypeError(`--threshold needs --key: ${WHERE_KEY}`);
    return { keys: null, threshold: null, listId: (listId ?? LIST_ID).toLowerCase() };
  }
  for (const key of keys) {
    try {
      keySetFromOptions([key], undefined, 'build.mjs');
    } catch (error) {
      throw new TypeError(`--key ${error.message.replace(/^build\.mjs: keys\[0\] /, '')}; ${WHERE_KEY}`, { cause: error });
    }
  }
  let set;
  try {
    set = keySetFromOptions(keys, threshold, 'build.mjs');
  } catch (error) {
    throw new TypeError(`--key/--threshold: ${error.message.replace(/^build\.mjs: /, '')}`, { cause: error });
  }
  if (listId === undefined) {
    throw new TypeError(`--key needs --list-id too, so the extension follows that one list and no other the same key signs: ${WHERE_LIST}`);
  }
  return { keys: [...keys], threshold: set.threshold, listId: listId.toLowerCase() };
}

/** publisher.js: what background.js imports (null keys: follow no filter site). */
function publisherModule(publisher) {
  return '// Written by build.mjs: the publisher this build trusts (keys from \'bloomgate keygen\', the list id\n' +
    '// \'bloomgate publish\' prints under "client options"). keys: null follows no filter site.\n' +
    `export const PUBLISHER = Object.freeze(${JSON.stringify(publisher, null, 2)});\n`;
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
 * @param {{ out?: string, list?: string, generation?: number, keys?: string[], threshold?: number, listId?: string }} [options]
 * @returns {Promise<string>} the directory to load with --load-extension
 */
export async function buildExtension(options = {}) {
  const publisher = checkPublisher(options);
  const out = resolve(options.out ?? here);
  if (out !== here) {
    await mkdir(out, { recursive: true });
    for (const name of EXTENSION_FILES) await copyFile(join(here, name), join(out, name));
  }
  await copyLibrary(out);
  const entries = parseList(await readFile(options.list ?? join(here, 'blocklist.txt'), 'utf8'));
  await mkdir(join(out, 'filters'), { recursive: true });
  await writeFile(join(out, 'filters', 'urls.bgf'), await buildUrlFilter(entries, { generation: options.generation ?? 1, listId: publisher.listId }));
  await writeFile(join(out, PUBLISHER_FILE), publisherModule(publisher));
  return out;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      out: { type: 'string' }, list: { type: 'string' }, generation: { type: 'string' },
      key: { type: 'string', multiple: true }, threshold: { type: 'string' }, 'list-id': { type: 'string' },
    },
  });
  const generation = values.generation === undefined ? 1 : Number(values.generation);
  if (!Number.isSafeInteger(generation) || generation < 0) {
    process.stderr.write('build.mjs: --generation must be a non-negative integer\n');
    process.exit(2);
  }
  const options = { keys: values.key, threshold: values.threshold === undefined ? undefined : Number(values.threshold), listId: values['list-id'] };
  try {
    checkPublisher(options);
  } catch (error) {
    process.stderr.write(`build.mjs: ${error.message}\n`);
    process.exit(2);
  }
  try {
    const out = await buildExtension({ out: values.out, list: values.list, generation, ...options });
    process.stdout.write(`extension ready in ${out} (load it unpacked, or --load-extension=${out})\n`);
    if (!values.key) {
      process.stdout.write('no --key: this build follows no filter site and answers from its bundled filter only ' +
        '(rebuild with --key ed25519:... --list-id HEX32 to take signed updates)\n');
    }
  } catch (error) {
    process.stderr.write(`build.mjs: ${error.message}\n`);
    process.exit(1);
  }
}
