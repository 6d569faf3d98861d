/**
 * One verdict in every runtime (issue 28 item 6): every Wycheproof Ed25519 vector, every
 * ed25519-speccheck case and the forgeries of a genuine manifest signature
 * (tests/js/helpers/signature-cases.mjs) through the library's path — the key pinned with
 * keySetFromOptions, parseSignatures, verifyThreshold — with node:crypto and with WebCrypto as
 * the verifier, each giving the expected verdict. Then the reasoning of js/signature.js's header,
 * checked: on every case that passes the canonical checks (key canonical, not small order,
 * torsion-free; S < L; R canonical, not small order) node:crypto, WebCrypto and js/ed25519.js
 * give one verdict; and the refused ones never reach a verifier.
 * tests/browser/signature-verdicts.test.mjs runs the same cases in Chromium, Firefox and WebKit.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

import { base64url } from '../../js/canonical.js';
import { isTorsionFree, isUsablePublicKey as onTheCurve, verifyEd25519 } from '../../js/ed25519.js';
import { verifyWithNode } from '../../js/ed25519-node.js';
import { isCanonicalSignature, isUsablePublicKey } from '../../js/key-check.js';
import {
  decodePublicKey, keySetFromOptions, parseSignatures, registerNodeVerifier, verifierName, verifyThreshold,
} from '../../js/signature.js';
import { SMALL_ORDER_POINTS, fixedKeyPair, signatureCases } from './helpers/signature-cases.mjs';

const CASES = signatureCases();
const hexBytes = (hex) => new Uint8Array(Buffer.from(hex, 'hex'));

/** The library's verdict on one case: 'accepted', 'refused' or 'key refused'. */
async function libraryVerdict({ key, msg, sig }) {
  const keyid = `ed25519:${base64url(hexBytes(key))}`;
  let trusted;
  try {
    trusted = keySetFromOptions([keyid], 1, 'test');
  } catch (error) {
    assert.ok(error instanceof TypeError, String(error));
    return 'key refused';
  }
  try {
    await verifyThreshold(hexBytes(msg), parseSignatures([{ keyid, sig: base64url(hexBytes(sig)) }], 'the record'), trusted, 'the record');
    return 'accepted';
  } catch (error) {
    assert.equal(error.code, 'E_SIGNATURE', String(error));
    return 'refused';
  }
}

async function webcryptoVerify(key, msg, sig) {
  let imported;
  try {
    imported = await crypto.subtle.importKey('raw', key, { name: 'Ed25519' }, false, ['verify']);
  } catch {
    return false;
  }
  return crypto.subtle.verify({ name: 'Ed25519' }, imported, sig, msg);
}

describe('one verdict in every runtime: the published edge cases through verifyThreshold', () => {
  it(`${CASES.length} cases: Wycheproof (${CASES.filter((c) => c.group === 'wycheproof').length}), speccheck (12), a manifest's forgeries; node:crypto, then WebCrypto`, async () => {
    assert.equal(await verifierName(), 'node');
    const expected = CASES.map((c) => c.expect);
    const viaNode = [];
    for (const c of CASES) viaNode.push(await libraryVerdict(c));
    registerNodeVerifier(null); // the WebCrypto path, as in a browser
    try {
      assert.equal(await verifierName(), 'webcrypto');
      const viaWebCrypto = [];
      for (const c of CASES) viaWebCrypto.push(await libraryVerdict(c));
      CASES.forEach((c, i) => {
        assert.equal(viaNode[i], c.expect, `node:crypto, ${c.group} ${c.name}`);
        assert.equal(viaWebCrypto[i], c.expect, `WebCrypto, ${c.group} ${c.name}`);
      });
      assert.deepEqual(viaNode, expected);
    } finally {
      registerNodeVerifier(verifyWithNode);
    }
    assert.ok(expected.filter((v) => v === 'accepted').length >= 89, 'the valid vectors are accepted');
  });

  it('what passes the canonical checks gets one verdict from node:crypto, WebCrypto and js/ed25519.js', async () => {
    let passed = 0;
    for (const c of CASES) {
      const [key, msg, sig] = [hexBytes(c.key), hexBytes(c.msg), hexBytes(c.sig)];
      if (!isUsablePublicKey(key) || !isTorsionFree(key) || !isCanonicalSignature(sig)) continue;
      passed++;
      const verdicts = [verifyWithNode(key, msg, sig), await webcryptoVerify(key, msg, sig), verifyEd25519(key, msg, sig)];
      assert.deepEqual(verdicts, Array(3).fill(c.expect === 'accepted'), `${c.group} ${c.name}: node:crypto, WebCrypto, ed25519.js`);
    }
    assert.ok(passed > 100, `${passed} cases reach a verifier`);
  });

  it('the cheap key check and the curve agree on every case key; torsion only the scalar multiplication sees', () => {
    for (const key of new Set(CASES.map((c) => c.key))) {
      const bytes = hexBytes(key);
      if (onTheCurve(bytes)) assert.equal(isUsablePublicKey(bytes), true, key);
      if (isTorsionFree(bytes)) assert.equal(onTheCurve(bytes), true, key);
    }
  });
});

