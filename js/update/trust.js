// @ts-check
/**
 * update/trust.js — the one rule that decides whether a filter site's
 * manifest is believed. Read it whole: nothing else in js/update/ decides
 * trust; the other files fetch, check bytes against what this rule
 * accepted, store and schedule.
 *
 * The host that serves a site is not trusted; the publisher's keys are
 * (`openFilter(url, { keys, threshold })`). A manifest is believed when:
 *
 *  1. SIGNED. With keys, it is a version-2 manifest signed by at least
 *     `threshold` distinct keys of the key set the client trusts now. The
 *     client first follows the site's key history (key-rotation.js) when the
 *     manifest names a later key set; a manifest of an older set than the one
 *     trusted is refused (a key that was rotated out signs nothing any more).
 *     Without keys the client runs unsigned, as before signing existed, and
 *     says so (stats().signed === false): then the rest of this rule holds
 *     only against accidents, not against a host that lies.
 *     The key history is followed only up to the key set the manifest names:
 *     a record the host appends past it changes nothing.
 *  2. NOT EXPIRED, NOT TOO FAR AHEAD. A version-2 manifest carries `expires`;
 *     one past it is refused (E_EXPIRED), also for a client that holds
 *     nothing yet, so a replayed old manifest works for at most its lifetime
 *     (rollback of a fresh client, bounded). An expiry further ahead than the
 *     CLI signs (MAX_SIGNED_LIFETIME_SECONDS, plus CLOCK_SKEW_SECONDS) is refused
 *     too (E_EXPIRED): it would make that replay window endless. The copy in
 *     use turns stale at the expiry of the newest manifest that was believed:
 *     a frozen site is noticed. A manifest that expires while its files
 *     download is not installed (live-filter.js asks `stillValid`).
 *  3. THE LIST ASKED FOR. With keys the caller names its list (`listId` is
 *     required: index.js), so one publisher key that signs several lists
 *     cannot move a client from one to another. A manifest must name the
 *     list in use (or, before there is one, the pinned list). A successor
 *     (`publish --replace-list`: the manifest names the list in use in
 *     `replaces`) is followed only when the caller opted in
 *     (`followSuccessors: true`), only when signed, and only when the
 *     generation it says it replaced is not older than the one in use: an old
 *     successor record replayed after the client moved on (A -> B -> A) is
 *     refused (E_STALE). Anything else is E_LIST.
 *  4. NOT OLDER. Of the same list, its generation is not below the one in use
 *     (E_STALE); at the same generation its full file must be the file in use
 *     (E_MANIFEST), and it may only extend the expiry.
 *
 * What it returns says what to do; the files it names are then accepted only
 * with exactly the signed length and SHA-256 (download.js), and only after
 * the file's own header names the manifest's list and generation.
 */
import { BloomgateError } from '../errors.js';
import { digestListed } from '../integrity.js';
import { CLOCK_SKEW_SECONDS, MAX_SIGNED_LIFETIME_SECONDS, verifyThreshold } from '../signature.js';
import { followRotations } from './key-rotation.js';

/**
 * @typedef {import('./key-rotation.js').TrustedKeys} TrustedKeys
 * @typedef {{ listId: string, generation: number, sha256: Uint8Array | null, checksum: string | null }} InUse
 * @typedef {{
 *   action: 'install' | 'same',
 *   successor: boolean,
 *   trusted: TrustedKeys | null,
 *   signedBy: string[],
 *   expiresMs: number | null,
 * }} Verdict
 */

/**
 * @param {import('./manifest.js').Manifest} manifest parsed, shape-checked
 * @param {{
 *   url: string,
 *   trusted: TrustedKeys | null,
 *   pinnedListId: string | null,
 *   followSuccessors?: boolean,
 *   inUse: InUse | null,
 *   nowMs: number,
 *   loadRotations: () => Promise<import('./key-rotation.js').Rotation[]>,
 * }} context
 * @returns {Promise<Verdict>}
 */
