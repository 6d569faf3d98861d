// @ts-check
/**
 * url.js — known-bad URL checks with k-anonymity.
 *
 * Canonicalization and expressions come from the C core (src/url.c), so the
 * builder and the browser derive identical keys; the one step the core leaves
 * to the platform is IDN -> punycode, done here with the WHATWG URL parser.
 * A URL filter (key encoding `url`) holds SHA-256 of listed expressions. On
 * "maybe", each candidate expression is escalated by its 4-byte hash prefix
 * (`GET {hashesUrl}/{8 hex}`), the server returns the full hashes with that
 * prefix, and the comparison happens here: the URL never leaves the client.
 * With publisher keys, each "none listed" is checked against the signed root
 * with the proof of the prefix's 4-hex block (endpoint.js, merkle.js).
 */
import { BloomgateError } from './errors.js';
import { flagStale, keyEncodingOf } from './password.js';
import { authorityOf, checkReply, endpointUrl, fetchProof, listOf, manifestOf, trustOf } from './endpoint.js';
import { checkTimeout, privateGet } from './http.js';
import { blockDigits, hashesLeafRecords } from './merkle.js';
import { urlCandidates } from './filter.js';
import { labelOf, valueMeaningOf, valueOfKey } from './values.js';
import * as wasm from './wasm/index.js';

const MAX_HASHES_REPLY_BYTES = 1 << 20;
/** A row: the full hash, and from a labelled endpoint `:VALUE`, the index of its threat label in the manifest. */
const FULL_HASH = /^([0-9a-f]{64})(?::(\d{1,3}))?$/;
const NOT_FOUND = new Set([404]);

function requireReady() {
  if (!wasm.isReady()) {
    throw new BloomgateError('E_NOT_READY', 'the wasm module is not instantiated yet: await init() (or create or load a filter) first');
  }
}

function hexOf(bytes) {
  let hex = '';
  for (const byte of bytes) hex += byte.toString(16).padStart(2, '0');
  return hex;
}

/**
 * Hosts with non-ASCII characters (raw or percent-encoded UTF-8) become
 * punycode when the platform URL parser accepts them as an IDN; everything
 * else, including a host it refuses (a control character, a space, '<'), is
 * left for the core, which percent-escapes it byte by byte as the
 * specification's "http://\x01\x80.com/" -> "http://%01%80.com/" shows.
 */
