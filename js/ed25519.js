// @ts-check
// SHA-512 (FIPS 180-4) and Ed25519 signature verification (RFC 8032 §5.1.7), written here from
// the two specifications, for runtimes whose WebCrypto has no Ed25519 (older Safari, Firefox and
// Chromium, or no crypto.subtle at all). Node and current browsers verify through WebCrypto or
// node:crypto; this file gives the same verdict where they are missing.
//
// Verification only: nothing here touches a secret, so nothing needs to run in constant time.
//
// Which equation: the cofactorless [S]B = R + [k]A, checked by comparing R's bytes with the
// encoding of [S]B - [k]A. RFC 8032 §5.1.7 allows it ("sufficient, but not required"), and it
// is what the WebCrypto and Node implementations check: OpenSSL (node:crypto) and BoringSSL
// (Chromium) compare encodings the same way, so every runtime gives the same verdict. The
// cofactored [8][S]B = [8]R + [8][k]A would accept signatures whose R or A has a small-order
// component that those refuse, and one manifest would read as signed in one browser and as
// forged in another. Like them, this refuses S >= L.
//
// Where it differs from OpenSSL 3.0: a public key whose encoding is not canonical (y >= p, or
// x = 0 with the sign bit set) is refused here, as RFC 8032 §5.1.3 says; OpenSSL reads y modulo p
// and ignores the sign of x = 0. Only small-order points have such encodings that anyone can sign
// for, and small-order keys prove nothing (both verifiers accept R = identity, S = 0 under them
// for one message in 8 or fewer), so the key parser must refuse those keys anyway.
// tests/js/ed25519.test.mjs shows every such input with both verdicts (Chromium 156's WebCrypto
// gave node:crypto's verdict on each of them too).

// ---------------------------------------------------------------------------------------------
// SHA-512, FIPS 180-4 §6.4. Each 64-bit word is a pair of 32-bit halves (hi, lo) held as
// int32: BigInt would allocate on every operation, and a hash may cover megabytes.

/**
 * floor(n^(1/k)) for n > 0, by Newton's iteration from above (exact on integers).
 * @param {bigint} n
 * @param {bigint} k
 */
function integerRoot(n, k) {
  let x = 1n << BigInt(Math.ceil(n.toString(2).length / Number(k)));
  for (;;) {
    const next = ((k - 1n) * x + n / x ** (k - 1n)) / k;
    if (next >= x) return x;
    x = next;
  }
}

/** @param {number} count the first `count` primes */
function primes(count) {
  /** @type {number[]} */
  const found = [];
  for (let n = 2; found.length < count; n++) {
    if (found.every((q) => n % q !== 0)) found.push(n);
  }
  return found;
}

/**
 * The first 64 bits of the fractional parts of the k-th roots of the first `count` primes
 * (FIPS 180-4 §4.2.3 and §5.3.5 define SHA-512's constants so), as [hi, lo, hi, lo, ...].
 * Computed rather than copied, so no digit of them can be mistyped.
 * @param {number} count
 * @param {bigint} k 2 for square roots, 3 for cube roots
 */
function rootFractions(count, k) {
  const words = new Int32Array(2 * count);
  primes(count).forEach((prime, i) => {
    const bits = integerRoot(BigInt(prime) << (64n * k), k); // root(prime) * 2^64
    words[2 * i] = Number(BigInt.asIntN(32, bits >> 32n));
    words[2 * i + 1] = Number(BigInt.asIntN(32, bits));
  });
  return words;
}

// Computed on the first sha512() call, not on import: a page that never verifies a signature
// here (every current browser has WebCrypto's Ed25519) does not pay for them before its first
// answer (the single file evaluates this module with the rest).
let SHA512_K = new Int32Array(0);
let SHA512_H0 = new Int32Array(0);

/**
 * High half of the 64-bit word (hi, lo) rotated right by n bits, 0 < n < 64, n !== 32.
 * @param {number} hi
 * @param {number} lo
 * @param {number} n
 */
function rotrHi(hi, lo, n) {
  return n < 32 ? (hi >>> n) | (lo << (32 - n)) : (lo >>> (n - 32)) | (hi << (64 - n));
}

/**
 * Low half of the same rotation.
 * @param {number} hi
 * @param {number} lo
 * @param {number} n
 */
