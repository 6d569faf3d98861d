/**
 * js/signature.js: pinned keys and threshold signatures. Keys are checked
 * before anything is verified (malformed, non-canonical and small-order keys
 * refused); a threshold counts distinct trusted keys whose signatures verify
 * (a key signing twice counts once, untrusted keys are ignored, a bad
 * signature never counts); and the runtime's Ed25519 and the verifier written
 * here give the same verdicts.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync, sign } from 'node:crypto';
import { describe, it } from 'node:test';

import { base64url, fromBase64url } from '../../js/canonical.js';
import { isUsablePublicKey as onTheCurve, verifyEd25519 } from '../../js/ed25519.js';
import { isUsablePublicKey } from '../../js/key-check.js';
import { decodePublicKey, keySetFromOptions, parseSignatures, verifierName, verifyThreshold } from '../../js/signature.js';

function keyPair() {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const id = `ed25519:${publicKey.export({ format: 'jwk' }).x}`;
  return { id, sign: (message) => ({ keyid: id, sig: base64url(sign(null, message, privateKey)) }) };
}

const message = new TextEncoder().encode('bloomgate-filter-manifest/2\0 canonical bytes');

describe('public keys and key sets', () => {
  it('accepts what keygen prints and refuses everything else', () => {
    const { id } = keyPair();
    assert.equal(decodePublicKey(id)?.id, id);
    const small = Buffer.from('26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05', 'hex'); // order 8
    const identity = Buffer.alloc(32);
    identity[0] = 1;
    const notCanonical = Buffer.alloc(32, 0xff);
    notCanonical[31] = 0x7f; // y = 2^255 - 1 >= p
    for (const bad of [
      `ed25519:${small.toString('base64url')}`, `ed25519:${identity.toString('base64url')}`, `ed25519:${notCanonical.toString('base64url')}`,
      id.slice(0, -1), `${id}A`, id.replace('ed25519:', 'ed448:'), `ed25519:${Buffer.alloc(31, 7).toString('base64url')}`, 42, null,
    ]) {
      assert.equal(decodePublicKey(bad), null, String(bad));
    }
  });

  it('the cheap key check agrees with the curve: never accepts a small-order key, never refuses a point of large order', () => {
    for (let i = 0; i < 2000; i++) {
      const bytes = Uint8Array.from({ length: 32 }, () => Math.floor(Math.random() * 256));
      if (onTheCurve(bytes)) assert.equal(isUsablePublicKey(bytes), true, Buffer.from(bytes).toString('hex'));
    }
    for (const order8 of ['26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05', 'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a']) {
      for (const sign of [0, 0x80]) {
        const bytes = Buffer.from(order8, 'hex');
        bytes[31] = (bytes[31] & 0x7f) | sign;
        assert.equal(isUsablePublicKey(bytes), false);
        assert.equal(onTheCurve(bytes), false);
      }
    }
  });

  it('reads keys and threshold options with clear argument errors', () => {
    const [a, b] = [keyPair(), keyPair()];
    assert.equal(keySetFromOptions(undefined, undefined, 'f()'), null);
    assert.equal(keySetFromOptions([a.id, b.id], 2, 'f()').threshold, 2);
    assert.equal(keySetFromOptions([a.id], undefined, 'f()').threshold, 1);
    assert.throws(() => keySetFromOptions([], undefined, 'f()'), TypeError);
    assert.throws(() => keySetFromOptions('ed25519:x', undefined, 'f()'), TypeError);
    assert.throws(() => keySetFromOptions([a.id, a.id], undefined, 'f()'), /listed twice/);
    assert.throws(() => keySetFromOptions([a.id], 2, 'f()'), RangeError);
    assert.throws(() => keySetFromOptions([a.id], 0, 'f()'), RangeError);
    assert.throws(() => keySetFromOptions(undefined, 1, 'f()'), /threshold needs keys/);
    assert.throws(() => keySetFromOptions(['ed25519:nope'], undefined, 'openFilter()'), /openFilter\(\): keys\[0\]/);
  });

  it('base64url has one spelling: padding, other alphabets and stray bits are refused', () => {
    const bytes = Uint8Array.from([251, 255, 1]);
    assert.equal(base64url(bytes), '-_8B');
    assert.deepEqual(fromBase64url('-_8B'), bytes);
    for (const bad of ['+/8B', '-_8B=', 'a', '-_8B.', ' -_8B']) assert.equal(fromBase64url(bad), null, bad);
    assert.equal(fromBase64url('AB'), null, 'non-zero trailing bits');
  });
});

describe('threshold verification', () => {
  const [a, b, c, stranger] = [keyPair(), keyPair(), keyPair(), keyPair()];
  const twoOfThree = keySetFromOptions([a.id, b.id, c.id], 2, 'test');
  const check = (signatures) => verifyThreshold(message, parseSignatures(signatures, 'the record'), twoOfThree, 'the record');

  it('needs threshold distinct trusted keys', async () => {
    assert.deepEqual((await check([a.sign(message), c.sign(message)])).sort(), [a.id, c.id].sort());
    await assert.rejects(check([a.sign(message)]), (error) => error.code === 'E_SIGNATURE' && /signed by 1; 2 of the 3/.test(error.message));
    await assert.rejects(check([a.sign(message), a.sign(message)]), (error) => error.code === 'E_SIGNATURE', 'one key twice counts once');
    await assert.rejects(check([]), (error) => /is unsigned/.test(error.message));
    await assert.rejects(check([stranger.sign(message), stranger.sign(message)]), (error) => /not trusted here/.test(error.message));
    assert.equal((await check([stranger.sign(message), a.sign(message), b.sign(message)])).length, 2, 'strangers are ignored');
  });

  it('a signature over other bytes, or a flipped bit, never counts', async () => {
    const other = a.sign(new TextEncoder().encode('something else'));
    await assert.rejects(check([{ keyid: a.id, sig: other.sig }, b.sign(message)]), /do not verify/);
    const good = b.sign(message);
    const flipped = fromBase64url(good.sig);
    flipped[10] ^= 1;
    await assert.rejects(check([a.sign(message), { keyid: b.id, sig: base64url(flipped) }]), /do not verify/);
  });

  it('malformed signatures are E_SIGNATURE, not crashes', () => {
    for (const bad of [{}, 'x', [null], [{ keyid: a.id, sig: 'AAAA' }], [{ keyid: 'ed25519:x', sig: a.sign(message).sig }], Array(40).fill(a.sign(message))]) {
      assert.throws(() => parseSignatures(bad, 'the record'), (error) => error.code === 'E_SIGNATURE', JSON.stringify(bad).slice(0, 60));
    }
  });

  it('node:crypto, WebCrypto and the verifier written here agree', async () => {
    const { verifyWithNode } = await import('../../js/ed25519-node.js');
    const webcrypto = async (raw, bytes, sig) => {
      const key = await crypto.subtle.importKey('raw', raw, { name: 'Ed25519' }, false, ['verify']);
      return crypto.subtle.verify({ name: 'Ed25519' }, key, sig, bytes);
    };
    for (let i = 0; i < 20; i++) {
      const pair = keyPair();
      const raw = /** @type {Uint8Array} */ (decodePublicKey(pair.id)).raw;
      const sig = /** @type {Uint8Array} */ (fromBase64url(pair.sign(message).sig));
      if (i % 2) sig[i] ^= 1;
      const expected = i % 2 === 0;
      assert.equal(verifyWithNode(raw, message, sig), expected);
      assert.equal(await webcrypto(raw, message, sig), expected);
      assert.equal(verifyEd25519(raw, message, sig), expected);
    }
  });

  it("the runtime's Ed25519 and the one written here agree", async () => {
    assert.equal(await verifierName(), 'node', 'Node verifies with node:crypto');
    for (let i = 0; i < 20; i++) {
      const pair = keyPair();
      const { sig } = pair.sign(message);
      const raw = /** @type {Uint8Array} */ (decodePublicKey(pair.id)).raw;
      const bytes = /** @type {Uint8Array} */ (fromBase64url(sig));
      assert.equal(verifyEd25519(raw, message, bytes), true);
      bytes[i] ^= 0x80;
      assert.equal(verifyEd25519(raw, message, bytes), false);
    }
  });
});
