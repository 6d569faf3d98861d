/**
 * One verdict in every runtime, in the browsers (issue 28 item 6): every Wycheproof Ed25519
 * vector, every ed25519-speccheck case and the forgeries of a genuine manifest signature
 * (tests/js/helpers/signature-cases.mjs) through the library's verifyThreshold in Chromium,
 * Firefox and WebKit (tests/browser/engines/), with the engine's WebCrypto as the verifier: the
 * verdict list must be Node's, case for case.
 *
 * Beside it, the engine's WebCrypto alone (raw subtle.verify on the same bytes, no pre-check) is
 * recorded and compared with OpenSSL's (node:crypto) raw verdict: where they differ is what the
 * canonical checks of js/signature.js exist for. WebKit's WebCrypto accepts S + L of a genuine
 * signature (the finding behind the item); the test asserts that, so it shows that the
 * pre-check, not the engine, refuses it.
 *
 * Run: BLOOMGATE_REQUIRE_BROWSERS=1 node --test tests/browser/signature-verdicts.test.mjs
 *      (some engines: BG_ENGINES=firefox,webkit)
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';

import { base64url } from '../../js/canonical.js';
import { verifyWithNode } from '../../js/ed25519-node.js';
import { isTorsionFree } from '../../js/ed25519.js';
import { isCanonicalSignature, isUsablePublicKey } from '../../js/key-check.js';
import { keySetFromOptions, parseSignatures, verifyThreshold } from '../../js/signature.js';
import { signatureCases } from '../js/helpers/signature-cases.mjs';
import { launchEngine } from './engines/index.mjs';
import { eachEngine, openReady, startLibraryServer } from './helpers/each-engine.mjs';

const CASES = signatureCases();
const hexBytes = (hex) => new Uint8Array(Buffer.from(hex, 'hex'));

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>signature verdicts</title><link rel="icon" href="data:,">
<script type="module">
  import * as signature from '/bloomgate/js/signature.js';
  import { base64url } from '/bloomgate/js/canonical.js';
  window.lib = { ...signature, base64url };
  document.documentElement.dataset.ready = 'yes';
</script></head><body>signature verdicts</body></html>
`;

/** In the page: the library's verdict on each case, and WebCrypto's raw one (null: the key was not imported). */
function verdictsInPage(cases) {
  const { keySetFromOptions: keySet, parseSignatures: parse, verifyThreshold: judge, verifierName, base64url: b64 } = window.lib;
  const bytes = (hex) => new Uint8Array((hex.match(/../g) ?? []).map((pair) => parseInt(pair, 16)));
  return (async () => {
    const library = [];
    const raw = [];
    for (const { key, msg, sig } of cases) {
      const keyid = `ed25519:${b64(bytes(key))}`;
      let verdict;
      try {
        const trusted = keySet([keyid], 1, 'test');
        try {
          await judge(bytes(msg), parse([{ keyid, sig: b64(bytes(sig)) }], 'the record'), trusted, 'the record');
          verdict = 'accepted';
        } catch (error) {
          verdict = error?.code === 'E_SIGNATURE' ? 'refused' : `error ${error}`;
        }
      } catch (error) {
        verdict = error instanceof TypeError ? 'key refused' : `error ${error}`;
      }
      library.push(verdict);
      let imported;
      try {
        imported = await crypto.subtle.importKey('raw', bytes(key), { name: 'Ed25519' }, false, ['verify']);
      } catch {
        raw.push(null);
        continue;
      }
      try {
        raw.push(await crypto.subtle.verify({ name: 'Ed25519' }, imported, bytes(sig), bytes(msg)));
      } catch (error) {
        raw.push(`throws ${error?.name}`);
      }
    }
    return { library, raw, verifier: await verifierName(), agent: navigator.userAgent };
  })();
}

/** Node's verdict through the library (node:crypto), as in tests/js/signature-verdicts.test.mjs. */
async function nodeVerdict({ key, msg, sig }) {
  const keyid = `ed25519:${base64url(hexBytes(key))}`;
  let trusted;
  try {
    trusted = keySetFromOptions([keyid], 1, 'test');
  } catch {
    return 'key refused';
  }
  try {
    await verifyThreshold(hexBytes(msg), parseSignatures([{ keyid, sig: base64url(hexBytes(sig)) }], 'the record'), trusted, 'the record');
    return 'accepted';
  } catch {
    return 'refused';
  }
}

/** OpenSSL's raw verdict (node:crypto, no pre-check); null when it will not read the key. */
function opensslRaw({ key, msg, sig }) {
  try {
    return verifyWithNode(hexBytes(key), hexBytes(msg), hexBytes(sig));
  } catch {
    return null;
  }
}

/** Whether the library hands this case to a verifier at all (the canonical checks of js/signature.js). */
const reachesVerifier = ({ key, sig }) => isUsablePublicKey(hexBytes(key)) && isTorsionFree(hexBytes(key)) && isCanonicalSignature(hexBytes(sig));

let pages;
const nodeVerdicts = [];

before(async () => {
  for (const c of CASES) nodeVerdicts.push(await nodeVerdict(c));
  assert.deepEqual(nodeVerdicts, CASES.map((c) => c.expect), 'Node gives the expected verdicts (tests/js/signature-verdicts.test.mjs)');
  pages = await startLibraryServer({ '/': PAGE });
});

after(async () => {
  await pages?.close();
});

eachEngine('signature verdicts', { timeout: 240000 }, (name) => {
  let engine;
  let seen;

  before(async () => {
    engine = await launchEngine(name);
    const page = await engine.newPage();
    await openReady(page, `${pages.origin}/`);
    seen = await page.evaluate(verdictsInPage, CASES.map(({ key, msg, sig }) => ({ key, msg, sig })));
  });

  after(async () => {
    await engine?.close();
  });

  it(`the library's verdict on all ${CASES.length} cases is Node's (the engine's WebCrypto verifying)`, (t) => {
    t.diagnostic(`${engine.version}; verifier ${seen.verifier}`);
    assert.equal(seen.verifier, 'webcrypto', 'the engine verifies with its own WebCrypto Ed25519');
    CASES.forEach((c, i) => assert.equal(seen.library[i], nodeVerdicts[i], `${name}: ${c.group} ${c.name}`));
    assert.deepEqual(seen.library, nodeVerdicts);
  });

  it("the engine's WebCrypto alone: where it differs from OpenSSL (what the pre-check is for)", (t) => {
    const differences = [];
    CASES.forEach((c, i) => {
      const openssl = opensslRaw(c);
      if (seen.raw[i] === openssl) return;
      differences.push(`${c.group} ${c.name}: ${name} ${seen.raw[i]}, OpenSSL ${openssl}; library ${seen.library[i]}`);
      // Every disagreement between the raw verifiers is on a case that never reaches one.
      assert.equal(reachesVerifier(c), false, `${name} and OpenSSL differ on ${c.group} ${c.name}, which the canonical checks let through`);
    });
    t.diagnostic(`${differences.length} raw difference(s) from OpenSSL${differences.length ? ':' : ''}`);
    for (const line of differences) t.diagnostic(`  ${line}`);
    const sPlusL = CASES.findIndex((c) => c.group === 'manifest' && c.name.startsWith('S + 1L'));
    assert.equal(seen.library[sPlusL], 'refused');
    if (name === 'webkit') assert.equal(seen.raw[sPlusL], true, "WebKit's WebCrypto alone accepts S + L");
  });
});
