// js/ed25519.js, the SHA-512 and Ed25519 verifier written here for runtimes without WebCrypto
// Ed25519: against the published vectors (FIPS 180 examples, RFC 8032 §7.1), against node:crypto
// (OpenSSL) on random keys and messages, and on the inputs where verifiers are known to differ
// (small-order and non-canonical points, S >= L, the ed25519-speccheck cases). Every verdict is
// compared with node:crypto's; the one place they differ is spelled out in its test.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { readFileSync } from 'node:fs';

import { sha512, verifyEd25519 } from '../../js/ed25519.js';

const hex = (bytes) => Buffer.from(bytes).toString('hex');
const bytes = (text) => new Uint8Array(Buffer.from(text.replace(/\s+/g, ''), 'hex'));

/** node:crypto's verdict on a raw 32-byte key: false when OpenSSL refuses the key itself. */
function nodeVerify(publicKey, message, signature) {
  let key;
  try {
    key = crypto.createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publicKey).toString('base64url') }, format: 'jwk' });
  } catch {
    return false;
  }
  return crypto.verify(null, message, key, signature);
}

/** Both verdicts, and a line that names the input when they are not what the test expects. */
function verdicts(publicKey, message, signature) {
  const ours = verifyEd25519(publicKey, message, signature);
  const node = nodeVerify(publicKey, message, signature);
  return { ours, node, input: `key ${hex(publicKey)} message ${hex(message)} signature ${hex(signature)}` };
}

function flipBit(original, bit) {
  const copy = Uint8Array.from(original);
  copy[bit >> 3] ^= 1 << (bit & 7);
  return copy;
}

const P = 2n ** 255n - 19n;
const L = 2n ** 252n + 27742317777372353535851937790883648493n;
const le32 = (n) => bytes(n.toString(16).padStart(64, '0')).reverse();

describe('sha512', () => {
  // FIPS 180-2 Appendix C and the NIST example values for SHA-512.
  test('the FIPS 180 examples', () => {
    const cases = [
      ['abc', 'ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f'],
      ['', 'cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e'],
      ['abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu',
        '8e959b75dae313da8cf4f72814fc143f8f7779c6eb9f7fa17299aeadb6889018501d289e4900f7e4331b99dec4b5433ac7d329eeb6dd26545e96e55b874be909'],
      ['a'.repeat(1_000_000), 'e718483d0ce769644e2e42c7bc15b4638e1f98b13b2044285632a803afa973ebde0ff244877ea60a4cb0432ce577c31beb009c5c2c49aa2e4eadb217ad8cc09b'],
    ];
    assert.equal(cases[2][0].length * 8, 896);
    for (const [text, digest] of cases) {
      assert.equal(hex(sha512(new TextEncoder().encode(text))), digest, `${text.length} bytes`);
    }
  });

  test('agrees with node:crypto on every length from 0 to 300, and on views into a larger buffer', () => {
    for (let length = 0; length <= 300; length++) {
      const input = crypto.randomBytes(length);
      assert.equal(hex(sha512(input)), crypto.createHash('sha512').update(input).digest('hex'), `length ${length}: ${hex(input)}`);
    }
    // A view that starts mid-buffer, across the one-block and two-block padding boundaries.
    const backing = crypto.randomBytes(400);
    for (const [start, length] of [[1, 111], [3, 112], [5, 127], [7, 128], [9, 239], [11, 240], [13, 385]]) {
      const view = new Uint8Array(backing.buffer, backing.byteOffset + start, length);
      assert.equal(hex(sha512(view)), crypto.createHash('sha512').update(view).digest('hex'), `view at ${start}, ${length} bytes`);
    }
  });

  test('takes only a Uint8Array', () => {
    for (const value of ['abc', new ArrayBuffer(3), [1, 2, 3], null, undefined, new Uint16Array(2)]) {
      assert.throws(() => sha512(/** @type {any} */ (value)), TypeError);
    }
  });
});

