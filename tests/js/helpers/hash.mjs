// The key hash and bit positions of docs/FORMAT.md, for tests: the hash comes
// from the wasm core (hashWords, what sharded builds use), the positions from
// this independent BigInt reading of the spec, so a test that compares them
// with the core's filters or the golden vectors checks both.
import { hashWords } from '../../../js/wasm/index.js';

const MASK64 = (1n << 64n) - 1n;

function splitSeed(seed) {
  const s = BigInt(seed);
  return [Number(s & 0xffffffffn), Number((s >> 32n) & 0xffffffffn)];
}

/** bg_hash(bytes, seed) -> { h1, h2 } as BigInts. */
export function hashKey(bytes, seed = 0) {
  const words = new Uint32Array(4);
  const [lo, hi] = splitSeed(seed);
  hashWords(bytes, lo, hi, words);
  return {
    h1: (BigInt(words[1]) << 32n) | BigInt(words[0]),
    h2: (BigInt(words[3]) << 32n) | BigInt(words[2]),
  };
}

/** The multiply-shift reduction of x into [0, m). */
function reduce(x, m) {
  if (m <= 0xffffffffn) return ((x >> 32n) * m) >> 32n;
  return (x * m) >> 64n;
}

/** The k positions of a key in m bits: x = h1, y = h2; out[i] = reduce(x, m); x += y; y += i + 1 (mod 2^64). */
export function positions(bytes, seed, m, k) {
  const { h1, h2 } = hashKey(bytes, seed);
  const bm = BigInt(m);
  let x = h1;
  let y = h2;
  const out = [];
  for (let i = 0; i < k; i++) {
    out.push(Number(reduce(x, bm)));
    x = (x + y) & MASK64;
    y = (y + BigInt(i + 1)) & MASK64;
  }
  return out;
}
