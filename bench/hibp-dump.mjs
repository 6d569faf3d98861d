// Synthetic Have I Been Pwned dumps in the real combined-file format: 40
// uppercase hex digits, ':', COUNT, CRLF, in hash order (as the downloader
// writes them), generated fast: row i's first 40 bits fall in the i-th of n
// equal slots of [0, 2^40) (so the rows come out sorted without a sort), the
// other 120 bits and the count come from a seeded xoshiro128** generator.
// Counts are heavy-tailed like the real ones: mostly 1-10, a few in the
// millions. The same (rows, seed) always gives the same bytes.
//
//   node bench/hibp-dump.mjs ROWS OUT [--seed S] [--lf] [--bom]
//
// --lf ends rows in LF only; --bom starts every 5-hex-prefix block with a
// UTF-8 byte order mark, as current downloader versions do.
import { closeSync, openSync, writeSync } from 'node:fs';

const HEX = new Uint8Array(16);
for (let i = 0; i < 16; i++) HEX[i] = '0123456789ABCDEF'.charCodeAt(i);
const CHUNK_BYTES = 8 << 20;
const MAX_ROW = 3 + 40 + 1 + 10 + 2;

/** xoshiro128** (Blackman, Vigna): four 32-bit words of state, 32-bit outputs. */
function generator(seed) {
  // splitmix32 spreads the seed over the state.
  let s = seed >>> 0;
  const next32 = () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  };
  let a = next32();
  let b = next32();
  let c = next32();
  let d = next32();
  return () => {
    const result = Math.imul(rotl(Math.imul(b, 5), 7), 9) >>> 0;
    const t = b << 9;
    c ^= a;
    d ^= b;
    b ^= c;
    a ^= d;
    c ^= t;
    d = rotl(d, 11);
    return result;
  };
}

function rotl(x, k) {
  return (x << k) | (x >>> (32 - k));
}

/**
 * Write `rows` rows to `path`. Returns { rows, bytes }.
 * @param {{ seed?: number, crlf?: boolean, bom?: boolean, onProgress?: (rows: number) => void }} options
 */
export function writeDump(path, rows, { seed = 1, crlf = true, bom = false, onProgress } = {}) {
  const random = generator(seed);
  const fd = openSync(path, 'w');
  const out = Buffer.allocUnsafe(CHUNK_BYTES);
  // Slot width in units of 2^-40: row i's prefix is i * width + r, 0 <= r < width.
  const width = Math.floor(2 ** 40 / rows);
  if (width < 1) throw new RangeError('at most 2^40 rows');
  let fill = 0;
  let bytes = 0;
  let lastPrefix = -1;
  try {
    for (let i = 0; i < rows; i++) {
      if (fill + MAX_ROW > CHUNK_BYTES) {
        writeAll(fd, out, fill);
        bytes += fill;
        fill = 0;
        onProgress?.(i);
      }
      // 40 bits: high 8 and low 32, so no value ever exceeds 2^53.
      const top = i * width + Math.floor((random() / 2 ** 32) * width);
      const high = Math.floor(top / 2 ** 32);
      const low = top - high * 2 ** 32;
      if (bom) {
        const prefix = Math.floor(top / 2 ** 20); // the first 5 hex digits
        if (prefix !== lastPrefix) {
          out[fill++] = 0xef;
          out[fill++] = 0xbb;
          out[fill++] = 0xbf;
          lastPrefix = prefix;
        }
      }
      out[fill++] = HEX[(high >>> 4) & 15];
      out[fill++] = HEX[high & 15];
      for (let shift = 28; shift >= 0; shift -= 4) out[fill++] = HEX[(low >>> shift) & 15];
      // The other 120 bits: 30 digits from four 32-bit words (8 + 8 + 8 + 6 digits).
      for (let w = 0; w < 4; w++) {
        const word = random();
        const digits = w === 3 ? 6 : 8;
        for (let j = 0; j < digits; j++) out[fill++] = HEX[(word >>> (4 * j)) & 15];
      }
      out[fill++] = 0x3a; // ':'
      // COUNT: 2^(23 u^6), at least 1: half the rows are 1, 90% below ~5,000, the largest ~8 million.
      const u = random() / 2 ** 32;
      let count = Math.max(1, Math.floor(2 ** (23 * u * u * u * u * u * u)));
      const start = fill;
      do {
        out[fill++] = 0x30 + (count % 10);
        count = Math.floor(count / 10);
      } while (count > 0);
      out.subarray(start, fill).reverse();
      if (crlf) out[fill++] = 0x0d;
      out[fill++] = 0x0a;
    }
    writeAll(fd, out, fill);
    bytes += fill;
  } finally {
    closeSync(fd);
  }
  return { rows, bytes };
}

function writeAll(fd, buffer, length) {
  let done = 0;
  while (done < length) done += writeSync(fd, buffer, done, length - done);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const flag = (name) => args.includes(name);
  const value = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
  const positional = args.filter((a, i) => !a.startsWith('--') && !(i > 0 && args[i - 1] === '--seed'));
  if (positional.length !== 2) {
    process.stderr.write('usage: node bench/hibp-dump.mjs ROWS OUT [--seed S] [--lf] [--bom]\n');
    process.exit(64);
  }
  const rows = Number(positional[0].replace(/_/g, ''));
  const started = process.hrtime.bigint();
  const { bytes } = writeDump(positional[1], rows, { seed: Number(value('--seed', 1)), crlf: !flag('--lf'), bom: flag('--bom') });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  process.stderr.write(`wrote ${positional[1]}: ${rows} rows, ${bytes} bytes in ${seconds.toFixed(1)} s\n`);
}