function rotrLo(hi, lo, n) {
  return n < 32 ? (lo >>> n) | (hi << (32 - n)) : (hi >>> (n - 32)) | (lo << (64 - n));
}

/** The carry out of a sum of unsigned low halves (each below 2^32, at most a few of them). */
const carry = (/** @type {number} */ sum) => (sum / 0x100000000) | 0;

/**
 * One compression (FIPS 180-4 §6.4.2) of the 128-byte block at `offset` into `state`.
 * @param {Int32Array} state the eight hash words as 16 halves
 * @param {DataView} view
 * @param {number} offset
 * @param {Int32Array} w the message schedule, 160 halves (scratch, reused between blocks)
 */
function compress(state, view, offset, w) {
  for (let t = 0; t < 32; t++) w[t] = view.getInt32(offset + 4 * t);
  for (let t = 32; t < 160; t += 2) {
    // W[t] = σ1(W[t-2]) + W[t-7] + σ0(W[t-15]) + W[t-16]
    const xh = w[t - 4], xl = w[t - 3], yh = w[t - 30], yl = w[t - 29];
    const s1h = rotrHi(xh, xl, 19) ^ rotrHi(xh, xl, 61) ^ (xh >>> 6);
    const s1l = rotrLo(xh, xl, 19) ^ rotrLo(xh, xl, 61) ^ ((xl >>> 6) | (xh << 26));
    const s0h = rotrHi(yh, yl, 1) ^ rotrHi(yh, yl, 8) ^ (yh >>> 7);
    const s0l = rotrLo(yh, yl, 1) ^ rotrLo(yh, yl, 8) ^ ((yl >>> 7) | (yh << 25));
    const lo = (s1l >>> 0) + (w[t - 13] >>> 0) + (s0l >>> 0) + (w[t - 31] >>> 0);
    w[t] = s1h + w[t - 14] + s0h + w[t - 32] + carry(lo);
    w[t + 1] = lo;
  }
  let ah = state[0], al = state[1], bh = state[2], bl = state[3];
  let ch = state[4], cl = state[5], dh = state[6], dl = state[7];
  let eh = state[8], el = state[9], fh = state[10], fl = state[11];
  let gh = state[12], gl = state[13], hh = state[14], hl = state[15];
  for (let t = 0; t < 160; t += 2) {
    // T1 = h + Σ1(e) + Ch(e, f, g) + K[t] + W[t]
    const sigma1h = rotrHi(eh, el, 14) ^ rotrHi(eh, el, 18) ^ rotrHi(eh, el, 41);
    const sigma1l = rotrLo(eh, el, 14) ^ rotrLo(eh, el, 18) ^ rotrLo(eh, el, 41);
    const chooseh = (eh & fh) ^ (~eh & gh);
    const choosel = (el & fl) ^ (~el & gl);
    const t1l = (hl >>> 0) + (sigma1l >>> 0) + (choosel >>> 0) + (SHA512_K[t + 1] >>> 0) + (w[t + 1] >>> 0);
    const t1h = (hh + sigma1h + chooseh + SHA512_K[t] + w[t] + carry(t1l)) | 0;
    // T2 = Σ0(a) + Maj(a, b, c)
    const sigma0h = rotrHi(ah, al, 28) ^ rotrHi(ah, al, 34) ^ rotrHi(ah, al, 39);
    const sigma0l = rotrLo(ah, al, 28) ^ rotrLo(ah, al, 34) ^ rotrLo(ah, al, 39);
    const majorityh = (ah & bh) ^ (ah & ch) ^ (bh & ch);
    const majorityl = (al & bl) ^ (al & cl) ^ (bl & cl);
    const t2l = (sigma0l >>> 0) + (majorityl >>> 0);
    const t2h = sigma0h + majorityh + carry(t2l);
    hh = gh; hl = gl; gh = fh; gl = fl; fh = eh; fl = el;
    const newEl = (dl >>> 0) + (t1l >>> 0); // e = d + T1
    eh = (dh + t1h + carry(newEl)) | 0; el = newEl | 0;
    dh = ch; dl = cl; ch = bh; cl = bl; bh = ah; bl = al;
    const newAl = (t1l >>> 0) + (t2l >>> 0); // a = T1 + T2
    ah = (t1h + t2h + carry(newAl)) | 0; al = newAl | 0;
  }
  const words = [ah, al, bh, bl, ch, cl, dh, dl, eh, el, fh, fl, gh, gl, hh, hl];
  for (let i = 0; i < 16; i += 2) {
    const lo = (state[i + 1] >>> 0) + (words[i + 1] >>> 0);
    state[i] = state[i] + words[i] + carry(lo);
    state[i + 1] = lo;
  }
}

