// Issue 29, item 1: only settled values escalate. passwordChecker / urlChecker answer every
// keystroke locally (no network), escalate a settled "maybe" once, never a "definitely not", and
// never deliver an answer for a value a later check superseded (its request is aborted).
// Passwords go to a fake fetch standing in for the public range service (no manifest there,
// padded replies), which holds each request until the test releases it; URLs to the reference
// server on 127.0.0.1 with its exact store and manifest.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { BloomFilter, BloomgateError, checkPassword, checkUrl, init, passwordChecker, urlChecker, urlExpressions, watchField } from '../../js/index.js';
import { startReferenceServer } from '../../js/server.js';
import { writeStore } from '../../js/store.js';

const RANGE_URL = 'https://api.pwnedpasswords.com/range';
const sha1Hex = (text) => createHash('sha1').update(text).digest('hex').toUpperCase();

// Prefixes of the typed passwords are themselves listed, as in the finding
// ('suns', 'sunshin', 'sunshine' escalated while 'sunshine2024!' was typed).
const LISTED = new Map([
  ['suns', 11], ['sunshin', 12], ['sunshine', 13], ['sunshine1', 14],
  ['p', 20], ['pa', 21], ['pass', 22], ['passw', 23], ['password', 24], ['password1', 25], ['password12', 26], ['password123', 27],
  ['letmein', 30], ['dragon', 31],
]);

/** A padded range reply as the public service sends one: the real rows, then count-0 rows to 900. */
function reply(prefix) {
  const rows = [];
  for (const [password, count] of LISTED) {
    const hex = sha1Hex(password);
    if (hex.startsWith(prefix)) rows.push(`${hex.slice(5)}:${count}`);
  }
  while (rows.length < 900) rows.push(`${randomBytes(18).toString('hex').slice(0, 35).toUpperCase()}:0`);
  return rows.join('\r\n');
}

/**
 * A fetch that records each request and answers it when released (all at once with `hold:
 * false`); an aborted request rejects with its signal's reason, as fetch does.
 */
function fakeFetch({ hold = false } = {}) {
  const requests = [];
  const fetch = (url, init) => new Promise((resolve, reject) => {
    const request = { url: String(url), signal: init.signal, aborted: false };
    requests.push(request);
    const answer = () => resolve(new Response(reply(String(url).split('/').pop()), { status: 200 }));
    init.signal.addEventListener('abort', () => {
      request.aborted = true;
      reject(init.signal.reason);
    }, { once: true });
    request.release = answer;
    if (!hold) answer();
  });
  return { fetch, requests };
}

/** Every prefix of `text`, as typing it key by key shows them. */
const prefixesOf = (text) => Array.from(text, (_, i) => text.slice(0, i + 1));

let filter;
let urlFilter;
let dir;
let server;
let serverUrl;
const listedHost = 'login-wallet.example';

before(async () => {
  await init();
  filter = await BloomFilter.create({ capacity: 1000, errorRate: 0.0001, keyEncoding: 'sha1' });
  for (const password of LISTED.keys()) filter.add(password);

  dir = await mkdtemp(join(tmpdir(), 'bloomgate-settled-'));
  const listId = createHash('sha256').update('settled test urls').digest('hex').slice(0, 32);
  urlFilter = await BloomFilter.create({ capacity: 100, errorRate: 0.0001, keyEncoding: 'url', listId });
  const [expression] = urlExpressions(listedHost);
  const hash = createHash('sha256').update(expression).digest();
  urlFilter.addKey(hash);
  await writeFile(join(dir, 'urls.bgf'), urlFilter.serialize());
  await writeFile(join(dir, 'urls.bgs'), writeStore([{ hash, count: 1 }], { hashType: 'sha256', listId }));
  ({ server, url: serverUrl } = await startReferenceServer({ filters: { urls: join(dir, 'urls.bgf') }, urlStore: join(dir, 'urls.bgs') }));
});

