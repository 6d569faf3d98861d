/**
 * A child process with the module not yet instantiated, for tests/js/first-answer.test.mjs and
 * tests/js/memory-limit.test.mjs: `node fresh-module.mjs SCENARIO [ARG]` prints one JSON line.
 * Before js/index.js is imported, `--ua UA` sets globalThis.navigator (Node 20 has none).
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const [scenario, ...rest] = process.argv.slice(2);
const option = (name) => {
  const at = rest.indexOf(name);
  return at < 0 ? undefined : rest[at + 1];
};
if (option('--ua') !== undefined) {
  Object.defineProperty(globalThis, 'navigator', { value: { userAgent: option('--ua'), maxTouchPoints: Number(option('--touch') ?? 0) }, configurable: true });
}
const root = new URL('../../../', import.meta.url);
const lib = await import(new URL('js/index.js', root).href);
const wasm = await import(new URL('js/wasm/index.js', root).href);
const golden = JSON.parse(await readFile(new URL('tests/golden/vectors.json', root), 'utf8')).golden_file;
const goldenBytes = new Uint8Array(await readFile(new URL('tests/golden/classic.bgf', root)));
const moduleBytes = await readFile(fileURLToPath(new URL('wasm/bloomgate.wasm', root)));
const errorOf = (promise) => promise.then(() => null, (error) => ({ code: error.code, name: error.name, message: error.message }));
const out = {};

function deferred() {
  let resolve;
  let reject;
  const promise = new Promise((ok, fail) => {
    resolve = ok;
    reject = fail;
  });
  return { promise, resolve, reject };
}
const tick = (ms = 0) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A body served chunk by chunk on demand, recording what was read and when, and a fetch that
 * answers it (with Content-Length).
 */
function servedBody(bytes, chunkSize, { status = 200, delayMs = 0 } = {}) {
  const log = { pulled: 0, chunks: 0, done: false, cancelled: false, pulledWhileCompiling: 0 };
  const body = new ReadableStream({
    async pull(controller) {
      if (delayMs > 0) await tick(delayMs);
      if (log.pulled >= bytes.length) {
        controller.close();
        log.done = true;
        return;
      }
      const chunk = bytes.slice(log.pulled, Math.min(bytes.length, log.pulled + chunkSize));
      log.pulled += chunk.length;
      log.chunks++;
      if (!wasm.isReady()) log.pulledWhileCompiling = log.pulled;
      controller.enqueue(chunk);
    },
    cancel() {
      log.cancelled = true;
    },
  }, { highWaterMark: 0 });
  const response = new Response(body, { status, headers: { 'content-length': String(bytes.length) } });
  return { log, fetch: async () => response };
}

