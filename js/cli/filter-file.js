// @ts-check
// Reading .bgf files for inspect, query and merge. Read failures exit 66;
// a file the library rejects exits 65 with the file named in the message.
import { open } from 'node:fs/promises';
import { CliError, cannotOpen, describeError } from './errors.js';

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
  try {
    return await BloomFilter.from(bytes);
  } catch (error) {
    throw inFile(path, error);
  }
}

/** Name the file in a library error, keeping its code and exit status. */
export function inFile(path, error) {
  if (error?.name !== 'BloomgateError') return error;
  const { message, code, exitCode } = describeError(error);
  return new CliError(`${path}: ${message}`, code, exitCode);
}
