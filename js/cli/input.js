// Where input lines come from: a file (read in 1 MiB chunks, re-readable for
// a counting pass) or stdin (a stream; buffered in memory only when a second
// pass is needed). Open failures become exit 66.
import { open } from 'node:fs/promises';
import { basename } from 'node:path';
import { fstatSync, read } from 'node:fs';
import { cannotOpen } from './errors.js';

const CHUNK_BYTES = 1 << 20;

/**
 * Open an input: a path, or '-' / undefined for stdin.
 * @returns {Promise<InputSource>}
 */
export async function openInput(path) {
  if (path === undefined || path === '-') return openStdin();
  let handle;
  try {
    handle = await open(path, 'r');
    const info = await handle.stat();
    if (info.isDirectory()) throw Object.assign(new Error('is a directory'), { code: 'EISDIR' });
    return new InputSource({ label: basename(path), path, handle, size: info.isFile() ? info.size : undefined, rereadable: info.isFile() });
  } catch (error) {
    await handle?.close().catch(() => {});
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
    return new InputSource({ label: 'stdin', path: 'stdin', fd: 0, size: info.size, rereadable: true });
  }
  return new InputSource({ label: 'stdin', path: 'stdin', stream: process.stdin, rereadable: false });
}

export class InputSource {
  constructor({ label, path, handle, fd, stream, size, rereadable }) {
    this.label = label; // what the metadata calls the source
    this.path = path; // what error messages call it
    this.handle = handle;
    this.fd = fd;
    this.stream = stream;
    this.size = size; // bytes, when known (progress shows a percentage)
    this.rereadable = rereadable;
    this.buffered = null;
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

  async *#fileChunks() {
    const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
    let position = 0;
    for (;;) {
      let bytesRead;
      try {
        bytesRead = this.handle
          ? (await this.handle.read(buffer, 0, CHUNK_BYTES, position)).bytesRead
          : await readFd(this.fd, buffer, position);
      } catch (error) {
        throw cannotOpen(this.path, error);
      }
      if (bytesRead === 0) return;
      position += bytesRead;
      yield buffer.subarray(0, bytesRead);
    }
  }

  async *#streamChunks() {
    try {
      for await (const chunk of this.stream) yield chunk;
    } catch (error) {
      throw cannotOpen(this.path, error);
    }
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
