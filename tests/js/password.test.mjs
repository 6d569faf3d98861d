import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { BloomFilter, BloomgateError, init } from '../../js/index.js';
import { checkPassword, hashPassword, parseRange } from '../../js/password.js';
import { sha1Hex, startRangeService } from './helpers/range-service.mjs';

const BREACHED = new Map([['password', 9659365], ['123456', 37359195], ['letmein', 511475]]);
let service;
let filter;

before(async () => {
  await init();
  service = await startRangeService(BREACHED);
  filter = await BloomFilter.create({ capacity: 1000, errorRate: 0.001, keyEncoding: 'sha1' });
  for (const password of BREACHED.keys()) filter.add(password);
});
after(async () => {
  await service.close();
  filter.free();
});

/** Nothing but the 5-hex prefix may leave the client: path, query, headers and body. */
function assertPrivate(request, password) {
  const hex = sha1Hex(password);
  assert.equal(request.method, 'GET');
  assert.equal(request.url, `/range/${hex.slice(0, 5)}`);
  assert.equal(request.body, '');
  const everything = JSON.stringify(request);
  assert.ok(!everything.includes(password), 'the password itself never leaves');
  assert.ok(!everything.toUpperCase().includes(hex.slice(5, 12)), 'nothing past the prefix leaves');
  assert.equal(request.headers['add-padding'], 'true');
}

test('hashPassword is SHA-1, uppercase hex, UTF-8', () => {
  assert.equal(hashPassword('password'), '5BAA61E4C9B93F3F0682250B6CF8331B7EE68FD8');
  assert.equal(hashPassword('pässwörd'), sha1Hex('pässwörd'));
  assert.equal(hashPassword(''), 'DA39A3EE5E6B4B0D3255BFEF95601890AFD80709');
  assert.throws(() => hashPassword(42), TypeError);
});

test('a breached password escalates once with only its prefix and gets the count', async () => {
  service.requests.length = 0;
  const result = await checkPassword('password', { filter, rangeUrl: service.url });
  assert.deepEqual(result, { breached: true, count: 9659365, escalated: true, confirmed: true, minCount: 1 });
  // This stand-in (like the public service) has no manifest: one probe for it, then the range.
  const ranges = service.requests.filter((r) => !r.url.endsWith('/manifest.json'));
  assert.equal(ranges.length, 1);
  assertPrivate(ranges[0], 'password');
  assert.ok(service.requests.length <= 2);
});

test('a clean password is answered locally with no request', async () => {
  service.requests.length = 0;
  let escalations = 0;
  for (let i = 0; i < 300; i++) {
    const result = await checkPassword(`correct horse battery staple ${i}`, { filter, rangeUrl: service.url });
    assert.equal(result.breached, false);
    if (result.escalated) escalations++;
  }
  assert.equal(service.requests.filter((r) => !r.url.endsWith('/manifest.json')).length, escalations);
  assert.ok(escalations <= 3, `a 0.1% filter escalates about 0.3 of 300 clean checks, got ${escalations}`);
});

test('a filter "maybe" that the server does not know is a false positive: not breached', async () => {
  const everything = { mightContainKey: () => true, keyEncoding: 'sha1' };
  service.requests.length = 0;
  const result = await checkPassword('not-in-any-breach', { filter: everything, rangeUrl: service.url });
  assert.deepEqual(result, { breached: false, count: 0, escalated: true, confirmed: true, minCount: 1 });
  assertPrivate(service.requests.at(-1), 'not-in-any-breach');
});

test('without rangeUrl the filter answers alone and says it is unconfirmed', async () => {
  assert.deepEqual(await checkPassword('letmein', { filter }), { breached: true, count: null, escalated: false, confirmed: false, minCount: 1 });
  assert.deepEqual(await checkPassword('a long clean passphrase', { filter }), { breached: false, count: 0, escalated: false, confirmed: true, minCount: 1 });
});

test('without a filter every check escalates (server-only mode)', async () => {
  const result = await checkPassword('123456', { rangeUrl: `${service.url}/` });
  assert.equal(result.count, 37359195);
});

