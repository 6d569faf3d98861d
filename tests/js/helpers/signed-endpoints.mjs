/**
 * Signed escalation endpoints and a malicious mirror in front of them, for
 * tests/js/escalation-auth.test.mjs and tests/browser/escalation-auth.test.mjs.
 *
 * Real stores (writeStore), real `bloomgate serve` servers (startReferenceServer
 * with `sign`, as `serve --sign` runs it), a real signed static export
 * (`bloomgate export-ranges --sign`) served by a plain static file server, and
 * a mirror: an HTTP server that answers each path from whichever upstream an
 * attack names, or rewrites what it forwards. The attacker holds its own key,
 * not the publisher's.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { urlExpressions } from '../../../js/url.js';
import { writeStore } from '../../../js/store.js';
import { startReferenceServer } from '../../../js/server.js';
import { generateKeyFile, readSigningKeys, signAll } from '../../../js/cli/signing.js';

const CLI = fileURLToPath(new URL('../../../js/cli.js', import.meta.url));

export const LIST_ID = 'c0ffee0000000000000000000000a0a1';
export const OTHER_LIST_ID = 'c0ffee0000000000000000000000b0b2';
export const GENERATION = 3;
export const LISTED_PASSWORDS = Array.from({ length: 16 }, (_, i) => `listed password ${i}`);
export const CLEAN_PASSWORDS = Array.from({ length: 6 }, (_, i) => `a clean passphrase number ${i}`);
export const LISTED_URLS = Array.from({ length: 8 }, (_, i) => `http://bad${i}.example/path${i}/page.html`);
export const CLEAN_URLS = Array.from({ length: 4 }, (_, i) => `http://clean${i}.example/`);

const sha1 = (text) => createHash('sha1').update(text, 'utf8').digest();
const sha256 = (text) => createHash('sha256').update(text, 'utf8').digest();

/** The expression of each listed URL that the store holds (its most specific). */
export function listedExpression(url) {
  return urlExpressions(url)[0];
}

function passwordRecords(withListed) {
  const records = [];
  for (let i = 0; i < 1500; i++) records.push({ hash: sha1(`filler ${i}`), count: 1 + (i % 40) });
  if (withListed) LISTED_PASSWORDS.forEach((password, i) => records.push({ hash: sha1(password), count: 2 + 7 * i }));
  return records;
}

function urlRecords(withListed) {
  const records = [];
  for (let i = 0; i < 400; i++) records.push({ hash: sha256(`filler.example/${i}`), count: 1 });
  if (withListed) for (const url of LISTED_URLS) records.push({ hash: sha256(listedExpression(url)), count: 1 });
  return records;
}

