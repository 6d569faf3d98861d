// @ts-check
// `bloomgate keys rotate --dir SITE --old K1 --new K2 [--threshold N]`: move a
// site to a new key set. The rotation (key set number, keys, threshold) is
// signed by the outgoing keys and appended to SITE/keys.json; clients that
// trust the old set verify it and trust the new one from then on, and refuse
// what only the old keys sign. When the new keys are given as private key
// files, the site's manifest is signed again with them at once.
//
// A rotation clients would not follow, or one that nobody can sign after, is
// refused before anything is written: the outgoing keys must reach the
// threshold of the current set (the last rotation's, the initial record's,
// or, on a site signed before either was recorded, the number of valid
// signatures on its manifest), and every new key must be presented as a
// private key file unless --allow-unheld-new-key says it is held elsewhere.
import { decodePublicKey } from '../signature.js';
import { parseCommandArgs, parsePositiveInteger } from './args.js';
import { CliError, EXIT, quote, usageError } from './errors.js';
import { COMMAND_HELP } from './help.js';
import { appendRotation, currentKeySet, KEYS_FILE, readKeyDocument } from './key-history.js';
import { manifestSigners, parseDuration, readManifest, resignManifest, writeAtomically } from './publish.js';
import { clientOptionsLine, readSigningKey, readSigningKeys } from './signing.js';
import { refuseKeysInside } from './site-paths.js';
import { withSiteLock } from './site-lock.js';
import { join } from 'node:path';

export async function run(argv) {
  const [verb, ...rest] = argv;
  if (verb === undefined || verb === '-h' || verb === '--help') {
    process.stdout.write(COMMAND_HELP.keys);
    return verb === undefined ? EXIT.USAGE : EXIT.OK;
  }
  if (verb !== 'rotate') throw usageError(`unknown keys command '${verb}': the one there is is 'keys rotate' (see 'bloomgate keys --help')`);
  const { values, positionals } = parseCommandArgs('keys rotate', rest, {
    dir: { type: 'string' },
    old: { type: 'string', multiple: true },
    new: { type: 'string', multiple: true },
    threshold: { type: 'string' },
    'expires-in': { type: 'string' },
    'allow-unheld-new-key': { type: 'boolean' },
    quiet: { type: 'boolean', short: 'q' },
  });
  if (values.help) {
    process.stdout.write(COMMAND_HELP.keys);
    return EXIT.OK;
  }
  if (positionals.length > 0) throw usageError(`keys rotate takes no positional arguments, got ${positionals.join(' ')}`);
  if (!values.dir) throw usageError("missing --dir SITE (see 'bloomgate keys --help')");
  if (!values.old?.length) throw usageError('missing --old KEYFILE: the outgoing keys sign the rotation');
  if (!values.new?.length) throw usageError("missing --new KEYFILE or --new 'ed25519:...': the incoming keys");
  const site = values.dir;
  const expiresIn = parseDuration('expires-in', values['expires-in'] ?? '7d');
  const oldKeys = await readSigningKeys(values.old);
  /** @type {Array<{ id: string, raw: Uint8Array }>} */
  const newKeys = [];
  /** @type {import('./signing.js').SigningKey[]} */
  const newSigners = [];
  for (const given of values.new) {
    const key = given.startsWith('ed25519:') ? decodePublicKey(given) : null;
    if (given.startsWith('ed25519:') && key === null) throw usageError(`--new ${given}: not an 'ed25519:' public key of 32 bytes`);
    if (key !== null && !values['allow-unheld-new-key']) {
      throw usageError(`--new ${given} is a public key alone: nothing shows that anyone holds its private half. If nobody does, ` +
        'the site is locked for good: clients follow the rotation and then refuse every manifest the old keys sign. Give the ' +
        'private key file (--new KEYFILE), or pass --allow-unheld-new-key if it is held elsewhere (an offline or another publisher\'s key)');
    }
    const signer = key === null ? await readSigningKey(given) : null;
    const id = key?.id ?? /** @type {import('./signing.js').SigningKey} */ (signer).id;
    const decoded = /** @type {{ id: string, raw: Uint8Array }} */ (decodePublicKey(id));
    if (newKeys.some((other) => other.id === id)) throw usageError(`--new lists ${id} twice`);
    newKeys.push(decoded);
    if (signer !== null) newSigners.push(signer);
  }
  const threshold = values.threshold === undefined ? 1 : parsePositiveInteger('threshold', values.threshold);
  if (threshold > newKeys.length) throw usageError(`--threshold ${threshold} is more than the ${newKeys.length} new key(s)`);
  refuseKeysInside(site, [...oldKeys, ...newSigners], 'the site');

  return withSiteLock(site, async () => {
    const manifest = await readManifest(site);
    if (manifest === null) throw new CliError(`${quote(site)} has no manifest.json: publish to it first, then rotate its keys`, 'E_MANIFEST', EXIT.DATA);
    const document = await readKeyDocument(site);
    let current = currentKeySet(document);
    let inferred = '';
    if (current === null) {
      // A site signed before its key set was recorded: clients pin what signed its manifest.
      const signedBy = manifestSigners(manifest);
      if (signedBy.length === 0) {
        throw new CliError(`${quote(site)} is not signed: there is no key set to rotate from (publish with --sign KEY first)`, 'E_KEY', EXIT.DATA);
      }
      current = { seq: 0, keys: signedBy, threshold: signedBy.length };
      inferred = `; the site records no threshold, so key set 0 is taken as the ${signedBy.length} key(s) with valid signatures on its manifest, all needed`;
    }
    for (const key of oldKeys) {
      if (!current.keys.includes(key.id)) {
        throw new CliError(current.seq === 0
          ? `--old ${quote(key.path)} did not sign the site's current manifest (it is not in key set 0, the keys clients pin); ` +
            'a rotation signed by a key clients do not pin is ignored by them'
          : `--old ${quote(key.path)} is not in the site's current key set ${current.seq}; clients would not follow this rotation`, 'E_KEY', EXIT.DATA);
      }
    }
    if (oldKeys.length < current.threshold) {
      throw new CliError(`key set ${current.seq} needs ${current.threshold} of its keys to sign a rotation; --old gave ${oldKeys.length}: ` +
        `clients would not follow it, and every manifest the new keys sign would be refused${inferred}`, 'E_KEY', EXIT.USAGE);
    }
    const next = appendRotation(document, newKeys, threshold, oldKeys);
    await writeAtomically(join(site, KEYS_FILE), Buffer.from(`${JSON.stringify(next, null, 2)}\n`));
    const seq = next.rotations[next.rotations.length - 1].seq;
    const resigned = newSigners.length >= threshold ? await resignManifest(site, newSigners, expiresIn) : false;
    if (!values.quiet) {
      process.stderr.write(`key set ${seq} of ${site}: ${newKeys.length} key(s), threshold ${threshold}, signed by ${oldKeys.length} outgoing key(s)` +
        inferred +
        (resigned ? '; manifest.json signed again with the new keys\n'
          : `; publish next with --sign ${newKeys.length > 1 ? 'NEWKEY (x' + threshold + ')' : 'NEWKEY'} (clients that follow refuse the old keys from now on)\n`));
      // New apps pin the new set; apps already out there follow the rotation from the keys they pin.
      process.stderr.write(clientOptionsLine({ keys: newKeys.map((key) => key.id), threshold, listId: manifest.listId }));
    }
    return EXIT.OK;
  });
}
