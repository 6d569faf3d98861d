// @ts-check
// `bloomgate publish NEW.bgf --dir SITE`: a static filter site. Each
// generation G is SITE/filter-G.bgf; deltas from the last N generations are
// SITE/delta-F-G.bgd; SITE/manifest.json (docs/FORMAT.md, "Publication
// manifest") names them with their lengths and SHA-256 digests, an expiry
// and, with --sign, the publisher's signatures over its canonical bytes. It is
// written last, atomically, so a reader never sees a manifest whose files are
// not there yet. Old files go only after the new manifest is in place, and the
// previous manifest's deltas stay one more round for readers that hold it. A
// lock file keeps two runs on one site from interleaving.
import { createHash, createPublicKey, verify } from 'node:crypto';
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { canonicalBytes } from '../update/manifest.js';
import { parseCommandArgs, parseNonNegativeInteger, parsePositiveInteger } from './args.js';
import { CliError, EXIT, cannotCreate, cannotOpen, quote, usageError } from './errors.js';
import { beyondExactCounts, inFile, readFilterBytes } from './filter-file.js';
import { COMMAND_HELP } from './help.js';
import { AtomicOutput } from './output.js';
import { formatBytes } from './progress.js';
import { encodeBetween } from './diff.js';
import { clientOptionsLine, readSigningKeys, signAll } from './signing.js';
import { MAX_SIGNED_LIFETIME_SECONDS } from '../signature.js';
import { currentKeySet, initialRecord, keysDocument, readKeyDocument, KEYS_FILE } from './key-history.js';
import { refuseKeysInside } from './site-paths.js';
import { withSiteLock } from './site-lock.js';

export const MANIFEST_FORMAT = 'bloomgate-filter';
const MANIFEST = 'manifest.json';
const DEFAULT_KEEP = 3;
const DEFAULT_MIN_REFRESH = 3600;
const DEFAULT_EXPIRES_IN = '7d';
// A delta is worth its request only when clearly smaller than the file (fuse rebuilds change every byte).
const DELTA_MAX_SHARE = 0.5;
const UNITS = { s: 1, m: 60, h: 3600, d: 86400, w: 604800 };
/** An expiry further out than this is a mistake (a frozen site would go unnoticed for years), and clients refuse it. */
const MAX_EXPIRES_IN = MAX_SIGNED_LIFETIME_SECONDS;

const filterName = (generation) => `filter-${generation}.bgf`;
const deltaName = (from, to) => `delta-${from}-${to}.bgd`;
const digestOf = (bytes) => createHash('sha256').update(bytes).digest();
const integrityOf = (digest) => `sha256-${digest.toString('base64')}`;

/** "7d", "12h", "90m", "3600s" or "3600" (seconds) -> seconds. */
export function parseDuration(name, text) {
  const match = /^([0-9][0-9_]*)([smhdw]?)$/.exec(String(text));
  const seconds = match ? Number(match[1].replace(/_/g, '')) * UNITS[match[2] || 's'] : NaN;
  if (!Number.isSafeInteger(seconds) || seconds < 60 || seconds > MAX_EXPIRES_IN) {
    throw usageError(`invalid --${name} '${text}': expected a duration from 60s to 366d, such as 7d, 12h, 90m or 3600s`);
  }
  return seconds;
}

