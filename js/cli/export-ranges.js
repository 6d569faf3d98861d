// @ts-check
// `bloomgate export-ranges`: an exact store as static files any CDN or object
// store can serve — the scale path of the public breached-password service.
//
// Nothing half-written is ever served as complete: the files go into a hidden
// temporary directory next to the target, the endpoint manifest (what clients
// check before they believe a "not listed", see js/endpoint.js) is written
// last, and only then is the directory renamed into place. A kill or a full
// disk leaves the previous export untouched (or no export), never a partial
// one under the real name; the next run removes what a killed run left.
//
// With --sign KEY (repeatable) the manifest is version 2: the store's Merkle
// root (js/merkle.js), signed, and a proof file beside the replies —
// `range/{5 hex}.proof` for every prefix, `hashes/{block}.proof` for every
// block of the first 1-7 hex digits, about 16 hashes a block (2^32 prefixes
// cannot each have a file; a block's proof holds its leaves, so a prefix
// without a file, a 404, is provable too).
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { MANIFEST_NAME, storeManifest } from '../endpoint.js';
import { proofBytes } from '../merkle.js';
import { StoreReader, rangeReply } from '../store.js';
import { forEachBlock, storeTree } from '../store-tree.js';
import { parseCommandArgs } from './args.js';
import { cannotCreate, cannotOpen, EXIT, usageError } from './errors.js';
import { COMMAND_HELP } from './help.js';
import { formatCount } from './progress.js';
import { clientOptionsLine } from './signing.js';
import { refuseKeysInside } from './site-paths.js';

const PREFIXES = 1 << 20; // every 5-hex range
/** A signed export's lifetime unless --expires-in says otherwise: re-export (or re-sign) within it. */
const DEFAULT_EXPIRES_IN = '7d';
/** First line of the recipes this command writes; a file without it is the user's and is left alone. */
const RECIPE_MARK = '# written by bloomgate export-ranges';

