// @ts-check
// Where input lines come from: a file (read in 1 MiB chunks, re-readable for
// a counting pass) or stdin (a stream; buffered in memory only when a second
// pass is needed). Open failures become exit 66.
import { open } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { closeSync, fstatSync, openSync, read, readdirSync, readSync, statSync } from 'node:fs';
import { CliError, EXIT, cannotOpen } from './errors.js';

const CHUNK_BYTES = 1 << 20;
/** A file is read in bigger chunks: fewer round trips to the thread pool. */
const FILE_CHUNK_BYTES = 4 << 20;

/**
 * Open an input: a path, or '-' / undefined for stdin. With `directories`
 * (--format hibp), a directory is a downloader's per-prefix layout.
 * @returns {Promise<InputSource | DirectoryInput>}
 */
export async function openInput(path, { directories = false } = {}) {
  if (path === undefined || path === '-') return openStdin();
  let handle;
  try {
    handle = await open(path, 'r');
    const info = await handle.stat();
    if (info.isDirectory()) {
      if (!directories) throw Object.assign(new Error('is a directory'), { code: 'EISDIR' });
      await handle.close();
      handle = undefined;
      return DirectoryInput.open(path, info);
    }
    return new InputSource({ label: basename(path), path, handle, size: info.isFile() ? info.size : undefined, rereadable: info.isFile(), stat: info });
  } catch (error) {
    await handle?.close().catch(() => {});
    if (error instanceof CliError) throw error;
    throw cannotOpen(path, error);
  }
}

function openStdin() {
  // `bloomgate build < dump.txt`: stdin is a regular file, which can be read
  // twice by position like any other file, with no buffering.
  let info;
  try {
    info = fstatSync(0);
  } catch {
    info = null;
  }
  if (info && info.isFile()) {
    return new InputSource({ label: 'stdin', path: 'stdin', fd: 0, size: info.size, rereadable: true, stat: info });
  }
  return new InputSource({ label: 'stdin', path: 'stdin', stream: process.stdin, rereadable: false });
}

export class InputSource {
  /**
   * @param {{ label: string, path: string, handle?: import('node:fs/promises').FileHandle, fd?: number,
   *   stream?: NodeJS.ReadableStream, size?: number, rereadable: boolean, stat?: import('node:fs').Stats | null }} source
   */
  constructor({ label, path, handle, fd, stream, size, rereadable, stat = null }) {
    this.label = label; // what the metadata calls the source
    this.path = path; // what error messages call it
    this.handle = handle;
    this.fd = fd;
    this.stream = stream;
    this.size = size; // bytes, when known (progress shows a percentage)
    this.rereadable = rereadable;
    this.stat = stat; // the file's identity (dev, ino), so outputs can be checked against it
    this.buffered = null;
    /** @type {{ chunk: Uint8Array, iterator: AsyncIterator<Uint8Array> } | null} a stream's first chunk, held by firstChunk() */
    this.peeked = null;
  }

  /**
   * Read a pipe to its end and keep it in memory, so it can be read twice
   * (counting, then adding). Only used when --capacity is not given.
   */
  async bufferAll(onChunk) {
    if (this.rereadable) return;
    const chunks = [];
    let total = 0;
    for await (const chunk of this.#streamChunks()) {
      chunks.push(chunk);
      total += chunk.length;
      onChunk?.(total);
    }
    this.buffered = chunks;
    this.size = total;
    this.rereadable = true;
  }

  /** The input's bytes, chunk by chunk. A chunk is valid until the next one is requested. */
  async *chunks() {
    if (this.buffered) {
      yield* this.buffered;
    } else if (this.handle || this.fd !== undefined) {
      yield* this.#fileChunks();
    } else {
      if (this.consumed) throw new Error('stdin can be read only once');
      this.consumed = true;
      yield* this.#streamChunks();
    }
  }

  // Two buffers: the next chunk is read (in the thread pool) while the
  // caller works on this one, so reading costs the build no time of its own.
  async *#fileChunks() {
    const buffers = [Buffer.allocUnsafe(FILE_CHUNK_BYTES), Buffer.allocUnsafe(FILE_CHUNK_BYTES)];
    const readInto = (buffer, position) => (this.handle
      ? this.handle.read(buffer, 0, FILE_CHUNK_BYTES, position).then((result) => result.bytesRead)
      : readFd(this.fd, buffer, position));
    let position = 0;
    let which = 0;
    let pending = readInto(buffers[0], 0);
    for (;;) {
      let bytesRead;
      try {
        bytesRead = await pending;
      } catch (error) {
        throw cannotOpen(this.path, error);
      }
      if (bytesRead === 0) return;
      position += bytesRead;
      const chunk = buffers[which].subarray(0, bytesRead);
      which ^= 1;
      pending = readInto(buffers[which], position);
      // A read still in flight when the caller stops early must not reject unseen.
      pending.catch(() => {});
      yield chunk;
    }
  }

  async *#streamChunks() {
    try {
      if (this.peeked) {
        const { chunk, iterator } = this.peeked;
        this.peeked = null;
        yield chunk;
        for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value;
        return;
      }
      for await (const chunk of /** @type {NodeJS.ReadableStream} */ (this.stream)) yield chunk; // a stream source has one
    } catch (error) {
      throw cannotOpen(this.path, error);
    }
  }

  /**
   * The input's first chunk, without consuming it: chunks() still starts at the beginning
   * (a stream's first chunk is held until then). null when the input is empty.
   * @returns {Promise<Uint8Array | null>}
   */
  async firstChunk() {
    if (this.rereadable || this.consumed) {
      for await (const chunk of this.chunks()) return chunk; // a file: read again later (the view is not reused once the loop stops)
      return null;
    }
    if (this.peeked) return this.peeked.chunk;
    const iterator = /** @type {AsyncIterator<Uint8Array>} */ (/** @type {any} */ (this.stream)[Symbol.asyncIterator]());
    let next;
    try {
      next = await iterator.next();
    } catch (error) {
      throw cannotOpen(this.path, error);
    }
    if (next.done) {
      this.buffered = [];
      this.size = 0;
      this.rereadable = true;
      return null;
    }
    this.peeked = { chunk: next.value, iterator };
    return next.value;
  }

  async close() {
    this.buffered = null;
    await this.handle?.close().catch(() => {});
  }
}

