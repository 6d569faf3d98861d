/**
 * signature-cases.mjs — the signature edge cases that tests/js/signature-verdicts.test.mjs runs
 * in Node and tests/browser/signature-verdicts.test.mjs runs in Chromium, Firefox and WebKit,
 * through the library's own path (the key pinned with keySetFromOptions, the signature read by
 * parseSignatures, judged by verifyThreshold), each with the verdict every runtime must give:
 *
 *   'accepted'     verifyThreshold resolves
 *   'refused'      parseSignatures or verifyThreshold throws E_SIGNATURE
 *   'key refused'  pinning the key is refused (a TypeError from keySetFromOptions: not
 *                  canonical, or of small order; a key with a small-order component is pinned
 *                  but verifies nothing, so its signatures are 'refused')
 *
 * The cases (plain JSON: hex strings, so a page can take them):
 *   - every Wycheproof Ed25519 vector (tests/golden/ed25519-wycheproof.json): "valid" accepted,
 *     "invalid" refused (the set has no "acceptable" ones);
 *   - every ed25519-speccheck case ("Taming the many EdDSAs", tests/golden/ed25519-speccheck.json);
 *   - a genuine signature of a manifest's canonical bytes under a fixed key, and its forgeries:
 *     S + jL for every j that fits in 32 bytes, S with bit 253, 254 or 255 set, R replaced by a
 *     non-canonical or a small-order encoding.
 */
import crypto from 'node:crypto';
import { readFileSync } from 'node:fs';

const L = 2n ** 252n + 27742317777372353535851937790883648493n;
const P = 2n ** 255n - 19n;

const golden = (name) => JSON.parse(readFileSync(new URL(`../../golden/${name}`, import.meta.url), 'utf8'));
const le32 = (n) => Buffer.from(n.toString(16).padStart(64, '0'), 'hex').reverse().toString('hex');
const fromLe = (hex) => BigInt(`0x${Buffer.from(hex, 'hex').reverse().toString('hex') || '0'}`);

/** The eight points of small order, canonically encoded (RFC 8032's curve). */
export const SMALL_ORDER_POINTS = [
  '0100000000000000000000000000000000000000000000000000000000000000',
  'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
  '0000000000000000000000000000000000000000000000000000000000000000',
  '0000000000000000000000000000000000000000000000000000000000000080',
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05',
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85',
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a',
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa',
];

/** Non-canonical encodings of points: y >= p (read mod p they are points), or x = 0 with the sign bit. */
export const NON_CANONICAL_POINTS = {
  'y = p (order 4)': le32(P),
  'y = p + 1 (the identity)': le32(P + 1n),
  'y = p + 1, sign bit': le32(P + 1n + 2n ** 255n),
  'identity, x = 0 with the sign bit (negative zero)': le32(1n + 2n ** 255n),
  '(0, -1), x = 0 with the sign bit (negative zero)': le32(P - 1n + 2n ** 255n),
  'y = 2^255 - 1': le32(2n ** 255n - 1n),
};

/**
 * The speccheck verdicts through the library: small-order (0, 1) and non-canonical (10, 11) keys
 * are never pinned; mixed-order keys (2-5, and 8-9, whose key f7badec5... is mixed too) are
 * pinned but verify nothing; S >= L (6, 7) is refused. (The manifest's forgeries below put
 * non-canonical R under a torsion-free key.)
 */
const SPECCHECK_EXPECTED = ['key refused', 'key refused', 'refused', 'refused', 'refused', 'refused',
  'refused', 'refused', 'refused', 'refused', 'key refused', 'key refused'];

/** A fixed Ed25519 key pair (RFC 8032 secret from a hash of a label), as node:crypto objects. */
export function fixedKeyPair(label = 'bloomgate signature-verdicts') {
  const secret = crypto.createHash('sha256').update(label).digest();
  const privateKey = crypto.createPrivateKey({
    key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), secret]), format: 'der', type: 'pkcs8',
  });
  const publicHex = Buffer.from(crypto.createPublicKey(privateKey).export({ format: 'jwk' }).x, 'base64url').toString('hex');
  return { privateKey, publicHex };
}

/** Bytes shaped like a filter manifest's canonical bytes (js/update/manifest.js): the domain, then fields. */
export const MANIFEST_BYTES = Buffer.concat([
  Buffer.from('bloomgate-filter-manifest/2\0'), crypto.createHash('sha256').update('signature-verdicts manifest').digest(),
  Buffer.alloc(60, 7),
]).toString('hex');

/** The genuine signature and its forgeries (S + jL, high bits of S, R replaced). */
function manifestCases() {
  const { privateKey, publicHex } = fixedKeyPair();
  const sig = crypto.sign(null, Buffer.from(MANIFEST_BYTES, 'hex'), privateKey).toString('hex');
  const [r, s] = [sig.slice(0, 64), fromLe(sig.slice(64))];
  const one = (name, signature, expect) => ({ group: 'manifest', name, key: publicHex, msg: MANIFEST_BYTES, sig: signature, expect });
  const cases = [one('the genuine signature', sig, 'accepted')];
  for (let j = 1n; s + j * L < 2n ** 256n; j++) cases.push(one(`S + ${j}L (the same point: malleability)`, r + le32(s + j * L), 'refused'));
  for (const bit of [253n, 254n, 255n]) cases.push(one(`S with bit ${bit} set`, r + le32(s | (1n << bit)), 'refused'));
  for (const [name, point] of Object.entries(NON_CANONICAL_POINTS)) {
    cases.push(one(`R = ${name}, S kept`, point + le32(s), 'refused'));
    cases.push(one(`R = ${name}, S = 0`, point + le32(0n), 'refused'));
  }
  SMALL_ORDER_POINTS.forEach((point, i) => {
    cases.push(one(`R = small-order point ${i}, S kept`, point + le32(s), 'refused'));
    cases.push(one(`R = small-order point ${i}, S = 0`, point + le32(0n), 'refused'));
  });
  return cases;
}

/** Every case, in a fixed order: Wycheproof, speccheck, the manifest's. */
export function signatureCases() {
  const wycheproof = golden('ed25519-wycheproof.json');
  const cases = [];
  for (const group of wycheproof.groups) {
    for (const t of group.tests) {
      if (t.result !== 'valid' && t.result !== 'invalid') throw new Error(`tcId ${t.tcId}: result ${t.result} (an "acceptable" needs a verdict chosen here)`);
      cases.push({
        group: 'wycheproof', name: `tcId ${t.tcId} ${t.comment} [${t.flags.join(', ')}]`,
        key: group.publicKey, msg: t.msg, sig: t.sig, expect: t.result === 'valid' ? 'accepted' : 'refused',
      });
    }
  }
  golden('ed25519-speccheck.json').cases.forEach((c, i) => {
    cases.push({ group: 'speccheck', name: `case ${c.case}: ${c.name}`, key: c.key, msg: c.message, sig: c.sig, expect: SPECCHECK_EXPECTED[i] });
  });
  return [...cases, ...manifestCases()];
}
