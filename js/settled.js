// @ts-check
/**
 * settled.js — checks of a value someone is still typing (issue 29, item 1).
 *
 * Only a value the app marks final may leave the page. A checker answers every
 * keystroke locally (`local`, synchronous, never any network) and escalates
 * only a value the app settles on (`settle`: the field's change, the form's
 * submit, a worker's or extension's own "this is the one"):
 *
 *   - "definitely not" is answered locally, settled or not: no request;
 *   - a later `local()` or `settle()` of another value supersedes an escalation
 *     still in flight: its requests are aborted and its promise resolves to the
 *     value's local answer marked `superseded: true`, never to a server's answer
 *     for a value the user moved on from;
 *   - the same value settled again (change, then submit) shares one escalation:
 *     the one in flight, or the last one answered;
 *   - `cancel()` supersedes whatever is in flight (an emptied field, a closed form).
 *
 * No timers: nothing is ever escalated because time passed. `watchField` wires
 * a page's field: `input` -> local, `change` and its form's `submit` -> settle.
 * checkPassword and checkUrl are unchanged: calling them with an endpoint is
 * the app settling that value itself.
 */
import { BloomgateError } from './errors.js';
import { trustOf } from './endpoint.js';
import { checkPassword, flagStale, keyEncodingOf, thresholdOf } from './password.js';
import { checkUrl, urlExpressions } from './url.js';
import { boundOf, labelOf, valueMeaningOf, valueOfKey } from './values.js';
import * as wasm from './wasm/index.js';

/** No value: what cancel() supersedes every escalation with. */
const NONE = Symbol('none');

/** The abort reasons this module gave: a check that failed with one of them was caught by another check's supersession. */
const supersessions = new WeakSet();

/** The options every checker needs: an object with a filter of the right key encoding. */
function requireFilter(options, encoding, where) {
  if (options === null || typeof options !== 'object') throw new TypeError(`${where}(options): options must be an object`);
  const { filter } = options;
  if (!filter || typeof filter.mightContainKey !== 'function') {
    throw new TypeError(`${where}: options.filter must be a filter with key encoding '${encoding}' (its local answers need it)`);
  }
  if (keyEncodingOf(filter) !== encoding) {
    throw new BloomgateError('E_KEY_ENCODING', `${where}: the filter uses key encoding '${keyEncodingOf(filter)}', not '${encoding}'`);
  }
  if (!wasm.isReady()) {
    throw new BloomgateError('E_NOT_READY', 'the wasm module is not instantiated yet: await init() (or create or load a filter) first');
  }
  trustOf(options, filter, where); // bad keys or listId fail now, not at the first escalation
  return filter;
}

/**
 * A checker from its local answer and its escalation.
 * @param {string} where the factory's name, for messages
 * @param {(value: string) => any} localOf the local answer (throws TypeError for a non-string)
 * @param {((value: string, signal: AbortSignal) => Promise<any>) | null} escalate null: no endpoint
 * @param {AbortSignal | undefined} outer the caller's signal, which aborts every escalation
 * @param {() => unknown} version what an answer is kept with (a live filter's generation)
 */
function checker(where, localOf, escalate, outer, version) {
  /** @type {{ value: string, controller: AbortController, finish: () => void, promise: Promise<any> } | null} */
  let pending = null;
  /** @type {{ value: string, version: unknown, promise: Promise<any> } | null} */
  let answered = null; // the last settled value's answer, for as long as the filter's generation lasts

  function supersede(value) {
    if (pending === null || pending.value === value) return;
    const { controller, finish } = pending;
    pending = null;
    const reason = new DOMException(`${where}: superseded by a check of a later value`, 'AbortError');
    supersessions.add(reason);
    controller.abort(reason);
    finish();
  }

  function escalation(value, local) {
    const controller = new AbortController();
    const onAbort = () => controller.abort(outer?.reason);
    if (outer?.aborted) onAbort();
    else outer?.addEventListener('abort', onAbort, { once: true });
    /** @type {() => void} */
    let finish = () => {};
    const superseded = new Promise((resolve) => {
      finish = () => resolve({ ...local, superseded: true });
    });
    const run = async () => {
      // Endpoint manifests are shared between checks: one fetched for a superseded check fails with its
      // abort, which is not this check's failure. Asked again, the next fetch is this check's own.
      for (let attempt = 0; ; attempt++) {
        try {
          return await /** @type {NonNullable<typeof escalate>} */ (escalate)(value, controller.signal);
        } catch (error) {
          if (attempt < 2 && supersessions.has(/** @type {object} */ (error)) && !controller.signal.aborted) continue;
          throw error;
        }
      }
    };
    const check = run();
    const entry = { value, controller, finish, promise: Promise.race([check, superseded]) };
    check.then(
      () => {
        if (pending === entry) {
          pending = null;
          answered = { value, version: version(), promise: entry.promise };
        }
      },
      () => {
        if (pending === entry) pending = null; // a failure is not kept: settled again, it is asked again
      },
    ).finally(() => outer?.removeEventListener('abort', onAbort));
    pending = entry;
    return entry.promise;
  }

  return Object.freeze({
    cancel() {
      supersede(NONE);
    },
    local(value) {
      const result = localOf(value);
      supersede(value);
      return result;
    },
    settle(value) {
      let local;
      try {
        local = localOf(value);
      } catch (error) {
        return Promise.reject(error);
      }
      supersede(value);
      if (local.confirmed || escalate === null) return Promise.resolve(local);
      if (pending !== null) return pending.promise; // the same value, in flight
      const last = answered;
      if (last !== null && last.value === value && last.version === version()) return last.promise;
      return escalation(value, local);
    },
  });
}

