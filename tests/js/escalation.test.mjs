// Never a wrong "clean": which escalation replies may say "not listed", what
// every escalation request carries, and the protocol edges (redirects,
// Retry-After, timeouts, subset lists). Real servers on 127.0.0.1; the
// public-service stand-in pads as the public service documents.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';

import { BloomFilter, BloomgateError, createGate, init } from '../../js/index.js';
import { checkPassword } from '../../js/password.js';
import { checkUrl } from '../../js/url.js';
import { parseRetryAfter } from '../../js/http.js';
import { sha1Hex, startRangeService } from './helpers/range-service.mjs';

const LIST_ID = 'c0ffee00000000000000000000000009';
/** A filter that says "maybe" to everything: every check must escalate. */
const maybeAll = (extra = {}) => ({ mightContainKey: () => true, keyEncoding: 'sha1', listId: LIST_ID, generation: 0, minCount: 1, ...extra });

let service;
before(async () => {
  await init();
  service = await startRangeService(new Map([['password', 9659365], ['seen-five-times', 5], ['seen-twelve-times', 12]]));
});
after(() => service.close());

/** A recording server whose handler a test supplies. */
async function serve(handler) {
  const requests = [];
  const server = createServer((req, res) => {
    requests.push({ url: req.url, headers: { ...req.headers } });
    handler(req, res);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    requests,
    url: `http://127.0.0.1:${server.address().port}`,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }),
  };
}

function manifestFor(protocol, fields = {}) {
  return {
    format: 'bloomgate-escalation', version: 1, protocol, hashType: protocol === 'range' ? 'sha1' : 'sha256',
    listId: LIST_ID, generation: 0, records: 1, minCount: 0, padding: 'none', notFound: protocol === 'range' ? 'error' : 'empty', ...fields,
  };
}

test('every escalation request omits credentials and referrer, follows no redirect and skips the HTTP cache', async () => {
  const seen = [];
  const recording = async (url, init) => {
    seen.push({ url: String(url), init });
    return fetch(url, init);
  };
  await checkPassword('correct horse', { filter: maybeAll(), rangeUrl: service.url, fetch: recording });
  assert.ok(seen.length >= 1);
  for (const { url, init } of seen) {
    assert.equal(init.credentials, 'omit', url);
    assert.equal(init.referrerPolicy, 'no-referrer', url);
    assert.equal(init.redirect, 'manual', url);
    assert.equal(init.cache, 'no-store', url);
    assert.equal(init.method, 'GET', url);
    assert.deepEqual(Object.keys(init.headers).filter((name) => name !== 'Add-Padding'), [], 'no header but Add-Padding');
  }
});

test('a redirect is an error, and the other origin is never asked', async () => {
  const elsewhere = await serve((req, res) => res.writeHead(200).end(''));
  const redirecting = await serve((req, res) => res.writeHead(302, { location: `${elsewhere.url}${req.url}` }).end());
  try {
    await assert.rejects(checkPassword('correct horse', { filter: maybeAll(), rangeUrl: `${redirecting.url}/range` }),
      (e) => e instanceof BloomgateError && e.code === 'E_ESCALATION' && /redirect/.test(e.message));
    assert.equal(elsewhere.requests.length, 0);
  } finally {
    await elsewhere.close();
    await redirecting.close();
  }
});

