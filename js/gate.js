// @ts-check
/**
 * gate.js — the front gate: answer "definitely not" locally, and on "maybe"
 * ask the source of truth once.
 *
 * The policy lives here and nowhere else: one escalation per item at a time
 * (concurrent checks share it), a bounded LRU of confirmed answers with a
 * TTL, a timeout that aborts the escalation through its AbortSignal, an
 * explicit decision for failed escalations (never a silent "clean"), and
 * counters that let an application see its real false-positive rate — and
 * notice a stale or over-full filter when escalations run well above what
 * the filter's own fill predicts.
 */
import { BloomgateError } from './errors.js';
import { flagStale } from './password.js';
import { MAX_TIMEOUT_MS } from './http.js';
import { trustOf } from './endpoint.js';

const ON_ERROR = new Set(['throw', 'listed', 'clean']);

/** A Map kept in insertion order is an LRU: re-insert on hit, evict the first key. */
class AnswerCache {
  constructor(maxEntries, ttlMs, now) {
    this.max = maxEntries;
    this.ttlMs = ttlMs;
    this.now = now;
    this.entries = new Map();
  }

  get(key) {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    this.entries.delete(key);
    if (entry.expires <= this.now()) return undefined;
    this.entries.set(key, entry);
    return entry.listed;
  }

  set(key, listed, ttlMs) {
    if (this.max === 0 || !(ttlMs > 0)) return;
    this.entries.delete(key);
    this.entries.set(key, { listed, expires: this.now() + ttlMs });
    while (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value);
  }

  clear() {
    this.entries.clear();
  }
}

/** Items become cache keys; Uint8Array keys by their hex so equal bytes share an entry. */
function cacheKey(item) {
  if (typeof item === 'string') return `s:${item}`;
  let hex = 'b:';
  for (const byte of item) hex += byte.toString(16).padStart(2, '0');
  return hex;
}

/**
 * `confirm(item, { signal })` resolves to a boolean, or to `{ listed, ttlMs }`
 * when the source of truth gives a cache hint (e.g. from Cache-Control).
 */
function readAnswer(answer, defaultTtlMs) {
  if (typeof answer === 'boolean') return { listed: answer, ttlMs: defaultTtlMs };
  if (answer && typeof answer === 'object' && typeof answer.listed === 'boolean') {
    const ttlMs = Number.isFinite(answer.ttlMs) && answer.ttlMs >= 0 ? answer.ttlMs : defaultTtlMs;
    return { listed: answer.listed, ttlMs };
  }
  throw new BloomgateError('E_ESCALATION', `confirm() must resolve to a boolean or { listed }, got ${typeof answer}`);
}

function validateOptions(options) {
  if (options === null || typeof options !== 'object') throw new TypeError('createGate(options): options must be an object');
  const { filter, confirm, onError = 'throw', timeoutMs = 5000 } = options;
  if (!filter || typeof filter.mightContain !== 'function') {
    throw new TypeError('createGate: filter must be a BloomFilter (something with mightContain)');
  }
  if (typeof confirm !== 'function') throw new TypeError('createGate: confirm must be an async function (item, { signal }) => boolean');
  if (typeof onError !== 'function' && !ON_ERROR.has(onError)) {
    throw new TypeError(`createGate: onError must be 'throw', 'listed', 'clean' or a function, got ${String(onError)}`);
  }
  // setTimeout fires at once for 2^31 ms or more: such a "timeout" would fail every escalation.
  if (typeof timeoutMs !== 'number' || !(timeoutMs > 0) || timeoutMs > MAX_TIMEOUT_MS) {
    throw new RangeError(`createGate: timeoutMs must be a number in (0, ${MAX_TIMEOUT_MS}], got ${String(timeoutMs)}`);
  }
  trustOf(options, filter, 'createGate'); // TypeError/RangeError on a malformed key, or keys without the list they bind to
  const cache = options.cache ?? {};
  const maxEntries = cache.maxEntries ?? 1000;
  const ttlMs = cache.ttlMs ?? 10 * 60 * 1000;
  if (!Number.isInteger(maxEntries) || maxEntries < 0) throw new RangeError('createGate: cache.maxEntries must be a non-negative integer');
  if (!(ttlMs >= 0)) throw new RangeError('createGate: cache.ttlMs must be >= 0');
}

/**
 * Options (GateOptions in index.d.ts): `filter` (mightContain, optional stats), `confirm(item,
 * { signal })`, `onError` ('throw' by default, 'listed', 'clean' or a function), `timeoutMs`
 * (5000), `cache` ({ maxEntries, ttlMs }), `staleness` ({ ratio, minNegatives }: when observed
 * false positives exceed `ratio` × the filter's estimated rate (and 4 sigma), the gate flags it),
 * `onStale(info)` (called once when the filter looks stale), `now()` (a clock, for tests),
 * `keys` and `threshold` (publisher keys; default: the `trust` of a filter from openFilter),
 * handed to `confirm` in its context so that it passes them to checkPassword / checkUrl, which
 * then believe a "not listed" only from a signed endpoint whose reply proves it (endpoint.js).
 * @type {typeof import('./index.js').createGate}
 */
