// @ts-check
/**
 * http.js — one careful GET for escalations.
 *
 * Every escalation request is private by construction: no cookies or HTTP
 * credentials (`credentials: 'omit'`), no Referer (`referrerPolicy:
 * 'no-referrer'`: the page URL may hold an e-mail address), no redirects
 * followed (`redirect: 'manual'`: a redirect is an error, so a prefix never
 * reaches an origin the caller did not name) and no HTTP cache
 * (`cache: 'no-store'`: the cache would keep a record of the prefixes a user
 * checked, and could answer from an older list). It sends no header but the
 * ones the caller passes, so without `Add-Padding` it is a CORS "simple"
 * request that needs no preflight.
 *
 * A timeout aborts through an AbortSignal whether the head or the body
 * stalls (E_TIMEOUT either way); the caller's signal is honoured; the body is
 * size-limited while it streams; `Retry-After` on 429/503 is honoured per
 * endpoint. The reply is judged by its body, never by its content type:
 * ordinary static hosts serve extension-less files as
 * application/octet-stream.
 */
import { BloomgateError } from './errors.js';

/** The fetch options of every escalation request (documented in the README). */
export const PRIVATE_REQUEST = Object.freeze({
  method: 'GET',
  credentials: 'omit',
  referrerPolicy: 'no-referrer',
  redirect: 'manual',
  cache: 'no-store',
});

/** setTimeout fires at once for delays of 2^31 ms or more, so they are refused. */
export const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/** Longest Retry-After honoured; a longer one is clamped (an endpoint cannot lock a client out for good). */
const MAX_RETRY_AFTER_MS = 24 * 60 * 60 * 1000;

/** endpoint base URL -> time (ms since epoch) before which it is not asked again. */
const retryNotBefore = new Map();

/** Validate a timeout as the request options do; throws RangeError. */
export function checkTimeout(timeoutMs, where) {
  if (typeof timeoutMs !== 'number' || !(timeoutMs > 0) || timeoutMs > MAX_TIMEOUT_MS) {
    throw new RangeError(`${where}: timeoutMs must be a number in (0, ${MAX_TIMEOUT_MS}], got ${String(timeoutMs)}`);
  }
  return timeoutMs;
}

/**
 * Retry-After is either delta-seconds or an HTTP-date (RFC 9110 §10.2.3).
 * @returns {number | null} milliseconds to wait
 */
export function parseRetryAfter(value, now = Date.now()) {
  if (value === null || value === undefined) return null;
  const text = String(value).trim();
  if (/^\d+$/.test(text)) return Math.min(Number(text) * 1000, MAX_RETRY_AFTER_MS);
  const at = Date.parse(text);
  if (Number.isNaN(at)) return null;
  return Math.min(Math.max(0, at - now), MAX_RETRY_AFTER_MS);
}

/**
 * GET `url` privately and read it whole, or fail.
 * @param {string} url
 * @param {{ fetch: typeof fetch, signal?: AbortSignal, timeoutMs: number, limit: number,
 *           headers?: Record<string, string>, what: string, endpoint: string,
 *           passStatuses?: Set<number>, binary?: boolean, code?: string, bodyCode?: string }} options
 *   `endpoint` keys the Retry-After back-off; a status in `passStatuses` is
 *   returned to the caller (who decides what it means) with an empty text
 *   instead of thrown. `binary` gives the body as `bytes` instead of text.
 *   Failures are BloomgateError `code` (default E_ESCALATION; timeouts are
 *   E_TIMEOUT), a body past `limit` or not UTF-8 `bodyCode` (default `code`).
 * @returns {Promise<{ status: number, text: string, bytes?: Uint8Array, headers: Headers }>}
 */