test('Retry-After on 429 and 503: no new request to that endpoint until it passes, and those checks fail', async () => {
  let status = 429;
  const limited = await serve((req, res) => {
    if (req.url.endsWith('/manifest.json')) return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(manifestFor('range')));
    if (status !== 200) return res.writeHead(status, { 'retry-after': '1' }).end('slow down');
    res.writeHead(200).end('');
  });
  try {
    const rangeUrl = `${limited.url}/range`;
    const filter = maybeAll();
    await assert.rejects(checkPassword('one', { filter, rangeUrl }), (e) => e.code === 'E_ESCALATION' && /HTTP 429, retry after 1 s/.test(e.message));
    const asked = limited.requests.length;
    await assert.rejects(checkPassword('two', { filter, rangeUrl }), (e) => e.code === 'E_ESCALATION' && /Retry-After/.test(e.message));
    assert.equal(limited.requests.length, asked, 'no request while Retry-After lasts');
    status = 200;
    await new Promise((resolve) => setTimeout(resolve, 1100));
    assert.equal((await checkPassword('three', { filter, rangeUrl })).breached, false);
    assert.equal(limited.requests.length, asked + 1);
    // 503 the same, with an HTTP-date.
    status = 503;
    await assert.rejects(checkPassword('four', { filter, rangeUrl }), (e) => /HTTP 503/.test(e.message));
  } finally {
    await limited.close();
  }
  assert.equal(parseRetryAfter('120'), 120000);
  assert.equal(parseRetryAfter(new Date(Date.now() + 60000).toUTCString()) > 58000, true);
  assert.equal(parseRetryAfter('soon'), null);
  assert.equal(parseRetryAfter('99999999'), 24 * 3600 * 1000, 'clamped to a day');
});

test('timeoutMs of 2^31 ms or more is a RangeError everywhere (setTimeout would fire at once)', async () => {
  const filter = maybeAll();
  for (const timeoutMs of [2 ** 31, 2 ** 40, Infinity, 0, -1, Number.NaN, '100']) {
    await assert.rejects(checkPassword('x', { filter, rangeUrl: service.url, timeoutMs }), RangeError, String(timeoutMs));
    assert.throws(() => createGate({ filter: { mightContain: () => true }, confirm: async () => true, timeoutMs }), RangeError, String(timeoutMs));
  }
  const url = await BloomFilter.create({ capacity: 10, errorRate: 0.01, keyEncoding: 'url' });
  await assert.rejects(checkUrl('http://evil.example/', { filter: url, hashesUrl: 'http://127.0.0.1:1/hashes', timeoutMs: 2 ** 31 }), RangeError);
  url.free();
  // The largest valid value works (the check does not time out at once).
  assert.equal((await checkPassword('password', { filter, rangeUrl: service.url, timeoutMs: 2 ** 31 - 1 })).breached, true);
});

test('a stalled response head and a stalled body are both E_TIMEOUT', async () => {
  const stalls = await serve((req, res) => {
    if (req.url.endsWith('/manifest.json')) return res.writeHead(200).end(JSON.stringify(manifestFor('range')));
    if (req.url.startsWith('/head/')) return; // never answers
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.write(`${'0'.repeat(35)}:1\r\n`); // then nothing
  });
  try {
    for (const path of ['head', 'body']) {
      await assert.rejects(checkPassword('x', { filter: maybeAll(), rangeUrl: `${stalls.url}/${path}`, timeoutMs: 150 }),
        (e) => e instanceof BloomgateError && e.code === 'E_TIMEOUT', path);
    }
  } finally {
    await stalls.close();
  }
});

test('gate.stats().errors counts failed escalations, not the callers waiting on them', async () => {
  const gate = createGate({
    filter: { mightContain: () => true },
    confirm: () => new Promise((_, reject) => setTimeout(() => reject(new Error('down')), 20)),
    onError: 'listed',
  });
  const results = await Promise.all(Array.from({ length: 5 }, () => gate.check('same item')));
  assert.ok(results.every((r) => r.listed && r.error));
  assert.equal(gate.stats().escalations, 1);
  assert.equal(gate.stats().errors, 1);
  await gate.check('another');
  assert.equal(gate.stats().errors, 2);
});

