// @ts-check
/**
 * update/ — filters that stay fresh from a `bloomgate publish` site, one job
 * a file:
 *
 *   index.js        openFilter(): options, the manifest URL
 *   trust.js        THE rule: when a manifest is believed (read it whole)
 *   manifest.js     the manifest's fields and the canonical bytes signatures cover
 *   key-rotation.js a site's key history and how a client follows it
 *   download.js     the files a believed manifest names, accepted only as it describes them
 *   storage.js      where the copy is kept between runs
 *   live-filter.js  the live filter: persisted copy, checks, swaps, events, staleness
 */
import { checkTimeout, MAX_TIMEOUT_MS } from '../http.js';
import { BloomgateError } from '../errors.js';
import { keySetFromOptions } from '../signature.js';
import * as wasm from '../wasm/index.js';
import { FreshFilter, INTERNAL } from './live-filter.js';
import { checkStorage } from './storage.js';

export { directoryStorage, indexedDbStorage, registerDirectoryStorage } from './storage.js';
export { parseManifest, canonicalBytes } from './manifest.js';

const DEFAULT_MAX_BYTES = 256 * 1024 * 1024;
const DEFAULT_TIMEOUT_MS = 60 * 1000;
const HEX32 = /^[0-9a-f]{32}$/;
const ON_STALE = new Set(['flag', 'error']);