export async function judgeManifest(manifest, context) {
  const { url, pinnedListId, inUse, nowMs } = context;

  // 1. Signed by the keys trusted now (after following a rotation the site publishes).
  let trusted = context.trusted;
  /** @type {string[]} */
  let signedBy = [];
  if (trusted !== null) {
    if (manifest.version < 2 || manifest.canonical === null) {
      throw new BloomgateError('E_SIGNATURE', `the filter manifest at ${url} is unsigned (version ${manifest.version}); this client accepts only manifests signed by its keys`);
    }
    if (manifest.keySet > trusted.seq) trusted = await followRotations(trusted, await context.loadRotations(), url, manifest.keySet);
    if (manifest.keySet !== trusted.seq) {
      throw new BloomgateError('E_SIGNATURE', manifest.keySet < trusted.seq
        ? `the filter manifest at ${url} is signed by key set ${manifest.keySet}, which key set ${trusted.seq} replaced; only the current keys sign`
        : `the filter manifest at ${url} names key set ${manifest.keySet}, which no rotation signed by the trusted keys leads to`);
    }
    signedBy = await verifyThreshold(manifest.canonical, manifest.signatures, trusted, `the filter manifest at ${url}`);
  }

  // 2. Not expired, and not signed for longer than any publisher can.
  const expiresMs = manifest.expires === null ? null : manifest.expires * 1000;
  if (expiresMs !== null && nowMs >= expiresMs) {
    throw new BloomgateError('E_EXPIRED',
      `the filter manifest at ${url} expired at ${new Date(expiresMs).toISOString()} (a frozen or replayed site); ` +
      (inUse ? 'kept the filter in use' : 'no filter is accepted from it'));
  }
  if (expiresMs !== null && expiresMs > nowMs + (MAX_SIGNED_LIFETIME_SECONDS + CLOCK_SKEW_SECONDS) * 1000) {
    throw new BloomgateError('E_EXPIRED',
      `the filter manifest at ${url} claims to be valid until ${expiryText(expiresMs)}, more than 366 days ahead (bloomgate publish ` +
      `signs at most 366 days): a replay of it would never end; ${inUse ? 'kept the filter in use' : 'no filter is accepted from it'}`);
  }

  // 3. The list asked for, or a successor the caller opted into and the keys signed.
  const listWanted = inUse?.listId ?? pinnedListId;
  let successor = false;
  if (listWanted !== null && manifest.listId !== listWanted) {
    const entry = manifest.replaces.find((candidate) => candidate.listId === listWanted);
    const kept = inUse ? '; kept the filter in use' : '';
    if (entry === undefined || context.trusted === null || context.followSuccessors !== true) {
      let why = '';
      if (entry !== undefined && context.trusted === null) why = ' (it names a successor, which only a signed client follows: pass keys)';
      else if (entry !== undefined) why = ' (it names itself a successor of that list; pass followSuccessors: true to openFilter() to follow the publisher there)';
      throw new BloomgateError('E_LIST',
        `the manifest at ${url} offers list ${manifest.listId}, not list ${listWanted}` + (inUse ? ' of the filter in use' : ' asked for') + why + kept);
    }
    if (inUse !== null && entry.generation < inUse.generation) {
      throw new BloomgateError('E_STALE',
        `the manifest at ${url} moves list ${listWanted} generation ${entry.generation} to its successor ${manifest.listId}, but generation ` +
        `${inUse.generation} of ${listWanted} is in use (an old successor record, replayed)${kept}`);
    }
    successor = true;
  }
  // 4. Not older than the generation in use.
  if (inUse !== null && !successor) {
    if (manifest.generation < inUse.generation) {
      throw new BloomgateError('E_STALE',
        `the manifest at ${url} offers generation ${manifest.generation}, older than generation ${inUse.generation} in use (a replayed or rolled-back manifest); kept the filter in use`);
    }
    if (manifest.generation === inUse.generation) {
      const sha256 = inUse.sha256;
      const sameFile = (sha256 === null || digestListed(sha256, manifest.full.integrity)) &&
        (manifest.full.checksum === null || inUse.checksum === null || manifest.full.checksum === inUse.checksum);
      if (!sameFile) {
        throw new BloomgateError('E_MANIFEST',
          `the filter manifest at ${url} names generation ${manifest.generation} with other bytes than the generation ${inUse.generation} in use (republished without a new generation?)`);
      }
      return { action: 'same', successor: false, trusted, signedBy, expiresMs };
    }
  }
  return { action: 'install', successor, trusted, signedBy, expiresMs };
}

/** An expiry for a message: ISO time when the Date can show it, else the raw seconds. */
function expiryText(ms) {
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? `${ms / 1000} s after 1970` : date.toISOString();
}

/**
 * Still believable now (after its files downloaded)? A manifest that expired meanwhile is not
 * installed: throws E_EXPIRED.
 * @param {Verdict} verdict
 * @param {number} nowMs
 * @param {string} url
 */
export function checkStillValid(verdict, nowMs, url) {
  if (verdict.expiresMs !== null && nowMs >= verdict.expiresMs) {
    throw new BloomgateError('E_EXPIRED',
      `the filter manifest at ${url} expired at ${expiryText(verdict.expiresMs)} while its files downloaded; not installed, kept the filter in use`);
  }
}
