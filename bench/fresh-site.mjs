/**
 * fresh-site.mjs — a filter site on 127.0.0.1 for openFilter()'s tests and
 * benchmark (tests/js/open-filter.test.mjs, tests/browser/open-filter.test.mjs,
 * bench/fresh.mjs): generations of one list built with BloomFilter, their
 * deltas (encodeDelta), and a node:http server answering the files and
 * manifest.json the way a static host behind `bloomgate publish` does: an
 * ETag per body, 304 for a matching If-None-Match, CORS with If-None-Match
 * allowed and ETag exposed (as `bloomgate serve` sends). Every request is
 * recorded; any path can be overridden (garbage, a status, a redirect, a
 * dropped connection), and the server can be stopped and started again on
 * the same port.
 */
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';

import { BloomFilter } from '../js/index.js';
import { encodeDelta } from '../js/wasm/index.js';

export const sri = (bytes) => `sha256-${createHash('sha256').update(bytes).digest('base64')}`;
export const checksumOf = (bytes) => Buffer.from(bytes.buffer, bytes.byteOffset, 16).readBigUInt64LE(8).toString(16).padStart(16, '0');
export const etagOf = (bytes) => `"${createHash('sha256').update(bytes).digest('base64url').slice(0, 22)}"`;

/**
 * Generations 1..count of one list, same geometry: generation g holds keys
 * `${prefix}${i}` for i in [shift*(g-1), shift*(g-1) + size): each removes
 * the `shift` oldest keys of the previous one and adds `shift` new ones.
 * @returns {Promise<{ listId: string, files: Uint8Array[], keysOf: (g: number) => string[] }>} files[g] is generation g
 */
export async function buildGenerations({ count, size, shift, capacity = size, errorRate = 0.01, seed = 42,
  listId = '5eed'.repeat(8), keyEncoding = 'utf8', kind = 'classic', prefix = 'key-', keyOf } = {}) {
  const files = [null];
  const key = keyOf ?? ((i) => `${prefix}${i}`);
  const keysOf = (g) => Array.from({ length: size }, (_, i) => key(shift * (g - 1) + i));
  for (let g = 1; g <= count; g++) {
    const filter = await BloomFilter.create({ capacity, errorRate, kind, seed, listId, generation: g, keyEncoding });
    const start = shift * (g - 1);
    const batch = 65536;
    for (let i = 0; i < size; i += batch) {
      const keys = [];
      for (let j = i; j < Math.min(size, i + batch); j++) keys.push(key(start + j));
      if (keyEncoding === 'utf8') filter.addAll(keys);
      else for (const k of keys) filter.add(k);
    }
    files.push(filter.serialize());
    filter.free();
  }
  return { listId, files, keysOf };
}

/** A publication manifest (the shape `bloomgate publish` writes). */
export function manifestFor(listId, generation, full, deltas = [], minRefreshSeconds = 0) {
  return {
    format: 'bloomgate-filter',
    version: 1,
    listId,
    generation,
    minRefreshSeconds,
    full: { url: `filter-${generation}.bgf`, length: full.length, integrity: sri(full), checksum: checksumOf(full) },
    deltas: deltas.map(({ from, bytes }) => ({ from, url: `delta-${from}-${generation}.bgd`, length: bytes.length, integrity: sri(bytes) })),
  };
}

/**
 * The site: `publish(g, { deltasFrom, minRefreshSeconds })` puts filter-g.bgf,
 * delta-f-g.bgd for each f and manifest.json in place. Paths are served from
 * `files` (Map path -> Uint8Array | string) unless `overrides` has the path:
 * { status, body, headers } or a function (req, res).
 */
export class FilterSite {
  constructor(generations, { cors = true } = {}) {
    this.generations = generations;
    this.files = new Map();
    this.overrides = new Map();
    this.requests = [];
    this.cors = cors;
    this.server = null;
    this.port = 0;
    this.deltaCache = new Map();
    this.etags = new WeakMap();
  }