/**
 * SHA-512 of `bytes` (FIPS 180-4).
 * @param {Uint8Array} bytes
 * @returns {Uint8Array} the 64-byte digest
 */
export function sha512(bytes) {
  if (!(bytes instanceof Uint8Array)) throw new TypeError('sha512 takes a Uint8Array');
  if (SHA512_H0.length === 0) {
    SHA512_K = rootFractions(80, 3n);
    SHA512_H0 = rootFractions(8, 2n);
  }
  const state = SHA512_H0.slice();
  const w = new Int32Array(160);
  const whole = bytes.length - (bytes.length % 128);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let offset = 0; offset < whole; offset += 128) compress(state, view, offset, w);
  // The rest, a 1 bit, zeros, and the length in bits as 128 bits (§5.1.2): one block or two.
  const tail = new Uint8Array(bytes.length % 128 < 112 ? 128 : 256);
  tail.set(bytes.subarray(whole));
  tail[bytes.length % 128] = 0x80;
  const tailView = new DataView(tail.buffer);
  const bits = bytes.length * 8; // exact below 2^53
  tailView.setUint32(tail.length - 8, Math.floor(bits / 0x100000000));
  tailView.setUint32(tail.length - 4, bits >>> 0);
  for (let offset = 0; offset < tail.length; offset += 128) compress(state, tailView, offset, w);
  const digest = new Uint8Array(64);
  const out = new DataView(digest.buffer);
  state.forEach((half, i) => out.setInt32(4 * i, half));
  return digest;
}

// ---------------------------------------------------------------------------------------------
// Ed25519, RFC 8032 §5.1: the twisted Edwards curve -x^2 + y^2 = 1 + d x^2 y^2 over GF(p).

const P = 2n ** 255n - 19n;
const L = 2n ** 252n + 27742317777372353535851937790883648493n; // the order of B

const LOW_255 = (1n << 255n) - 1n;

/**
 * a mod p, in [0, p). 2^255 = 19 (mod p), so folding the bits above 255 down, times 19,
 * reduces without a division (measured faster than BigInt's %; reducing is most of a verify).
 * @param {bigint} a
 * @returns {bigint}
 */
function mod(a) {
  if (a < 0n) {
    const r = mod(-a);
    return r === 0n ? 0n : P - r;
  }
  while (a > LOW_255) a = (a & LOW_255) + 19n * (a >> 255n);
  return a >= P ? a - P : a;
}

/**
 * base^exponent mod p for 0 <= exponent < 2^256, in 4-bit windows: 252 squarings and at most
 * 78 products, where bit-by-bit square and multiply takes some 250 products for p's exponents.
 * @param {bigint} base
 * @param {bigint} exponent
 */
function power(base, exponent) {
  const table = [1n, mod(base)];
  for (let i = 2; i < 16; i++) table.push(mod(table[i - 1] * table[1]));
  let result = 1n;
  for (let shift = 252n; shift >= 0n; shift -= 4n) {
    for (let i = 0; i < 4; i++) result = mod(result * result);
    result = mod(result * table[Number((exponent >> shift) & 15n)]);
  }
  return result;
}

/** @param {bigint} a nonzero @returns {bigint} 1/a mod p (Fermat) */
const invert = (a) => power(a, P - 2n);

// The curve's constants, derived by curve() on first use rather than on import (five
// exponentiations and a table: tens of ms in a cold engine, on every page's critical path).
let D = 0n;
let D2 = 0n;
let SQRT_M1 = 0n;

/**
 * A point in extended coordinates (RFC 8032 §5.1.4): x = X/Z, y = Y/Z, x*y = T/Z.
 * @typedef {[X: bigint, Y: bigint, Z: bigint, T: bigint]} Point
 */

/** @type {Point} */
const IDENTITY = [0n, 1n, 1n, 0n];

/**
 * x for y and x's sign bit (RFC 8032 §5.1.3 steps 2-4), or null when no point has this y.
 * @param {bigint} y below p
 * @param {number} sign the low bit x must have
 * @returns {bigint | null}
 */