function readFd(fd, buffer, position) {
  return new Promise((resolve, reject) => {
    read(fd, buffer, 0, buffer.length, position, (error, bytesRead) => (error ? reject(error) : resolve(bytesRead)));
  });
}

/** Files a downloader directory may hold: a 5-hex prefix, optionally an extension (`21BD1.txt`). */
const PREFIX_FILE = /^([0-9A-Fa-f]{5})(\.[A-Za-z0-9]{1,16})?$/;
const PREFIXES = 1 << 20;

const layoutError = (message) => new CliError(message, 'E_LAYOUT', EXIT.DATA);

/**
 * The per-prefix layout of the Pwned Passwords downloader (`-s false`): one
 * file per 5-hex prefix, named by it, holding `SUFFIX:COUNT` rows. Files are
 * read in prefix order, so the rows come out in hash order. Hidden files
 * (`.DS_Store`, ...) are ignored; anything else is an error, never skipped.
 * Reads are synchronous: a million small files through the thread pool cost
 * a round trip each.
 */
export class DirectoryInput {
  static open(path, stat) {
    let entries;
    try {
      entries = readdirSync(path, { withFileTypes: true });
    } catch (error) {
      throw cannotOpen(path, error);
    }
    const names = new Array(PREFIXES);
    let files = 0;
    let size = 0;
    for (const entry of entries) {
      const name = entry.name;
      if (name.startsWith('.')) continue;
      const where = join(path, name);
      const match = PREFIX_FILE.exec(name);
      if (!match) {
        throw layoutError(`${where}: not a per-prefix file (a directory input holds only files named by a 5-hex prefix, e.g. 21BD1.txt; a combined dump is given as a file)`);
      }
      let stat;
      try {
        stat = statSync(where);
      } catch (error) {
        throw cannotOpen(where, error);
      }
      if (!stat.isFile()) throw layoutError(`${where}: not a regular file (a directory input holds only per-prefix files)`);
      const prefix = parseInt(match[1], 16);
      if (names[prefix] !== undefined) throw layoutError(`${where}: prefix ${match[1].toUpperCase()} is also in ${join(path, names[prefix])} (mixed layouts in one directory)`);
      names[prefix] = name;
      size += stat.size;
      files++;
    }
    if (files === 0) throw layoutError(`${path}: no per-prefix files (expected files named 00000.txt ... FFFFF.txt)`);
    return new DirectoryInput({ path, names, files, size, stat });
  }

  constructor({ path, names, files, size, stat }) {
    this.label = basename(path);
    this.path = path;
    this.names = names;
    this.fileCount = files;
    this.size = size;
    this.rereadable = true;
    this.isDirectory = true;
    this.stat = stat;
  }

  /** The files in prefix order: { name, prefix (5 uppercase hex), path }. */
  *files() {
    for (let prefix = 0; prefix < PREFIXES; prefix++) {
      const name = this.names[prefix];
      if (name === undefined) continue;
      yield { name, prefix: prefix.toString(16).toUpperCase().padStart(5, '0'), path: join(this.path, name) };
    }
  }

  /** One file's bytes in chunks, read synchronously into one reused buffer. */
  *fileChunks(path) {
    this.buffer ??= Buffer.allocUnsafe(CHUNK_BYTES);
    let fd;
    try {
      fd = openSync(path, 'r');
    } catch (error) {
      throw cannotOpen(path, error);
    }
    try {
      let position = 0;
      for (;;) {
        let bytesRead;
        try {
          bytesRead = readSync(fd, this.buffer, 0, CHUNK_BYTES, position);
        } catch (error) {
          throw cannotOpen(path, error);
        }
        if (bytesRead === 0) return;
        position += bytesRead;
        yield this.buffer.subarray(0, bytesRead);
      }
    } finally {
      closeSync(fd);
    }
  }

  async close() {
    this.buffer = null;
  }
}