test('subset lists: breached means "seen at least minCount times", from the filter and from the server', async () => {
  // A filter built from the rows seen at least 10 times (bloomgate build --min-count 10).
  const subset = await BloomFilter.create({ capacity: 100, errorRate: 0.001, keyEncoding: 'sha1', metadata: { minCount: 10 } });
  subset.add('password');
  subset.add('seen-twelve-times');
  assert.equal(subset.minCount, 10);
  try {
    const local = await checkPassword('seen-five-times', { filter: subset, rangeUrl: service.url });
    assert.deepEqual(local, { breached: false, count: null, escalated: false, confirmed: true, minCount: 10 },
      'a local "no" of a subset means fewer than 10, not never: the count is unknown');
    const listed = await checkPassword('seen-twelve-times', { filter: subset, rangeUrl: service.url });
    assert.deepEqual(listed, { breached: true, count: 12, escalated: true, confirmed: true, minCount: 10 });
    // A false positive of the subset that the public service lists 5 times: below the threshold.
    const below = await checkPassword('seen-five-times', { filter: maybeAll({ minCount: 10 }), rangeUrl: service.url });
    assert.deepEqual(below, { breached: false, count: 5, escalated: true, confirmed: true, minCount: 10 });
    // Server-only mode and a stricter threshold asked by the caller.
    assert.deepEqual(await checkPassword('seen-five-times', { rangeUrl: service.url }), { breached: true, count: 5, escalated: true, confirmed: true, minCount: 1 });
    assert.equal((await checkPassword('seen-twelve-times', { filter: subset, rangeUrl: service.url, minCount: 20 })).breached, false);
    await assert.rejects(checkPassword('x', { filter: subset, minCount: 5 }), RangeError, 'below the filter threshold says nothing');
  } finally {
    subset.free();
  }
  const whole = await BloomFilter.create({ capacity: 10, errorRate: 0.01, keyEncoding: 'sha1' });
  assert.equal(whole.minCount, 1);
  whole.free();
});

test('a manifest with a higher threshold than the filter is refused: its "no" would be wrong below it', async () => {
  const endpoint = await serve((req, res) => {
    if (req.url.endsWith('/manifest.json')) return res.writeHead(200).end(JSON.stringify(manifestFor('range', { minCount: 10 })));
    res.writeHead(200).end('');
  });
  try {
    await assert.rejects(checkPassword('x', { filter: maybeAll(), rangeUrl: `${endpoint.url}/range` }),
      (e) => e.code === 'E_ESCALATION' && /at least 10 times/.test(e.message));
    assert.equal((await checkPassword('x', { filter: maybeAll({ minCount: 10 }), rangeUrl: `${endpoint.url}/range` })).breached, false);
  } finally {
    await endpoint.close();
  }
});

test('URL endpoints: an unknown 404, a missing store or a malformed manifest is an error, never "not listed"', async () => {
  const filter = await BloomFilter.create({ capacity: 10, errorRate: 0.001, keyEncoding: 'url', listId: LIST_ID });
  filter.add('evil.example/');
  let manifest = null;
  const endpoint = await serve((req, res) => {
    if (req.url.endsWith('/manifest.json') && manifest !== null) return res.writeHead(200).end(manifest);
    res.writeHead(404).end('not found'); // a mistyped URL, or `serve` without --url-store
  });
  try {
    // A fresh fetch function each time: manifests are cached per fetch function.
    const check = () => checkUrl('https://evil.example/', { filter, hashesUrl: `${endpoint.url}/hashes`, fetch: (...a) => fetch(...a) });
    await assert.rejects(check(), (e) => e.code === 'E_ESCALATION' && /no bloomgate manifest/.test(e.message));
    manifest = JSON.stringify({ ...manifestFor('hashes'), version: 3 }); // version 2 is the signed one
    await assert.rejects(check(), (e) => e.code === 'E_ESCALATION' && /version 3/.test(e.message));
    // Only a manifest that says so makes a 404 mean "none".
    manifest = JSON.stringify(manifestFor('hashes', { notFound: 'error' }));
    await assert.rejects(check(), (e) => e.code === 'E_ESCALATION' && /HTTP 404/.test(e.message));
    manifest = JSON.stringify(manifestFor('hashes', { notFound: 'empty' }));
    assert.deepEqual(await check(), { listed: false, expression: null, escalated: true, confirmed: true });
  } finally {
    await endpoint.close();
    filter.free();
  }
});

