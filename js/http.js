/**
 * http.js — one careful GET for escalations: a timeout that aborts through an
 * AbortSignal, the caller's signal honoured, status and content type checked,
 * and a size limit enforced while the body streams, so an oversized or
 * malformed reply is rejected before it is parsed into a wrong answer.
 */
import { BloomgateError } from './errors.js';

/**
 * @param {string} url
 * @param {{ fetch: typeof fetch, signal?: AbortSignal, timeoutMs: number, limit: number,
 *           headers?: Record<string, string>, notFoundIsEmpty?: boolean, what: string }} options
 * @returns {Promise<string>} the body as text
 */
export async function fetchLimitedText(url, options) {
  const { fetch: fetchImpl, signal, timeoutMs, limit, what } = options;
  if (typeof fetchImpl !== 'function') throw new TypeError(`no fetch available for the ${what} request; pass options.fetch`);
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new BloomgateError('E_TIMEOUT', `${what} request timed out after ${timeoutMs} ms`)), timeoutMs);
  const onAbort = () => controller.abort(signal.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  if (signal?.aborted) onAbort();
  try {
    let response;
    try {
      response = await fetchImpl(url, { headers: options.headers ?? {}, signal: controller.signal });
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      const reason = controller.signal.aborted ? controller.signal.reason : error;
      throw new BloomgateError('E_ESCALATION', `${what} request failed: ${reason?.message ?? reason}`, { cause: reason });
    }
    if (response.status === 404 && options.notFoundIsEmpty) {
      response.body?.cancel().catch(() => {});
      return '';
    }
    if (!response.ok) {
      response.body?.cancel().catch(() => {});
      throw new BloomgateError('E_ESCALATION', `${what} server answered HTTP ${response.status}`);
    }
    const type = response.headers.get('content-type');
    if (type && !/^text\/plain\b/i.test(type)) {
      response.body?.cancel().catch(() => {});
      throw new BloomgateError('E_ESCALATION', `${what} server answered content type '${type}', expected text/plain`);
    }
    return await readLimited(response, limit, signal, controller.signal, what);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
}

async function readLimited(response, limit, signal, timeoutSignal, what) {
  const declared = Number(response.headers.get('content-length'));
  if (declared > limit) {
    response.body?.cancel().catch(() => {});
    throw new BloomgateError('E_ESCALATION', `${what} reply of ${declared} bytes exceeds the ${limit}-byte limit`);
  }
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > limit) throw new BloomgateError('E_ESCALATION', `${what} reply exceeds the ${limit}-byte limit`);
      chunks.push(value);
    }
  } catch (error) {
    reader.cancel().catch(() => {});
    if (signal?.aborted) throw signal.reason;
    if (error instanceof BloomgateError) throw error;
    const reason = timeoutSignal.aborted ? timeoutSignal.reason : error;
    throw new BloomgateError('E_ESCALATION', `${what} reply could not be read: ${reason?.message ?? reason}`, { cause: reason });
  }
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new BloomgateError('E_ESCALATION', `${what} reply is not valid UTF-8 text`);
  }
}
