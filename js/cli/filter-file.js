// @ts-check
// Reading .bgf files for inspect, query and merge. Read failures exit 66;
// a file the library rejects exits 65 with the file named in the message.
import { open } from 'node:fs/promises';
import { CliError, cannotOpen, describeError, EXIT } from './errors.js';
import { headerOffset } from '../names.js';

/** The whole file as bytes (beyond readFile's 2 GiB limit, up to the Buffer maximum). */
export async function readFilterBytes(path) {
  let handle;
  try {
    handle = await open(path, 'r');
    const info = await handle.stat();
    if (info.isDirectory()) throw Object.assign(new Error('is a directory'), { code: 'EISDIR' });
    if (!info.isFile()) return await handle.readFile();
    const bytes = Buffer.allocUnsafe(info.size);
    let offset = 0;
    while (offset < bytes.length) {
      const { bytesRead } = await handle.read(bytes, offset, Math.min(bytes.length - offset, 1 << 30), offset);
      if (bytesRead === 0) break; // shrank while we read: the validator reports E_TRUNCATED
      offset += bytesRead;
    }
    return offset === bytes.length ? bytes : bytes.subarray(0, offset);
  } catch (error) {
    throw cannotOpen(path, error);
  } finally {
    await handle?.close().catch(() => {});
  }
}

/** Load and validate a filter file. */
export async function loadFilterFile(BloomFilter, path) {
  const bytes = await readFilterBytes(path);
  let filter;
  try {
    filter = await BloomFilter.from(bytes);
  } catch (error) {
    throw inFile(path, error);
  }
  const tooLarge = beyondExactCounts(bytes);
  if (tooLarge !== null) {
    filter.free();
    throw new CliError(`${path}: ${tooLarge}`, 'E_TOO_LARGE', EXIT.DATA);
  }
  return filter;
}

// The header's counts that the commands compute with (capacity, items, generation) are
// u64 in the format; the library gives a BigInt from 2^53 on. No bloomgate tool writes
// such a file (--capacity and --generation stop below 2^53, and so does adding), so a
// valid file that claims one is refused here, before any arithmetic, not half-handled.
const EXACT_FIELDS = ['capacity', 'count', 'generation'].map((name) => /** @type {[string, number]} */ ([name, headerOffset(name)]));

/**
 * Why a validated filter file's header is past what the commands compute with
 * exactly (`count 18446744073709551615 is past 2^53 - 1, ...`), or null.
 * @param {Uint8Array} bytes a whole .bgf file that passed validation
 */
export function beyondExactCounts(bytes) {
  if (bytes.length < 128) return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (const [name, offset] of EXACT_FIELDS) {
    const value = view.getBigUint64(offset, true);
    if (value > BigInt(Number.MAX_SAFE_INTEGER)) {
      const label = name === 'count' ? 'item count' : name;
      return `its ${label} ${value} is past 2^53 - 1, more than bloomgate's commands compute with`;
    }
  }
  return null;
}

/** Name the file in a library error, keeping its code and exit status. */
export function inFile(path, error) {
  if (error?.name !== 'BloomgateError') return error;
  const { message, code, exitCode } = describeError(error);
  return new CliError(`${path}: ${message}`, code, exitCode);
}