test('parseRange: CRLF and LF, padding ignored, anything else rejected', () => {
  const suffix = '1E4C9B93F3F0682250B6CF8331B7EE68FD8';
  assert.deepEqual([...parseRange(`${suffix}:3\r\n${'A'.repeat(35)}:0\r\n`)], [[suffix, 3]]);
  assert.deepEqual([...parseRange(`${suffix.toLowerCase()}:3\n`)], [[suffix, 3]]);
  assert.equal(parseRange('').size, 0);
  for (const bad of [`${suffix}:`, `${suffix}:-1`, `${suffix.slice(1)}:2`, `${suffix}:2 `, '<html>', `${suffix}:2\r\n\r\n${suffix}:1`]) {
    assert.throws(() => parseRange(bad), (e) => e instanceof BloomgateError && e.code === 'E_ESCALATION', bad);
  }
});

for (const [mode, pattern] of [['5xx', /HTTP 503/], ['malformed', /malformed range reply/], ['html', /malformed range reply/],
  ['oversized', /limit/], ['empty', /0 rows/]]) {
  test(`server failure '${mode}' is an E_ESCALATION error, never an answer`, async () => {
    service.mode = mode;
    try {
      await assert.rejects(checkPassword('password', { filter, rangeUrl: service.url }), (e) => e.code === 'E_ESCALATION' && pattern.test(e.message));
    } finally {
      service.mode = 'ok';
    }
  });
}

test('without a manifest, a "not breached" counts only from a reply padded as the public service pads', async () => {
  const everything = { mightContainKey: () => true, keyEncoding: 'sha1' };
  service.mode = 'short-padding';
  try {
    // A listed suffix is believed from anyone: "breached" can never be a wrong clean.
    assert.equal((await checkPassword('password', { filter, rangeUrl: service.url })).breached, true);
    await assert.rejects(checkPassword('not-in-any-breach', { filter: everything, rangeUrl: service.url }),
      (e) => e.code === 'E_ESCALATION' && /no bloomgate manifest and answered a padded request with 0 rows/.test(e.message));
  } finally {
    service.mode = 'ok';
  }
  // Told not to pad, an endpoint without a manifest can never say "not breached".
  await assert.rejects(checkPassword('not-in-any-breach', { filter: everything, rangeUrl: service.url, addPadding: false }),
    (e) => e.code === 'E_ESCALATION' && /padding was not asked for/.test(e.message));
  const last = service.requests.at(-1);
  assert.equal(last.headers['add-padding'], undefined, 'addPadding: false sends no Add-Padding header');
  // Same endpoint, padded as documented: believed.
  assert.equal((await checkPassword('not-in-any-breach', { filter: everything, rangeUrl: service.url })).breached, false);
});

test('a slow server times out; a caller abort rejects with its reason', async () => {
  service.mode = 'slow';
  try {
    // A response head that never comes is E_TIMEOUT, as a stalled body is.
    await assert.rejects(checkPassword('password', { filter, rangeUrl: service.url, timeoutMs: 100 }), (e) => e.code === 'E_TIMEOUT');
    const controller = new AbortController();
    const pending = checkPassword('password', { filter, rangeUrl: service.url, signal: controller.signal });
    controller.abort(new Error('user left the page'));
    await assert.rejects(pending, /user left the page/);
  } finally {
    service.mode = 'ok';
  }
});

test('a server that is down is an E_ESCALATION error', async () => {
  const down = await startRangeService();
  const url = down.url;
  await down.close();
  await assert.rejects(checkPassword('password', { filter, rangeUrl: url }), { code: 'E_ESCALATION' });
});

test('bad arguments', async () => {
  await assert.rejects(checkPassword(123, { filter }), TypeError);
  await assert.rejects(checkPassword('x', {}), TypeError);
  const utf8 = await BloomFilter.create({ capacity: 10, errorRate: 0.01 });
  await assert.rejects(checkPassword('x', { filter: utf8 }), { code: 'E_KEY_ENCODING' });
  utf8.free();
});