export async function run(argv) {
  const { values, positionals } = parseCommandArgs('publish', argv, {
    dir: { type: 'string' },
    keep: { type: 'string' },
    'min-refresh': { type: 'string' },
    sign: { type: 'string', multiple: true },
    threshold: { type: 'string' },
    unsigned: { type: 'boolean' },
    'expires-in': { type: 'string' },
    'replace-list': { type: 'boolean' },
    force: { type: 'boolean' },
    quiet: { type: 'boolean', short: 'q' },
  });
  if (values.help) {
    process.stdout.write(COMMAND_HELP.publish);
    return EXIT.OK;
  }
  if (positionals.length !== 1) throw usageError(`publish takes one filter file, got ${positionals.length} (see 'bloomgate publish --help')`);
  if (values.dir === undefined || values.dir === '') throw usageError("missing --dir SITE (see 'bloomgate publish --help')");
  const keep = values.keep === undefined ? DEFAULT_KEEP : parseNonNegativeInteger('keep', values.keep);
  const minRefresh = values['min-refresh'] === undefined ? DEFAULT_MIN_REFRESH : parseNonNegativeInteger('min-refresh', values['min-refresh']);
  if (minRefresh > 0xffffffff) throw usageError(`invalid --min-refresh '${values['min-refresh']}': at most ${0xffffffff}`);
  const expiresIn = parseDuration('expires-in', values['expires-in'] ?? DEFAULT_EXPIRES_IN);
  const [newPath] = positionals;
  const site = values.dir;
  if (values.unsigned && values.sign?.length) throw usageError('--unsigned and --sign contradict each other: give one');
  if (values.threshold !== undefined && !values.sign?.length) throw usageError('--threshold applies to a signed publish (--sign KEY)');
  const signers = await readSigningKeys(values.sign);
  const threshold = values.threshold === undefined ? signers.length : parsePositiveInteger('threshold', values.threshold);
  if (threshold > signers.length) {
    throw usageError(`--threshold ${threshold} is more than the ${signers.length} --sign key(s): this manifest would not verify (sign with at least ${threshold} keys)`);
  }
  refuseKeysInside(site, signers, 'the site');

  const wasm = await import('../wasm/index.js');
  await wasm.init();
  const bytes = await readFilterBytes(newPath);
  const validated = wasm.headerOf(bytes).validate;
  if (validated.rc < 0) throw inFile(newPath, wasm.statusError(validated.rc));
  const header = /** @type {NonNullable<typeof validated.header>} */ (validated.header); // set when rc >= 0
  const beyond = beyondExactCounts(bytes);
  if (beyond !== null) throw new CliError(`${newPath}: ${beyond}; a manifest carries generations up to 2^53 - 1`, 'E_TOO_LARGE', EXIT.DATA);
  const generation = header.generation;
  if (/^0+$/.test(header.listId)) {
    throw usageError(`${newPath} names no list: build it with --list-id HEX32, --store or --like PREVIOUS.bgf, so clients can tell its updates from another list's`);
  }
  await mkdir(site, { recursive: true }).catch((error) => {
    throw cannotCreate(site, error);
  });

  return withSiteLock(site, async () => {
    const previous = await readManifest(site);
    const document = await readKeyDocument(site);
    const history = document.rotations;
    const keySet = history.length === 0 ? 0 : history[history.length - 1].seq;
    const previousSigners = previous === null ? [] : manifestSigners(previous);
    const previousSigned = previous?.version === 2 && Array.isArray(previous.signatures) && previous.signatures.length > 0;
    if (signers.length === 0 && (document.exists || previousSigned) && !values.unsigned) {
      throw new CliError(`${quote(site)} is a signed site (${document.exists ? `it has ${KEYS_FILE}` : 'its manifest is signed'}): an unsigned manifest ` +
        'would be refused by every client that pins its keys, for as long as it is served. Sign it (--sign KEY), or pass --unsigned ' +
        'if you mean to drop signing', 'E_UNSIGNED', EXIT.DATA);
    }
    /** The key set that signs from now on, and the initial record to write when the site has none. */
    let current = currentKeySet(document);
    /** @type {import('./key-history.js').InitialRecord | null} */
    let newInitial = null;
    let note = '';
    if (current === null && signers.length > 0) {
      if (previousSigners.length > 0) {
        // A site signed before the CLI recorded its key set: what clients pin is what signed its manifest.
        current = { seq: previous?.keySet ?? 0, keys: previousSigners, threshold: previousSigners.length };
        note = `; key set ${current.seq} (recorded in ${KEYS_FILE}) taken from the current manifest: ` +
          `${previousSigners.length} key(s), threshold ${previousSigners.length}, the number of its valid signatures`;
        if (values.threshold !== undefined && threshold !== current.threshold) {
          throw usageError(`--threshold ${threshold}: the site's manifest is signed by ${current.threshold} key(s), which is what its clients pin; ` +
            "change the key set with 'bloomgate keys rotate'");
        }
        checkSigners(signers, current, site);
        newInitial = initialRecord(current.keys, current.threshold, signers);
      } else {
        current = { seq: 0, keys: signers.map((signer) => signer.id), threshold };
        newInitial = initialRecord(current.keys, threshold, signers);
        note = `; key set 0 recorded in ${KEYS_FILE}: ${signers.length} key(s), threshold ${threshold}`;
      }
    } else if (current !== null && signers.length > 0) {
      if (values.threshold !== undefined && threshold !== current.threshold) {
        throw usageError(`--threshold ${threshold}: key set ${current.seq} of ${quote(site)} has threshold ${current.threshold}; ` +
          "change it with 'bloomgate keys rotate'");
      }
      checkSigners(signers, current, site);
    }
    let replaces = Array.isArray(previous?.replaces) ? previous.replaces : [];
    const newList = previous !== null && previous.listId !== header.listId;
    if (previous !== null) {
      if (newList) {
        if (!values['replace-list']) {
          throw new CliError(`${quote(site)} publishes list ${previous.listId}; ${newPath} is list ${header.listId} ` +
            '(to move the site and its clients to the new list, pass --replace-list: the manifest then names the old list as replaced)', 'E_LIST', EXIT.DATA);
        }
        if (signers.length === 0) {
          process.stderr.write('bloomgate: warning: an unsigned --replace-list: only clients that pin keys follow a successor list; unsigned clients report E_LIST\n');
        }
        replaces = [...replaces.filter((entry) => entry.listId !== previous.listId && entry.listId !== header.listId),
          { listId: previous.listId, generation: previous.generation }];
      } else if (generation < previous.generation || (generation === previous.generation && previous.full?.checksum !== header.checksum)) {
        throw new CliError(`${newPath} is generation ${generation}; ${quote(site)} already has generation ${previous.generation}` +
          `${generation === previous.generation ? ' with other bytes' : ''} (publish a later one: build it with --like)`, 'E_STALE', EXIT.DATA);
      } else if (generation > previous.generation + 1 && !values.force) {
        throw new CliError(`${newPath} is generation ${generation}; ${quote(site)} has generation ${previous.generation}: a jump of ` +
          `${generation - previous.generation} generations (a typo in --generation? clients would refuse every lower one for good); pass --force if it is meant`, 'E_GENERATION', EXIT.DATA);
      }
    } else if (values['replace-list']) {
      throw usageError(`--replace-list: ${quote(site)} publishes no list yet, so there is nothing to replace`);
    }

    await writeAtomically(join(site, filterName(generation)), bytes);
    const fullDigest = digestOf(bytes);
    // Deltas from the generations the site still holds of this list, newest first.
    const held = newList ? [] : (await generationsIn(site)).filter((g) => g < generation).sort((a, b) => b - a).slice(0, keep);
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
      deltas.push({ from, url: deltaName(from, generation), length: delta.length, digest: digestOf(delta) });
    }
    const expires = Math.floor(Date.now() / 1000) + expiresIn;
    const manifest = signedManifest({
      listId: header.listId, generation, expires, minRefreshSeconds: minRefresh, keySet, hasKeys: history.length > 0, replaces,
      full: { url: filterName(generation), length: bytes.length, digest: fullDigest, checksum: header.checksum },
      deltas,
    }, signers);
    if (newInitial !== null) {
      await writeAtomically(join(site, KEYS_FILE), Buffer.from(`${JSON.stringify(keysDocument(newInitial, history), null, 2)}\n`));
    }
    await writeAtomically(join(site, MANIFEST), Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`));
    const removed = await removeOld(site, { generation, held, previous: newList ? null : previous, newList });
    if (!values.quiet) {
      process.stderr.write(`published generation ${generation} of list ${header.listId} to ${site}: ${filterName(generation)} (${formatBytes(bytes.length)})` +
        (deltas.length ? `, deltas from ${deltas.map((d) => `${d.from} (${formatBytes(d.length)})`).join(', ')}` : ', no deltas') +
        `; ${signers.length ? `signed by ${signers.length} key(s)` : 'UNSIGNED (clients cannot tell it from a forgery: pass --sign KEY)'}` +
        `, expires ${new Date(expires * 1000).toISOString()}` +
        (newList ? `; replaces list ${previous?.listId}` : '') +
        (removed ? `; removed ${removed} old file(s)` : '') + note + '\n');
      process.stderr.write(signers.length && current !== null
        ? clientOptionsLine({ keys: current.keys, threshold: current.threshold, listId: header.listId })
        : clientOptionsLine({ listId: header.listId }));
    }
    return EXIT.OK;
  });
}

/**
 * The manifest JSON for these fields, signed by each key over its canonical bytes.
 * @param {{ listId: string, generation: number, expires: number, minRefreshSeconds: number, keySet: number, hasKeys: boolean,
 *   replaces: Array<{ listId: string, generation: number }>,
 *   full: { url: string, length: number, digest: Buffer, checksum: string },
 *   deltas: Array<{ from: number, url: string, length: number, digest: Buffer }> }} fields
 * @param {import('./signing.js').SigningKey[]} signers
 */
export function signedManifest(fields, signers) {
  const canonical = canonicalBytes({
    listId: fields.listId,
    generation: fields.generation,
    expires: fields.expires,
    minRefreshSeconds: fields.minRefreshSeconds,
    keySet: fields.keySet,
    full: { length: fields.full.length, sha256: new Uint8Array(fields.full.digest), checksum: fields.full.checksum },
    deltas: fields.deltas.map((d) => ({ from: d.from, length: d.length, sha256: new Uint8Array(d.digest) })),
    replaces: fields.replaces,
  });
  return {
    format: MANIFEST_FORMAT,
    version: 2,
    listId: fields.listId,
    generation: fields.generation,
    expires: fields.expires,
    minRefreshSeconds: fields.minRefreshSeconds,
    keySet: fields.keySet,
    ...(fields.hasKeys ? { keys: KEYS_FILE } : {}),
    replaces: fields.replaces,
    full: { url: fields.full.url, length: fields.full.length, integrity: integrityOf(fields.full.digest), checksum: fields.full.checksum },
    deltas: fields.deltas.map((d) => ({ from: d.from, url: d.url, length: d.length, integrity: integrityOf(d.digest) })),
    signatures: signAll(canonical, signers),
  };
}

/**
 * Signers must belong to the site's current key set and reach its threshold.
 * @param {import('./signing.js').SigningKey[]} signers
 * @param {{ seq: number, keys: string[], threshold: number } | null} current
 * @param {string} site
 */
function checkSigners(signers, current, site) {
  if (current === null || signers.length === 0) return;
  for (const signer of signers) {
    if (!current.keys.includes(signer.id)) {
      throw new CliError(`${quote(signer.path)} (${signer.id}) is not in key set ${current.seq} of ${quote(site)}; ` +
        "clients that pin or follow the site's keys would refuse its signature", 'E_KEY', EXIT.DATA);
    }
  }
  if (signers.length < current.threshold) {
    throw new CliError(`key set ${current.seq} needs ${current.threshold} signatures; --sign gave ${signers.length}`, 'E_KEY', EXIT.USAGE);
  }
}

/**
 * The distinct keys whose signatures on a site's manifest verify ([] for an unsigned or version-1 one).
 * @param {any} manifest
 * @returns {string[]}
 */
export function manifestSigners(manifest) {
  if (manifest?.version !== 2 || !Array.isArray(manifest.signatures) || manifest.signatures.length === 0) return [];
  let message;
  try {
    const digest = (integrity) => new Uint8Array(Buffer.from(String(integrity).slice('sha256-'.length), 'base64'));
    message = canonicalBytes({
      listId: manifest.listId, generation: manifest.generation, expires: manifest.expires, minRefreshSeconds: manifest.minRefreshSeconds,
      keySet: manifest.keySet ?? 0, full: { length: manifest.full.length, sha256: digest(manifest.full.integrity), checksum: manifest.full.checksum },
      deltas: (manifest.deltas ?? []).map((d) => ({ from: d.from, length: d.length, sha256: digest(d.integrity) })),
      replaces: Array.isArray(manifest.replaces) ? manifest.replaces : [],
    });
  } catch {
    return [];
  }
  const valid = [];
  for (const entry of manifest.signatures) {
    if (typeof entry?.keyid !== 'string' || valid.includes(entry.keyid) || !/^ed25519:[A-Za-z0-9_-]{43}$/.test(entry.keyid)) continue;
    try {
      const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: entry.keyid.slice('ed25519:'.length) }, format: 'jwk' });
      if (verify(null, message, key, Buffer.from(String(entry.sig), 'base64url'))) valid.push(entry.keyid);
    } catch {
      // not a key or not a signature: not counted
    }
  }
  return valid;
}

/** The site's current manifest, or null when it has none yet. A damaged one stops the publish. */
export async function readManifest(site) {
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

/**
 * Sign the site's current manifest again (same files, a new expiry, the
 * current key set): what `keys rotate` does with the new keys.
 * @param {string} site
 * @param {import('./signing.js').SigningKey[]} signers
 * @param {number} expiresIn seconds
 */
export async function resignManifest(site, signers, expiresIn) {
  const previous = await readManifest(site);
  if (previous === null) return false;
  const document = await readKeyDocument(site);
  const history = document.rotations;
  checkSigners(signers, currentKeySet(document), site);
  const digest = (integrity) => Buffer.from(String(integrity).slice('sha256-'.length), 'base64');
  const manifest = signedManifest({
    listId: previous.listId,
    generation: previous.generation,
    expires: Math.floor(Date.now() / 1000) + expiresIn,
    minRefreshSeconds: previous.minRefreshSeconds ?? DEFAULT_MIN_REFRESH,
    keySet: history.length === 0 ? 0 : history[history.length - 1].seq,
    hasKeys: history.length > 0,
    replaces: Array.isArray(previous.replaces) ? previous.replaces : [],
    full: { url: previous.full.url, length: previous.full.length, digest: digest(previous.full.integrity), checksum: previous.full.checksum },
    deltas: (previous.deltas ?? []).map((d) => ({ from: d.from, url: d.url, length: d.length, digest: digest(d.integrity) })),
  }, signers);
  await writeAtomically(join(site, MANIFEST), Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`));
  return true;
}

async function generationsIn(site) {
  const names = await readdir(site);
  return names.flatMap((name) => {
    const match = /^filter-(\d+)\.bgf$/.exec(name);
    return match ? [Number(match[1])] : [];
  });
}

export async function writeAtomically(path, bytes) {
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
async function removeOld(site, { generation, held, previous, newList }) {
  const keepFilters = new Set([generation, ...held]);
  const keepTargets = new Set([generation, ...(previous ? [previous.generation] : [])]);
  let removed = 0;
  for (const name of await readdir(site)) {
    const full = /^filter-(\d+)\.bgf$/.exec(name);
    const delta = /^delta-(\d+)-(\d+)\.bgd$/.exec(name);
    // A new list: every delta of the old one goes (its generations may collide with the new list's).
    const stale = (full && !keepFilters.has(Number(full[1]))) || (delta && (newList || !keepTargets.has(Number(delta[2]))));
    if (stale) {
      await rm(join(site, name), { force: true });
      removed++;
    }
  }
  return removed;
}