export async function run(argv) {
  const { values, positionals } = parseCommandArgs('export-ranges', argv, {
    output: { type: 'string', short: 'o' },
    pad: { type: 'boolean' },
    quiet: { type: 'boolean', short: 'q' },
    sign: { type: 'string', multiple: true },
    'expires-in': { type: 'string' },
  });
  if (values.help) {
    process.stdout.write(COMMAND_HELP['export-ranges']);
    return EXIT.OK;
  }
  if (positionals.length !== 1) throw usageError("export-ranges takes one .bgs store (see 'bloomgate export-ranges --help')");
  if (!values.output) throw usageError("missing -o/--output DIR (see 'bloomgate export-ranges --help')");
  if (values['expires-in'] !== undefined && !values.sign?.length) throw usageError('--expires-in applies to a signed export (--sign KEY)');
  // An expiry bounds how long a host can keep serving this export once a newer one exists: always one when signed.
  const expires = values.sign?.length
    ? Math.floor(Date.now() / 1000) + (await import('./publish.js')).parseDuration('expires-in', values['expires-in'] ?? DEFAULT_EXPIRES_IN)
    : 0;
  const signingKeys = values.sign?.length ? await (await import('./signing.js')).readSigningKeys(values.sign) : null;
  if (signingKeys) refuseKeysInside(values.output, signingKeys, 'the export directory');
  let store;
  try {
    store = await StoreReader.open(positionals[0]);
  } catch (/** @type {any} */ error) {
    if (error?.name === 'BloomgateError') throw error;
    throw cannotOpen(positionals[0], error);
  }
  const pad = Boolean(values.pad);
  try {
    const protocol = store.hashType === 'sha1' ? 'range' : 'hashes';
    if (protocol === 'hashes' && pad) throw usageError('--pad applies to password stores (range files) only');
    await makeDir(values.output);
    const target = join(values.output, protocol);
    removeLeftovers(values.output, protocol);
    const temporary = join(values.output, `.${protocol}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
    let files;
    let listId;
    try {
      await makeDir(temporary);
      files = protocol === 'range' ? await exportPasswordRanges(store, temporary, pad) : await exportUrlHashes(store, temporary);
      let root;
      let shape;
      let sign;
      if (signingKeys) {
        const { signAll } = await import('./signing.js');
        ({ root, shape } = await writeProofs(store, protocol, temporary));
        files += 2 ** (shape.depth - shape.blockBits);
        sign = (bytes) => signAll(bytes, signingKeys);
      }
      // The manifest last: its presence is what says "complete".
      const manifest = storeManifest(store, { protocol, padding: pad ? 'static' : 'none', notFound: protocol === 'range' ? 'error' : 'empty', root, shape, expires, sign });
      writeOutput(join(temporary, MANIFEST_NAME), `${JSON.stringify(manifest, null, 2)}\n`);
      listId = manifest.listId;
      replaceDirectory(temporary, target);
    } catch (error) {
      rmSync(temporary, { recursive: true, force: true });
      throw error;
    }
    const recipes = writeRecipes(values.output);
    if (!values.quiet) {
      process.stderr.write(`wrote ${formatCount(files)} files under ${target} from ${formatCount(store.count)} records, manifest last\n`);
      for (const line of recipes) process.stderr.write(`${line}\n`);
      if (signingKeys) process.stderr.write(`signed by ${signingKeys.length} key(s); expires ${new Date(expires * 1000).toISOString()} (re-export or re-sign before then)\n`);
      if (/^0+$/.test(String(listId))) process.stderr.write('warning: the store names no list (build it with --list-id or --like), so clients cannot bind to it\n');
      process.stderr.write(signingKeys
        ? clientOptionsLine({ keys: signingKeys.map((key) => key.id), threshold: signingKeys.length, listId })
        : clientOptionsLine({ listId }));
    }
    return EXIT.OK;
  } finally {
    await store.close();
  }
}

/** Swap the finished directory in: the old export stays whole until the new one is. */
function replaceDirectory(temporary, target) {
  /** @type {string | null} */
  let old = null;
  try {
    if (existsSync(target)) {
      old = `${target.replace(/[^/\\]+$/, (name) => `.${name}`)}.old-${process.pid}-${randomBytes(4).toString('hex')}`;
      renameSync(target, old);
    }
    renameSync(temporary, target);
  } catch (error) {
    if (old !== null && !existsSync(target)) renameSync(old, target); // put the previous export back
    throw cannotCreate(target, error);
  }
  if (old !== null) rmSync(old, { recursive: true, force: true });
}

/** Temporary and replaced directories of runs that were killed (their process is gone). */
function removeLeftovers(dir, protocol) {
  const pattern = new RegExp(`^\\.${protocol}\\.(?:tmp|old)-(\\d+)-[0-9a-f]{8}$`);
  for (const name of readdirSync(dir)) {
    const match = pattern.exec(name);
    if (match && !processAlive(Number(match[1]))) rmSync(join(dir, name), { recursive: true, force: true });
  }
}

function processAlive(pid) {
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (/** @type {any} */ error) {
    return error.code === 'EPERM';
  }
}

/**
 * The deployment recipe beside the export: an nginx snippet and a `_headers`
 * file (Netlify, Cloudflare Pages). A file of the same name that this command
 * did not write is left alone. Returns lines for the report.
 */
function writeRecipes(dir) {
  // Both endpoints, whichever this run wrote: a directory may hold a password and a URL export.
  // no-cache: a CDN may keep the files but must revalidate them, or after a re-export it could
  // serve an older generation's range beside the newer manifest, a wrong "clean".
  const recipes = [
    ['bloomgate-nginx.conf', [
      RECIPE_MARK,
      '# Include inside the server block that serves this directory. Range and hash files have no',
      '# extension (nginx would send application/octet-stream; bloomgate reads the body either way).',
      'location ~ /(range|hashes)/[^/]+$ {',
      '    default_type text/plain;',
      '    add_header Access-Control-Allow-Origin "*" always;',
      '    add_header X-Content-Type-Options "nosniff" always;',
      '    add_header Cache-Control "public, no-cache" always;',
      '}',
      '',
    ].join('\n')],
    ['_headers', [
      RECIPE_MARK,
      ...['/range/*', '/hashes/*'].flatMap((path) => [
        path,
        '  Access-Control-Allow-Origin: *',
        '  Content-Type: text/plain; charset=utf-8',
        '  X-Content-Type-Options: nosniff',
        '  Cache-Control: public, no-cache',
      ]),
      '',
    ].join('\n')],
  ];
  const lines = [];
  for (const [name, content] of recipes) {
    const path = join(dir, name);
    if (existsSync(path) && !readFileSync(path, 'utf8').startsWith(RECIPE_MARK)) {
      lines.push(`left ${path} as it was (not written by bloomgate); the settings it needs are in docs/CLI.md`);
      continue;
    }
    writeOutput(path, content);
    lines.push(`wrote ${path} (deployment recipe)`);
  }
  return lines;
}

/** mkdir -p, failing as an output that cannot be written (exit 73). */
async function makeDir(dir) {
  try {
    await mkdir(dir, { recursive: true });
  } catch (/** @type {any} */ error) {
    // mkdir says EEXIST when a file is in the way; what the user needs to hear is "not a directory".
    throw cannotCreate(dir, error?.code === 'EEXIST' ? Object.assign(new Error('not a directory'), { code: 'ENOTDIR' }) : error);
  }
}

/** Write one output file, failing as one that cannot be written (exit 73). */
function writeOutput(path, data) {
  try {
    writeFileSync(path, data);
  } catch (error) {
    throw cannotCreate(path, error);
  }
}

function hex(bytes) {
  return Buffer.from(bytes).toString('hex').toUpperCase();
}

/** All 2^20 range files, so a static host answers every prefix as the public service does. */
async function exportPasswordRanges(store, dir, pad) {
  await makeDir(dir);
  const records = store.records();
  let next = await records.next();
  for (let prefix = 0; prefix < PREFIXES; prefix++) {
    const name = prefix.toString(16).toUpperCase().padStart(5, '0');
    const inRange = [];
    while (!next.done && hex(next.value.hash).startsWith(name)) {
      inRange.push({ hash: next.value.hash.slice(), count: next.value.count });
      next = await records.next();
    }
    // A static file cannot pad per request, so padded exports pad once. Written
    // synchronously: a million small files, and an awaited writeFile costs a thread-pool
    // round trip each (measured: 155 µs a file against 28 µs; 64 in flight did not help).
    writeOutput(join(dir, name), rangeReply(inRange, pad));
  }
  return PREFIXES;
}

/**
 * The proof files of a signed export (docs/FORMAT.md, "Authenticated replies"): one pass builds
 * the tree, then every range prefix gets its 20 siblings (640 bytes), or every hashes block its
 * leaves and siblings, read again from the store block by block. Returns the root (hex) and shape.
 */
async function writeProofs(store, protocol, dir) {
  const tree = await storeTree(store, protocol);
  const { top, shape } = tree;
  const bits = shape.depth - shape.blockBits;
  // In the case of the protocol's replies: range uppercase, hashes lowercase.
  const name = (block) => `${(protocol === 'range' ? block.toString(16).toUpperCase() : block.toString(16)).padStart(bits / 4, '0')}.proof`;
  if (protocol === 'range') {
    for (let prefix = 0; prefix < PREFIXES; prefix++) writeOutput(join(dir, name(prefix)), proofBytes([], top.siblings(prefix), shape));
    return { root: tree.root, shape };
  }
  let next = 0; // blocks without hashes get a proof of their empty block
  await forEachBlock(store.records(), protocol, shape, tree.hasher, (block, entries) => {
    for (; next < block; next++) writeOutput(join(dir, name(next)), proofBytes([], top.siblings(next), shape));
    writeOutput(join(dir, name(block)), proofBytes(entries, top.siblings(block), shape));
    next = block + 1;
  });
  for (; next < 2 ** bits; next++) writeOutput(join(dir, name(next)), proofBytes([], top.siblings(next), shape));
  return { root: tree.root, shape };
}

/** One file per 4-byte prefix that has hashes; clients read a missing file (404) as none. */
async function exportUrlHashes(store, dir) {
  await makeDir(dir);
  let files = 0;
  /** @type {string | null} */
  let current = null;
  let lines = [];
  const flush = () => {
    if (current !== null) {
      writeOutput(join(dir, current), `${lines.join('\n')}\n`);
      files++;
    }
  };
  // A labelled store's rows carry each hash's value (its label's index): `HASH:VALUE`.
  const labelled = store.labels !== null;
  for await (const { hash, count } of store.records()) {
    const full = hex(hash).toLowerCase();
    const prefix = full.slice(0, 8);
    if (prefix !== current) {
      flush();
      current = prefix;
      lines = [];
    }
    lines.push(labelled ? `${full}:${count}` : full);
  }
  flush();
  return files;
}