  delta(from, to) {
    const key = `${from}-${to}`;
    if (!this.deltaCache.has(key)) this.deltaCache.set(key, encodeDelta(this.generations.files[from], this.generations.files[to]));
    return this.deltaCache.get(key);
  }

  /** Publish generation g with deltas from the given generations; returns the manifest. */
  publish(g, { deltasFrom = [], minRefreshSeconds = 0, manifest: edit } = {}) {
    const full = this.generations.files[g];
    this.files.set(`/filter-${g}.bgf`, full);
    const deltas = deltasFrom.map((from) => ({ from, bytes: this.delta(from, g) }));
    for (const { from, bytes } of deltas) this.files.set(`/delta-${from}-${g}.bgd`, bytes);
    let manifest = manifestFor(this.generations.listId, g, full, deltas, minRefreshSeconds);
    if (edit) manifest = edit(manifest) ?? manifest;
    this.setManifest(manifest);
    return manifest;
  }

  setManifest(manifest) {
    this.manifest = manifest;
    this.files.set('/manifest.json', typeof manifest === 'string' ? manifest : `${JSON.stringify(manifest, null, 2)}\n`);
  }

  get origin() {
    return `http://127.0.0.1:${this.port}`;
  }

  get manifestUrl() {
    return `${this.origin}/manifest.json`;
  }

  /** Requests so far as "METHOD /path STATUS" lines. */
  log() {
    return this.requests.map((r) => `${r.method} ${r.path} ${r.status}`);
  }

  /** Paths of GET requests so far. */
  paths() {
    return this.requests.filter((r) => r.method === 'GET').map((r) => r.path);
  }

  clearLog() {
    this.requests.length = 0;
  }

  handle(req, res) {
    const path = new URL(req.url, 'http://127.0.0.1').pathname;
    const record = { method: req.method, path, headers: { ...req.headers }, status: 0 };
    this.requests.push(record);
    const cors = this.cors ? {
      'access-control-allow-origin': '*',
      'access-control-allow-methods': 'GET, HEAD, OPTIONS',
      'access-control-allow-headers': 'If-None-Match',
      'access-control-expose-headers': 'ETag, Content-Length',
    } : {};
    const send = (status, headers, body) => {
      record.status = status;
      res.writeHead(status, { ...cors, 'cache-control': 'no-cache', ...headers });
      res.end(body);
    };
    if (req.method === 'OPTIONS') return send(204, { 'access-control-max-age': '600' });
    const override = this.overrides.get(path);
    if (typeof override === 'function') {
      record.status = -1;
      return override(req, res, cors);
    }
    if (override) {
      const body = override.body === undefined ? '' : Buffer.from(override.body);
      return send(override.status ?? 200, { 'content-length': body.length, ...override.headers }, body);
    }
    const file = this.files.get(path);
    if (file === undefined) return send(404, { 'content-type': 'text/plain' }, 'not found\n');
    const body = Buffer.from(typeof file === 'string' ? file : file);
    // One ETag per body, computed once (a static host's is a stat away, not a hash of the file).
    let etag = this.etags.get(file);
    if (etag === undefined) {
      etag = etagOf(body);
      if (typeof file !== 'string') this.etags.set(file, etag);
    }
    const inm = req.headers['if-none-match'];
    if (inm && inm.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag)) return send(304, { etag });
    const type = path.endsWith('.json') ? 'application/json' : 'application/octet-stream';
    return send(200, { etag, 'content-type': type, 'content-length': body.length }, req.method === 'HEAD' ? undefined : body);
  }

  /** Listen on 127.0.0.1 (the same port as before when restarted). */
  async start() {
    this.server = createServer((req, res) => this.handle(req, res));
    await new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.port, '127.0.0.1', resolve);
    });
    this.port = this.server.address().port;
    return this;
  }

  /** Stop listening and drop every connection: the host is down. */
  async stop() {
    if (this.server === null) return;
    const server = this.server;
    this.server = null;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(() => resolve()));
  }
}
