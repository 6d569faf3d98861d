// The benchmark's keys, generated identically here and in bench/native_bench.c:
//   member i, 0 <= i < n:   "https://example.com/posts/%07u.html"
//   probe  i, n <= i < 2n:  the same pattern, so probes are never-inserted keys
// Every key is 38 ASCII bytes while i < 10^7 — the length of a typical URL-ish
// key in a block list.

const PREFIX = 'https://example.com/posts/';
const SUFFIX = '.html';

/** The key with index i (a flat one-byte string, as strings read from I/O are). */
export function keyAt(i) {
  return PREFIX + String(i).padStart(7, '0') + SUFFIX;
}

/**
 * Keys first .. first+count-1 as flat strings. Concatenation makes V8 "cons"
 * strings; a round trip through latin1 bytes gives the sequential strings a
 * program gets from the network or the DOM, so no case pays for flattening.
 */
export function makeStringKeys(first, count) {
  const keys = new Array(count);
  for (let i = 0; i < count; i++) keys[i] = Buffer.from(keyAt(first + i), 'latin1').toString('latin1');
  return keys;
}

/** The same keys as Uint8Array views into one packed buffer, plus that buffer and offsets. */
export function makeByteKeys(strings) {
  let total = 0;
  for (const s of strings) total += s.length;
  const bytes = new Uint8Array(total);
  const offsets = new Uint32Array(strings.length + 1);
  const views = new Array(strings.length);
  let at = 0;
  for (let i = 0; i < strings.length; i++) {
    const s = strings[i];
    offsets[i] = at;
    for (let j = 0; j < s.length; j++) bytes[at + j] = s.charCodeAt(j); // ASCII keys
    views[i] = bytes.subarray(at, at + s.length);
    at += s.length;
  }
  offsets[strings.length] = at;
  return { bytes, offsets, views };
}

/** Split an array into consecutive batches of `size` (the last may be shorter). */
export function batches(items, size) {
  const out = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
