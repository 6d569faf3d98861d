// @ts-check
// `bloomgate publish NEW.bgf --dir SITE`: a static filter site. Each
// generation G is SITE/filter-G.bgf; deltas from the last N generations are
// SITE/delta-F-G.bgd; SITE/manifest.json (docs/FORMAT.md, "Publication
// manifest") names them with their lengths and SRI hashes and is written
// last, atomically, so a reader never sees a manifest whose files are not
// there yet. Old files go only after the new manifest is in place, and the
// previous manifest's deltas stay one more round for readers that hold it.
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { parseCommandArgs, parseNonNegativeInteger, parsePositiveInteger } from './args.js';
import { CliError, EXIT, cannotCreate, cannotOpen, quote, usageError } from './errors.js';
import { inFile, readFilterBytes } from './filter-file.js';
import { COMMAND_HELP } from './help.js';
import { AtomicOutput } from './output.js';
import { formatBytes } from './progress.js';
import { encodeBetween } from './diff.js';

export const MANIFEST_FORMAT = 'bloomgate-filter';
const MANIFEST = 'manifest.json';
const DEFAULT_KEEP = 3;
const DEFAULT_MIN_REFRESH = 3600;
// A delta is worth its request only when clearly smaller than the file (fuse rebuilds change every byte).
const DELTA_MAX_SHARE = 0.5;

const filterName = (generation) => `filter-${generation}.bgf`;
const deltaName = (from, to) => `delta-${from}-${to}.bgd`;
const integrity = (bytes) => `sha256-${createHash('sha256').update(bytes).digest('base64')}`;