export async function privateGet(url, options) {
  const { fetch: fetchImpl, signal, timeoutMs, limit, what, endpoint } = options;
  const code = options.code ?? 'E_ESCALATION';
  const bodyCode = options.bodyCode ?? code;
  if (typeof fetchImpl !== 'function') throw new TypeError(`no fetch available for the ${what} request; pass options.fetch`);
  checkTimeout(timeoutMs, `${what} request`);
  const waitUntil = retryNotBefore.get(endpoint);
  if (waitUntil !== undefined) {
    if (Date.now() < waitUntil) {
      throw new BloomgateError(code,
        `${what} endpoint asked clients to wait (Retry-After) until ${new Date(waitUntil).toISOString()}; not asking before then`);
    }
    retryNotBefore.delete(endpoint);
  }
  if (signal?.aborted) throw signal.reason;
  const controller = new AbortController();
  const timeout = new BloomgateError('E_TIMEOUT', `${what} request to ${url} timed out after ${timeoutMs} ms`);
  const timer = setTimeout(() => controller.abort(timeout), timeoutMs);
  const onAbort = () => controller.abort(/** @type {AbortSignal} */ (signal).reason); // added only when there is a signal
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    let response;
    try {
      response = await fetchImpl(url, { ...PRIVATE_REQUEST, headers: options.headers ?? {}, signal: controller.signal });
    } catch (/** @type {any} */ error) {
      if (signal?.aborted) throw signal.reason;
      if (controller.signal.aborted) throw timeout; // a stalled head times out like a stalled body
      // Browsers say only "Failed to fetch" for a network error and for a CORS refusal alike.
      const hint = error instanceof TypeError ? ' (a network error, or a cross-origin reply without Access-Control-Allow-Origin)' : '';
      throw new BloomgateError(code, `${what} request to ${url} failed: ${error?.message ?? error}${hint}`, { cause: error });
    }
    const passed = options.passStatuses?.has(response.status) === true; // e.g. 304 Not Modified: not a redirect
    if (response.type === 'opaqueredirect' || (response.status >= 300 && response.status < 400 && !passed)) {
      discard(response);
      const to = response.headers.get('location');
      throw new BloomgateError(code,
        `${what} endpoint ${url} answered with a redirect${to ? ` to ${to}` : ''}; bloomgate's requests follow no redirects (point the URL at the final location)`);
    }
    if (response.status === 429 || response.status === 503) {
      const waitMs = parseRetryAfter(response.headers.get('retry-after'));
      if (waitMs !== null && waitMs > 0) retryNotBefore.set(endpoint, Date.now() + waitMs);
      discard(response);
      throw new BloomgateError(code,
        `${what} endpoint answered HTTP ${response.status}${waitMs ? `, retry after ${Math.ceil(waitMs / 1000)} s` : ''}`);
    }
    if (passed) {
      discard(response);
      return { status: response.status, text: '', headers: response.headers };
    }
    if (response.status !== 200) {
      discard(response);
      throw new BloomgateError(code, `${what} endpoint ${url} answered HTTP ${response.status}`);
    }
    const bytes = await readLimited(response, limit, signal, controller.signal, timeout, what, code, bodyCode);
    if (options.binary) return { status: 200, text: '', bytes, headers: response.headers };
    try {
      return { status: 200, text: new TextDecoder('utf-8', { fatal: true }).decode(bytes), headers: response.headers };
    } catch {
      throw new BloomgateError(bodyCode, `${what} reply is not valid UTF-8 text`);
    }
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
}

function discard(response) {
  response.body?.cancel().catch(() => {});
}

async function readLimited(response, limit, signal, timeoutSignal, timeout, what, code, bodyCode) {
  const declared = Number(response.headers.get('content-length'));
  if (declared > limit) {
    discard(response);
    throw new BloomgateError(bodyCode, `${what} reply of ${declared} bytes exceeds the ${limit}-byte limit`);
  }
  if (!response.body) return new Uint8Array(0);
  const reader = response.body.getReader();
  const chunks = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > limit) throw new BloomgateError(bodyCode, `${what} reply exceeds the ${limit}-byte limit`);
      chunks.push(value);
    }
  } catch (/** @type {any} */ error) {
    reader.cancel().catch(() => {});
    if (signal?.aborted) throw signal.reason;
    if (timeoutSignal.aborted) throw timeout;
    if (error instanceof BloomgateError) throw error;
    throw new BloomgateError(code, `${what} reply could not be read: ${error?.message ?? error}`, { cause: error });
  }
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return bytes;
}