function punycodeHost(input) {
  const schemeEnd = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.exec(input)?.[0].length ?? (input.startsWith('//') ? 2 : 0);
  const authorityEnd = input.slice(schemeEnd).search(/[/?#\\]/);
  const authority = authorityEnd < 0 ? input.slice(schemeEnd) : input.slice(schemeEnd, schemeEnd + authorityEnd);
  const hostStart = authority.lastIndexOf('@') + 1;
  const portStart = authority.startsWith('[', hostStart) ? -1 : authority.indexOf(':', hostStart);
  const host = authority.slice(hostStart, portStart < 0 ? undefined : portStart);
  let decoded = host;
  if (/%[89A-Fa-f][0-9A-Fa-f]/.test(host)) {
    try {
      decoded = decodeURIComponent(host);
    } catch {
      return input; // not UTF-8: the core escapes the bytes as they are
    }
  }
  // eslint-disable-next-line no-control-regex -- the range starts at U+0000 on purpose: any non-ASCII unit
  if (!/[^\x00-\x7f]/.test(decoded)) return input;
  let ascii;
  try {
    const parsed = new URL(`http://${decoded}/`);
    // An escaped '#', '/', '?', '@' or backslash makes the parser take only a part of the host.
    if (parsed.href !== `http://${parsed.host}/`) return input;
    ascii = parsed.hostname;
  } catch {
    return input; // not an IDN: escaped by the core, like any other byte
  }
  const at = schemeEnd + hostStart;
  return input.slice(0, at) + ascii + input.slice(at + host.length);
}

function requireUrlString(url, where) {
  if (typeof url !== 'string') throw new TypeError(`${where}: url must be a string`);
  return punycodeHost(url);
}

/**
 * Safe Browsing canonical form of a URL (sync; the wasm module must be instantiated).
 * @type {typeof import('./index.js').canonicalizeUrl}
 */
export function canonicalizeUrl(url) {
  const input = requireUrlString(url, 'canonicalizeUrl');
  requireReady();
  return wasm.urlCanonicalize(input);
}

/**
 * Host-suffix x path-prefix expressions of a URL, most specific first, at most 30 (sync).
 * @type {typeof import('./index.js').urlExpressions}
 */
export function urlExpressions(url) {
  const input = requireUrlString(url, 'urlExpressions');
  requireReady();
  return wasm.urlExpressions(input);
}

/**
 * Options and result as index.d.ts declares them (UrlCheck). The default `{}` only lets a
 * missing options argument fail with the TypeError below.
 * @type {typeof import('./index.js').checkUrl}
 */
export async function checkUrl(url, options = /** @type {any} */ ({})) {
  return flagStale(await checkUrlNow(url, options), options?.filter);
}

/** @param {string} url @param {any} options */
async function checkUrlNow(url, options) {
  if (options === null || typeof options !== 'object') throw new TypeError('checkUrl: options must be an object');
  const { filter, hashesUrl, signal, timeoutMs = 10000 } = options;
  if (!filter || typeof filter.mightContainKey !== 'function') throw new TypeError('checkUrl needs a filter with key encoding url');
  if (keyEncodingOf(filter) !== 'url') {
    throw new BloomgateError('E_KEY_ENCODING', `URL filters use key encoding 'url'; this filter uses '${keyEncodingOf(filter)}'`);
  }
  checkTimeout(timeoutMs, 'checkUrl');
  const keys = trustOf(options, filter, 'checkUrl');
  const input = requireUrlString(url, 'checkUrl');
  await wasm.ready();
  const candidates = urlCandidates(filter, input).map(({ expression, digest }) => ({ expression, digest, hex: hexOf(digest) }));
  // A value filter's threat label for a candidate: exact for a listed one, arbitrary for a false positive.
  const meaning = valueMeaningOf(filter);
  const localThreat = (candidate) => (meaning ? labelOf(meaning, valueOfKey(filter, candidate.digest)) : null);
  const threatField = (threat) => (meaning ? { threat } : {});
  if (candidates.length === 0) return { listed: false, expression: null, escalated: false, confirmed: true, ...threatField(null) };
  if (hashesUrl === undefined) {
    return { listed: true, expression: candidates[0].expression, escalated: false, confirmed: false, ...threatField(localThreat(candidates[0])) };
  }

  const request = { fetch: options.fetch ?? globalThis.fetch, signal, timeoutMs, endpoint: String(hashesUrl) };
  // URL endpoints are bloomgate's own protocol: a "none listed" counts only with a manifest (endpoint.js).
  const manifest = await manifestOf(hashesUrl, 'hashes', request);
  if (!manifest) {
    throw new BloomgateError('E_ESCALATION',
      `hashes endpoint ${hashesUrl} has no bloomgate manifest (${endpointUrl(hashesUrl, 'manifest.json')}), so its "not listed" cannot be trusted ` +
      "(serve it with 'bloomgate serve --url-store' or 'bloomgate export-ranges')");
  }
  const authority = await authorityOf(manifest, listOf(filter, false), keys, String(hashesUrl), 'hashes');
  const replies = new Map(); // one request per distinct 4-byte prefix
  const proofs = new Map(); // with keys: one proof per 4-hex block, fetched beside the first reply
  for (const { expression, hex } of candidates) {
    const prefix = hex.slice(0, 8);
    if (!replies.has(prefix)) {
      if (authority) {
        const block = prefix.slice(0, blockDigits(authority.shape));
        if (!proofs.has(block)) {
          const pending = fetchProof(String(hashesUrl), prefix, authority.shape, request);
          pending.catch(() => {}); // awaited below, only when a "none listed" needs it
          proofs.set(block, pending);
        }
      }
      replies.set(prefix, await fetchFullHashes(hashesUrl, prefix, request, manifest));
    }
    const reply = replies.get(prefix);
    if (reply.has(hex)) {
      // The endpoint's label when it carries them (its manifest's values), else the filter's.
      const value = reply.get(hex);
      const threat = manifest.values?.meaning === 'threat' ? labelOf(manifest.values, value) : localThreat({ digest: hexToBytes(hex) });
      return { listed: true, expression, escalated: true, confirmed: true, ...(meaning || manifest.values ? { threat } : {}) };
    }
  }
  if (authority) {
    // No candidate listed: every reply's "none" must reach the signed root.
    for (const [prefix, hashes] of replies) {
      const proof = await proofs.get(prefix.slice(0, blockDigits(authority.shape)));
      const records = [...hashes.keys()].sort().map((hash) => ({ hash: hexToBytes(hash) }));
      checkReply(authority, prefix, hashesLeafRecords(records), proof, String(hashesUrl));
    }
  }
  return { listed: false, expression: null, escalated: true, confirmed: true, ...threatField(null) };
}

function hexToBytes(hex) {
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return bytes;
}

async function fetchFullHashes(hashesUrl, prefix, request, manifest) {
  const { status, text } = await privateGet(endpointUrl(hashesUrl, prefix), {
    ...request,
    limit: MAX_HASHES_REPLY_BYTES,
    what: 'hashes',
    // A static export writes files only for prefixes that have hashes; its manifest says so.
    passStatuses: manifest.notFound === 'empty' ? NOT_FOUND : undefined,
  });
  /** @type {Map<string, number | null>} hash -> value (null: the endpoint carries none) */
  const hashes = new Map();
  if (status === 404) return hashes;
  const labels = manifest.values?.meaning === 'threat' ? manifest.values.labels.length : 0;
  const lines = text.split(/\r?\n/);
  if (lines[lines.length - 1] === '') lines.pop();
  lines.forEach((line, i) => {
    // A labelled endpoint's rows carry a value below its label count; anyone else's are bare hashes.
    const [, hash, value] = FULL_HASH.exec(line.toLowerCase()) ?? [];
    if (!hash?.startsWith(prefix) || (labels > 0 ? !(Number(value) < labels) : value !== undefined)) {
      throw new BloomgateError('E_ESCALATION', `malformed hashes reply at line ${i + 1}`);
    }
    hashes.set(hash, labels > 0 ? Number(value) : null);
  });
  return hashes;
}