after(async () => {
  filter?.free();
  urlFilter?.free();
  server?.closeAllConnections();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve()));
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('passwordChecker', () => {
  test('local() gives checkPassword\'s local answer, synchronously, for every keystroke', async () => {
    const check = passwordChecker({ filter, rangeUrl: RANGE_URL, fetch: fakeFetch().fetch });
    for (const value of [...prefixesOf('sunshine2024!'), ...prefixesOf('password123'), '', 'pässwörd']) {
      const local = check.local(value);
      assert.ok(!(local instanceof Promise));
      assert.deepEqual(local, await checkPassword(value, { filter }), value);
    }
  });

  test('typing key by key makes no request; the settled clean value none, a settled listed value exactly one', async () => {
    for (const [typed, breached, requests] of [['sunshine2024!', false, 0], ['password123', true, 1]]) {
      const { fetch, requests: seen } = fakeFetch();
      const check = passwordChecker({ filter, rangeUrl: RANGE_URL, fetch });
      const maybes = prefixesOf(typed).filter((value) => check.local(value).confirmed === false);
      assert.ok(maybes.length >= 3, `listed prefixes of ${typed} answer "maybe" locally: ${maybes}`);
      assert.equal(seen.length, 0, 'no request while typing');
      const result = await check.settle(typed);
      assert.equal(result.breached, breached, typed);
      assert.equal(result.escalated, requests === 1);
      assert.equal(seen.length, requests, typed);
      if (requests) {
        assert.equal(seen[0].url, `${RANGE_URL}/${sha1Hex(typed).slice(0, 5)}`);
        assert.deepEqual(result, { breached: true, count: LISTED.get(typed), escalated: true, confirmed: true, minCount: 1 });
      } else {
        assert.deepEqual(result, { breached: false, count: 0, escalated: false, confirmed: true, minCount: 1 });
      }
    }
  });

  test('a later settle supersedes one in flight: its request aborted, its promise marked superseded, the later one answered', async () => {
    const { fetch, requests } = fakeFetch({ hold: true });
    const check = passwordChecker({ filter, rangeUrl: RANGE_URL, fetch });
    const first = check.settle('password');
    await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(requests.length, 1);
    const second = check.settle('password1');
    assert.equal(requests[0].aborted, true, "the superseded check's request is aborted");
    assert.equal(requests[0].signal.reason.name, 'AbortError');
    assert.deepEqual(await first, { breached: true, count: null, escalated: false, confirmed: false, minCount: 1, superseded: true });
    await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(requests.length, 2);
    requests[1].release();
    assert.deepEqual(await second, { breached: true, count: 25, escalated: true, confirmed: true, minCount: 1 });
  });

  test('local() of another value, a settled "definitely not" and cancel() supersede an escalation in flight', async () => {
    const { fetch, requests } = fakeFetch({ hold: true });
    const check = passwordChecker({ filter, rangeUrl: RANGE_URL, fetch });
    const run = async (supersede) => {
      const pending = check.settle('dragon');
      await new Promise((resolve) => setTimeout(resolve, 5));
      const request = requests.at(-1);
      supersede();
      assert.equal((await pending).superseded, true);
      assert.equal(request.aborted, true);
    };
    await run(() => check.local('dragon2'));
    await run(() => check.settle('a long clean passphrase 77'));
    await run(() => check.cancel());
    // local() of the value in flight does not supersede it.
    const pending = check.settle('dragon');
    await new Promise((resolve) => setTimeout(resolve, 5));
    check.local('dragon');
    requests.at(-1).release();
    assert.deepEqual(await pending, { breached: true, count: 31, escalated: true, confirmed: true, minCount: 1 });
  });

  test('the same value settled twice shares one escalation, in flight and once answered', async () => {
    const { fetch, requests } = fakeFetch({ hold: true });
    const check = passwordChecker({ filter, rangeUrl: RANGE_URL, fetch });
    const a = check.settle('letmein');
    const b = check.settle('letmein');
    await new Promise((resolve) => setTimeout(resolve, 5));
    assert.equal(requests.length, 1);
    requests[0].release();
    const [ra, rb] = await Promise.all([a, b]);
    assert.deepEqual(ra, rb);
    assert.equal(ra.count, 30);
    assert.deepEqual(await check.settle('letmein'), ra, 'change, then submit: answered once');
    assert.equal(requests.length, 1);
  });

  test('a failed escalation rejects, is not kept, and is asked again when settled again', async () => {
    let calls = 0;
    const fetch = async () => {
      calls++;
      if (calls === 1) throw new TypeError('Failed to fetch');
      return new Response(reply(sha1Hex('letmein').slice(0, 5)));
    };
    const check = passwordChecker({ filter, rangeUrl: RANGE_URL, fetch });
    await assert.rejects(check.settle('letmein'), (error) => error instanceof BloomgateError && error.code === 'E_ESCALATION');
    assert.equal((await check.settle('letmein')).count, 30);
    assert.equal(calls, 2);
  });

  test("the caller's signal aborts an escalation: it rejects with the signal's reason", async () => {
    const { fetch, requests } = fakeFetch({ hold: true });
    const controller = new AbortController();
    const check = passwordChecker({ filter, rangeUrl: RANGE_URL, fetch, signal: controller.signal });
    const pending = check.settle('dragon');
    await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort(new Error('page closed'));
    await assert.rejects(pending, /page closed/);
    assert.equal(requests[0].aborted, true);
  });

  test('without rangeUrl, settle() gives the local answer', async () => {
    const check = passwordChecker({ filter });
    assert.deepEqual(await check.settle('letmein'), { breached: true, count: null, escalated: false, confirmed: false, minCount: 1 });
  });

  test('bad inputs are TypeErrors; a filter of another key encoding is E_KEY_ENCODING', async () => {
    assert.throws(() => passwordChecker(), TypeError);
    assert.throws(() => passwordChecker(null), TypeError);
    assert.throws(() => passwordChecker({ rangeUrl: RANGE_URL }), /options\.filter/);
    assert.throws(() => passwordChecker({ filter: {} }), TypeError);
    assert.throws(() => passwordChecker({ filter: urlFilter }), (error) => error.code === 'E_KEY_ENCODING');
    assert.throws(() => passwordChecker({ filter, minCount: 0 }), RangeError);
    const check = passwordChecker({ filter, rangeUrl: RANGE_URL, fetch: fakeFetch().fetch });
    assert.throws(() => check.local(42), TypeError);
    assert.throws(() => check.local(undefined), TypeError);
    await assert.rejects(check.settle(42), TypeError);
    await assert.rejects(check.settle(null), TypeError);
  });
});