export async function run(argv) {
  const { values, positionals } = parseCommandArgs('publish', argv, {
    dir: { type: 'string' },
    keep: { type: 'string' },
    'min-refresh': { type: 'string' },
    quiet: { type: 'boolean', short: 'q' },
  });
  if (values.help) {
    process.stdout.write(COMMAND_HELP.publish);
    return EXIT.OK;
  }
  if (positionals.length !== 1) throw usageError(`publish takes one filter file, got ${positionals.length} (see 'bloomgate publish --help')`);
  if (values.dir === undefined || values.dir === '') throw usageError("missing --dir SITE (see 'bloomgate publish --help')");
  const keep = values.keep === undefined ? DEFAULT_KEEP : parseNonNegativeInteger('keep', values.keep);
  const minRefresh = values['min-refresh'] === undefined ? DEFAULT_MIN_REFRESH : parsePositiveInteger('min-refresh', values['min-refresh']);
  const [newPath] = positionals;
  const site = values.dir;

  const wasm = await import('../wasm/index.js');
  await wasm.init();
  const bytes = await readFilterBytes(newPath);
  const validated = wasm.headerOf(bytes).validate;
  if (validated.rc < 0) throw inFile(newPath, wasm.statusError(validated.rc));
  const header = /** @type {NonNullable<typeof validated.header>} */ (validated.header); // set when rc >= 0
  const generation = header.generation;
  if (/^0+$/.test(header.listId)) {
    throw usageError(`${newPath} names no list: build it with --list-id HEX32, --store or --like PREVIOUS.bgf, so clients can tell its updates from another list's`);
  }
  await mkdir(site, { recursive: true }).catch((error) => {
    throw cannotCreate(site, error);
  });
  const previous = await readManifest(site);
  if (previous !== null) {
    if (previous.listId !== header.listId) {
      throw new CliError(`${quote(site)} publishes list ${previous.listId}; ${newPath} is list ${header.listId}`, 'E_LIST', EXIT.DATA);
    }
    if (generation <= previous.generation) {
      throw new CliError(`${newPath} is generation ${generation}; ${quote(site)} already has generation ${previous.generation} (publish a later one: build it with --like)`, 'E_STALE', EXIT.DATA);
    }
  }

  await writeAtomically(join(site, filterName(generation)), bytes);
  // Deltas from the generations the site still holds, newest first.
  const held = (await generationsIn(site)).filter((g) => g < generation).sort((a, b) => b - a).slice(0, keep);
  const deltas = [];
  for (const from of held) {
    const basePath = join(site, filterName(from));
    const base = await readFilterBytes(basePath);
    let delta;
    try {
      delta = (await encodeBetween(basePath, newPath, { oldBytes: base, newBytes: bytes })).bytes;
    } catch (/** @type {any} */ error) {
      if (error?.code === 'E_INCOMPATIBLE') continue; // another geometry (a fuse rebuild, a new capacity): full file only
      throw error;
    }
    if (delta.length > DELTA_MAX_SHARE * bytes.length) continue;
    await writeAtomically(join(site, deltaName(from, generation)), delta);
    deltas.push({ from, url: deltaName(from, generation), length: delta.length, integrity: integrity(delta) });
  }
  const manifest = {
    format: MANIFEST_FORMAT,
    version: 1,
    listId: header.listId,
    generation,
    minRefreshSeconds: minRefresh,
    full: { url: filterName(generation), length: bytes.length, integrity: integrity(bytes), checksum: header.checksum },
    deltas,
  };
  await writeAtomically(join(site, MANIFEST), Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`));
  const removed = await removeOld(site, { generation, held, previous });
  if (!values.quiet) {
    process.stderr.write(`published generation ${generation} of list ${header.listId} to ${site}: ${filterName(generation)} (${formatBytes(bytes.length)})` +
      (deltas.length ? `, deltas from ${deltas.map((d) => `${d.from} (${formatBytes(d.length)})`).join(', ')}` : ', no deltas') +
      (removed ? `; removed ${removed} old file(s)` : '') + '\n');
  }
  return EXIT.OK;
}

/** The site's current manifest, or null when it has none yet. A damaged one stops the publish. */
async function readManifest(site) {
  let text;
  try {
    text = await readFile(join(site, MANIFEST), 'utf8');
  } catch (/** @type {any} */ error) {
    if (error?.code === 'ENOENT') return null;
    throw cannotOpen(join(site, MANIFEST), error);
  }
  let manifest;
  try {
    manifest = JSON.parse(text);
  } catch {
    manifest = null;
  }
  if (manifest === null || manifest.format !== MANIFEST_FORMAT || !/^[0-9a-f]{32}$/.test(manifest.listId) || !Number.isSafeInteger(manifest.generation)) {
    throw new CliError(`${join(site, MANIFEST)} is not a bloomgate filter manifest; publish into an empty directory or one bloomgate publish wrote`, 'E_MANIFEST', EXIT.DATA);
  }
  return manifest;
}

async function generationsIn(site) {
  const names = await readdir(site);
  return names.flatMap((name) => {
    const match = /^filter-(\d+)\.bgf$/.exec(name);
    return match ? [Number(match[1])] : [];
  });
}

async function writeAtomically(path, bytes) {
  const output = await AtomicOutput.create(path);
  try {
    await output.write(bytes);
    await output.commit();
  } catch (error) {
    await output.abort();
    throw error;
  }
}

/** Files no manifest can name any more: filters older than the kept ones, deltas to neither this nor the previous generation. */
async function removeOld(site, { generation, held, previous }) {
  const keepFilters = new Set([generation, ...held]);
  const keepTargets = new Set([generation, ...(previous ? [previous.generation] : [])]);
  let removed = 0;
  for (const name of await readdir(site)) {
    const full = /^filter-(\d+)\.bgf$/.exec(name);
    const delta = /^delta-(\d+)-(\d+)\.bgd$/.exec(name);
    const stale = (full && !keepFilters.has(Number(full[1]))) || (delta && !keepTargets.has(Number(delta[2])));
    if (stale) {
      await rm(join(site, name), { force: true });
      removed++;
    }
  }
  return removed;
}