function recoverX(y, sign) {
  const u = mod(y * y - 1n);
  const v = mod(D * y * y + 1n);
  // x = sqrt(u/v), computed as u v^3 (u v^7)^((p-5)/8): one exponentiation, no inversion.
  const v3 = mod(v * v * v);
  let x = mod(u * v3 * power(u * v3 * v3 * v, (P - 5n) / 8n));
  const vx2 = mod(v * x * x);
  if (vx2 === mod(-u)) x = mod(x * SQRT_M1);
  else if (vx2 !== u) return null; // u/v is not a square
  if (x === 0n && sign === 1) return null; // -0 is not a canonical encoding
  return Number(x & 1n) === sign ? x : P - x;
}

/**
 * Little-endian bytes as a number.
 * @param {Uint8Array} bytes
 */
function numberFromLE(bytes) {
  let n = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(bytes[i]);
  return n;
}

/**
 * The point a 32-byte encoding names (RFC 8032 §5.1.3), or null when it names none or is not
 * canonical (y >= p, or x = 0 with the sign bit set).
 * @param {Uint8Array} bytes
 * @returns {Point | null}
 */
function decodePoint(bytes) {
  curve();
  const sign = bytes[31] >> 7;
  const y = numberFromLE(bytes) & LOW_255;
  if (y >= P) return null;
  const x = recoverX(y, sign);
  return x === null ? null : [x, y, 1n, mod(x * y)];
}

/**
 * The canonical 32-byte encoding of a point (RFC 8032 §5.1.2).
 * @param {Point} point
 */
function encodePoint([X, Y, Z]) {
  const zInverse = invert(Z);
  const x = mod(X * zInverse);
  let y = mod(Y * zInverse) | ((x & 1n) << 255n);
  const bytes = new Uint8Array(32);
  for (let i = 0; i < 32; i++, y >>= 8n) bytes[i] = Number(y & 0xffn);
  return bytes;
}

/**
 * p + q (RFC 8032 §5.1.4, the unified addition: also right for p = q and the identity).
 * @param {Point} p
 * @param {Point} q
 * @returns {Point}
 */
function add([X1, Y1, Z1, T1], [X2, Y2, Z2, T2]) {
  // Differences get + P so that every product is of non-negative numbers: mod's fast path.
  const a = mod((Y1 - X1 + P) * (Y2 - X2 + P));
  const b = mod((Y1 + X1) * (Y2 + X2));
  const c = mod(mod(T1 * T2) * D2);
  const d = mod(Z1 * 2n * Z2);
  const e = b - a + P, f = d - c + P, g = d + c, h = b + a;
  return [mod(e * f), mod(g * h), mod(f * g), mod(e * h)];
}

/**
 * 2p (RFC 8032 §5.1.4, the dedicated doubling: four squarings instead of an addition's products).
 * @param {Point} p
 * @returns {Point}
 */
function double([X1, Y1, Z1]) {
  const a = mod(X1 * X1);
  const b = mod(Y1 * Y1);
  const c = mod(2n * Z1 * Z1);
  const h = a + b;
  const e = h - mod((X1 + Y1) * (X1 + Y1)) + P;
  const g = a - b + P, f = c + g;
  return [mod(e * f), mod(g * h), mod(f * g), mod(e * h)];
}

/** @param {Point} p @returns {Point} -p */
const negate = ([X, Y, Z, T]) => [mod(-X), Y, Z, mod(-T)];

/**
 * [0]p, [1]p, ..., [15]p: a 4-bit window's table.
 * @param {Point} p
 */
function multiples(p) {
  const table = [IDENTITY, p];
  for (let i = 2; i < 16; i++) table.push(add(table[i - 1], p));
  return table;
}

/** @type {Point[]} [0]B ... [15]B, empty until curve() */
let BASE_MULTIPLES = [];

/** Derive d, 2d, sqrt(-1) and B's multiples, once (every path to the curve passes decodePoint). */
function curve() {
  if (BASE_MULTIPLES.length !== 0) return;
  D = mod(-121665n * invert(121666n));
  D2 = mod(2n * D);
  SQRT_M1 = power(2n, (P - 1n) / 4n);
  // B (RFC 8032 §5.1): y = 4/5, x positive (even).
  const baseY = mod(4n * invert(5n));
  const baseX = /** @type {bigint} */ (recoverX(baseY, 0));
  BASE_MULTIPLES = multiples([baseX, baseY, 1n, mod(baseX * baseY)]);
}