describe('urlChecker', () => {
  test('local() gives checkUrl\'s local answer, synchronously', async () => {
    const check = urlChecker({ filter: urlFilter });
    for (const value of ['h', 'http://login-wallet.example/', `https://${listedHost}/a/b?c=1`, 'example.com', 'http://bücher.example/']) {
      assert.deepEqual(check.local(value), await checkUrl(value, { filter: urlFilter }), value);
    }
  });

  test('typing a URL makes no request; a settled listed URL one escalation, a clean one none', async () => {
    const requests = [];
    const fetch = (url, init) => {
      requests.push(String(url));
      return globalThis.fetch(url, init);
    };
    const check = urlChecker({ filter: urlFilter, hashesUrl: `${serverUrl}/hashes`, fetch });
    const typed = `https://${listedHost}/login`;
    const notYet = [];
    for (const value of prefixesOf(typed)) {
      try {
        check.local(value);
      } catch (error) {
        assert.equal(error.code, 'E_URL', value); // 'https:' has no canonical form yet: as checkUrl says
        notYet.push(value);
      }
    }
    assert.ok(notYet.length < 4, notYet.join(' '));
    assert.deepEqual(requests, []);
    const result = await check.settle(typed);
    assert.deepEqual(result, { listed: true, expression: `${listedHost}/`, escalated: true, confirmed: true });
    assert.equal(requests.filter((url) => !url.endsWith('/manifest.json')).length, 1, requests.join('\n'));
    const before = requests.length;
    assert.deepEqual(await check.settle('https://fine.example/'), { listed: false, expression: null, escalated: false, confirmed: true });
    assert.equal(requests.length, before);
  });

  test('bad inputs', async () => {
    assert.throws(() => urlChecker({}), TypeError);
    assert.throws(() => urlChecker({ filter }), (error) => error.code === 'E_KEY_ENCODING');
    const check = urlChecker({ filter: urlFilter });
    assert.throws(() => check.local(7), TypeError);
    await assert.rejects(check.settle({}), TypeError);
  });
});

