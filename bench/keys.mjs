// The benchmark's keys, generated identically here and in bench/native_bench.c:
//   member i, 0 <= i < n:   "https://example.com/posts/%07u.html"
//   probe  i, n <= i < 2n:  the same pattern, so probes are never-inserted keys
// Every key is 38 ASCII bytes while i < 10^7 — the length of a typical URL-ish
// key in a block list.

const PREFIX = 'https://example.com/posts/';
const SUFFIX = '.html';
const DIGITS = 7;

/** The key with index i. */
export function keyAt(i) {
  return PREFIX + String(i).padStart(DIGITS, '0') + SUFFIX;
}

/**
 * Keys first .. first+count-1 (all indexes below 10^7), in three forms:
 * `strings` — flat one-byte strings, as strings read from I/O are (plain
 *   concatenation would leave V8 "cons" strings that the first use flattens);
 * `bytes` + `offsets` — packed back to back, offsets has count + 1 entries;
 * `views` — one Uint8Array view into `bytes` per key.
 */
export function makeKeys(first, count) {
  if (first + count > 10 ** DIGITS) throw new RangeError('key indexes must stay below 10^7 (fixed-length keys)');
  const length = PREFIX.length + DIGITS + SUFFIX.length;
  const bytes = Buffer.alloc(length * count);
  const template = Buffer.from(PREFIX + '0'.repeat(DIGITS) + SUFFIX, 'latin1');
  const offsets = new Uint32Array(count + 1);
  for (let i = 0; i < count; i++) {
    const at = i * length;
    template.copy(bytes, at);
    let value = first + i;
    for (let d = PREFIX.length + DIGITS - 1; value > 0; d--, value = Math.floor(value / 10)) bytes[at + d] = 48 + (value % 10);
    offsets[i] = at;
  }
  offsets[count] = length * count;
  const strings = new Array(count);
  const views = new Array(count);
  const packed = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length);
  for (let i = 0; i < count; i++) {
    strings[i] = bytes.latin1Slice(offsets[i], offsets[i + 1]);
    views[i] = packed.subarray(offsets[i], offsets[i + 1]);
  }
  return { strings, bytes: packed, offsets, views };
}

/** Split an array into consecutive batches of `size` (the last may be shorter). */
export function batches(items, size) {
  const out = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * The same keys as packed-key batches of `size`: `{ bytes, offsets }` per batch,
 * bytes a view into the packed buffer and offsets rebased to it.
 */
export function packedBatches({ bytes, offsets }, size) {
  const out = [];
  const count = offsets.length - 1;
  for (let i = 0; i < count; i += size) {
    const end = Math.min(count, i + size);
    const first = offsets[i];
    out.push({ bytes: bytes.subarray(first, offsets[end]), offsets: offsets.slice(i, end + 1).map((x) => x - first) });
  }
  return out;
}
