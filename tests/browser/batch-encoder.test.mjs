/**
 * The batch encoders of js/wasm/staging.js in the three engines (tests/browser/engines/):
 * each engine's own default ('join' in Chromium; 'words' in WebKit and Firefox, where one
 * encodeInto of a joined chunk made batches slower than one call a key)
 * and both encoders forced, a batch of strings is exactly their UTF-8 bytes: addAll sets the
 * bits that add() of each key's TextEncoder bytes sets, and mightContainMany answers what
 * mightContain does (as a boolean[] and as bytes in the caller's `into`), over every length and
 * alignment, non-ASCII units anywhere, more than one chunk. tests/js/batch-encoder.test.mjs holds the same checks in Node; speed is measured by
 * bench/batch-variants.mjs, never here.
 *
 * Run: node --test tests/browser/batch-encoder.test.mjs (an engine not installed is skipped,
 * unless BLOOMGATE_REQUIRE_BROWSERS=1).
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { resolve, sep } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { ENGINES, launchEngine, skipUnless } from './engines/index.mjs';
import { root } from './helpers/packed.mjs';
import { listenLocal } from './helpers/listen.mjs';

const EXPECTED_DEFAULT = { chromium: 'join', firefox: 'words', webkit: 'words' };

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>batch encoders</title><link rel="icon" href="data:,">
<script type="module">
  window.loadError = null;
  try {
    window.bloomgate = await import('/js/index.js');
    window.staging = await import('/js/wasm/staging.js');
  } catch (error) {
    window.loadError = String(error);
  }
  document.documentElement.dataset.ready = 'yes';
</script></head><body></body></html>
`;

async function startServer() {
  const server = createServer(async (req, res) => {
    const pathname = decodeURIComponent(new URL(req.url, 'http://127.0.0.1').pathname);
    if (pathname === '/index.html') {
      return res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(PAGE);
    }
    const file = resolve(root, `.${pathname}`);
    if (!file.startsWith(root + sep) || !/^(js|wasm)$/.test(file.slice(root.length + 1).split(sep)[0])) return res.writeHead(404).end();
    try {
      const body = await readFile(file);
      res.writeHead(200, { 'content-type': file.endsWith('.wasm') ? 'application/wasm' : 'text/javascript', 'cache-control': 'no-store' }).end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  return listenLocal(server);
}

/**
 * Runs in the page: under `encoder` (null: the engine's default), the batch paths against one
 * key at a time as TextEncoder bytes. Returns what differed, so the assertion names it.
 */
async function checkInPage(encoder) {
  const { BloomFilter } = window.bloomgate;
  const { getBatchEncoder, setBatchEncoder } = window.staging;
  const utf8 = new TextEncoder();
  const ascii = (n, shift) => Array.from({ length: n }, (_, i) => String.fromCharCode(0x20 + ((i * 7 + shift) % 95))).join('');
  const items = [];
  for (let a = 0; a <= 24; a++) for (let b = 0; b <= 24; b++) items.push(ascii(a, b), ascii(b, a + 1));
  while (items.length < 5000) items.push(`https://example.com/posts/${String(items.length).padStart(7, '0')}.html`);
  for (let n = 1; n <= 9; n++) {
    for (const at of new Set([0, n >> 1, n - 1])) {
      for (const unit of ['\x7f', '\x80', '\u00ff', '\u0100', '\u0800', '\uD800', '\uDC00', '\uD83C\uDF89']) {
        const base = ascii(n, at);
        items.push(base.slice(0, at) + unit + base.slice(at + 1));
      }
    }
  }
  const create = () => BloomFilter.create({ capacity: 20_000, errorRate: 0.000001 });
  const expected = await create();
  const batched = await create();
  if (encoder !== null) setBatchEncoder(encoder);
  const used = getBatchEncoder();
  try {
    for (const item of items) expected.add(utf8.encode(item));
    batched.addAll(items);
    const a = expected.serialize();
    const b = batched.serialize();
    let firstDifference = -1;
    for (let i = 0; i < a.length; i++) {
      if (a[i] !== b[i]) {
        firstDifference = i;
        break;
      }
    }
    const probes = items.map((s, i) => (i % 3 === 0 ? `${s}~` : s));
    const many = batched.mightContainMany(probes);
    const wrong = probes.map((p, i) => (many[i] === expected.mightContain(utf8.encode(p)) ? -1 : i)).filter((i) => i >= 0);
    const asciiOnly = items.slice(0, 4000);
    const many2 = batched.mightContainMany(asciiOnly);
    // The same answers as bytes in the caller's Uint8Array (mightContainMany(items, into)).
    const into = new Uint8Array(probes.length + 3).fill(9);
    const bytes = batched.mightContainMany(probes, into);
    const intoWrong = probes.map((_, i) => (bytes[i] === (many[i] ? 1 : 0) ? -1 : i)).filter((i) => i >= 0);
    return {
      used, keys: items.length, sameBytes: a.length === b.length && firstDifference < 0, firstDifference,
      wrongAnswers: wrong.length, firstWrong: wrong.length > 0 ? probes[wrong[0]] : null,
      asciiAllFound: many2.every((x) => x === true),
      intoLength: bytes.length, intoSameBuffer: bytes.buffer === into.buffer, intoWrong: intoWrong.length,
      intoTail: [...into.subarray(probes.length)],
    };
  } finally {
    setBatchEncoder(undefined); // the engine's default again
    expected.free();
    batched.free();
  }
}

for (const name of ENGINES) {
  describe(`batch encoders in ${name}`, { skip: skipUnless(name) }, () => {
    let server;
    let engine;
    let page;
    before(async () => {
      server = await startServer();
      engine = await launchEngine(name);
      page = await engine.newPage();
      await page.goto(`${server.origin}/index.html`);
      await page.waitFor(() => document.documentElement.dataset.ready === 'yes');
      assert.equal(await page.evaluate(() => window.loadError), null);
    });
    after(async () => {
      await engine?.close();
      await server?.close();
    });

    for (const encoder of [null, 'join', 'words']) {
      it(`${encoder ?? 'the default'}: a batch of strings is their UTF-8 bytes`, async () => {
        const result = await page.evaluate(checkInPage, encoder);
        assert.equal(result.used, encoder ?? EXPECTED_DEFAULT[name], `${name} runs this encoder`);
        assert.ok(result.keys > 5000);
        assert.equal(result.sameBytes, true, `addAll(strings) sets the bits of add(their bytes); first byte differing: ${result.firstDifference}`);
        assert.equal(result.wrongAnswers, 0, `mightContainMany agrees with mightContain; first wrong: ${JSON.stringify(result.firstWrong)}`);
        assert.equal(result.asciiAllFound, true, 'every added key is found by a batch');
        assert.equal(result.intoLength, result.keys, 'mightContainMany(items, into) answers every item');
        assert.equal(result.intoSameBuffer, true, 'into\'s own memory');
        assert.equal(result.intoWrong, 0, 'into holds the boolean answers as 1 and 0');
        assert.deepEqual(result.intoTail, [9, 9, 9], 'nothing written past the batch');
      });
    }
  });
}