/**
 * Breached-password checks for a value being typed. Options as checkPassword's; `filter` is
 * required (it gives the local answers), `rangeUrl` is where settled "maybe"s are confirmed.
 * @type {typeof import('./index.js').passwordChecker}
 */
export function passwordChecker(options) {
  const filter = requireFilter(options, 'sha1', 'passwordChecker');
  thresholdOf(filter, options.minCount, 'passwordChecker'); // a bad minCount fails now
  const { rangeUrl } = options;
  const local = (password) => {
    if (typeof password !== 'string') throw new TypeError('passwordChecker: the password must be a string');
    const minCount = thresholdOf(filter, options.minCount, 'passwordChecker'); // a live filter's may change with its list
    const digest = wasm.sha1(password);
    const meaning = valueMeaningOf(filter);
    const buckets = meaning?.meaning === 'seen-at-least' ? meaning : null;
    const seen = (seenAtLeast) => (buckets ? { seenAtLeast } : {});
    if (!filter.mightContainKey(digest)) {
      return flagStale({ breached: false, count: minCount > 1 ? null : 0, escalated: false, confirmed: true, minCount, ...seen(null) }, filter);
    }
    const bound = buckets ? boundOf(buckets, valueOfKey(filter, digest)) : null;
    return flagStale({ breached: true, count: null, escalated: false, confirmed: false, minCount, ...seen(bound) }, filter);
  };
  const escalate = rangeUrl === undefined ? null : (password, signal) => checkPassword(password, { ...options, signal });
  return checker('passwordChecker', local, escalate, options.signal, () => filter.generation);
}

/**
 * Known-bad URL checks for a value being typed. Options as checkUrl's; `hashesUrl` is where
 * settled "maybe"s are confirmed.
 * @type {typeof import('./index.js').urlChecker}
 */
export function urlChecker(options) {
  const filter = requireFilter(options, 'url', 'urlChecker');
  const { hashesUrl } = options;
  const local = (url) => {
    if (typeof url !== 'string') throw new TypeError('urlChecker: the url must be a string');
    const meaning = valueMeaningOf(filter);
    const threatField = (threat) => (meaning ? { threat } : {});
    // urlExpressions brings an IDN host to punycode first, as checkUrl does.
    for (const expression of urlExpressions(url)) {
      const digest = wasm.sha256(expression);
      if (filter.mightContainKey(digest)) {
        const threat = meaning ? labelOf(meaning, valueOfKey(filter, digest)) : null;
        return flagStale({ listed: true, expression, escalated: false, confirmed: false, ...threatField(threat) }, filter);
      }
    }
    return flagStale({ listed: false, expression: null, escalated: false, confirmed: true, ...threatField(null) }, filter);
  };
  const escalate = hashesUrl === undefined ? null : (url, signal) => checkUrl(url, { ...options, signal });
  return checker('urlChecker', local, escalate, options.signal, () => filter.generation);
}

/**
 * A page's field, checked as it is typed: `input` gets the local answer, `change` (blur, Enter)
 * and the enclosing form's `submit` settle the value. `onResult(result, { value, final })` is
 * called with null for an empty field (never checked, never escalated), and never for a settled
 * answer the field has since moved on from. Returns a function that removes the listeners.
 * @type {typeof import('./index.js').watchField}
 */
export function watchField(input, check, options) {
  if (!input || typeof input.addEventListener !== 'function' || !('value' in input)) {
    throw new TypeError('watchField(input, check, options): input must be a form field (an <input>)');
  }
  if (!check || typeof check.local !== 'function' || typeof check.settle !== 'function' || typeof check.cancel !== 'function') {
    throw new TypeError('watchField: check must be a checker from passwordChecker() or urlChecker()');
  }
  const { onResult, onError } = options ?? {};
  if (typeof onResult !== 'function') throw new TypeError('watchField: options.onResult must be a function (result, { value, final })');
  if (onError !== undefined && typeof onError !== 'function') throw new TypeError('watchField: options.onError must be a function (error, { value })');
  const fail = (error, value) => {
    if (onError) onError(error, { value });
    else queueMicrotask(() => { throw error; }); // reported as any uncaught error would be
  };
  const typed = () => {
    const { value } = input;
    try {
      if (value === '') {
        check.cancel(); // an emptied field: nothing in flight stays wanted
        onResult(null, { value, final: false });
        return;
      }
      onResult(check.local(value), { value, final: false }); // local() also supersedes an earlier value's escalation
    } catch (error) {
      fail(error, value);
    }
  };
  const settled = () => {
    const { value } = input;
    if (value === '') return;
    check.settle(value).then(
      (result) => {
        if (!result.superseded && input.value === value) onResult(result, { value, final: true });
      },
      (error) => {
        if (input.value === value) fail(error, value);
      },
    );
  };
  const form = input.form ?? null;
  input.addEventListener('input', typed);
  input.addEventListener('change', settled);
  form?.addEventListener('submit', settled);
  return () => {
    input.removeEventListener('input', typed);
    input.removeEventListener('change', settled);
    form?.removeEventListener('submit', settled);
  };
}