/** Loopback hosts, where plain http: carries nothing across a network. */
export function isLoopback(url) {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host.endsWith('.localhost') || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

function insecure(url, what) {
  return new BloomgateError('E_INSECURE',
    `${what} ${url.href} is plain http: on a network host, where anyone on the path can change it; use https:, ` +
    'or pass allowHttp: true to openFilter() if this network is yours');
}

function resolveManifestUrl(manifestUrl, allowHttp) {
  if (typeof manifestUrl !== 'string' && !(manifestUrl instanceof URL)) {
    throw new TypeError('openFilter(manifestUrl): manifestUrl must be a URL string or a URL');
  }
  const base = globalThis.location?.href;
  let url;
  try {
    url = base ? new URL(manifestUrl, base) : new URL(manifestUrl);
  } catch {
    throw new TypeError(`openFilter(): '${String(manifestUrl)}' is not an absolute URL (here there is no page to resolve it against)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TypeError(`openFilter(): the manifest URL must be http: or https:, got ${url.protocol}`);
  }
  if (url.protocol === 'http:' && !allowHttp && !isLoopback(url)) throw insecure(url, 'the filter manifest');
  url.hash = '';
  return url.href;
}

/**
 * With keys, the caller names its list: one publisher key may sign several lists (phishing,
 * malware), and a host could otherwise serve any of them under any URL (js/update/trust.js, rule 3).
 * @param {string} where e.g. 'openFilter()'
 */
export function missingListId(where) {
  return new TypeError(`${where}: with keys, pass listId too — the 32 hex digits 'bloomgate publish' prints under "client options" ` +
    "(also in the site's manifest.json, or 'bloomgate inspect FILE.bgf'): it binds this client to that one list, so a host cannot " +
    'serve another list the same keys signed');
}

function readOptions(options) {
  if (options === null || typeof options !== 'object') throw new TypeError('openFilter(manifestUrl, options): options must be an object');
  const allowHttp = options.allowHttp ?? false;
  if (typeof allowHttp !== 'boolean') throw new TypeError('openFilter(): allowHttp must be a boolean');
  const settings = {
    fetch: options.fetch ?? globalThis.fetch,
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    maxBytes: options.maxBytes ?? DEFAULT_MAX_BYTES,
    refreshSeconds: options.refreshSeconds ?? 0,
    autoRefresh: options.autoRefresh ?? false,
    listId: null,
    followSuccessors: options.followSuccessors ?? false,
    storage: options.storage,
    storageKey: options.storageKey,
    onUpdate: options.onUpdate,
    onError: options.onError,
    onCheck: options.onCheck,
    onStaleEvent: undefined,
    onStale: 'flag',
    initial: options.initial,
    now: options.now ?? (() => Date.now()),
    trusted: keySetFromOptions(options.keys, options.threshold, 'openFilter()'),
    allowHttp,
    /** Files a manifest names travel like the manifest: https:, or loopback, or allowHttp. */
    checkFileUrls(manifest) {
      for (const file of [manifest.full, ...manifest.deltas, ...(manifest.keysUrl ? [{ url: manifest.keysUrl }] : [])]) {
        const url = new URL(file.url);
        if (url.protocol === 'http:' && !allowHttp && !isLoopback(url)) throw insecure(url, 'a file named by the manifest,');
      }
    },
  };
  if (typeof settings.fetch !== 'function') throw new TypeError('openFilter(): no fetch() is available here; pass options.fetch');
  checkTimeout(settings.timeoutMs, 'openFilter()');
  if (!Number.isSafeInteger(settings.maxBytes) || settings.maxBytes < wasm.HEADER_SIZE) {
    throw new RangeError(`openFilter(): maxBytes must be an integer of at least ${wasm.HEADER_SIZE}, got ${String(settings.maxBytes)}`);
  }
  if (typeof settings.refreshSeconds !== 'number' || !(settings.refreshSeconds >= 0) || settings.refreshSeconds * 1000 > MAX_TIMEOUT_MS) {
    throw new RangeError(`openFilter(): refreshSeconds must be a number in [0, ${Math.floor(MAX_TIMEOUT_MS / 1000)}], got ${String(settings.refreshSeconds)}`);
  }
  if (typeof settings.autoRefresh !== 'boolean') throw new TypeError('openFilter(): autoRefresh must be a boolean');
  if (options.listId !== undefined) {
    if (typeof options.listId !== 'string' || !HEX32.test(options.listId.toLowerCase())) {
      throw new TypeError('openFilter(): listId must be 32 hex digits');
    }
    settings.listId = options.listId.toLowerCase();
  }
  if (typeof settings.followSuccessors !== 'boolean') throw new TypeError('openFilter(): followSuccessors must be a boolean');
  if (settings.trusted !== null && settings.listId === null) throw missingListId('openFilter()');
  if (settings.followSuccessors && settings.trusted === null) {
    throw new TypeError('openFilter(): followSuccessors needs keys: only a successor the publisher signed is followed');
  }
  if (options.onStale !== undefined) {
    if (typeof options.onStale === 'function') settings.onStaleEvent = options.onStale;
    else if (ON_STALE.has(options.onStale)) settings.onStale = options.onStale;
    else throw new TypeError("openFilter(): onStale must be 'flag' (the default), 'error' or a function called when the filter turns stale");
  }
  if (settings.storage !== undefined && settings.storage !== false) {
    if (settings.storage === null || typeof settings.storage !== 'object') {
      throw new TypeError('openFilter(): storage must be false or an object with get, set and delete');
    }
    checkStorage(settings.storage);
  }
  if (settings.storageKey !== undefined && (typeof settings.storageKey !== 'string' || settings.storageKey === '')) {
    throw new TypeError('openFilter(): storageKey must be a non-empty string');
  }
  const { initial } = options;
  if (initial !== undefined && typeof initial !== 'function' && !(initial instanceof Uint8Array) && !(initial instanceof ArrayBuffer)) {
    throw new TypeError('openFilter(): initial must be the bytes of a .bgf file, or a function that gives them');
  }
  for (const name of ['onUpdate', 'onError', 'onCheck', 'now']) {
    if (options[name] !== undefined && typeof options[name] !== 'function') throw new TypeError(`openFilter(): ${name} must be a function`);
  }
  return settings;
}

/**
 * A filter that is usable at once and keeps itself fresh from a publication
 * manifest (see the README, "Filters that stay fresh"). With `keys`, only
 * manifests signed by them are believed (js/update/trust.js).
 * @param {string | URL} manifestUrl
 * @param {object} [options]
 * @returns {Promise<FreshFilter>}
 */
export async function openFilter(manifestUrl, options = {}) {
  const settings = readOptions(options);
  const url = resolveManifestUrl(manifestUrl, settings.allowHttp);
  return FreshFilter.open(INTERNAL, url, settings);
}