export function createGate(options) {
  validateOptions(options);
  const { filter, confirm, onError = 'throw', timeoutMs = 5000, onStale } = options;
  const now = options.now ?? (() => Date.now());
  const cacheTtlMs = options.cache?.ttlMs ?? 10 * 60 * 1000;
  const cache = new AnswerCache(options.cache?.maxEntries ?? 1000, cacheTtlMs, now);
  const staleRatio = options.staleness?.ratio ?? 3;
  const minNegatives = options.staleness?.minNegatives ?? 200;
  const inFlight = new Map();
  // The keys confirm() should escalate with: the caller's, else the live filter's current ones.
  // Read at each escalation: a live filter may have followed a rotation (or a successor) since.
  const trustNow = () => {
    const binding = trustOf(options, filter, 'createGate');
    return binding === null ? null : { keys: binding.keys.map((key) => key.id), threshold: binding.threshold, listId: binding.listId };
  };
  const counts = { checks: 0, localNegatives: 0, escalations: 0, cacheHits: 0, confirmed: 0, falsePositives: 0, errors: 0 };
  // The filter's own prediction, refreshed now and then: stats() walks the whole bit array.
  let expectedRate = readExpectedRate();
  let checksSinceRefresh = 0;
  let stale = false;

  function readExpectedRate() {
    if (typeof filter.stats !== 'function') return null;
    const { estimatedErrorRate } = filter.stats();
    return Number.isFinite(estimatedErrorRate) ? estimatedErrorRate : null;
  }

  /**
   * Items that are not listed are the filter's negatives: each of them passed
   * the filter with probability p. Flag when false positives run above
   * `staleRatio` × p and beyond sampling noise (4 sigma of a binomial).
   */
  function assessStaleness() {
    if (stale || expectedRate === null) return;
    const negatives = counts.localNegatives + counts.falsePositives;
    if (negatives < minNegatives) return;
    const expected = negatives * expectedRate;
    const noise = 4 * Math.sqrt(Math.max(expected * (1 - expectedRate), 1));
    if (counts.falsePositives > staleRatio * expected && counts.falsePositives > expected + noise) {
      stale = true;
      const info = {
        observedFalsePositiveRate: counts.falsePositives / negatives,
        expectedFalsePositiveRate: expectedRate,
        negatives,
      };
      if (typeof onStale === 'function') onStale(info);
    }
  }

  // Called once per waiting caller; `errors` is counted once per failed escalation, in escalate().
  function decideOnError(error, item) {
    if (onError === 'throw') {
      if (error instanceof BloomgateError && error.code === 'E_ESCALATION') throw error;
      throw new BloomgateError('E_ESCALATION', `escalation failed: ${error?.message ?? String(error)}`, { cause: error });
    }
    const listed = typeof onError === 'function' ? Boolean(onError(error, item)) : onError === 'listed';
    return { listed, escalated: true, falsePositive: false, error };
  }

  async function escalate(item, key) {
    counts.escalations++;
    const controller = new AbortController();
    const timer = setTimeout(
      () => controller.abort(new BloomgateError('E_TIMEOUT', `escalation timed out after ${timeoutMs} ms`)),
      timeoutMs,
    );
    try {
      const answer = await Promise.race([
        Promise.resolve().then(() => {
          const trust = trustNow();
          return confirm(item, trust ? { signal: controller.signal, ...trust } : { signal: controller.signal });
        }),
        // A confirm() that ignores its signal still loses the race.
        new Promise((_, reject) => controller.signal.addEventListener('abort', () => reject(controller.signal.reason), { once: true })),
      ]);
      const { listed, ttlMs } = readAnswer(answer, cacheTtlMs);
      if (listed) counts.confirmed++;
      else counts.falsePositives++;
      cache.set(key, listed, ttlMs);
      assessStaleness();
      return { listed, escalated: true, falsePositive: !listed };
    } catch (error) {
      counts.errors++;
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  async function check(item) {
    return flagStale(await checkNow(item), filter);
  }

  async function checkNow(item) {
    if (typeof item !== 'string' && !(item instanceof Uint8Array)) {
      throw new TypeError('gate.check(item): item must be a string or Uint8Array');
    }
    counts.checks++;
    if (++checksSinceRefresh >= 10000) {
      checksSinceRefresh = 0;
      expectedRate = readExpectedRate();
    }
    if (!filter.mightContain(item)) {
      counts.localNegatives++;
      return { listed: false, escalated: false, falsePositive: false };
    }
    const key = cacheKey(item);
    const cached = cache.get(key);
    if (cached !== undefined) {
      counts.cacheHits++;
      return { listed: cached, escalated: false, falsePositive: !cached, cached: true };
    }
    let pending = inFlight.get(key);
    if (!pending) {
      pending = escalate(item, key).finally(() => inFlight.delete(key));
      inFlight.set(key, pending);
    }
    try {
      return await pending;
    } catch (error) {
      return decideOnError(error, item);
    }
  }

  return {
    check,
    stats() {
      return { ...counts, inFlight: inFlight.size, expectedFalsePositiveRate: expectedRate, staleFilter: stale };
    },
    /** Forget cached answers (e.g. after the filter was replaced). */
    clearCache() {
      cache.clear();
    },
  };
}
