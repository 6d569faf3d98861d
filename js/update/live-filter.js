// @ts-check
/**
 * update/live-filter.js — the filter openFilter() resolves to: usable at
 * once, kept fresh from a publication manifest.
 *
 * It starts from the copy it persisted last time (validated by the core, and
 * used only when its record says it was accepted from this list, under the
 * same keys), so it answers offline. It asks the manifest again no more often
 * than the manifest allows, lets trust.js decide whether to believe it, and
 * moves to a newer generation by the cheapest path (download.js). The new
 * filter replaces the old one in one assignment and the old one is freed.
 * Any failure keeps the filter in use, becomes `lastError` and an 'error'
 * event; queries never throw for it. Past the believed manifest's expiry the
 * filter is stale: a 'stale' event, `stale: true` on check results, and with
 * `onStale: 'error'` every query throws E_EXPIRED.
 */
import { bytesHex, hexBytes } from '../canonical.js';
import { BloomgateError } from '../errors.js';
import { BloomFilter, CURRENT_FILTER } from '../filter.js';
import { MAX_TIMEOUT_MS, privateGet } from '../http.js';
import { keySetFromOptions, verifierName } from '../signature.js';
import * as wasm from '../wasm/index.js';
import { checksumOf, sha256, viaDelta, viaFull } from './download.js';
import { parseRotations } from './key-rotation.js';
import { MAX_MANIFEST_BYTES, MAX_MIN_REFRESH_SECONDS, parseManifest } from './manifest.js';
import { defaultStorage } from './storage.js';
import { checkStillValid, judgeManifest } from './trust.js';

/** autoRefresh's period when neither the manifest nor the caller names one. */
const DEFAULT_POLL_SECONDS = 5 * 60;
/** Up to this size the file bytes of the filter in use are kept, as the base of the next delta. */
const KEEP_BYTES_MAX = 16 * 1024 * 1024;
const NOT_MODIFIED = new Set([304]);
const META_VERSION = 2;
export const INTERNAL = Symbol('bloomgate.openFilter');

function noop() {}

function describe(error) {
  return String(error?.message ?? error);
}

/** Any failure as a BloomgateError: its own code when it has one, else `code` (its cause kept). */
export function asBloomgateError(error, code, what) {
  if (error instanceof BloomgateError) return error;
  if (error !== null && typeof error === 'object' && typeof error.code === 'string' && /^E_[A-Z_]+$/.test(error.code)) {
    return new BloomgateError(error.code, describe(error), { cause: error });
  }
  const name = error?.name === 'QuotaExceededError' ? ' (storage quota exceeded)' : '';
  return new BloomgateError(code, `${what}: ${describe(error)}${name}`, { cause: error });
}

function closedError() {
  return new BloomgateError('E_FREED', 'this filter has been closed; open it again with openFilter()');
}

function makeEvent(type, detail) {
  if (typeof CustomEvent === 'function') return new CustomEvent(type, { detail });
  const event = new Event(type);
  Object.defineProperty(event, 'detail', { value: detail });
  return event;
}

/** Which pinned keys a persisted record was accepted under: their ids, sorted, and the threshold. */
function pinOf(trusted) {
  return trusted === null ? null : `${trusted.threshold}:${trusted.keys.map((key) => key.id).sort().join(',')}`;
}

/**
 * A filter that keeps itself fresh: what openFilter() resolves to. Queries
 * go to the BloomFilter of the newest good generation; 'update', 'error',
 * 'check' and 'stale' events say what happened.
 */