describe('the canonical checks, one by one', () => {
  const { privateKey, publicHex } = fixedKeyPair('canonical checks');
  const keyid = `ed25519:${base64url(hexBytes(publicHex))}`;
  const message = new TextEncoder().encode('bloomgate-filter-manifest/2\0 a manifest');
  const genuine = new Uint8Array(crypto.sign(null, message, privateKey));
  const L = 2n ** 252n + 27742317777372353535851937790883648493n;
  const withS = (s) => {
    const sig = Uint8Array.from(genuine);
    for (let i = 0; i < 32; i++, s >>= 8n) sig[32 + i] = Number(s & 0xffn);
    return sig;
  };
  const sOf = (sig) => sig.subarray(32).reduceRight((n, byte) => (n << 8n) | BigInt(byte), 0n);
  const trusted = keySetFromOptions([keyid], 1, 'test');
  const judge = (sig) => verifyThreshold(message, parseSignatures([{ keyid, sig: base64url(sig) }], 'the manifest'), trusted, 'the manifest');

  it('S + L of a genuine signature: the same point, refused before any verifier (isCanonicalSignature)', async () => {
    assert.deepEqual(await judge(genuine), [keyid]);
    const forged = withS(sOf(genuine) + L);
    assert.equal(isCanonicalSignature(forged), false);
    await assert.rejects(judge(forged), (error) => error.code === 'E_SIGNATURE' && /do not verify/.test(error.message));
    assert.equal(isCanonicalSignature(withS(L - 1n)), true, 'L - 1 is a scalar');
    assert.equal(isCanonicalSignature(withS(L)), false);
  });

  it('a small-order or non-canonical R is refused; a canonical R of large order is left to the verifier', () => {
    for (const point of SMALL_ORDER_POINTS) {
      const sig = Uint8Array.from(genuine);
      sig.set(hexBytes(point), 0);
      assert.equal(isCanonicalSignature(sig), false, point);
    }
    const yIsP = Uint8Array.from(genuine);
    yIsP.set(hexBytes(`ed${'ff'.repeat(30)}7f`), 0);
    assert.equal(isCanonicalSignature(yIsP), false);
    assert.equal(isCanonicalSignature(genuine), true);
    assert.equal(isCanonicalSignature(genuine.subarray(0, 63)), false);
  });

  it('a key with a small-order component can be pinned (only torsion tells it) but verifies nothing, with E_SIGNATURE saying why', async () => {
    const speccheck = JSON.parse(readFileSync(new URL('../golden/ed25519-speccheck.json', import.meta.url), 'utf8'));
    // speccheck's mixed-order keys: a point of large order plus one of order 8.
    for (const mixed of ['cdb267ce40c5cd45306fa5d2f29731459387dbf9eb933b7bd5aed9a765b88d4d', 'f7badec5b8abeaf699583992219b7b223f1df3fbbea919844e3f7c554a43dd43']) {
      const id = `ed25519:${base64url(hexBytes(mixed))}`;
      assert.notEqual(decodePublicKey(id), null, 'canonical and not of small order');
      assert.equal(isTorsionFree(hexBytes(mixed)), false);
      const pinned = keySetFromOptions([keyid, id], 1, 'openFilter()');
      const cases = speccheck.cases.filter((one) => one.key === mixed);
      assert.ok(cases.length >= 2);
      for (const c of cases) {
        // Every one of these verifies under node:crypto alone (cases 2, 3: OpenSSL's verdict differs from WebKit's).
        const signature = parseSignatures([{ keyid: id, sig: base64url(hexBytes(c.sig)) }], 'the manifest');
        await assert.rejects(verifyThreshold(hexBytes(c.message), signature, pinned, 'the manifest'), (error) => error.code === 'E_SIGNATURE' &&
          error.message.includes(`${id}: a key with a small-order component, no one's real key`), `case ${c.case}`);
      }
      assert.ok(cases.some((c) => verifyWithNode(hexBytes(mixed), hexBytes(c.message), hexBytes(c.sig))), 'OpenSSL alone accepts one of them');
    }
  });

  it('every real key is torsion-free (100 fresh keys), and the check costs each key once', async () => {
    for (let i = 0; i < 100; i++) {
      const { publicKey } = crypto.generateKeyPairSync('ed25519');
      const raw = hexBytes(Buffer.from(publicKey.export({ format: 'jwk' }).x, 'base64url').toString('hex'));
      assert.equal(isTorsionFree(raw), true);
    }
    await judge(genuine);
    const t0 = performance.now();
    for (let i = 0; i < 200; i++) await judge(genuine);
    assert.ok(performance.now() - t0 < 200, 'cached: no scalar multiplication per verification');
  });
});