/**
 * [a]B + [b]q, both scalars below 2^256, in one pass of 4-bit windows that share their
 * doublings (Straus): 252 doublings and at most 128 additions.
 * @param {bigint} a
 * @param {bigint} b
 * @param {Point} q
 */
function baseTimesPlus(a, b, q) {
  const qMultiples = multiples(q);
  let sum = IDENTITY;
  for (let shift = 252n; shift >= 0n; shift -= 4n) {
    if (shift !== 252n) sum = double(double(double(double(sum))));
    const i = Number((a >> shift) & 15n), j = Number((b >> shift) & 15n);
    if (i) sum = add(sum, BASE_MULTIPLES[i]);
    if (j) sum = add(sum, qMultiples[j]);
  }
  return sum;
}

/**
 * Whether `signature` is publicKey's Ed25519 signature of `message` (RFC 8032 §5.1.7, pure
 * Ed25519: no context, no prehash), checked as [S]B = R + [k]A by comparing encodings.
 * Bytes that are not a key or a signature (wrong length, not a point, S >= L) are simply
 * not a valid signature: false, never an exception.
 * @param {Uint8Array} publicKey 32 bytes
 * @param {Uint8Array} message
 * @param {Uint8Array} signature 64 bytes
 * @returns {boolean}
 */
export function verifyEd25519(publicKey, message, signature) {
  for (const [name, value] of [['publicKey', publicKey], ['message', message], ['signature', signature]]) {
    if (!(value instanceof Uint8Array)) throw new TypeError(`verifyEd25519: ${name} must be a Uint8Array`);
  }
  if (publicKey.length !== 32 || signature.length !== 64) return false;
  const r = signature.subarray(0, 32);
  const s = numberFromLE(signature.subarray(32));
  if (s >= L) return false; // S + L would be a second signature for the same message
  const a = decodePoint(publicKey);
  if (a === null) return false;
  const hashed = new Uint8Array(64 + message.length);
  hashed.set(r);
  hashed.set(publicKey, 32);
  hashed.set(message, 64);
  const k = numberFromLE(sha512(hashed)) % L;
  // R = [S]B - [k]A. R is not decoded: its bytes must equal the canonical encoding of a
  // point, which refuses every R that decoding would (not a point, y >= p, -0) and no other.
  const expected = encodePoint(baseTimesPlus(s, k, negate(a)));
  let difference = 0;
  for (let i = 0; i < 32; i++) difference |= expected[i] ^ r[i];
  return difference === 0;
}

/**
 * Whether 32 bytes are the canonical encoding of a point of the prime-order subgroup: [L]A is the
 * identity, so A has no small-order component. A real key is [a]B, always in that subgroup; a
 * key A + T (T of small order) is no one's key, and verifiers disagree on it (WebKit's WebCrypto
 * refuses some signatures under such keys that OpenSSL, BoringSSL and NSS accept), so
 * js/signature.js verifies nothing under it. One scalar multiplication: [L]A by the ladder of
 * baseTimesPlus, B's part zero (about 1 ms warm in Node).
 * @param {Uint8Array} publicKey
 */
export function isTorsionFree(publicKey) {
  if (!(publicKey instanceof Uint8Array) || publicKey.length !== 32) return false;
  const point = decodePoint(publicKey);
  if (point === null) return false;
  const [X, Y, Z] = baseTimesPlus(0n, L, point);
  return X === 0n && Y === Z;
}

/**
 * Whether 32 bytes are a public key someone could hold: a canonical encoding of a point whose
 * order is not small. A small-order key (eight points, anyone can name them) "verifies" forged
 * signatures for some messages under every verifier, so a key set refuses it when it is pinned.
 * @param {Uint8Array} publicKey
 */
export function isUsablePublicKey(publicKey) {
  if (!(publicKey instanceof Uint8Array) || publicKey.length !== 32) return false;
  const point = decodePoint(publicKey);
  if (point === null) return false;
  const [X, Y, Z] = double(double(double(point)));
  return !(X === 0n && Y === Z); // [8]A is the identity exactly for the small-order points
}
