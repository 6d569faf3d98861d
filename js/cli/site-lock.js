// @ts-check
// One writer a site: `publish` and `keys rotate` hold SITE/.bloomgate.lock
// while they write, so two runs never interleave their files and manifests.
// The lock file holds the owner's PID and appears whole or not at all (written
// to a private file, then hard-linked into place, which fails if a lock
// exists). A lock whose process is gone (a killed run) is moved aside and taken
// over; one held by a live process is a clear error (exit 75: try again
// later), never a wait that hangs a deploy script.
import { randomBytes } from 'node:crypto';
import { link, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CliError, cannotCreate, quote } from './errors.js';

export const LOCK_FILE = '.bloomgate.lock';
const EX_TEMPFAIL = 75;

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (/** @type {any} */ error) {
    return error.code === 'EPERM';
  }
}

const ownerOf = async (path) => Number.parseInt(await readFile(path, 'utf8').catch(() => ''), 10);

function locked(path, pid) {
  return new CliError(`another bloomgate (pid ${pid}) is publishing to this site (${quote(path)}); try again when it is done`, 'E_LOCKED', EX_TEMPFAIL);
}

async function acquire(path) {
  const mine = `${path}.${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    await writeFile(mine, `${process.pid}\n`, { flag: 'wx' });
  } catch (error) {
    throw cannotCreate(path, error);
  }
  try {
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        await link(mine, path);
        return;
      } catch (/** @type {any} */ error) {
        if (error?.code !== 'EEXIST') throw cannotCreate(path, error);
      }
      const owner = await ownerOf(path);
      if (Number.isSafeInteger(owner) && owner > 0 && alive(owner)) throw locked(path, owner);
      // A killed run's lock: move it aside, and put it back if it turned out to be a live one.
      const aside = `${mine}.stale`;
      try {
        await rename(path, aside);
      } catch {
        continue; // someone else moved it first
      }
      const moved = await ownerOf(aside);
      if (moved !== owner && Number.isSafeInteger(moved) && alive(moved)) await link(aside, path).catch(() => {});
      await unlink(aside).catch(() => {});
    }
    throw new CliError(`could not take the lock ${quote(path)}: other runs keep taking it`, 'E_LOCKED', EX_TEMPFAIL);
  } finally {
    await unlink(mine).catch(() => {});
  }
}

/**
 * Run `work` holding the site's lock.
 * @template T
 * @param {string} site
 * @param {() => Promise<T>} work
 * @returns {Promise<T>}
 */
export async function withSiteLock(site, work) {
  const path = join(site, LOCK_FILE);
  await acquire(path);
  try {
    return await work();
  } finally {
    // Only our own lock is removed.
    if ((await ownerOf(path)) === process.pid) await unlink(path).catch(() => {});
  }
}