/** A plain static file server over `root` (404 for what is not a file): what a CDN does. */
export async function startStaticServer(root) {
  const server = createServer(async (req, res) => {
    const path = join(root, decodeURIComponent(new URL(req.url, 'http://x').pathname));
    try {
      if (!path.startsWith(root) || !(await stat(path)).isFile()) throw new Error('not a file');
      const body = await readFile(path);
      res.writeHead(200, { 'content-length': body.length, 'access-control-allow-origin': '*' });
      res.end(body);
    } catch {
      res.writeHead(404, { 'access-control-allow-origin': '*' });
      res.end('not found');
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${server.address().port}` };
}

/**
 * Everything the attacks need, under `dir`:
 *   genuine        serve --sign publisher over the list (range and hashes)
 *   forgedSigned   serve --sign attacker over the list without the listed items
 *   forgedUnsigned serve (no key) over the same stripped list
 *   otherList      serve --sign publisher over another list of the publisher's
 *   older          serve --sign publisher over generation GENERATION - 1 of the list, without the listed items
 *   static         export-ranges --sign publisher of the URL store, on a static server
 *   staticForged   export-ranges --sign attacker of the stripped URL store
 */
export async function startSignedEndpoints(dir) {
  await generateKeyFile(join(dir, 'publisher.key'));
  await generateKeyFile(join(dir, 'attacker.key'));
  const [publisher] = await readSigningKeys([join(dir, 'publisher.key')]);
  const [attacker] = await readSigningKeys([join(dir, 'attacker.key')]);
  const write = (name, records, hashType, listId, generation = GENERATION) => {
    writeFileSync(join(dir, name), writeStore(records, { hashType, listId, generation }));
    return join(dir, name);
  };
  const stores = {
    passwords: write('passwords.bgs', passwordRecords(true), 'sha1', LIST_ID),
    urls: write('urls.bgs', urlRecords(true), 'sha256', LIST_ID),
    strippedPasswords: write('stripped-passwords.bgs', passwordRecords(false), 'sha1', LIST_ID),
    strippedUrls: write('stripped-urls.bgs', urlRecords(false), 'sha256', LIST_ID),
    otherPasswords: write('other-passwords.bgs', passwordRecords(false), 'sha1', OTHER_LIST_ID),
    otherUrls: write('other-urls.bgs', urlRecords(false), 'sha256', OTHER_LIST_ID),
    olderPasswords: write('older-passwords.bgs', passwordRecords(false), 'sha1', LIST_ID, GENERATION - 1),
    olderUrls: write('older-urls.bgs', urlRecords(false), 'sha256', LIST_ID, GENERATION - 1),
  };
  const signer = (key) => (bytes) => signAll(bytes, [key]);
  const started = [];
  const start = async (options) => {
    const one = await startReferenceServer(options);
    started.push(one.server);
    return one.url;
  };
  const origins = {
    genuine: await start({ passwordStore: stores.passwords, urlStore: stores.urls, sign: signer(publisher) }),
    forgedSigned: await start({ passwordStore: stores.strippedPasswords, urlStore: stores.strippedUrls, sign: signer(attacker) }),
    forgedUnsigned: await start({ passwordStore: stores.strippedPasswords, urlStore: stores.strippedUrls }),
    otherList: await start({ passwordStore: stores.otherPasswords, urlStore: stores.otherUrls, sign: signer(publisher) }),
    // An older generation of the list, genuinely signed, before the listed items were added: what a replay serves.
    older: await start({ passwordStore: stores.olderPasswords, urlStore: stores.olderUrls, sign: signer(publisher) }),
  };
  // The genuine export expires in an hour (a signed expiry, checked by the tests); the forged one never.
  for (const [store, out, key, extra] of [['urls.bgs', 'site', 'publisher.key', ['--expires-in', '1h']], ['stripped-urls.bgs', 'forged-site', 'attacker.key', []]]) {
    const result = spawnSync(process.execPath, [CLI, 'export-ranges', store, '-o', out, '--sign', key, ...extra, '-q'], { cwd: dir, encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`export-ranges failed: ${result.stderr}`);
  }
  const statics = [await startStaticServer(join(dir, 'site')), await startStaticServer(join(dir, 'forged-site'))];
  origins.static = statics[0].url;
  origins.staticForged = statics[1].url;
  started.push(...statics.map((one) => one.server));
  return {
    publisherKey: publisher.id,
    attackerKey: attacker.id,
    origins,
    close: () => Promise.all(started.map((server) => new Promise((resolve) => {
      server.closeAllConnections?.();
      server.close(resolve);
    }))),
  };
}

/** What a request path under /range or /hashes asks for. */
export function partOf(path) {
  const name = path.slice(path.lastIndexOf('/') + 1);
  if (name === 'manifest.json') return 'manifest';
  if (name.endsWith('.proof')) return 'proof';
  return 'reply';
}

/**
 * The mirror: `attack.answer(part, path, request)` returns `{ origin, path?, edit? }`: fetch
 * `path` (default: the same) from `origin` and pass the body through `edit(bytes)`. The mirror
 * forwards Add-Padding and answers with the upstream's status.
 */
export async function startMirror() {
  const mirror = { attack: null, url: '', close: null, failures: [] };
  const server = createServer(async (req, res) => {
    const path = new URL(req.url, 'http://x').pathname;
    const plan = mirror.attack.answer(partOf(path), path);
    const headers = req.headers['add-padding'] ? { 'Add-Padding': req.headers['add-padding'] } : {};
    let upstream;
    let body;
    try {
      upstream = await fetch(`${plan.origin}${plan.path ?? path}`, { headers });
      body = new Uint8Array(await upstream.arrayBuffer());
      if (plan.edit && upstream.status === 200) body = await plan.edit(body);
    } catch (error) {
      // An upstream that is gone is the test's fault: say so rather than leave the client waiting.
      mirror.failures.push(String(error?.cause ?? error));
      res.writeHead(502);
      return res.end();
    }
    res.writeHead(upstream.status, {
      'content-length': body.length,
      'access-control-allow-origin': '*',
      'access-control-allow-headers': 'Add-Padding',
    });
    res.end(body);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  mirror.url = `http://127.0.0.1:${server.address().port}`;
  mirror.close = () => new Promise((resolve) => {
    server.closeAllConnections();
    server.close(resolve);
  });
  return mirror;
}

const text = (bytes) => new TextDecoder().decode(bytes);
const bytesOf = (value) => new TextEncoder().encode(value);

/**
 * The attacks, each against one protocol's endpoint path (`/range` or `/hashes`) of the served
 * origins, or (`static: true`) of the static exports (hashes only). In every attack the listed
 * items' records are gone from what the mirror answers: every listed item must read listed or
 * fail with E_ESCALATION, never clean.
 * @param {Record<string, string>} origins
 * @param {{ otherPrefix: { range: string, hashes: string } }} unlisted prefixes with no listed item
 */
export function attacks(origins, { otherPrefix }) {
  const g = (o) => origins[o];
  const swapName = (path, protocol, digits) => {
    // The same part of the endpoint for another prefix (a reply or a proof of another block).
    const base = path.slice(0, path.lastIndexOf('/') + 1);
    const proof = path.endsWith('.proof');
    const name = otherPrefix[protocol].slice(0, proof ? digits : undefined);
    return `${base}${name}${proof ? '.proof' : ''}`;
  };
  return [
    { name: 'an unsigned manifest over stripped replies', answer: () => ({ origin: g('forgedUnsigned') }) },
    { name: 'a manifest signed by another key, with its own proofs', answer: () => ({ origin: g('forgedSigned') }) },
    {
      name: 'replies with the listed rows removed, genuine manifest and proofs',
      answer: (part) => ({ origin: part === 'reply' ? g('forgedUnsigned') : g('genuine') }),
    },
    {
      name: 'a reply of another prefix',
      answer: (part, path) => (part === 'reply'
        ? { origin: g('genuine'), path: swapName(path, path.includes('/range/') ? 'range' : 'hashes') }
        : { origin: g('genuine') }),
    },
    {
      name: 'stripped replies with a swapped proof (another block\'s)',
      answer: (part, path) => (part === 'proof'
        ? { origin: g('genuine'), path: swapName(path, path.includes('/range/') ? 'range' : 'hashes', path.slice(path.lastIndexOf('/') + 1).length - 6) }
        : { origin: part === 'reply' ? g('forgedUnsigned') : g('genuine') }),
    },
    {
      name: 'stripped replies with the forged tree\'s proofs',
      answer: (part) => ({ origin: part === 'manifest' ? g('genuine') : g('forgedSigned') }),
    },
    {
      name: 'stripped replies with a truncated proof',
      answer: (part) => (part === 'proof'
        ? { origin: g('genuine'), edit: (bytes) => bytes.subarray(0, bytes.length - 32) }
        : { origin: part === 'reply' ? g('forgedUnsigned') : g('genuine') }),
    },
    {
      name: 'a genuine manifest with a forged root (the stripped tree\'s)',
      answer: (part, path) => (part === 'manifest'
        ? {
          origin: g('genuine'),
          edit: async (bytes) => {
            const forged = await (await fetch(`${g('forgedSigned')}${path}`)).json();
            const manifest = JSON.parse(text(bytes));
            return bytesOf(JSON.stringify({ ...manifest, root: forged.root, blockBits: forged.blockBits }));
          },
        }
        : { origin: g('forgedSigned') }),
    },
    { name: 'another list\'s signed endpoint', answer: () => ({ origin: g('otherList') }) },
    {
      name: 'replies and proofs of another list under the genuine manifest',
      answer: (part) => ({ origin: part === 'manifest' ? g('genuine') : g('otherList') }),
    },
  ];
}

/** The same attacks against the static exports (hashes): origins are the static sites. */
export function staticAttacks(origins, options) {
  return attacks({
    genuine: origins.static,
    forgedSigned: origins.staticForged,
    forgedUnsigned: origins.forgedUnsigned, // serve's unsigned stripped hashes: a reply is a reply
    otherList: origins.otherList,
  }, options);
}