export class FreshFilter extends EventTarget {
  /** @type {string} */
  #url;
  /** @type {any} */
  #settings;
  /** @type {import('./storage.js').Storage | null} */
  #storage = null;
  /** @type {string} */
  #storageKey;
  /** @type {BloomFilter | null} */
  #filter = null;
  /** @type {'persisted' | 'initial' | 'full' | 'delta' | null} */
  #source = null;
  /** @type {string | null} the header checksum of the filter in use */
  #checksum = null;
  /** @type {Uint8Array | null} the SHA-256 of the file in use, when known */
  #sha256 = null;
  #length = 0;
  /** @type {string | null} */
  #etag = null;
  /** @type {number | null} */
  #lastCheck = null;
  /** @type {number | null} */
  #lastUpdate = null;
  /** @type {BloomgateError | null} */
  #lastError = null;
  #errorsThisCheck = 0;
  #bytesDownloaded = 0;
  #minRefreshSeconds = 0;
  /** @type {Promise<any> | null} */
  #checking = null;
  /** @type {AbortController | null} */
  #controller = null;
  /** @type {ReturnType<typeof setTimeout> | null} */
  #timer = null;
  #closed = false;
  /** Storage holds the bytes of the filter in use. */
  #persisted = false;
  /** @type {Uint8Array | null} The file bytes of the filter in use, when known and small (a delta's base without serialize()). */
  #bytes = null;
  /** @type {import('./key-rotation.js').TrustedKeys | null} the keys trusted now (null: unsigned) */
  #trusted = null;
  /** Whether the filter in use came from a manifest verified by the keys. */
  #signed = false;
  /** @type {string[]} */
  #signedBy = [];
  /** @type {number | null} ms since the epoch: the believed manifest's expiry */
  #expiresMs = null;
  #staleReported = false;
  /** @type {'node' | 'webcrypto' | 'js' | null} */
  #verifier = null;
  /** @type {ReturnType<typeof setTimeout> | null} fires the 'stale' event at the expiry, unasked */
  #staleTimer = null;

  /** @private use openFilter() */
  constructor(token, url, settings) {
    if (token !== INTERNAL) throw new TypeError('use openFilter(manifestUrl, options) to open a live filter');
    super();
    this.#url = url;
    this.#settings = settings;
    this.#storageKey = settings.storageKey ?? url;
    this.#trusted = settings.trusted === null ? null : { ...settings.trusted, seq: 0 };
  }

  /* ---- queries: the BloomFilter in use now ---- */

  #current() {
    if (this.#filter === null) throw closedError();
    if (this.#settings.onStale === 'error' && this.stale) {
      throw new BloomgateError('E_EXPIRED',
        `the filter from ${this.#url} is stale: its manifest expired at ${new Date(/** @type {number} */ (this.#expiresMs)).toISOString()} and no fresh one was accepted (onStale: 'error')`);
    }
    return this.#filter;
  }

  /** The BloomFilter in use now, so checkUrl checks a URL in one call into the core. */
  [CURRENT_FILTER]() {
    return this.#current();
  }

  /** false: definitely not in the list. true: maybe. */
  mightContain(item) {
    return this.#current().mightContain(item);
  }

  mightContainMany(items, into) {
    return this.#current().mightContainMany(items, into);
  }

  mightContainKey(key) {
    return this.#current().mightContainKey(key);
  }

  /** The value stored with an item in the filter in use (kinds with values), or null: definitely not. With no argument, the object itself. */
  valueOf(item) {
    if (arguments.length === 0) return /** @type {number | null} */ (/** @type {unknown} */ (this));
    return this.#current().valueOf(item);
  }

  valueOfKey(key) {
    return this.#current().valueOfKey(key);
  }

  get valueBits() {
    return this.#current().valueBits;
  }

  get kind() {
    return this.#current().kind;
  }

  get keyEncoding() {
    return this.#current().keyEncoding;
  }

  get listId() {
    return this.#current().listId;
  }

  get generation() {
    return this.#current().generation;
  }

  get minCount() {
    return this.#current().minCount;
  }

  get metadata() {
    return this.#current().metadata;
  }

  /** The .bgf bytes of the generation in use (a copy). */
  serialize() {
    return this.#current().serialize();
  }

  /** The manifest this filter follows. */
  get manifestUrl() {
    return this.#url;
  }