describe('watchField', () => {
  /** A field and its form as a page has them, as EventTargets. */
  function field() {
    const form = new EventTarget();
    const input = Object.assign(new EventTarget(), { value: '', form });
    const type = (value) => {
      input.value = value;
      input.dispatchEvent(new Event('input'));
    };
    return { form, input, type };
  }

  test('input answers locally, change and submit settle once; an emptied field supersedes; unwatch removes it all', async () => {
    const { fetch, requests } = fakeFetch();
    const check = passwordChecker({ filter, rangeUrl: RANGE_URL, fetch });
    const { form, input, type } = field();
    const seen = [];
    const unwatch = watchField(input, check, { onResult: (result, { value, final }) => seen.push({ value, final, breached: result?.breached ?? null }) });
    for (const value of prefixesOf('password123')) type(value);
    assert.equal(requests.length, 0);
    assert.equal(seen.length, 11);
    assert.ok(seen.every(({ final }) => !final));
    input.dispatchEvent(new Event('change'));
    form.dispatchEvent(new Event('submit'));
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(requests.length, 1);
    assert.deepEqual(seen.slice(11), [
      { value: 'password123', final: true, breached: true },
      { value: 'password123', final: true, breached: true },
    ]);
    type('');
    assert.deepEqual(seen.at(-1), { value: '', final: false, breached: null });
    input.dispatchEvent(new Event('change')); // an empty field is never settled
    unwatch();
    type('letmein');
    input.dispatchEvent(new Event('change'));
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(seen.length, 14);
    assert.equal(requests.length, 1);
  });

  test('a settled answer the field has moved on from is not delivered; failures go to onError', async () => {
    const { fetch, requests } = fakeFetch({ hold: true });
    const check = passwordChecker({ filter, rangeUrl: RANGE_URL, fetch });
    const { input, type } = field();
    const finals = [];
    const errors = [];
    watchField(input, check, {
      onResult: (result, { final }) => final && finals.push(result),
      onError: (error, { value }) => errors.push([error.code, value]),
    });
    type('dragon');
    input.dispatchEvent(new Event('change'));
    await new Promise((resolve) => setTimeout(resolve, 5));
    type('dragon1');
    requests[0].release();
    await new Promise((resolve) => setTimeout(resolve, 5));
    assert.deepEqual(finals, []);
    assert.equal(requests[0].aborted, true);

    const failing = passwordChecker({ filter, rangeUrl: RANGE_URL, fetch: async () => new Response('nope', { status: 500 }) });
    const other = field();
    watchField(other.input, failing, { onResult: () => {}, onError: (error, { value }) => errors.push([error.code, value]) });
    other.type('dragon');
    other.input.dispatchEvent(new Event('change'));
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(errors, [['E_ESCALATION', 'dragon']]);
  });

  test('bad arguments are TypeErrors', () => {
    const check = passwordChecker({ filter });
    const { input } = field();
    assert.throws(() => watchField(null, check, { onResult() {} }), TypeError);
    assert.throws(() => watchField(input, {}, { onResult() {} }), TypeError);
    assert.throws(() => watchField(input, check), TypeError);
    assert.throws(() => watchField(input, check, { onResult() {}, onError: 1 }), TypeError);
  });
});
