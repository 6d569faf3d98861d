/**
 * For tests/js/first-answer.test.mjs: `node early-digest.mjs SCENARIO` prints one JSON line.
 * As on a page, no node:crypto digest is registered, so integrity is checked with SubtleCrypto,
 * whose digest() is wrapped to record what it was called with and whether the module was ready.
 * Scenarios: 'held' (the module held back while a body in 100-byte chunks is read; the digest
 * must start before the module is ready), 'one-chunk' (the module ready, the whole file in one
 * chunk; the digest must be given that chunk itself), 'held-one-chunk' (the module held back, the
 * whole file in one chunk; one digest, not one for the early body and another for its chunk).
 */
import { readFile } from 'node:fs/promises';

const scenario = process.argv[2];
const root = new URL('../../../', import.meta.url);
const lib = await import(new URL('js/index.js', root).href);
const wasm = await import(new URL('js/wasm/index.js', root).href);
const { registerStreamingSha256 } = await import(new URL('js/load.js', root).href);
registerStreamingSha256(null);
const file = new Uint8Array(await readFile(new URL('tests/golden/classic.bgf', root)));
const golden = JSON.parse(await readFile(new URL('tests/golden/vectors.json', root), 'utf8')).golden_file;
const members = (filter) => golden.keys.filter((key) => filter.mightContain(key)).length;
const moduleBytes = await readFile(new URL('wasm/bloomgate.wasm', root));
const { createHash } = await import('node:crypto');
const sri = (bytes) => `sha256-${createHash('sha256').update(bytes).digest('base64')}`;

const calls = [];
const original = crypto.subtle.digest.bind(crypto.subtle);
crypto.subtle.digest = (algorithm, data) => {
  calls.push({ bytes: data.byteLength, ready: wasm.isReady(), data });
  return original(algorithm, data);
};
const errorOf = (promise) => promise.then((filter) => {
  filter.free();
  return null;
}, (error) => error.code ?? error.name);
const body = (bytes, chunkSize) => {
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.length) controller.close();
      else {
        controller.enqueue(bytes.slice(at, at + chunkSize));
        at += chunkSize;
      }
    },
  }, { highWaterMark: 0 });
};
const respond = (bytes, chunkSize) => new Response(body(bytes, chunkSize), { headers: { 'content-length': String(bytes.length) } });
const corrupt = file.slice();
corrupt[corrupt.length - 10] ^= 0x40; // a payload byte: the checksum no longer matches
const out = {};

if (scenario === 'held') {
  let release;
  lib.init(new Promise((resolve) => {
    release = resolve;
  }));
  const loading = lib.loadFilter(respond(file, 100), { integrity: sri(file) });
  for (let i = 0; i < 200 && calls.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 1));
  out.beforeReady = calls.map(({ bytes, ready }) => ({ bytes, ready }));
  release(moduleBytes);
  const filter = await loading;
  out.members = members(filter);
  out.keys = golden.keys.length;
  filter.free();
  out.wrongIntegrity = await errorOf(lib.loadFilter(respond(file, 100), { integrity: sri(corrupt) }));
} else if (scenario === 'held-one-chunk') {
  let release;
  lib.init(new Promise((resolve) => {
    release = resolve;
  }));
  const loading = lib.loadFilter(respond(file, file.length), { integrity: sri(file) });
  for (let i = 0; i < 200 && calls.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 1));
  release(moduleBytes);
  const filter = await loading;
  out.digests = calls.map(({ bytes, ready }) => ({ bytes, ready }));
  out.members = members(filter);
  out.keys = golden.keys.length;
  filter.free();
} else if (scenario === 'one-chunk') {
  await lib.init(moduleBytes);
  const chunk = file.slice();
  const stream = new ReadableStream({ start(controller) { controller.enqueue(chunk); controller.close(); } });
  const filter = await lib.loadFilter(new Response(stream), { integrity: sri(file) });
  out.digestGotTheChunk = calls.length === 1 && calls[0].data === chunk;
  out.members = members(filter);
  out.keys = golden.keys.length;
  filter.free();
  const one = (bytes) => respond(bytes, bytes.length);
  out.wrongIntegrity = await errorOf(lib.loadFilter(one(file), { integrity: sri(corrupt) }));
  // A corrupt file whose integrity is its own: the checksum still fails it.
  out.corruptOwnIntegrity = await errorOf(lib.loadFilter(one(corrupt), { integrity: sri(corrupt) }));
  // A corrupt file against the good file's integrity: the mismatch wins, as before.
  out.corruptGoodIntegrity = await errorOf(lib.loadFilter(one(corrupt), { integrity: sri(file) }));
  // A longer body than the file: E_TRAILING, whatever the digest says.
  const longer = new Uint8Array(file.length + 5);
  longer.set(file);
  out.trailing = await errorOf(lib.loadFilter(respond(longer, longer.length), { integrity: sri(file) }));
  out.goodAgain = await errorOf(lib.loadFilter(one(file), { integrity: sri(file) }));
}
process.stdout.write(`${JSON.stringify(out)}\n`);
