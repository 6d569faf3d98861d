// @ts-check
/**
 * server.js — the reference server (node:http): serves filter files and the
 * escalation endpoints over exact stores.
 *
 *   GET /filters/{name}.bgf   the filter, with ETag / If-None-Match, Cache-Control, CORS
 *   GET /range/{5 hex}        breached-password range protocol: SUFFIX:COUNT lines, CRLF;
 *                             `Add-Padding: true` adds count-0 rows
 *   GET /hashes/{8 hex}       full SHA-256 hashes (64 hex, one per line) with that 4-byte prefix;
 *                             from a labelled store `HASH:VALUE`, VALUE the threat label's index
 *   GET /range/manifest.json, /hashes/manifest.json
 *                             what the endpoint holds (list id, generation, records, threshold):
 *                             clients believe a "not listed" only from an endpoint that shows it
 *   GET /{path}               static files under `staticDir` (the demo pages), if given; never
 *                             dotfiles, dot-directories, *.key / *.pem or what reads as a private key
 *
 * It binds 127.0.0.1 unless told otherwise, answers malformed prefixes with
 * 400, has fixed routes (no request ever names a file outside its own list or
 * the static root) and stays up under bad requests.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, readFile, realpath, stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import { basename, extname, join, relative, resolve, sep } from 'node:path';

import { storeManifest } from './endpoint.js';
import { BloomFilter } from './filter.js';
import { StoreReader, parseHexPrefix, rangeReplyBytes } from './store.js';
import { storeProof, storeTree } from './store-tree.js';

const CONTENT_TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.wasm': 'application/wasm',
  '.bgf': 'application/octet-stream',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.txt': 'text/plain; charset=utf-8',
};

/** Lifetime of a signed endpoint manifest unless told otherwise (serve --expires-in), seconds. */
const DEFAULT_SIGNED_EXPIRES_IN = 86400;
/** A signed manifest is signed again at least this often (a quarter of its lifetime, at most 6 hours). */
const MAX_RENEW_MS = 6 * 3600 * 1000;

const CORS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, HEAD, OPTIONS',
  'access-control-allow-headers': 'Add-Padding, If-None-Match',
  'access-control-expose-headers': 'ETag, Content-Length',
};

function hex(bytes) {
  return Buffer.from(bytes).toString('hex').toUpperCase();
}

/** fs errors of a read (EISDIR) do not always name the file; the operator needs to know which. */
function withPath(error, path) {
  if (error && typeof error === 'object' && typeof error.syscall === 'string' && error.path === undefined) error.path = path;
  return error;
}

async function openStore(path) {
  return StoreReader.open(path).catch((error) => { throw withPath(error, path); });
}

/** Load and validate each filter once: a corrupt file fails start-up, not a request. */
async function loadFilters(filters) {
  const served = new Map();
  for (const [name, path] of Object.entries(filters ?? {})) {
    if (!/^[A-Za-z0-9._-]+$/.test(name)) throw new TypeError(`filter name '${name}' must be [A-Za-z0-9._-]+`);
    const bytes = await readFile(path).catch((error) => { throw withPath(error, path); });
    const filter = await BloomFilter.from(bytes); // throws BloomgateError on a bad file
    filter.free();
    const etag = `"${createHash('sha256').update(bytes).digest('base64url')}"`;
    served.set(`${name}.bgf`, { bytes, etag });
  }
  return served;
}

