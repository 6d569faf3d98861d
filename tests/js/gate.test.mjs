import { test } from 'node:test';
import assert from 'node:assert/strict';

import { BloomFilter, BloomgateError } from '../../js/index.js';
import { createGate } from '../../js/gate.js';

/** A filter stand-in whose answers the test controls. */
function fakeFilter(maybe, estimatedErrorRate = 0.01) {
  return { mightContain: (item) => maybe.has(item), stats: () => ({ estimatedErrorRate }) };
}

test('definitely-not answers locally and never calls confirm', async () => {
  const filter = await BloomFilter.create({ capacity: 1000, errorRate: 0.001 });
  filter.addAll(['bad-1', 'bad-2']);
  let calls = 0;
  const gate = createGate({ filter, confirm: async () => { calls++; return true; } });
  for (let i = 0; i < 200; i++) {
    const r = await gate.check(`clean-${i}`);
    if (!r.escalated) assert.deepEqual(r, { listed: false, escalated: false, falsePositive: false });
  }
  const listed = await gate.check('bad-1');
  assert.deepEqual(listed, { listed: true, escalated: true, falsePositive: false });
  const s = gate.stats();
  assert.equal(s.checks, 201);
  assert.equal(s.escalations, calls);
  assert.ok(calls >= 1 && calls <= 3, `only the listed item (and rare false positives) escalate, got ${calls}`);
  filter.free();
});

test('concurrent checks of one item share a single escalation', async () => {
  let calls = 0;
  let release;
  const gate = createGate({
    filter: fakeFilter(new Set(['x'])),
    confirm: () => { calls++; return new Promise((resolve) => { release = resolve; }); },
  });
  const pending = [gate.check('x'), gate.check('x'), gate.check('x')];
  await new Promise((r) => setImmediate(r));
  assert.equal(gate.stats().inFlight, 1);
  release(true);
  const results = await Promise.all(pending);
  assert.equal(calls, 1);
  for (const r of results) assert.equal(r.listed, true);
  assert.equal(gate.stats().escalations, 1);
});

test('answers are cached with a TTL, and server cache hints are honoured', async () => {
  let clock = 0;
  let calls = 0;
  const gate = createGate({
    filter: fakeFilter(new Set(['a', 'b'])),
    confirm: async (item) => { calls++; return item === 'a' ? { listed: true, ttlMs: 50 } : false; },
    cache: { ttlMs: 1000 },
    now: () => clock,
  });
  assert.equal((await gate.check('a')).listed, true);
  assert.equal((await gate.check('a')).cached, true);
  assert.equal((await gate.check('b')).falsePositive, true);
  assert.equal(calls, 2);
  clock = 60; // past a's hint, within b's default TTL
  await gate.check('a');
  await gate.check('b');
  assert.equal(calls, 3);
  clock = 2000;
  await gate.check('b');
  assert.equal(calls, 4);
  assert.equal(gate.stats().falsePositives, 2);
});

test('the LRU is bounded', async () => {
  const items = new Set(Array.from({ length: 10 }, (_, i) => `i${i}`));
  let calls = 0;
  const gate = createGate({ filter: fakeFilter(items), confirm: async () => { calls++; return true; }, cache: { maxEntries: 3 } });
  for (const item of items) await gate.check(item);
  assert.equal(calls, 10);
  await gate.check('i9'); // recent: cached
  assert.equal(calls, 10);
  await gate.check('i0'); // evicted long ago
  assert.equal(calls, 11);
});

test('a timeout aborts the escalation through its signal', async () => {
  let seenSignal;
  const gate = createGate({
    filter: fakeFilter(new Set(['slow'])),
    timeoutMs: 30,
    confirm: (item, { signal }) => { seenSignal = signal; return new Promise(() => {}); },
  });
  await assert.rejects(gate.check('slow'), (e) => e instanceof BloomgateError && e.code === 'E_ESCALATION' && e.cause?.code === 'E_TIMEOUT');
  assert.equal(seenSignal.aborted, true);
  assert.equal(gate.stats().errors, 1);
});

test('onError decides what a failed escalation means; the default throws, never "clean"', async () => {
  const failing = async () => { throw new Error('server down'); };
  const filter = fakeFilter(new Set(['x']));
  await assert.rejects(createGate({ filter, confirm: failing }).check('x'), { code: 'E_ESCALATION' });
  const listed = await createGate({ filter, confirm: failing, onError: 'listed' }).check('x');
  assert.equal(listed.listed, true);
  assert.match(listed.error.message, /server down/);
  const clean = await createGate({ filter, confirm: failing, onError: 'clean' }).check('x');
  assert.equal(clean.listed, false);
  const custom = await createGate({ filter, confirm: failing, onError: (err, item) => item === 'x' }).check('x');
  assert.equal(custom.listed, true);
  // Failures are not cached: the next check asks again.
  let calls = 0;
  const gate = createGate({ filter, confirm: async () => { calls++; throw new Error('no'); }, onError: 'listed' });
  await gate.check('x');
  await gate.check('x');
  assert.equal(calls, 2);
});

test('a malformed confirm() answer is an escalation error, not a guess', async () => {
  const gate = createGate({ filter: fakeFilter(new Set(['x'])), confirm: async () => 'yes' });
  await assert.rejects(gate.check('x'), { code: 'E_ESCALATION' });
});

test('flags a stale filter when false positives run well above its estimate', async () => {
  let flagged = null;
  // Every item passes the filter but none is listed: 100% false positives against a 1% estimate.
  const gate = createGate({
    filter: { mightContain: () => true, stats: () => ({ estimatedErrorRate: 0.01 }) },
    confirm: async () => false,
    onStale: (info) => { flagged = info; },
    staleness: { minNegatives: 100 },
  });
  for (let i = 0; i < 150; i++) await gate.check(`item-${i}`);
  assert.equal(gate.stats().staleFilter, true);
  assert.ok(flagged.observedFalsePositiveRate > 0.9);
  assert.equal(flagged.expectedFalsePositiveRate, 0.01);
});

test('a healthy filter is not flagged', async () => {
  const filter = await BloomFilter.create({ capacity: 2000, errorRate: 0.05 });
  for (let i = 0; i < 2000; i++) filter.add(`member-${i}`);
  const gate = createGate({ filter, confirm: async (item) => item.startsWith('member-') });
  for (let i = 0; i < 4000; i++) await gate.check(`visitor-${i}`);
  const s = gate.stats();
  assert.equal(s.staleFilter, false);
  assert.ok(s.falsePositives > 0, 'a 5% filter shows some false positives over 4000 checks');
  assert.equal(s.localNegatives + s.falsePositives, 4000);
  filter.free();
});

test('bad arguments are TypeError / RangeError', () => {
  const filter = fakeFilter(new Set());
  assert.throws(() => createGate(), TypeError);
  assert.throws(() => createGate({ confirm: async () => true }), TypeError);
  assert.throws(() => createGate({ filter }), TypeError);
  assert.throws(() => createGate({ filter, confirm: async () => true, onError: 'ignore' }), TypeError);
  assert.throws(() => createGate({ filter, confirm: async () => true, timeoutMs: 0 }), RangeError);
  assert.throws(() => createGate({ filter, confirm: async () => true, cache: { maxEntries: -1 } }), RangeError);
  const gate = createGate({ filter, confirm: async () => true });
  return assert.rejects(gate.check(42), TypeError);
});
