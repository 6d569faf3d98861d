// @ts-check
// Writing an output file atomically: bytes go to `<out>.tmp-<pid>`, which is
// renamed over `<out>` only once complete. A failed or interrupted command
// leaves no half-written file behind. The temporary file is created up front,
// so an unwritable destination fails before a long build, not after it.
import { open, readdir, rename, lstat, unlink } from 'node:fs/promises';
import { unlinkSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { cannotCreate } from './errors.js';

const pending = new Set();
let handlersInstalled = false;

function installCleanup() {
  if (handlersInstalled) return;
  handlersInstalled = true;
  const removeAll = () => {
    for (const path of pending) {
      try {
        unlinkSync(path);
      } catch {
        // already gone
      }
    }
    pending.clear();
  };
  process.on('exit', removeAll);
  for (const [signal, status] of /** @type {Array<[NodeJS.Signals, number]>} */ ([['SIGINT', 130], ['SIGTERM', 143], ['SIGHUP', 129]])) {
    process.on(signal, () => {
      removeAll();
      process.exit(status);
    });
  }
}

/** The name of a temporary file of this process for the output `path` (`<path>.tmp-<pid>[-<suffix>]`). */
export function temporaryPath(path, suffix) {
  return suffix ? `${path}.tmp-${process.pid}-${suffix}` : `${path}.tmp-${process.pid}`;
}

/** Remove `path` when the process exits or is interrupted, unless forgotten first. */
export function trackTemporary(path) {
  installCleanup();
  pending.add(path);
}

export function forgetTemporary(path) {
  pending.delete(path);
}

const STARTED = Date.now() - process.uptime() * 1000;

function processIsGone(pid) {
  try {
    process.kill(pid, 0);
    return false; // alive (ours to signal)
  } catch (/** @type {any} */ error) {
    return error.code === 'ESRCH'; // EPERM: alive, someone else's
  }
}

/**
 * A process killed outright (SIGKILL, a power cut) cannot remove its
 * temporary files. Before writing `path`, remove those of earlier runs for
 * the same output: `<name>.tmp-<pid>` and `<name>.tmp-<pid>-<suffix>` whose
 * process no longer exists and which were last written before this process
 * started (a live writer on another host or PID namespace keeps writing, or
 * started after us). Nothing else is touched; failures are ignored.
 */
export async function removeStaleTemporaries(path) {
  const prefix = `${basename(path)}.tmp-`;
  const directory = dirname(path);
  let names;
  try {
    names = await readdir(directory);
  } catch {
    return [];
  }
  const removed = [];
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const match = /^([0-9]+)(?:-[A-Za-z0-9]+)?$/.exec(name.slice(prefix.length));
    if (!match) continue;
    const pid = Number(match[1]);
    if (pid === process.pid || !processIsGone(pid)) continue;
    const where = join(directory, name);
    try {
      const info = await lstat(where);
      if (!info.isFile() || info.mtimeMs >= STARTED) continue;
      await unlink(where);
      removed.push(name);
    } catch {
      // gone already, or not ours to remove
    }
  }
  return removed;
}

export class AtomicOutput {
  constructor(path, temporaryPath, handle) {
    this.path = path;
    this.temporaryPath = temporaryPath;
    this.handle = handle;
  }

  /** Create the temporary file next to `path` (same directory, so rename is atomic). */
  static async create(path) {
    const temporary = temporaryPath(path);
    installCleanup();
    await removeStaleTemporaries(path);
    try {
      const handle = await open(temporary, 'w+', 0o644);
      pending.add(temporary);
      return new AtomicOutput(path, temporary, handle);
    } catch (error) {
      throw cannotCreate(path, error);
    }
  }

  async write(bytes) {
    try {
      let offset = 0;
      while (offset < bytes.length) {
        const { bytesWritten } = await this.handle.write(bytes, offset, bytes.length - offset);
        offset += bytesWritten;
      }
    } catch (error) {
      await this.abort();
      throw cannotCreate(this.path, error);
    }
  }

  /**
   * Write all of `bytes` at the file's position, synchronously (for a filter
   * serialized straight from wasm memory). A failure (ENOSPC, EIO, EFBIG) is
   * "cannot write <path>" (exit 73); the caller's abort() then removes the
   * temporary file, and the previous <path> stays as it was.
   * @param {Uint8Array} bytes
   */
  writeSync(bytes) {
    try {
      for (let offset = 0; offset < bytes.length;) offset += writeSync(this.handle.fd, bytes, offset, bytes.length - offset);
    } catch (error) {
      throw cannotCreate(this.path, error);
    }
  }

  /** The temporary file's descriptor, for positioned synchronous I/O (store-writer.js). */
  get fd() {
    return this.handle.fd;
  }

  /**
   * Make the file at `path` (a complete temporary file of this process in the
   * same directory) the one that commit() moves into place.
   */
  async adopt(path) {
    try {
      await this.handle.close();
      this.handle = null;
      await rename(path, this.temporaryPath);
      this.handle = await open(this.temporaryPath, 'r+');
    } catch (error) {
      await this.abort();
      throw cannotCreate(this.path, error);
    }
  }

  /** Flush, close and move into place. */
  async commit() {
    try {
      this.bytesCommitted = (await this.handle.stat()).size;
      await this.handle.sync();
      await this.handle.close();
      this.handle = null;
      await rename(this.temporaryPath, this.path);
      pending.delete(this.temporaryPath);
    } catch (error) {
      await this.abort();
      throw cannotCreate(this.path, error);
    }
  }

  /** Give up: remove the temporary file. Safe to call more than once. */
  async abort() {
    if (this.handle) {
      await this.handle.close().catch(() => {});
      this.handle = null;
    }
    if (pending.delete(this.temporaryPath)) await unlink(this.temporaryPath).catch(() => {});
  }
}