function etagMatches(header, etag) {
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

/**
 * Range and hash replies may be kept by shared caches but must be revalidated:
 * a CDN holding an older generation's reply beside the newer manifest would
 * answer "clean" for an item the newer list added. (Filter files may be cached:
 * an older filter is safe against a newer endpoint.)
 */
const ANSWER_CACHE = 'public, no-cache';

/** On every reply: browsers must not sniff a type (a range body must never run as a script). */
const ALWAYS = { 'x-content-type-options': 'nosniff' };

/** @param {string | Uint8Array} [body] */
function send(res, status, headers, body = '') {
  res.writeHead(status, { ...CORS, ...ALWAYS, ...headers });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}

/** Bytes handed to a socket at a time; a slow reader holds back the rest (backpressure). */
const CHUNK_BYTES = 64 * 1024;
/** A response that makes no progress for this long is cut: a stalled reader must not hold a connection. */
const STALLED_WRITE_MS = 30_000;

/** Cut a response that stops making progress; the listener goes with the response (keep-alive sockets serve many). */
function armStallTimer(res) {
  const socket = res.socket;
  if (!socket) return;
  const onStall = () => res.destroy();
  socket.setTimeout(STALLED_WRITE_MS, onStall);
  res.once('close', () => socket.removeListener('timeout', onStall)); // node re-arms its keep-alive timeout itself
}

/**
 * Send a large body without a per-request copy: views of the one shared
 * buffer, one chunk at a time, the next only once the socket drains.
 */
function sendBuffer(res, status, headers, buffer) {
  res.writeHead(status, { ...CORS, ...ALWAYS, ...headers });
  if (res.req.method === 'HEAD') return res.end();
  armStallTimer(res);
  let at = 0;
  const pump = () => {
    while (at < buffer.length) {
      const chunk = buffer.subarray(at, at + CHUNK_BYTES);
      at += chunk.length;
      if (!res.write(chunk)) return res.once('drain', pump);
    }
    res.end();
  };
  res.on('close', () => res.removeListener('drain', pump));
  pump();
}

/** Stream a file from disk: memory per request is one stream buffer, whatever the file's size. */
function sendFile(res, status, headers, path) {
  res.writeHead(status, { ...CORS, ...ALWAYS, ...headers });
  if (res.req.method === 'HEAD') return res.end();
  armStallTimer(res);
  const stream = createReadStream(path, { highWaterMark: CHUNK_BYTES });
  stream.on('error', () => res.destroy());
  res.on('close', () => stream.destroy());
  stream.pipe(res);
}

function text(res, status, message) {
  send(res, status, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' }, `${message}\n`);
}

/*
 * Static ETags name the content (SHA-256), never the mtime: a rewrite in place that keeps the
 * mtime (a deploy tool, `touch -r`, `cp --preserve`, a restored backup) must not earn a 304 for
 * changed bytes, or a client revalidating manifest.json stays on the old generation.
 * - Files up to STATIC_BUFFER_MAX (manifests, pages) are read whole on every request and the
 *   very bytes hashed are the bytes sent: the ETag always names the body.
 * - Larger files are hashed as a stream, and the digest is kept under (size, mtime, ctime, inode,
 *   device). No user can set ctime (utimes itself moves it to now), so a rewrite in place
 *   changes the key even when the mtime is put back (ext4, Linux 6.18: 2,000 of 2,000 rewrites
 *   within microseconds each moved it; tests/js/static-etag.test.mjs). Where the clock behind
 *   ctime is coarse, two writes can share one ctime, so a digest is kept only for a file whose
 *   ctime is older than STATIC_RACY_MS when hashing starts (git's "racy clean" rule) and whose
 *   key did not move while it was read; anything newer is hashed again on every request.
 * A large file rewritten between its hashing and its sending can still go out under the old
 * ETag once; the next request hashes it again.
 */
const STATIC_BUFFER_MAX = 64 * 1024;
const STATIC_RACY_MS = 2000;
const STATIC_DIGESTS_MAX = 1024;

/** @param {import('node:fs').Stats} info */
function staticKey(info) {
  return `${info.size}:${info.mtimeMs}:${info.ctimeMs}:${info.ino}:${info.dev}`;
}

/** @param {string} path @returns {Promise<string>} a quoted ETag of the file's SHA-256 */
function hashFile(path) {
  return new Promise((resolvePromise, reject) => {
    const hash = createHash('sha256');
    const stream = createReadStream(path, { highWaterMark: CHUNK_BYTES });
    stream.on('data', (chunk) => hash.update(chunk));
    stream.on('error', reject);
    stream.on('end', () => resolvePromise(`"${hash.digest('base64url')}"`));
  });
}

/**
 * The content ETag of a large static file, from `digests` when its key still holds.
 * @param {Map<string, { key: string, etag: string }>} digests
 * @param {string} path
 * @param {import('node:fs').Stats} info
 */
async function staticEtag(digests, path, info) {
  const key = staticKey(info);
  const known = digests.get(path);
  if (known && known.key === key) return known.etag;
  const started = Date.now();
  const etag = await hashFile(path);
  const after = await stat(path);
  if (staticKey(after) === key && info.ctimeMs < started - STATIC_RACY_MS) {
    digests.delete(path);
    if (digests.size >= STATIC_DIGESTS_MAX) digests.delete(/** @type {string} */ (digests.keys().next().value));
    digests.set(path, { key, etag });
  } else if (known) {
    digests.delete(path);
  }
  return etag;
}

/*
 * What static serving never sends, whatever the directory holds (a 404, as for a missing file:
 * nothing tells a prober it exists): dotfiles and anything under a dot-directory (`.env`,
 * `.git/config`, the site lock), key files by name (`*.key`, `*.pem`), and any file whose first
 * bytes are a private key (a PEM `PRIVATE KEY` block, an OpenSSH or PuTTY private key), so a key
 * saved as `notes.txt` stays home too. A publisher's site is public by design; its keys are not.
 */
const SECRET_EXTENSIONS = new Set(['.key', '.pem', '.p8', '.p12', '.pfx', '.ppk']);
const SNIFF_BYTES = 1024;
const PRIVATE_KEY_MARK = /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----|PuTTY-User-Key-File-/;

/** Whether a path relative to a static root names a dotfile, a file in a dot-directory or a key file by name. */
function secretByName(relativePath) {
  const parts = relativePath.split(/[/\\]/).filter((part) => part !== '');
  return parts.some((part) => part.startsWith('.')) || SECRET_EXTENSIONS.has(extname(relativePath).toLowerCase());
}

/** Whether the first bytes (of a body already read, or of the file) are a private key. */
async function secretByContent(path, body) {
  let head = body ? body.subarray(0, SNIFF_BYTES) : null;
  if (head === null) {
    const handle = await open(path, 'r');
    try {
      const buffer = Buffer.alloc(SNIFF_BYTES);
      const { bytesRead } = await handle.read(buffer, 0, SNIFF_BYTES, 0);
      head = buffer.subarray(0, bytesRead);
    } finally {
      await handle.close();
    }
  }
  return PRIVATE_KEY_MARK.test(head.toString('latin1'));
}

async function resolveMounts(staticDir) {
  if (!staticDir) return [];
  const list = typeof staticDir === 'string' ? [{ prefix: '/', dir: staticDir }] : staticDir;
  const mounts = [];
  for (const { prefix, dir } of list) {
    if (typeof prefix !== 'string' || !prefix.startsWith('/') || !prefix.endsWith('/')) {
      throw new TypeError(`static mount prefix '${prefix}' must start and end with '/'`);
    }
    mounts.push({ prefix, root: await realpath(resolve(dir)) });
  }
  return mounts.sort((a, b) => b.prefix.length - a.prefix.length);
}

/**
 * @param {object} options
 * @param {Record<string, string>} [options.filters] name -> .bgf path, served at /filters/{name}.bgf
 * @param {string} [options.passwordStore] .bgs of SHA-1 records, for /range
 * @param {string} [options.urlStore] .bgs of SHA-256 records, for /hashes
 * @param {string | Array<{ prefix: string, dir: string }>} [options.staticDir] directory served
 *   for other GET paths, or several mounted at URL prefixes (longest prefix wins)
 * @param {number} [options.maxAge=300] Cache-Control max-age of filters, seconds
 * @param {string} [options.answerCacheControl='public, no-cache'] Cache-Control of range and hash
 *   replies (a longer one lets a CDN serve an older generation's reply beside a newer manifest)
 * @param {number} [options.maxConnections=4096] connections served at once; more are closed
 * @param {number} [options.headersTimeoutMs=10000] a request whose headers take longer is cut
 * @param {number} [options.requestTimeoutMs=15000] likewise for the whole request
 * @param {(error: Error) => void} [options.onError] unexpected handler errors (default: stderr)
 * @param {(bytes: Uint8Array) => Array<{ keyid: string, sig: string }>} [options.sign] sign the
 *   endpoint manifests' canonical bytes (`serve --sign`): manifests become version 2 with the
 *   stores' Merkle roots, and `/range/{5 hex}.proof`, `/hashes/{block}.proof` answer proofs
 * @param {number} [options.expiresIn=86400] with `sign`: seconds a signed manifest is good for; it
 *   is signed again with a fresh expiry once a quarter of that has passed (at most every 6 hours)
 * @param {number} [options.renewEveryMs] how often it is signed again (tests)
 * @param {() => number} [options.now=Date.now] the clock, in milliseconds (tests)
 * @returns {Promise<import('node:http').Server & { stores: object }>} not yet listening
 */
export async function createReferenceServer(options = {}) {
  const filters = await loadFilters(options.filters);
  const passwordStore = options.passwordStore ? await openStore(options.passwordStore) : null;
  const urlStore = options.urlStore ? await openStore(options.urlStore) : null;
  if (passwordStore && passwordStore.hashType !== 'sha1') throw new TypeError('passwordStore must hold sha1 records');
  if (urlStore && urlStore.hashType !== 'sha256') throw new TypeError('urlStore must hold sha256 records');
  // Signed endpoints: each store's tree, built in one pass at start-up (js/store-tree.js), and
  // its manifest, signed with an expiry `expiresIn` seconds ahead and signed again once a quarter
  // of that has passed (checked as each manifest is asked for, so a server that slept or was
  // stopped in a debugger never hands out an old one): a replayed copy works for at most expiresIn.
  const sign = options.sign;
  const expiresIn = options.expiresIn ?? DEFAULT_SIGNED_EXPIRES_IN;
  if (!Number.isSafeInteger(expiresIn) || expiresIn < 1) throw new TypeError(`expiresIn must be a positive number of seconds, got ${String(expiresIn)}`);
  const renewEveryMs = options.renewEveryMs ?? Math.min(expiresIn * 250, MAX_RENEW_MS);
  const now = options.now ?? Date.now;
  const trees = {
    range: passwordStore && sign ? await storeTree(passwordStore, 'range') : null,
    hashes: urlStore && sign ? await storeTree(urlStore, 'hashes') : null,
  };
  /** @param {'range' | 'hashes'} protocol */
  const manifestOf = (protocol) => {
    const store = /** @type {StoreReader} */ (protocol === 'range' ? passwordStore : urlStore);
    const expires = sign ? Math.floor(now() / 1000) + expiresIn : undefined;
    return `${JSON.stringify(storeManifest(store, { protocol, padding: 'request', notFound: 'error', root: trees[protocol]?.root, shape: trees[protocol]?.shape, expires, sign }), null, 2)}\n`;
  };
  const manifests = { range: passwordStore ? manifestOf('range') : '', hashes: urlStore ? manifestOf('hashes') : '' };
  let signedAt = now();
  /** The endpoint manifest to send, signed again first when a quarter of its lifetime has passed. */
  const currentManifest = (protocol) => {
    if (sign && now() - signedAt >= renewEveryMs) {
      signedAt = now();
      if (passwordStore) manifests.range = manifestOf('range');
      if (urlStore) manifests.hashes = manifestOf('hashes');
    }
    return manifests[protocol];
  };
  const mounts = await resolveMounts(options.staticDir);
  const maxAge = options.maxAge ?? 300;
  const answerCache = options.answerCacheControl ?? ANSWER_CACHE;
  const onError = options.onError ?? ((error) => process.stderr.write(`bloomgate serve: ${error.stack ?? error}\n`));
  /** Content digests of large static files (staticEtag). */
  const staticDigests = new Map();

  async function serveStatic(res, pathname) {
    const mount = mounts.find((m) => pathname === m.prefix.slice(0, -1) || pathname.startsWith(m.prefix));
    if (!mount) return text(res, 404, 'not found');
    let decoded;
    try {
      decoded = decodeURIComponent(pathname.slice(mount.prefix.length - 1));
    } catch {
      return text(res, 400, 'malformed path');
    }
    if (decoded.includes('\0')) return text(res, 400, 'malformed path');
    const root = mount.root;
    const inside = (p) => p === root || p.startsWith(root + sep);
    let path = resolve(root, `.${decoded}`);
    if (!inside(path) || secretByName(relative(root, path))) return text(res, 404, 'not found');
    let info;
    try {
      // realpath: a symlink inside the root must not lead outside it (nor to a dotfile or key inside it).
      path = await realpath(path);
      if (!inside(path) || secretByName(relative(root, path))) return text(res, 404, 'not found');
      info = await stat(path);
      if (info.isDirectory()) {
        path = join(path, 'index.html');
        info = await stat(path);
      }
    } catch {
      return text(res, 404, 'not found');
    }
    if (!info.isFile()) return text(res, 404, 'not found');
    // A validator from the content (see staticEtag), so revalidation (openFilter's If-None-Match
    // on manifest.json) costs a 304, not the file, and changed bytes never do.
    /** @type {Buffer | null} */
    let body = null;
    let etag;
    try {
      if (info.size <= STATIC_BUFFER_MAX) {
        body = await readFile(path);
        etag = `"${createHash('sha256').update(body).digest('base64url')}"`;
      } else {
        etag = await staticEtag(staticDigests, path, info);
      }
      if (await secretByContent(path, body)) return text(res, 404, 'not found');
    } catch {
      return text(res, 404, 'not found'); // gone (or unreadable) since stat
    }
    const headers = { 'content-type': CONTENT_TYPES[extname(path)] ?? 'application/octet-stream', 'cache-control': 'no-cache', etag };
    const match = res.req.headers['if-none-match'];
    if (match !== undefined && match.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag || tag.trim() === '*')) {
      res.writeHead(304, { ...CORS, ...ALWAYS, ...headers });
      return res.end();
    }
    if (body !== null) return sendBuffer(res, 200, { ...headers, 'content-length': body.length }, body);
    sendFile(res, 200, { ...headers, 'content-length': info.size }, path);
  }

  async function route(req, res) {
    if (req.method === 'OPTIONS') return send(res, 204, { 'access-control-max-age': '86400' });
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return send(res, 405, { allow: 'GET, HEAD, OPTIONS', 'content-type': 'text/plain; charset=utf-8' }, 'method not allowed\n');
    }
    let pathname;
    try {
      pathname = new URL(req.url, 'http://localhost').pathname;
    } catch {
      return text(res, 400, 'malformed request target');
    }

    let match;
    if ((match = /^\/filters\/([^/]+)$/.exec(pathname))) {
      const file = filters.get(match[1]);
      if (!file) return text(res, 404, 'no such filter');
      const headers = { etag: file.etag, 'cache-control': `public, max-age=${maxAge}` };
      if (etagMatches(req.headers['if-none-match'], file.etag)) return send(res, 304, headers);
      return sendBuffer(res, 200, { ...headers, 'content-type': 'application/octet-stream', 'content-length': file.bytes.length }, file.bytes);
    }
    if ((match = /^\/(range|hashes)\/manifest\.json$/.exec(pathname))) {
      const store = match[1] === 'range' ? passwordStore : urlStore;
      if (!store) return text(res, 404, `no ${match[1] === 'range' ? 'password' : 'URL'} store is configured`);
      const body = currentManifest(/** @type {'range' | 'hashes'} */ (match[1]));
      return send(res, 200, { 'content-type': 'application/json', 'cache-control': 'no-cache' }, body);
    }
    if ((match = /^\/(range|hashes)\/([^/]*)\.proof$/.exec(pathname))) {
      const protocol = /** @type {'range' | 'hashes'} */ (match[1]);
      const tree = trees[protocol];
      if (!tree) return text(res, 404, `no signed ${protocol === 'range' ? 'password' : 'URL'} store is configured (serve --sign)`);
      const digits = (tree.shape.depth - tree.shape.blockBits) / 4;
      if (!parseHexPrefix(match[2], digits)) return text(res, 400, `the proof's block must be ${digits} hexadecimal characters`);
      const proof = await storeProof(/** @type {StoreReader} */ (protocol === 'range' ? passwordStore : urlStore), protocol, tree, parseInt(match[2], 16));
      // Only the headers a proof needs (a simple CORS GET needs only Allow-Origin): beside a ~35 KB
      // padded reply every header byte counts against the 1.03x target (bench/results/proof.md).
      res.writeHead(200, {
        'access-control-allow-origin': '*', ...ALWAYS,
        'content-type': 'application/octet-stream', 'cache-control': answerCache, 'content-length': proof.length,
      });
      return res.end(req.method === 'HEAD' ? undefined : proof);
    }
    if ((match = /^\/range\/([^/]*)$/.exec(pathname))) {
      if (!passwordStore) return text(res, 404, 'no password store is configured');
      const mode = new URL(req.url, 'http://localhost').searchParams.get('mode');
      if (mode !== null && mode.toLowerCase() !== 'sha1') {
        return text(res, 400, `range mode '${mode}' is not served: this store holds SHA-1 hashes only`);
      }
      const parsed = parseHexPrefix(match[1], 5);
      if (!parsed) return text(res, 400, 'the range prefix must be 5 hexadecimal characters');
      const records = await passwordStore.lookup(parsed.prefix, parsed.bits);
      // Bytes with their length: a ~35 KB padded reply goes out in one write, neither re-encoded
      // from a string nor chunked.
      const body = rangeReplyBytes(records, req.headers['add-padding'] === 'true');
      // Padded and unpadded replies differ: a shared cache must key on the header.
      return send(res, 200, { 'content-type': 'text/plain', 'cache-control': answerCache, vary: 'Add-Padding', 'content-length': body.length }, body);
    }
    if ((match = /^\/hashes\/([^/]*)$/.exec(pathname))) {
      if (!urlStore) return text(res, 404, 'no URL store is configured');
      const parsed = parseHexPrefix(match[1], 8);
      if (!parsed) return text(res, 400, 'the hash prefix must be 8 hexadecimal characters');
      const records = await urlStore.lookup(parsed.prefix, parsed.bits);
      // A labelled store's rows carry each hash's value (its label's index in the manifest): `HASH:VALUE`.
      const body = urlStore.labels
        ? records.map(({ hash, count }) => `${hex(hash).toLowerCase()}:${count}`).join('\n')
        : records.map(({ hash }) => hex(hash).toLowerCase()).join('\n');
      return send(res, 200, { 'content-type': 'text/plain', 'cache-control': answerCache }, body);
    }
    return serveStatic(res, pathname);
  }

  // Node checks the header and request timeouts every connectionsCheckingInterval (default 30 s):
  // checked every second, a slow-header client is cut within headersTimeoutMs (+1 s).
  const server = /** @type {import('node:http').Server & { stores: object }} */ (createServer({
    requestTimeout: options.requestTimeoutMs ?? 15000,
    headersTimeout: options.headersTimeoutMs ?? 10000,
    connectionsCheckingInterval: 1000,
    keepAliveTimeout: 5000,
    maxHeaderSize: 16384,
  }, (req, res) => {
    route(req, res).catch((error) => {
      onError(error);
      if (!res.headersSent) text(res, 500, 'internal error');
      else res.destroy();
    });
  }));
  // Past the cap new connections are closed at once: memory stays bounded under a flood.
  server.maxConnections = options.maxConnections ?? 4096;
  // A client that sends garbage gets a 400 from node:http; it must never take the server down.
  server.on('clientError', (error, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n');
    else socket.destroy();
  });
  server.on('close', () => {
    passwordStore?.close();
    urlStore?.close();
  });
  server.stores = { passwordStore, urlStore, filters: [...filters.keys()].map((name) => basename(name)) };
  return server;
}

/** Create and listen; resolves to { server, url }. Host defaults to 127.0.0.1, port to 0 (any). */
export async function startReferenceServer(options = {}) {
  const server = await createReferenceServer(options);
  const host = options.host ?? '127.0.0.1';
  await /** @type {Promise<void>} */ (new Promise((resolvePromise, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, resolvePromise);
  }));
  const address = /** @type {import('node:net').AddressInfo} */ (server.address()); // listening on TCP
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return { server, url: `http://${shownHost}:${address.port}` };
}
