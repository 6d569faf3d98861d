// @ts-check
/**
 * persist-dir.js — where openFilter() keeps its copy of a filter in Node: a
 * directory (package.json maps `#persist-dir` here under the "node"
 * condition; everything else gets persist-dir-browser.js, which imports no
 * Node built-ins, so bundles for browsers never carry node:fs).
 *
 * Each key is two files named by the SHA-256 of the key: `<hash>.bgf` (the
 * filter file, as bytes) and `<hash>.json` (its meta, with the key and the
 * file's checksum). Every write is atomic: a temporary file in the same
 * directory, written, flushed (fsync) and renamed over the old one, so a
 * crash or a full disk leaves either the old file or the new one, never a
 * mixture. The two files are renamed one after the other; a meta whose
 * checksum does not name the .bgf beside it is dropped on reading (the .bgf
 * itself is always validated by the core before use).
 *
 * A writer killed between creating its temporary file and renaming it (kill -9, a crash, power
 * loss) leaves `<hash>.bgf.tmp-<host>-<pid>-<random>` behind. Each storage sweeps the directory
 * on its first use and before every write (sweepLeftovers): a temporary file is removed when its
 * writer is provably gone — same host and pid namespace (`<host>`), that pid no longer running,
 * not touched for LEFTOVER_AGE_MS — or when nothing has touched it for ABANDONED_AGE_MS whoever
 * wrote it (another machine on a shared directory, a reused pid, the pre-tag name
 * `.tmp-<pid>-<random>`). A live writer keeps writing, so its file stays young; one whose file
 * is removed anyway fails its rename with an error and the copy already stored stays whole.
 */
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, fstatSync, lstatSync, openSync, readFileSync, readSync, readdirSync, readlinkSync, unlinkSync } from 'node:fs';
import { mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises';
import { homedir, hostname, tmpdir } from 'node:os';
import { join } from 'node:path';

/** The platform's per-user cache directory, with a bloomgate folder in it. */
export function defaultDirectory() {
  const env = process.env;
  let base;
  if (process.platform === 'win32') base = env.LOCALAPPDATA || join(homedir() || tmpdir(), 'AppData', 'Local');
  else if (process.platform === 'darwin') base = join(homedir() || tmpdir(), 'Library', 'Caches');
  else base = env.XDG_CACHE_HOME || join(homedir() || tmpdir(), '.cache');
  return join(base, 'bloomgate', 'filters');
}

/** The stored checksum field of a .bgf (bytes 8..16, little-endian) as 16 hex digits. */
function headerChecksum(bytes) {
  if (bytes.length < 16) return null;
  return new DataView(bytes.buffer, bytes.byteOffset, 16).getBigUint64(8, true).toString(16).padStart(16, '0');
}

/**
 * Files up to this size are read synchronously: one read(2) into one buffer,
 * ~0.15 ms for a 1.2 MB filter here, where the promise API's open/stat/read/
 * close (four thread-pool trips) took 0.3-0.8 ms. It blocks the event loop at
 * most ~1-2 ms, once, when a filter is opened. Larger files are read async.
 */
const SYNC_READ_MAX = 8 * 1024 * 1024;

/** A file's bytes, read whole. */
async function readWhole(path) {
  const fd = openSync(path, 'r');
  try {
    const { size } = fstatSync(fd);
    if (size <= SYNC_READ_MAX) {
      const bytes = Buffer.allocUnsafe(size);
      let at = 0;
      while (at < size) {
        const n = readSync(fd, bytes, at, size - at, at);
        if (n === 0) break;
        at += n;
      }
      return new Uint8Array(bytes.buffer, bytes.byteOffset, at);
    }
  } finally {
    closeSync(fd);
  }
  return new Uint8Array(await readFile(path));
}

/** A small file's text, or null when it cannot be read. */
function readText(path) {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

/**
 * Which host and pid namespace wrote a temporary file: 8 hex digits of the SHA-256 of the host
 * name and, on Linux, the pid namespace (/proc/self/ns/pid), so a pid is only ever looked up
 * where it means the same process (two containers sharing a cache directory and a host name
 * have different namespaces).
 */
const WRITER_TAG = (() => {
  let namespace = '';
  try {
    namespace = readlinkSync('/proc/self/ns/pid');
  } catch {
    // not Linux: the host name alone
  }
  return createHash('sha256').update(`${hostname()}\0${namespace}`).digest('hex').slice(0, 8);
})();

/** A temporary file of writeAtomic: `<40 hex>.(bgf|json).tmp-[<tag>-]<pid>-<12 hex>`. */
const LEFTOVER = /^[0-9a-f]{40}\.(?:bgf|json)\.tmp-(?:([0-9a-f]{8})-)?([1-9][0-9]{0,9})-[0-9a-f]{12}$/;

/** A temporary file of a writer that is gone is removed once it is this old (mtime). */
const LEFTOVER_AGE_MS = 10_000;
/** Any temporary file nothing has written to for this long is abandoned, whoever wrote it. */
const ABANDONED_AGE_MS = 24 * 60 * 60 * 1000;

/** Temporary files this process is writing now (never swept, whatever their age). */
const writing = new Set();

/**
 * Is process `pid` (in this pid namespace) running? EPERM: it is, under another user. This
 * process counts as running: its own temporary files outside `writing` may be another copy of
 * this module's (a bundle beside the package), so only ABANDONED_AGE_MS removes them.
 */
function running(pid) {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return /** @type {NodeJS.ErrnoException} */ (error).code === 'EPERM';
  }
}

/**
 * Remove the temporary files that killed writers left in `dir` (see the file's comment); returns
 * the names removed. Best effort: a file that cannot be examined or removed is left alone.
 * @param {string} dir
 * @param {number} [now]
 * @returns {string[]}
 */
export function sweepLeftovers(dir, now = Date.now()) {
  let names;
  try {
    names = readdirSync(dir);
  } catch {
    return []; // no directory yet: nothing to sweep
  }
  const removed = [];
  for (const name of names) {
    const parts = LEFTOVER.exec(name);
    if (!parts) continue;
    const path = join(dir, name);
    if (writing.has(path)) continue;
    let info;
    try {
      info = lstatSync(path);
    } catch {
      continue; // renamed or removed meanwhile
    }
    if (!info.isFile()) continue;
    const age = now - info.mtimeMs;
    const pid = Number(parts[2]);
    const ours = parts[1] === WRITER_TAG;
    const gone = ours && !running(pid);
    if (!(age > ABANDONED_AGE_MS || (gone && age > LEFTOVER_AGE_MS))) continue;
    try {
      unlinkSync(path);
      removed.push(name);
    } catch {
      // removed by another sweeper, or not ours to remove
    }
  }
  return removed;
}

/** Write `data` to `path` atomically: temporary file, fsync, rename. */
async function writeAtomic(path, data) {
  const temporary = `${path}.tmp-${WRITER_TAG}-${process.pid}-${randomBytes(6).toString('hex')}`;
  /** @type {import('node:fs/promises').FileHandle | null} */
  let handle = null;
  writing.add(temporary);
  try {
    handle = await open(temporary, 'wx', 0o644);
    await handle.writeFile(data);
    await handle.sync();
    await handle.close();
    handle = null;
    await rename(temporary, path);
  } catch (error) {
    await /** @type {import('node:fs/promises').FileHandle | null} */ (handle)?.close().catch(() => {});
    await rm(temporary, { force: true }).catch(() => {});
    throw error;
  } finally {
    writing.delete(temporary);
  }
}

/**
 * The filter store in a directory (created on the first write).
 * @param {string} [directory] default: the per-user cache directory ({@link defaultDirectory})
 */
export function createDirectoryStorage(directory) {
  const dir = directory ?? defaultDirectory();
  if (typeof dir !== 'string' || dir === '') throw new TypeError('directoryStorage(dir): dir must be a non-empty path');
  const names = (key) => {
    const name = createHash('sha256').update(String(key)).digest('hex').slice(0, 40);
    return { file: join(dir, `${name}.bgf`), meta: join(dir, `${name}.json`) };
  };
  let swept = false;
  /** Sweep leftovers once on first use, and again before every write (writes are rare: one per update). */
  const sweep = (always) => {
    if (swept && !always) return;
    swept = true;
    sweepLeftovers(dir);
  };
  return {
    kind: 'directory',
    directory: dir,
    async get(key) {
      sweep(false);
      const paths = names(key);
      let bytes;
      try {
        bytes = await readWhole(paths.file);
      } catch (error) {
        if (/** @type {NodeJS.ErrnoException} */ (error).code === 'ENOENT') return null;
        throw error;
      }
      let meta = {};
      try {
        const text = readText(paths.meta);
        const parsed = text === null ? null : JSON.parse(text);
        if (parsed && typeof parsed === 'object' && parsed.key === key &&
          (parsed.checksum === undefined || parsed.checksum === headerChecksum(bytes))) meta = parsed;
      } catch {
        // no meta, or a torn one: the bytes alone are still a candidate (the core checks them)
      }
      return { bytes, meta };
    },
    async set(key, bytes, meta) {
      const paths = names(key);
      await mkdir(dir, { recursive: true });
      sweep(true);
      await writeAtomic(paths.file, bytes);
      await writeAtomic(paths.meta, JSON.stringify({ ...meta, key, checksum: headerChecksum(bytes) }));
    },
    async setMeta(key, meta) {
      const paths = names(key);
      try {
        await stat(paths.file);
      } catch (error) {
        if (/** @type {NodeJS.ErrnoException} */ (error).code === 'ENOENT') return; // nothing stored to describe
        throw error;
      }
      // The caller's checksum names the file it describes; get() drops it if the file is another.
      await writeAtomic(paths.meta, JSON.stringify({ ...meta, key }));
    },
    async delete(key) {
      const paths = names(key);
      await rm(paths.file, { force: true });
      await rm(paths.meta, { force: true });
    },
  };
}
