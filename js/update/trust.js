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
 *  2. NOT EXPIRED. A version-2 manifest carries `expires`; one past it is
 *     refused (E_EXPIRED), also for a client that holds nothing yet, so a
 *     replayed old manifest works for at most its lifetime (rollback of a
 *     fresh client, bounded). The copy in use turns stale at the expiry of
 *     the newest manifest that was believed: a frozen site is noticed.
 *  3. THE SAME LIST. It names the list in use (or the one the caller pinned
 *     with `listId`), or — signed only — it names that list in `replaces`: a
 *     publisher moved its clients to a successor list (`publish
 *     --replace-list`). Unsigned, another list is refused (E_LIST).
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
import { verifyThreshold } from '../signature.js';
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
    if (manifest.keySet > trusted.seq) trusted = await followRotations(trusted, await context.loadRotations(), url);
    if (manifest.keySet !== trusted.seq) {
      throw new BloomgateError('E_SIGNATURE', manifest.keySet < trusted.seq
        ? `the filter manifest at ${url} is signed by key set ${manifest.keySet}, which key set ${trusted.seq} replaced; only the current keys sign`
        : `the filter manifest at ${url} names key set ${manifest.keySet}, which no rotation signed by the trusted keys leads to`);
    }
    signedBy = await verifyThreshold(manifest.canonical, manifest.signatures, trusted, `the filter manifest at ${url}`);
  }

  // 2. Not expired.
  const expiresMs = manifest.expires === null ? null : manifest.expires * 1000;
  if (expiresMs !== null && nowMs >= expiresMs) {
    throw new BloomgateError('E_EXPIRED',
      `the filter manifest at ${url} expired at ${new Date(expiresMs).toISOString()} (a frozen or replayed site); ` +
      (inUse ? 'kept the filter in use' : 'no filter is accepted from it'));
  }

  // 3. The same list, or a successor the keys signed.
  const listWanted = inUse?.listId ?? pinnedListId;
  let successor = false;
  if (listWanted !== null && manifest.listId !== listWanted) {
    const replaced = context.trusted !== null && manifest.replaces.some((entry) => entry.listId === listWanted);
    if (!replaced) {
      throw new BloomgateError('E_LIST',
        `the manifest at ${url} offers list ${manifest.listId}, not list ${listWanted}` +
        (inUse ? ' of the filter in use; kept the filter in use' : ' asked for') +
        (context.trusted === null && manifest.replaces.length > 0 ? ' (it names a successor, which only a signed client follows: pass keys)' : ''));
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