  /**
   * The publisher keys this filter trusts now (after any rotation it
   * followed) and the list they bind it to (the pinned one, or the successor
   * it followed), which checkUrl, checkPassword and createGate use for the
   * escalation endpoint when they are given this filter; null when unsigned.
   * @returns {{ keys: string[], threshold: number, listId: string } | null}
   */
  get trust() {
    const trusted = this.#trusted;
    if (trusted === null) return null;
    return { keys: trusted.keys.map((key) => key.id), threshold: trusted.threshold, listId: this.#filter?.listId ?? this.#settings.listId };
  }

  /**
   * True past the expiry of the newest manifest believed: the site froze (or
   * is unreachable) and newer listings may be missing. The first time it is
   * seen true, a 'stale' event fires.
   */
  get stale() {
    const stale = this.#expiresMs !== null && this.#settings.now() >= this.#expiresMs;
    if (stale && !this.#staleReported) {
      this.#staleReported = true;
      const expires = this.#expiresMs;
      queueMicrotask(() => this.#emit('stale', { expires, generation: this.#filter?.generation ?? null, url: this.#url }));
    }
    return stale;
  }

  /**
   * The BloomFilter's stats plus how it stays fresh: generation, lastCheck and
   * lastUpdate (ms since the epoch, or null), lastError (a BloomgateError or
   * null), source ('persisted' | 'initial' | 'full' | 'delta'), bytesDownloaded
   * (this session), signed (verified by the keys) and the expiry.
   */
  stats() {
    if (this.#filter === null) throw closedError();
    return {
      ...this.#filter.stats(),
      source: this.#source,
      lastCheck: this.#lastCheck,
      lastUpdate: this.#lastUpdate,
      lastError: this.#lastError,
      bytesDownloaded: this.#bytesDownloaded,
      nextCheck: this.#nextCheckAt(),
      minRefreshSeconds: this.#interval(),
      manifestUrl: this.#url,
      storage: this.#storage === null ? null : this.#storage.kind ?? 'custom',
      signed: this.#signed,
      signedBy: [...this.#signedBy],
      keySet: this.#trusted === null ? null : this.#trusted.seq,
      verifier: this.#trusted === null ? null : this.#verifier,
      expires: this.#expiresMs,
      stale: this.stale,
    };
  }

  /* ---- refresh ---- */

  /**
   * Ask the manifest now, unless it was asked less than the allowed interval
   * ago (`force: true` asks anyway: for a person pressing "update now").
   * Resolves with what happened; failures are reported, not thrown.
   * @param {{ force?: boolean }} [options]
   */
  refresh(options = {}) {
    if (this.#closed) return Promise.reject(closedError());
    return this.#check(options?.force === true, false);
  }

  /** Stop refreshing and free the filter; later queries throw E_FREED. */
  close() {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    if (this.#staleTimer !== null) clearTimeout(this.#staleTimer);
    this.#staleTimer = null;
    this.#controller?.abort(closedError());
    const filter = this.#filter;
    this.#filter = null;
    this.#bytes = null;
    filter?.free();
  }

  /** close(), under the name BloomFilter uses. */
  free() {
    this.close();
  }

  #interval() {
    return Math.max(this.#minRefreshSeconds, this.#settings.refreshSeconds);
  }

  #nextCheckAt() {
    if (this.#lastCheck === null) return this.#settings.now();
    return this.#lastCheck + this.#interval() * 1000;
  }

  #due() {
    const now = this.#settings.now();
    // A clock that went back (or a copy saved under another clock) does not lock checks out.
    return this.#lastCheck === null || now < this.#lastCheck || now >= this.#nextCheckAt();
  }

  #emit(type, detail) {
    const callbacks = { update: this.#settings.onUpdate, error: this.#settings.onError, check: this.#settings.onCheck, stale: this.#settings.onStaleEvent };
    const callback = callbacks[type];
    if (callback) {
      try {
        if (type === 'error') callback(detail.error, detail);
        else callback(detail);
      } catch {
        // a throwing callback must not break the update
      }
    }
    this.dispatchEvent(makeEvent(type, detail));
  }

  #report(error, stage) {
    this.#lastError = error;
    this.#errorsThisCheck++;
    this.#emit('error', { error, code: error.code, stage, generation: this.#filter?.generation ?? null, signed: this.#trusted !== null });
  }

  #schedule() {
    if (!this.#settings.autoRefresh || this.#closed) return;
    if (this.#timer !== null) clearTimeout(this.#timer);
    const interval = this.#interval() || DEFAULT_POLL_SECONDS;
    const last = this.#lastCheck ?? this.#settings.now();
    const delay = Math.min(MAX_TIMEOUT_MS, Math.max(1000, last + interval * 1000 - this.#settings.now()));
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.#check(false, false).then(noop, noop);
    }, delay);
    // Node: a refresh timer never keeps the process alive on its own.
    if (typeof this.#timer === 'object' && this.#timer !== null && typeof this.#timer.unref === 'function') this.#timer.unref();
  }

  /** The check at open: one macrotask later; refresh() before then joins it. */
  #checkSoon() {
    let settle;
    const soon = new Promise((resolve) => { settle = resolve; });
    this.#checking = soon;
    // Not unref'd: a script that awaits refresh() right after the open waits for this check.
    setTimeout(() => {
      if (this.#checking === soon) this.#checking = null;
      if (this.#closed) {
        settle({ checked: false, changed: false, generation: null, error: closedError() });
        return;
      }
      settle(this.#check(true, false));
    }, 0);
  }

  #check(force, initial) {
    if (this.#checking !== null) return this.#checking;
    if (!force && !this.#due()) {
      this.#schedule();
      return Promise.resolve({ checked: false, changed: false, generation: this.#filter?.generation ?? null, nextCheck: this.#nextCheckAt(), stale: this.stale });
    }
    const running = this.#runCheck(initial);
    this.#checking = running;
    const settle = () => {
      if (this.#checking === running) this.#checking = null;
      this.#schedule();
    };
    running.then(settle, settle);
    return running;
  }

  /* ---- opening ---- */

  /** @internal what openFilter() runs: the persisted copy, else the first download. */
  static async open(token, url, settings) {
    const live = new FreshFilter(token, url, settings);
    // Instantiate the module while storage is read: after a reload the two overlap.
    Promise.resolve(wasm.ready()).catch(noop);
    try {
      if (live.#trusted !== null) live.#verifier = await verifierName();
      await live.#openStorage(settings);
      if (live.#filter === null && settings.initial !== undefined) await live.#openInitial(settings);
      if (live.#filter !== null) {
        // Usable now. A due check runs in the background (its outcome is an event), started
        // after this open has resolved, so that the first queries do not wait for its start.
        if (live.#due()) live.#checkSoon();
        else live.#schedule();
        return live;
      }
      await live.#check(true, true);
      return live;
    } catch (error) {
      live.close();
      throw error;
    }
  }

  async #discard(reason, stage) {
    this.#report(new BloomgateError(reason.code,
      `the persisted copy of ${this.#url} was discarded (${reason.message}); fetching the filter again`, { cause: reason }), stage);
    try {
      await /** @type {import('./storage.js').Storage} */ (this.#storage).delete(this.#storageKey);
    } catch {
      // it is refused on every start until it is replaced
    }
  }

  async #openStorage(settings) {
    if (settings.storage === false) return;
    try {
      this.#storage = settings.storage === undefined ? defaultStorage() : settings.storage;
    } catch (error) {
      this.#report(asBloomgateError(error, 'E_STORAGE', 'the filter storage could not be opened'), 'storage');
      this.#storage = null;
    }
    if (this.#storage === null) return;
    let record;
    try {
      record = await this.#storage.get(this.#storageKey);
    } catch (error) {
      this.#report(asBloomgateError(error, 'E_STORAGE', 'the persisted filter could not be read'), 'storage');
      return;
    }
    if (record === null || record === undefined) return;
    const meta = record.meta && typeof record.meta === 'object' ? record.meta : {};
    /** @type {BloomFilter | null} */
    let filter = null;
    let bytes;
    try {
      bytes = record.bytes instanceof Uint8Array ? record.bytes : new Uint8Array(record.bytes);
      filter = await BloomFilter.from(bytes);
      const pinned = settings.listId;
      // A successor's copy counts only for a client that opted in, and only when it was reached from this very pin.
      const reachedFromPin = settings.followSuccessors === true && meta.signed === true && meta.pinnedListId === pinned;
      if (pinned !== null && filter.listId !== pinned && !reachedFromPin) {
        throw new BloomgateError('E_LIST', `the persisted copy is of list ${filter.listId}, not ${pinned}`);
      }
      // Only a copy this code accepted from this list: its record names the list and the very bytes.
      const checksum = checksumOf(bytes);
      if (meta.listId !== filter.listId || meta.checksum !== checksum) {
        throw new BloomgateError('E_LIST',
          `the persisted file is of list ${filter.listId}, but its record names ${typeof meta.listId === 'string' ? `list ${meta.listId}` : 'no list'}` +
          `${meta.checksum === checksum ? '' : ' and other bytes'} (a file of another list, or not written by openFilter)`);
      }
      if (this.#trusted !== null && (meta.keys?.pin !== pinOf(this.#trusted) || meta.signed !== true)) {
        throw new BloomgateError('E_SIGNATURE', 'it was not accepted under the keys given now (an unsigned copy, or other keys)');
      }
      this.#checksum = checksum;
      this.#length = bytes.length;
    } catch (error) {
      filter?.free();
      await this.#discard(asBloomgateError(error, 'E_STORAGE', 'the persisted filter could not be loaded'), 'persisted');
      return;
    }
    this.#install(/** @type {BloomFilter} */ (filter), 'persisted', Number.isFinite(meta.lastUpdate) ? meta.lastUpdate : null, bytes);
    this.#persisted = true;
    // The meta describes these bytes: its ETag, schedule, expiry and key set still hold.
    if (typeof meta.etag === 'string') this.#etag = meta.etag;
    if (Number.isFinite(meta.lastCheck)) this.#lastCheck = meta.lastCheck;
    if (Number.isFinite(meta.minRefreshSeconds)) this.#minRefreshSeconds = Math.min(Math.max(0, meta.minRefreshSeconds), MAX_MIN_REFRESH_SECONDS);
    if (Number.isFinite(meta.expires)) {
      this.#expiresMs = meta.expires;
      this.#armStaleTimer();
    }
    if (typeof meta.sha256 === 'string' && /^[0-9a-f]{64}$/.test(meta.sha256)) this.#sha256 = hexBytes(meta.sha256);
    if (this.#trusted !== null) {
      this.#signed = true;
      const seq = meta.keys?.seq;
      const ids = meta.keys?.ids;
      if (Number.isSafeInteger(seq) && seq > 0 && Array.isArray(ids) && Number.isInteger(meta.keys.threshold)) {
        try {
          const set = /** @type {import('../signature.js').KeySet} */ (keySetFromOptions(ids, meta.keys.threshold, 'the persisted key set'));
          this.#trusted = { ...set, seq };
        } catch {
          // a damaged record: start again from the pinned keys, which re-follow the site's history
        }
      }
    }
  }

  /** The caller's starting file (one shipped with the app), when nothing is persisted. */
  async #openInitial(settings) {
    /** @type {BloomFilter | null} */
    let filter = null;
    let bytes;
    try {
      const given = typeof settings.initial === 'function' ? await settings.initial() : settings.initial;
      bytes = given instanceof ArrayBuffer ? new Uint8Array(given) : given;
      if (!(bytes instanceof Uint8Array)) throw new TypeError('openFilter(): initial must give the bytes of a .bgf file (Uint8Array or ArrayBuffer)');
      filter = await BloomFilter.from(bytes);
      const pinned = settings.listId;
      if (pinned !== null && filter.listId !== pinned) {
        throw new BloomgateError('E_LIST', `the initial filter is of list ${filter.listId}, not ${pinned}`);
      }
      this.#checksum = checksumOf(bytes);
      this.#sha256 = await sha256(bytes);
      this.#length = bytes.length;
    } catch (error) {
      filter?.free();
      const reason = asBloomgateError(error, 'E_ARG', 'the initial filter could not be loaded');
      this.#report(reason, 'initial');
      return;
    }
    // The app shipped it: as trusted as the app's own code (and its keys).
    this.#signed = this.#trusted !== null;
    this.#install(/** @type {BloomFilter} */ (filter), 'initial', null, bytes);
    this.#persisted = false;
  }

  /* ---- one check ---- */

  async #runCheck(initial) {
    const controller = new AbortController();
    this.#controller = controller;
    this.#errorsThisCheck = 0;
    this.#lastCheck = this.#settings.now();
    // One deadline for the whole check: a host that drips bytes cannot hold updates back longer.
    const deadline = setTimeout(() => controller.abort(new BloomgateError('E_TIMEOUT',
      `the update from ${this.#url} did not finish within ${this.#settings.timeoutMs} ms (a slow or stalled host)`)), this.#settings.timeoutMs);
    try {
      const outcome = await this.#update(controller.signal);
      if (this.#errorsThisCheck === 0) this.#lastError = null;
      return { ...outcome, stale: this.stale };
    } catch (error) {
      if (this.#closed) return { checked: false, changed: false, generation: null, error: closedError() };
      const reason = asBloomgateError(controller.signal.aborted && controller.signal.reason instanceof BloomgateError ? controller.signal.reason : error,
        'E_FETCH', 'the update failed');
      this.#report(reason, 'check');
      if (initial) {
        throw new BloomgateError(reason.code,
          `openFilter(${this.#url}): no persisted copy to start from, and ${reason.message}`, { cause: reason });
      }
      return { checked: true, changed: false, generation: this.#filter?.generation ?? null, error: reason, stale: this.stale };
    } finally {
      clearTimeout(deadline);
      if (this.#controller === controller) this.#controller = null;
    }
  }

  async #loadRotations(manifest, signal) {
    const url = manifest.keysUrl ?? new URL('keys.json', this.#url).href;
    const reply = await privateGet(url, {
      fetch: this.#settings.fetch,
      signal,
      timeoutMs: this.#settings.timeoutMs,
      limit: MAX_MANIFEST_BYTES,
      what: 'key history',
      endpoint: url,
      code: 'E_FETCH',
      bodyCode: 'E_SIGNATURE',
    });
    return parseRotations(reply.text ?? '', url);
  }

  async #update(signal) {
    const settings = this.#settings;
    const headers = {};
    if (this.#etag !== null && this.#filter !== null) headers['If-None-Match'] = this.#etag;
    const started = performance.now();
    const reply = await privateGet(this.#url, {
      fetch: settings.fetch,
      signal,
      timeoutMs: settings.timeoutMs,
      limit: MAX_MANIFEST_BYTES,
      headers,
      what: 'filter manifest',
      endpoint: this.#url,
      passStatuses: NOT_MODIFIED,
      binary: true,
      code: 'E_FETCH',
      bodyCode: 'E_MANIFEST',
    });
    if (this.#closed) throw closedError();
    const current = this.#filter;
    if (reply.status === 304) {
      if (current === null) throw new BloomgateError('E_MANIFEST', `the filter manifest at ${this.#url} answered 304 Not Modified to a request that named no ETag`);
      await this.#saveMeta();
      const detail = { status: 304, notModified: true, changed: false, generation: current.generation, signed: this.#signed };
      this.#emit('check', detail);
      return { checked: true, ...detail };
    }
    const bytes = reply.bytes ?? new Uint8Array(0);
    this.#bytesDownloaded += bytes.length;
    let text;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      throw new BloomgateError('E_MANIFEST', `the filter manifest at ${this.#url} is not UTF-8 text`);
    }
    const manifest = parseManifest(text, this.#url);
    settings.checkFileUrls(manifest);
    const etag = reply.headers.get('etag');

    const verdict = await judgeManifest(manifest, {
      url: this.#url,
      trusted: this.#trusted,
      pinnedListId: settings.listId,
      followSuccessors: settings.followSuccessors,
      inUse: current === null ? null : { listId: current.listId, generation: current.generation, sha256: this.#sha256, checksum: this.#checksum },
      nowMs: settings.now(),
      loadRotations: () => this.#loadRotations(manifest, signal),
    });
    // Believed: its key set, interval and expiry hold from now on (a refused one's do not).
    this.#trusted = verdict.trusted;
    this.#minRefreshSeconds = manifest.minRefreshSeconds;
    if (verdict.action === 'same' && current !== null) {
      this.#renew(verdict);
      this.#etag = etag;
      await this.#saveMeta();
      const detail = { status: 200, notModified: false, changed: false, generation: current.generation, signed: this.#signed };
      this.#emit('check', detail);
      return { checked: true, ...detail };
    }

    const previous = current === null ? null : current.generation;
    const manifestMs = performance.now() - started;
    const before = this.#bytesDownloaded;
    const counted = (n) => { this.#bytesDownloaded += n; };
    /** @type {import('./download.js').NextFilter | null} */
    let next = null;
    const delta = current === null || verdict.successor ? null
      : manifest.deltas.find((entry) => entry.from === current.generation && entry.length < manifest.full.length && entry.length <= settings.maxBytes) ?? null;
    if (delta !== null && current !== null) {
      try {
        next = await viaDelta(manifest, delta, { filter: current, bytes: this.#bytes, checksum: this.#checksum }, settings, signal, counted);
      } catch (error) {
        if (this.#closed) throw closedError();
        if (signal.aborted) throw error;
        // A refused delta costs a full download, not the update.
        this.#report(asBloomgateError(error, 'E_DELTA', `the delta ${delta.url} could not be applied`), 'delta');
      }
    }
    if (next === null) next = await viaFull(manifest, settings, signal, counted, this.#storage !== null,
      current === null || verdict.successor ? null : current.generation);
    if (this.#closed) {
      next.filter.free();
      throw closedError();
    }
    try {
      checkStillValid(verdict, settings.now(), this.#url);
    } catch (error) {
      next.filter.free();
      throw error;
    }
    const at = settings.now();
    this.#install(next.filter, next.source, at, next.bytes);
    this.#checksum = next.checksum;
    this.#sha256 = next.sha256;
    this.#length = next.length;
    this.#etag = etag;
    this.#renew(verdict);
    this.#persisted = false;
    if (next.bytes !== null) await this.#persist(next.bytes);
    const detail = {
      generation: manifest.generation, previousGeneration: previous, listId: manifest.listId, source: next.source,
      bytes: this.#bytesDownloaded - before, url: next.url, signed: this.#signed, successor: verdict.successor,
      // How long the manifest took, and the rest: download, checks, apply, swap and persist.
      timings: { manifestMs, updateMs: performance.now() - started - manifestMs },
    };
    this.#emit('update', detail);
    this.#emit('check', { status: 200, notModified: false, changed: true, generation: manifest.generation, signed: this.#signed });
    return { checked: true, status: 200, notModified: false, changed: true, ...detail };
  }

  /** A believed manifest: its signers and expiry now describe the filter in use. */
  #renew(verdict) {
    this.#signed = verdict.trusted !== null;
    this.#signedBy = verdict.signedBy;
    // The same generation may only extend the expiry: an older signed manifest never shortens it.
    if (verdict.expiresMs === null || this.#expiresMs === null || verdict.expiresMs > this.#expiresMs || verdict.action === 'install') {
      this.#expiresMs = verdict.expiresMs;
    }
    if (this.#expiresMs === null || this.#settings.now() < this.#expiresMs) this.#staleReported = false;
    this.#armStaleTimer();
  }

  /** The 'stale' event comes at the expiry even when nothing asks (a tab left open on a frozen site). */
  #armStaleTimer() {
    if (this.#staleTimer !== null) clearTimeout(this.#staleTimer);
    this.#staleTimer = null;
    if (this.#expiresMs === null || this.#closed) return;
    const delay = this.#expiresMs - this.#settings.now();
    if (delay <= 0) {
      void this.stale;
      return;
    }
    this.#staleTimer = setTimeout(() => {
      this.#staleTimer = null;
      if (!this.stale) this.#armStaleTimer(); // a delay past setTimeout's range, or a clock that moved
    }, Math.min(delay + 1, MAX_TIMEOUT_MS));
    if (typeof this.#staleTimer === 'object' && this.#staleTimer !== null && typeof this.#staleTimer.unref === 'function') this.#staleTimer.unref();
  }

  /**
   * Swap in a new filter in one assignment; the old one is freed after it.
   * @param {BloomFilter} filter
   * @param {'persisted' | 'initial' | 'full' | 'delta'} source
   * @param {number | null} at
   * @param {Uint8Array | null} [bytes] its file, kept as the next delta's base when small
   */
  #install(filter, source, at, bytes = null) {
    const old = this.#filter;
    this.#filter = filter;
    this.#bytes = bytes !== null && bytes.length <= KEEP_BYTES_MAX ? bytes : null;
    this.#source = source;
    this.#lastUpdate = at;
    if (old !== null && old !== filter) old.free();
  }

  #meta() {
    const trusted = this.#trusted;
    return {
      version: META_VERSION,
      manifestUrl: this.#url,
      listId: this.#filter?.listId ?? null,
      generation: this.#filter?.generation ?? null,
      checksum: this.#checksum,
      sha256: this.#sha256 === null ? null : bytesHex(this.#sha256),
      length: this.#length,
      etag: this.#etag,
      lastCheck: this.#lastCheck,
      lastUpdate: this.#lastUpdate,
      minRefreshSeconds: this.#minRefreshSeconds,
      expires: this.#expiresMs,
      signed: this.#signed,
      pinnedListId: this.#settings.listId,
      keys: trusted === null ? null
        : { pin: pinOf(this.#settings.trusted), seq: trusted.seq, ids: trusted.keys.map((key) => key.id), threshold: trusted.threshold },
    };
  }

  async #persist(bytes) {
    if (this.#storage === null) return;
    try {
      await this.#storage.set(this.#storageKey, bytes, this.#meta());
      this.#persisted = true;
    } catch (error) {
      this.#report(asBloomgateError(error, 'E_STORAGE',
        `generation ${this.#filter?.generation} is in use but could not be persisted (the persisted copy stays the previous one)`), 'persist');
    }
  }

  async #saveMeta() {
    if (this.#storage === null || this.#filter === null) return;
    // Not stored yet (an initial file, or a write that failed before): store the bytes with it.
    if (!this.#persisted) return this.#persist(this.#filter.serialize());
    if (typeof this.#storage.setMeta !== 'function') return;
    try {
      await this.#storage.setMeta(this.#storageKey, this.#meta());
    } catch (error) {
      this.#report(asBloomgateError(error, 'E_STORAGE', 'the check could not be recorded in storage'), 'persist');
    }
  }
}

if (typeof Symbol.dispose === 'symbol') {
  Object.defineProperty(FreshFilter.prototype, Symbol.dispose, {
    value() {
      this.close();
    },
    writable: true,
    configurable: true,
  });
}