test('a padded bloomgate endpoint that sends an empty reply is not trusted', async () => {
  const endpoint = await serve((req, res) => {
    if (req.url.endsWith('/manifest.json')) return res.writeHead(200).end(JSON.stringify(manifestFor('range', { padding: 'request' })));
    res.writeHead(200).end('');
  });
  try {
    await assert.rejects(checkPassword('x', { filter: maybeAll(), rangeUrl: `${endpoint.url}/range` }),
      (e) => e.code === 'E_ESCALATION' && /pads its replies but sent an empty one/.test(e.message));
    assert.equal(endpoint.requests.at(-1).headers['add-padding'], 'true', "auto pads where the manifest says 'request'");
  } finally {
    await endpoint.close();
  }
});

test('only the 5-hex prefix reaches a range endpoint', async () => {
  service.requests.length = 0;
  await checkPassword('hunter2', { filter: maybeAll(), rangeUrl: service.url });
  const hex = sha1Hex('hunter2');
  for (const request of service.requests) {
    const text = JSON.stringify(request).toUpperCase();
    assert.ok(!text.includes(hex.slice(5, 12)));
    assert.ok(!JSON.stringify(request).includes('hunter2'));
  }
  assert.ok(service.requests.some((r) => r.url === `/range/${hex.slice(0, 5)}`));
});

test('through a gate: a misconfigured endpoint is an error for onError, never a silent clean', async () => {
  const notFound = await serve((req, res) => res.writeHead(404).end('no such thing')); // a mistyped URL
  try {
    const confirm = async (item, { signal }) => (await checkPassword(item, { filter: maybeAll(), rangeUrl: `${notFound.url}/rnage`, signal })).breached;
    const strict = createGate({ filter: { mightContain: () => true }, confirm });
    await assert.rejects(strict.check('hunter2'), (e) => e instanceof BloomgateError && e.code === 'E_ESCALATION');
    const cautious = createGate({ filter: { mightContain: () => true }, confirm, onError: 'listed' });
    const answer = await cautious.check('hunter2');
    assert.equal(answer.listed, true);
    assert.equal(answer.error.code, 'E_ESCALATION');
    assert.equal(cautious.stats().errors, 1);
    // Only an explicit choice turns it into "clean".
    const lenient = createGate({ filter: { mightContain: () => true }, confirm, onError: 'clean' });
    assert.equal((await lenient.check('hunter2')).listed, false);
  } finally {
    await notFound.close();
  }
});

test('the public range service is recognised by its host: no manifest probe, its padding is what is trusted', async () => {
  const origin = service.url.replace(/\/range$/, '');
  const seen = [];
  // The public service, reached through a fetch that sends its requests to the stand-in.
  const viaStandIn = (url, init) => {
    seen.push({ url: String(url), padding: init.headers['Add-Padding'] });
    return fetch(String(url).replace('https://api.pwnedpasswords.com', origin), init);
  };
  const rangeUrl = 'https://api.pwnedpasswords.com/range';
  assert.equal((await checkPassword('password', { filter: maybeAll(), rangeUrl, fetch: viaStandIn })).count, 9659365);
  assert.equal((await checkPassword('not-listed-anywhere', { filter: maybeAll(), rangeUrl, fetch: viaStandIn })).breached, false);
  assert.ok(seen.every(({ url }) => /\/range\/[0-9A-F]{5}$/.test(url)), `no manifest request: ${seen.map((s) => s.url).join(', ')}`);
  assert.ok(seen.every(({ padding }) => padding === 'true'), 'padding asked of the public service by default');
  service.mode = 'short-padding';
  try {
    await assert.rejects(checkPassword('not-listed-anywhere', { filter: maybeAll(), rangeUrl, fetch: viaStandIn }), { code: 'E_ESCALATION' });
  } finally {
    service.mode = 'ok';
  }
});