if (scenario === 'no-wasm') {
  // node --jitless: no WebAssembly global, as in a browser with it turned off.
  out.hasWebAssembly = typeof WebAssembly !== 'undefined';
  out.init = await errorOf(lib.init());
  out.load = await errorOf(lib.loadFilter(goldenBytes));
  out.create = await errorOf(lib.BloomFilter.create({ capacity: 100, errorRate: 0.01 }));
} else if (scenario === 'overlap') {
  // The module's bytes are held back: the whole filter is read before the module is ready.
  const module = deferred();
  lib.init(module.promise);
  const served = servedBody(goldenBytes, 100);
  const loading = lib.loadFilter('https://cdn.example/classic.bgf', { fetch: served.fetch, integrity: option('--integrity') });
  for (let i = 0; i < 200 && !served.log.done; i++) await tick(1);
  out.beforeReady = { ...served.log, ready: wasm.isReady() };
  module.resolve(moduleBytes);
  const filter = await loading;
  out.present = golden.keys.filter((key) => filter.mightContain(key)).length;
  out.keys = golden.keys.length;
  out.absent = golden.absent.filter((key) => !filter.mightContain(key)).length;
  out.absentKeys = golden.absent.length;
  out.serialized = Buffer.from(filter.serialize()).equals(Buffer.from(goldenBytes));
} else if (scenario === 'limit') {
  // A body larger than the read-ahead: reading stops near 8 MiB until the module is ready.
  const big = new Uint8Array(await readFile(option('--file')));
  const module = deferred();
  lib.init(module.promise);
  const served = servedBody(big, 1024 * 1024);
  const loading = lib.loadFilter('https://cdn.example/big.bgf', { fetch: served.fetch });
  let last = -1;
  for (let i = 0; i < 500 && served.log.pulled !== last; i++) {
    last = served.log.pulled;
    await tick(10);
  }
  out.beforeReady = { ...served.log };
  module.resolve(moduleBytes);
  const filter = await loading;
  out.size = filter.serialize().length;
  out.fileSize = big.length;
} else if (scenario === 'module-fails') {
  // The module fails while the body is being read: its error, the download cancelled.
  const module = deferred();
  lib.init(module.promise);
  const served = servedBody(goldenBytes, 100);
  const loading = errorOf(lib.loadFilter('https://cdn.example/classic.bgf', { fetch: served.fetch }));
  await tick(5);
  out.pulledBefore = served.log.pulled;
  module.resolve(new TextEncoder().encode('<!doctype html><title>not the module</title>'));
  out.error = await loading;
  out.cancelled = served.log.cancelled || served.log.done;
} else if (scenario === 'abort') {
  const module = deferred();
  lib.init(module.promise);
  const served = servedBody(goldenBytes, 100, { delayMs: 3 });
  const controller = new AbortController();
  const loading = errorOf(lib.loadFilter('https://cdn.example/classic.bgf', { fetch: served.fetch, signal: controller.signal }));
  await tick(2);
  controller.abort(new DOMException('the user left', 'AbortError'));
  out.error = await loading;
  out.cancelled = served.log.cancelled;
  out.ready = wasm.isReady();
  module.resolve(moduleBytes);
  const filter = await lib.loadFilter(goldenBytes);
  out.afterwards = filter.mightContain(golden.keys[0]);
} else if (scenario === 'http-error') {
  const module = deferred();
  lib.init(module.promise);
  const served = servedBody(new TextEncoder().encode('not found'), 100, { status: 404 });
  out.error = await errorOf(lib.loadFilter('https://cdn.example/missing.bgf', { fetch: served.fetch }));
  out.ready = wasm.isReady();
  module.resolve(moduleBytes);
} else if (scenario === 'wrong-file') {
  // An HTML page where the filter should be: E_MAGIC once the module is ready.
  const module = deferred();
  lib.init(module.promise);
  const served = servedBody(new TextEncoder().encode('<!doctype html>'.padEnd(4000, ' ')), 500);
  const loading = errorOf(lib.loadFilter('https://cdn.example/page.html', { fetch: served.fetch }));
  await tick(5);
  module.resolve(moduleBytes);
  out.error = await loading;
} else if (scenario === 'mime') {
  // init(url) from a server that sends the module under some content type.
  const url = option('--url');
  const real = WebAssembly.instantiateStreaming;
  let streamingCalls = 0;
  WebAssembly.instantiateStreaming = function (...args) {
    streamingCalls++;
    return real.apply(this, args);
  };
  out.direct = await real(fetch(url), { env: { emscripten_notify_memory_growth() {} } }).then(() => 'compiled', (error) => error.name);
  await lib.init(url);
  out.streamingCalls = streamingCalls;
  const filter = await lib.loadFilter(goldenBytes);
  out.present = golden.keys.filter((key) => filter.mightContain(key)).length;
  out.keys = golden.keys.length;
} else if (scenario === 'limit-of') {
  out.limit = wasm.getMemoryLimit();
} else if (scenario === 'ios-header') {
  // A header claiming a 600 MiB payload, then nothing: refused from the header alone.
  const header = goldenBytes.slice(0, 128);
  const view = new DataView(header.buffer);
  const payloadLength = 600 * 1024 * 1024;
  view.setBigUint64(32, BigInt(payloadLength) * 8n, true); // m bits
  view.setBigUint64(104, BigInt(payloadLength), true);
  out.limit = wasm.getMemoryLimit();
  out.error = await errorOf(lib.loadFilter(new Response(new ReadableStream({
    start(controller) {
      controller.enqueue(header);
      controller.close();
    },
  }))));
  out.heap = wasm.heapSize();
} else {
  throw new Error(`unknown scenario ${scenario}`);
}
process.stdout.write(`${JSON.stringify(out)}\n`, () => process.exit(0)); // not held open by a keep-alive connection