// RFC 8032 §7.1, the Ed25519 test vectors (secret key, public key, message, signature).
const RFC_8032 = {
  'TEST 1': {
    secret: '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60',
    publicKey: 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a',
    message: '',
    signature: 'e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b',
  },
  'TEST 2': {
    secret: '4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb',
    publicKey: '3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c',
    message: '72',
    signature: '92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00',
  },
  'TEST 3': {
    secret: 'c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7',
    publicKey: 'fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025',
    message: 'af82',
    signature: '6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a',
  },
  'TEST 1024': {
    secret: 'f5e5767cf153319517630f226876b86c8160cc583bc013744c6bf255f5cc0ee5',
    publicKey: '278117fc144c72340f67d0f2316e8386ceffbf2b2428c9c51fef7c597f1d426e',
    message: `
      08b8b2b733424243760fe426a4b54908632110a66c2f6591eabd3345e3e4eb98fa6e264bf09efe12ee50f8f54e9f77b1e355
      f6c50544e23fb1433ddf73be84d879de7c0046dc4996d9e773f4bc9efe5738829adb26c81b37c93a1b270b20329d658675fc
      6ea534e0810a4432826bf58c941efb65d57a338bbd2e26640f89ffbc1a858efcb8550ee3a5e1998bd177e93a7363c344fe6b
      199ee5d02e82d522c4feba15452f80288a821a579116ec6dad2b3b310da903401aa62100ab5d1a36553e06203b33890cc9b8
      32f79ef80560ccb9a39ce767967ed628c6ad573cb116dbefefd75499da96bd68a8a97b928a8bbc103b6621fcde2beca1231d
      206be6cd9ec7aff6f6c94fcd7204ed3455c68c83f4a41da4af2b74ef5c53f1d8ac70bdcb7ed185ce81bd84359d44254d9562
      9e9855a94a7c1958d1f8ada5d0532ed8a5aa3fb2d17ba70eb6248e594e1a2297acbbb39d502f1a8c6eb6f1ce22b3de1a1f40
      cc24554119a831a9aad6079cad88425de6bde1a9187ebb6092cf67bf2b13fd65f27088d78b7e883c8759d2c4f5c65adb7553
      878ad575f9fad878e80a0c9ba63bcbcc2732e69485bbc9c90bfbd62481d9089beccf80cfe2df16a2cf65bd92dd597b0707e0
      917af48bbb75fed413d238f5555a7a569d80c3414a8d0859dc65a46128bab27af87a71314f318c782b23ebfe808b82b0ce26
      401d2e22f04d83d1255dc51addd3b75a2b1ae0784504df543af8969be3ea7082ff7fc9888c144da2af58429ec96031dbcad3
      dad9af0dcbaaaf268cb8fcffead94f3c7ca495e056a9b47acdb751fb73e666c6c655ade8297297d07ad1ba5e43f1bca32301
      651339e22904cc8c42f58c30c04aafdb038dda0847dd988dcda6f3bfd15c4b4c4525004aa06eeff8ca61783aacec57fb3d1f
      92b0fe2fd1a85f6724517b65e614ad6808d6f6ee34dff7310fdc82aebfd904b01e1dc54b2927094b2db68d6f903b68401ade
      bf5a7e08d78ff4ef5d63653a65040cf9bfd4aca7984a74d37145986780fc0b16ac451649de6188a7dbdf191f64b5fc5e2ab4
      7b57f7f7276cd419c17a3ca8e1b939ae49e488acba6b965610b5480109c8b17b80e1b7b750dfc7598d5d5011fd2dcc5600a3
      2ef5b52a1ecc820e308aa342721aac0943bf6686b64b2579376504ccc493d97e6aed3fb0f9cd71a43dd497f01f17c0e2cb37
      97aa2a2f256656168e6c496afc5fb93246f6b1116398a346f1a641f3b041e989f7914f90cc2c7fff357876e506b50d334ba7
      7c225bc307ba537152f3f1610e4eafe595f6d9d90d11faa933a15ef1369546868a7f3a45a96768d40fd9d03412c091c6315c
      f4fde7cb68606937380db2eaaa707b4c4185c32eddcdd306705e4dc1ffc872eeee475a64dfac86aba41c0618983f8741c5ef
      68d3a101e8a3b8cac60c905c15fc910840b94c00a0b9d0`,
    signature: '0aab4c900501b3e24d7cdf4663326a3a87df5e4843b2cbdb67cbf6e460fec350aa5371b1508f9f4528ecea23c436d94b5e8fcd4f681e30a6ac00a9704a188a03',
  },
  'TEST SHA(abc)': {
    secret: '833fe62409237b9d62ec77587520911e9a759cec1d19755b7da901b96dca3d42',
    publicKey: 'ec172b93ad5e563bf4932c70e1245034c35467ef2efd4d64ebf819683467e2bf',
    // The message is SHA-512("abc") itself.
    message: 'ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f',
    signature: 'dc2a4459e7369633a52b1bf277839a00201009a3efbf3ecb69bea2186c26b58909351fc9ac90b3ecfdfbc7c66431e0303dca179c138ac17ad9bef1177331a704',
  },
};

