/**
 * What breaks in WebKit and Safari (issue 21 item 3), in Chromium, Firefox and WebKit (Safari's
 * engine) through tests/browser/engines/, the same assertions in each:
 *
 *   - the module served as application/wasm, application/octet-stream and text/plain: the
 *     engine's own instantiateStreaming refuses the last two (checked), bloomgate compiles them
 *     from the bytes instead and answers; with application/wasm it streams
 *   - loadFilter(url, { integrity }) of a filter sent in small pieces: read with a reader loop
 *     (no shipped Safari can iterate a ReadableStream), every member found, byte for byte
 *   - an engine without WebAssembly: init(), loadFilter() and BloomFilter.create() reject with
 *     BloomgateError E_UNSUPPORTED saying what is missing and what still works
 *   - a page whose user agent is an iPhone's gets the 512 MiB memory cap by itself: a filter
 *     whose header says 600 MiB is E_TOO_LARGE naming it
 *
 * What differs by engine, and why:
 *   - no WebAssembly: each engine is started with its own switch, since none has a common one:
 *     Chromium --js-flags=--jitless, Firefox the pref javascript.options.wasm = false, WebKit
 *     JSC_useWasm=0 in the environment of WebKitWebDriver and the browser it starts. Each run
 *     checks that the page really has no WebAssembly.
 *   - the iPhone: navigator.userAgent is an iPhone's in every engine by a classic script the
 *     server puts before the module (Navigator.prototype.userAgent redefined), since the
 *     adapter cannot set WebKit's user agent; the library reads nothing else (memoryLimitFor in
 *     js/wasm/module.js). The HTTP User-Agent header stays the engine's own; nothing here reads it.
 *
 * Run: node --test tests/browser/safari-fixes.test.mjs   (some engines: BG_ENGINES=firefox,webkit)
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { extname, resolve, sep } from 'node:path';
import { after, before, it } from 'node:test';

import { BloomFilter } from '../../js/index.js';
import { launchEngine } from './engines/index.mjs';
import { eachEngine, openReady } from './helpers/each-engine.mjs';
import { root } from './helpers/packed.mjs';
import { listenLocal } from './helpers/listen.mjs';

const KEYS = 20_000;
const MODES = { wasm: 'application/wasm', octet: 'application/octet-stream', text: 'text/plain; charset=utf-8' };
const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';

const IPHONE_SCRIPT = `<script>
  Object.defineProperty(Navigator.prototype, 'userAgent', { get: () => ${JSON.stringify(IPHONE)}, configurable: true });
</script>`;

const page = (before = '') => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>engines</title><link rel="icon" href="data:,">
${before}<script type="module">
  window.loadError = null;
  try {
    window.bloomgate = await import('./bloomgate/js/index.js');
  } catch (error) {
    window.loadError = String(error);
  }
  document.documentElement.dataset.ready = 'yes';
</script></head><body></body></html>
`;

/** /<mode>/index.html, /<mode>/iphone.html (an iPhone's user agent), /<mode>/bloomgate/{js,wasm}/..., /<mode>/f.bgf (sent in 1 KiB pieces), /<mode>/huge.bgf (a header). */
async function startServer(filter, hugeHeader) {
  const server = createServer(async (req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    const match = /^\/(\w+)\/(.*)$/.exec(decodeURIComponent(url.pathname));
    const mode = match?.[1];
    const rest = match?.[2];
    const send = (body, type) => {
      res.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' });
      return body;
    };
    if (!match || !(mode in MODES)) return res.writeHead(404).end();
    if (rest === 'index.html') return res.end(send(page(), 'text/html; charset=utf-8'));
    if (rest === 'iphone.html') return res.end(send(page(IPHONE_SCRIPT), 'text/html; charset=utf-8'));
    if (rest === 'huge.bgf') return res.end(send(hugeHeader, 'application/octet-stream'));
    if (rest === 'f.bgf') {
      send(null, 'application/octet-stream');
      for (let at = 0; at < filter.length; at += 1024) {
        if (!res.write(filter.subarray(at, at + 1024))) await new Promise((ok) => res.once('drain', ok));
      }
      return res.end();
    }
    const file = resolve(root, (rest ?? '').replace(/^bloomgate\//, ''));
    if (!rest?.startsWith('bloomgate/') || !file.startsWith(root + sep) || !/^(js|wasm)$/.test(file.slice(root.length + 1).split(sep)[0])) {
      return res.writeHead(404).end();
    }
    try {
      const body = await readFile(file);
      const type = extname(file) === '.wasm' ? MODES[mode] : 'text/javascript';
      res.end(send(body, type));
    } catch {
      res.writeHead(404).end();
    }
  });
  return listenLocal(server);
}

// Run in the page: init(), the engine's own instantiateStreaming on the same URL, a streamed load.
const MIME_CHECK = async (arg) => {
  if (window.loadError) throw new Error(window.loadError);
  const real = WebAssembly.instantiateStreaming;
  let streamingCalls = 0;
  if (typeof real === 'function') {
    WebAssembly.instantiateStreaming = function counted(...args) {
      streamingCalls++;
      return real.apply(this, args);
    };
  }
  await window.bloomgate.init();
  const filter = await window.bloomgate.loadFilter(arg.filter, { integrity: arg.integrity });
  const present = arg.keys.filter((key) => filter.mightContain(key)).length;
  const bytes = filter.serialize();
  const digest = [...new Uint8Array(await crypto.subtle.digest('SHA-256', bytes))].map((b) => b.toString(16).padStart(2, '0')).join('');
  let direct = 'no instantiateStreaming';
  if (typeof real === 'function') {
    direct = await real(fetch('./bloomgate/wasm/bloomgate.wasm'), { env: { emscripten_notify_memory_growth() {} } })
      .then(() => 'compiled', (error) => error.name);
  }
  return { streamingCalls, hasStreaming: typeof real === 'function', present, digest, direct };
};

const NO_WASM = async () => {
  if (window.loadError) throw new Error(window.loadError);
  const { init, loadFilter, BloomFilter: Filter, BloomgateError } = window.bloomgate;
  const outcome = (promise) => promise.then(() => ({ ok: true }), (error) => ({
    bloomgate: error instanceof BloomgateError, code: error.code, message: error.message,
  }));
  return {
    hasWebAssembly: typeof WebAssembly !== 'undefined',
    init: await outcome(init()),
    load: await outcome(loadFilter('./f.bgf')),
    create: await outcome(Filter.create({ capacity: 100, errorRate: 0.01 })),
  };
};

const HUGE = async () => {
  const error = await window.bloomgate.loadFilter('./huge.bgf').then(() => null, (e) => ({ code: e.code, message: e.message }));
  return { error, userAgent: navigator.userAgent };
};

/** Each engine without WebAssembly, by its own switch (see the top of this file). */
async function launchWithoutWasm(name) {
  if (name === 'chromium') return launchEngine(name, { args: ['--js-flags=--jitless'] });
  if (name === 'firefox') return launchEngine(name, { prefs: { 'javascript.options.wasm': false } });
  // WebKitWebDriver, Xvfb and the browser inherit this process's environment when started.
  const saved = process.env.JSC_useWasm;
  process.env.JSC_useWasm = '0';
  try {
    return await launchEngine(name);
  } finally {
    if (saved === undefined) delete process.env.JSC_useWasm;
    else process.env.JSC_useWasm = saved;
  }
}

let site;
let fixture;

before(async () => {
  const filter = await BloomFilter.create({ capacity: KEYS, errorRate: 0.01 });
  const keys = Array.from({ length: KEYS }, (_, i) => `member-${i}`);
  for (const key of keys) filter.add(key);
  const bytes = filter.serialize();
  filter.free();
  // A real header that says its payload is 600 MiB (the header alone is checked first).
  const header = Buffer.from(bytes.subarray(0, 128));
  header.writeBigUInt64LE(600n * 1024n * 1024n * 8n, 32);
  header.writeBigUInt64LE(600n * 1024n * 1024n, 104);
  fixture = {
    keys: keys.filter((_, i) => i % 97 === 0),
    integrity: `sha256-${createHash('sha256').update(bytes).digest('base64')}`,
    digest: createHash('sha256').update(bytes).digest('hex'),
  };
  site = await startServer(Buffer.from(bytes), header);
});

after(async () => {
  await site?.close();
});

eachEngine('the module under any content type, streamed loads, the iPhone cap', { timeout: 240000 }, (name) => {
  let engine;
  let tab;
  before(async () => {
    engine = await launchEngine(name);
    tab = await engine.newPage();
  });
  after(async () => {
    await engine?.close();
  });

  for (const [mode, type] of Object.entries(MODES)) {
    it(`the module sent as ${type}: compiled, and a filter streamed in 1 KiB pieces with integrity answers`, async (t) => {
      await openReady(tab, `${site.origin}/${mode}/index.html`);
      const out = await tab.evaluate(MIME_CHECK, { filter: './f.bgf', integrity: fixture.integrity, keys: fixture.keys });
      t.diagnostic(`${name} ${engine.version}: ${JSON.stringify(out)}`);
      assert.equal(out.present, fixture.keys.length, 'every member found');
      assert.equal(out.digest, fixture.digest, 'the filter is the file, byte for byte');
      if (mode === 'wasm') {
        if (out.hasStreaming) {
          assert.equal(out.direct, 'compiled');
          assert.equal(out.streamingCalls, 1, 'compiled while it downloaded');
        }
      } else {
        if (out.hasStreaming) assert.equal(out.direct, 'TypeError', `the engine itself refuses ${type}`);
        assert.equal(out.streamingCalls, 0, 'compiled from the bytes instead');
      }
    });
  }

  it('an iPhone\'s user agent: a filter whose header says 600 MiB is E_TOO_LARGE naming the 512 MiB cap', async () => {
    await openReady(tab, `${site.origin}/wasm/iphone.html`);
    const out = await tab.evaluate(HUGE);
    assert.equal(out.userAgent, IPHONE);
    assert.equal(out.error?.code, 'E_TOO_LARGE', JSON.stringify(out.error));
    assert.match(out.error.message, /capped at 512 MiB .*iOS and iPadOS/);
  });
});

eachEngine('an engine without WebAssembly', { timeout: 180000 }, (name) => {
  it('init, loadFilter and BloomFilter.create reject with E_UNSUPPORTED naming what is missing and what still works', async (t) => {
    const engine = await launchWithoutWasm(name);
    try {
      const tab = await engine.newPage();
      await openReady(tab, `${site.origin}/wasm/index.html`);
      const out = await tab.evaluate(NO_WASM);
      t.diagnostic(JSON.stringify(out.init));
      assert.equal(out.hasWebAssembly, false, 'the engine really has no WebAssembly');
      for (const step of [out.init, out.load, out.create]) {
        assert.equal(step.bloomgate, true, JSON.stringify(step));
        assert.equal(step.code, 'E_UNSUPPORTED');
        assert.match(step.message, /no WebAssembly/);
        assert.match(step.message, /What still works/);
      }
    } finally {
      await engine.close();
    }
  });
});