/** node:crypto's private key for a 32-byte RFC 8032 secret key (PKCS #8, RFC 8410). */
const nodePrivateKey = (secret) => crypto.createPrivateKey({
  key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), Buffer.from(secret, 'hex')]),
  format: 'der',
  type: 'pkcs8',
});

describe('verifyEd25519', () => {
  test('the RFC 8032 §7.1 test vectors verify', () => {
    for (const [name, vector] of Object.entries(RFC_8032)) {
      const [publicKey, message, signature] = [bytes(vector.publicKey), bytes(vector.message), bytes(vector.signature)];
      // The transcription is right: OpenSSL derives the same public key from the secret key and,
      // Ed25519 being deterministic, the same signature.
      const privateKey = nodePrivateKey(vector.secret);
      assert.equal(Buffer.from(crypto.createPublicKey(privateKey).export({ format: 'jwk' }).x, 'base64url').toString('hex'), vector.publicKey, name);
      assert.equal(hex(crypto.sign(null, message, privateKey)), vector.signature, name);
      assert.equal(verifyEd25519(publicKey, message, signature), true, name);
    }
    assert.equal(bytes(RFC_8032['TEST 1024'].message).length, 1023);
    assert.equal(RFC_8032['TEST SHA(abc)'].message, hex(sha512(new TextEncoder().encode('abc'))));
  });

  test('every single-bit change of TEST 3\'s signature, key or message is refused, by both', () => {
    const vector = RFC_8032['TEST 3'];
    const [publicKey, message, signature] = [bytes(vector.publicKey), bytes(vector.message), bytes(vector.signature)];
    const changed = [
      ...Array.from({ length: 512 }, (_, bit) => [publicKey, message, flipBit(signature, bit)]),
      ...Array.from({ length: 256 }, (_, bit) => [flipBit(publicKey, bit), message, signature]),
      ...Array.from({ length: 16 }, (_, bit) => [publicKey, flipBit(message, bit), signature]),
    ];
    for (const [key, text, signed] of changed) {
      const { ours, node, input } = verdicts(key, text, signed);
      assert.equal(ours, false, input);
      assert.equal(node, false, input);
    }
  });

  test('agrees with node:crypto on 300 random keys and messages; a one-bit change to any part is refused', () => {
    for (let i = 0; i < 300; i++) {
      const { publicKey: keyObject, privateKey } = crypto.generateKeyPairSync('ed25519');
      const publicKey = new Uint8Array(Buffer.from(keyObject.export({ format: 'jwk' }).x, 'base64url'));
      const message = crypto.randomBytes(1 + crypto.randomInt(300));
      const signature = new Uint8Array(crypto.sign(null, message, privateKey));
      const genuine = verdicts(publicKey, message, signature);
      assert.equal(genuine.ours, true, genuine.input);
      assert.equal(genuine.node, true, genuine.input);
      // One random bit of the key, the signature or the message, in turn (every bit of each is
      // the test above: a verify takes about a millisecond, and the run must stay short).
      const [key, text, signed] = [
        () => [flipBit(publicKey, crypto.randomInt(256)), message, signature],
        () => [publicKey, message, flipBit(signature, crypto.randomInt(512))],
        () => [publicKey, flipBit(message, crypto.randomInt(message.length * 8)), signature],
      ][i % 3]();
      const changed = verdicts(key, text, signed);
      assert.equal(changed.ours, false, changed.input);
      assert.equal(changed.node, false, changed.input);
    }
  });

  test('S + L, S = L and larger S are refused (the same point, so only the range check stops them)', () => {
    const vector = RFC_8032['TEST 2'];
    const [publicKey, message, signature] = [bytes(vector.publicKey), bytes(vector.message), bytes(vector.signature)];
    const s = BigInt('0x' + hex(signature.slice(32).reverse()));
    for (const scalar of [s + L, L, 2n ** 256n - 1n]) {
      const changed = Uint8Array.from(signature);
      changed.set(le32(scalar), 32);
      const { ours, node, input } = verdicts(publicKey, message, changed);
      assert.equal(ours, false, input);
      assert.equal(node, false, input);
    }
  });

  test('a key or R that is no point of the curve is refused', () => {
    // The smallest y for which (y^2 - 1) / (d y^2 + 1) has no square root mod p: no x, no point.
    const power = (base, exponent) => {
      let result = 1n;
      for (let b = base % P, e = exponent; e > 0n; e >>= 1n, b = b * b % P) if (e & 1n) result = result * b % P;
      return result;
    };
    const d = (P - 121665n) * power(121666n, P - 2n) % P;
    let y = 2n;
    while (power((y * y - 1n) * power(d * y * y + 1n, P - 2n) % P, (P - 1n) / 2n) !== P - 1n) y++;
    const vector = RFC_8032['TEST 2'];
    const [publicKey, message, signature] = [bytes(vector.publicKey), bytes(vector.message), bytes(vector.signature)];
    const withR = Uint8Array.from(signature);
    withR.set(le32(y), 0);
    for (const [key, signed] of [[le32(y), signature], [publicKey, withR]]) {
      const { ours, node, input } = verdicts(key, message, signed);
      assert.equal(ours, false, input);
      assert.equal(node, false, input);
    }
  });

  // The points of order 1, 2, 4 and 8 (RFC 8032 §5.1: the curve's group is 8 × L), canonically
  // encoded. Under such a key A, [k]A is the identity whenever k is a multiple of A's order, so
  // the signature R = identity, S = 0 satisfies [S]B = R + [k]A for one message in (order), which
  // anyone can find: a small-order key proves nothing. Both verifiers accept those (the equation
  // holds); the key parser, not the verifier, must refuse such keys.
  const SMALL_ORDER = {
    'identity (order 1)': '0100000000000000000000000000000000000000000000000000000000000000',
    '(0, -1) (order 2)': 'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
    '(sqrt(-1), 0) (order 4)': '0000000000000000000000000000000000000000000000000000000000000000',
    '(-sqrt(-1), 0) (order 4)': '0000000000000000000000000000000000000000000000000000000000000080',
    'order 8, x even, y small': '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05',
    'order 8, x odd, y small': '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85',
    'order 8, x even, y large': 'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a',
    'order 8, x odd, y large': 'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa',
  };
  const IDENTITY_SIGNATURE = bytes('01'.padEnd(128, '0')); // R = (0, 1), S = 0

  test('small-order keys: the same verdict as node:crypto on 16 messages each, some accepted', () => {
    for (const [name, key] of Object.entries(SMALL_ORDER)) {
      let accepted = 0;
      for (let m = 0; m < 16; m++) {
        const { ours, node, input } = verdicts(bytes(key), Uint8Array.of(m), IDENTITY_SIGNATURE);
        assert.equal(ours, node, `${name}: ${input}`);
        accepted += Number(ours);
      }
      // 16 messages, accepted with probability 1/order each: all for the identity, about 2 for order 8.
      assert.ok(accepted > 0, `${name}: no message accepted`);
      if (name.startsWith('identity')) assert.equal(accepted, 16);
    }
  });

  // The one place where the verdicts differ. A non-canonical encoding (RFC 8032 §5.1.3: y >= p,
  // or x = 0 with the sign bit set) is refused here; OpenSSL 3.0 reduces y mod p and ignores the
  // sign of x = 0, so it reads the point anyway. Only small-order points have such encodings
  // whose discrete log is known (y = 0 and y = 1 are y = p and p + 1; x = 0 at y = 1 and y = -1
  // with the sign bit), so these are the only keys under which OpenSSL accepts a signature
  // that we refuse, and they are small-order keys, refused by the key parser in any case.
  test('non-canonical keys: refused here, read mod p by OpenSSL (the one disagreement)', () => {
    const NON_CANONICAL = {
      'identity, x = 0 with the sign bit': '0100000000000000000000000000000000000000000000000000000000000080',
      'identity as y = p + 1': 'eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
      'identity as y = p + 1, sign bit': 'eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff',
      '(0, -1), x = 0 with the sign bit': 'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff',
      'order 4 as y = p': 'edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
      'order 4 as y = p, sign bit': 'edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff',
    };
    for (const [name, key] of Object.entries(NON_CANONICAL)) {
      let nodeAccepted = 0;
      for (let m = 0; m < 16; m++) {
        const { ours, node, input } = verdicts(bytes(key), Uint8Array.of(m), IDENTITY_SIGNATURE);
        assert.equal(ours, false, `${name}: ${input}`);
        nodeAccepted += Number(node);
      }
      assert.ok(nodeAccepted > 0, `${name}: OpenSSL refused all 16 too; the comment above is out of date`);
    }
    // The other y >= p (p + 2 ... 2^255 - 1, read as 2 ... 18) name no small-order point: both
    // refuse, OpenSSL because [k]A is then not the identity.
    for (let y = P + 2n; y < 2n ** 255n; y++) {
      const { ours, node, input } = verdicts(le32(y), Uint8Array.of(0), IDENTITY_SIGNATURE);
      assert.equal(ours, false, input);
      assert.equal(node, false, input);
    }
  });

  // ed25519-speccheck (Chalkias, Garillot, Nikolaenko, "Taming the many EdDSAs", SSR 2020): the
  // cases where implementations disagree. Published results: OpenSSL 3.0 and BoringSSL accept
  // 0-3 and 11 and refuse the rest; a cofactored verifier would also accept 4 and 5.
  // The table is tests/golden/ed25519-speccheck.json (tests/js/signature-verdicts.test.mjs and the
  // browser test run it through the library too).
  const SPECCHECK = JSON.parse(readFileSync(new URL('../golden/ed25519-speccheck.json', import.meta.url), 'utf8')).cases.map(({ name, message, key, sig }) => [name, message, key, sig]);

  test('the ed25519-speccheck cases: node:crypto\'s verdict on all but the non-canonical key', () => {
    const expected = [true, true, true, true, false, false, false, false, false, false, false, false];
    SPECCHECK.forEach(([name, message, key, signature], i) => {
      const { ours, node, input } = verdicts(bytes(key), bytes(message), bytes(signature));
      assert.equal(ours, expected[i], `case ${i}, ${name}: ${input}`);
      // Case 11's key is (0, -1) with the sign bit set: the disagreement of the test above.
      assert.equal(node, i === 11 ? true : ours, `case ${i}, ${name}: node:crypto`);
    });
  });

  test('wrong lengths are false, not exceptions; what is not a Uint8Array is a TypeError', () => {
    const vector = RFC_8032['TEST 2'];
    const [publicKey, message, signature] = [bytes(vector.publicKey), bytes(vector.message), bytes(vector.signature)];
    for (const [key, signed] of [
      [publicKey.subarray(0, 31), signature], [Uint8Array.of(...publicKey, 0), signature], [new Uint8Array(0), signature],
      [publicKey, signature.subarray(0, 63)], [publicKey, Uint8Array.of(...signature, 0)], [publicKey, new Uint8Array(0)],
    ]) {
      assert.equal(verifyEd25519(key, message, signed), false, `${key.length}-byte key, ${signed.length}-byte signature`);
    }
    assert.equal(verifyEd25519(Buffer.from(publicKey), Buffer.from(message), Buffer.from(signature)), true, 'a Buffer is a Uint8Array');
    for (const bad of ['72', [0x72], message.buffer, null, undefined, new Uint16Array(1), new DataView(message.buffer)]) {
      assert.throws(() => verifyEd25519(/** @type {any} */ (bad), message, signature), TypeError);
      assert.throws(() => verifyEd25519(publicKey, /** @type {any} */ (bad), signature), TypeError);
      assert.throws(() => verifyEd25519(publicKey, message, /** @type {any} */ (bad)), TypeError);
    }
  });
});
