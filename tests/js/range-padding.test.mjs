// Padded range replies (rangeReplyBytes / rangeReply in js/store.js): the padding must not be
// told apart from real rows. Checked against a plain string sort of the same rows for many
// drawn byte streams (both row alignments, ties on every prefix length), and, with the default
// node:crypto source, the shape of what a client sees: sorted rows, each record once with its
// count, 35 uppercase hex digits and ':0' for padding, 800-1,000 rows, uniform digits and totals.
// Statistical bounds are set at p < 1e-6 (all of them together), so they never flake.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';

import { rangeReply, rangeReplyBytes } from '../../js/store.js';

const PAD_ROW = /^[0-9A-F]{35}:0$/;
const SPAN = 201; // 800..1000 rows
const ACCEPT = 65536 - (65536 % SPAN); // 16-bit draws at or past this are drawn again

/** A seeded byte source (xorshift32), shaped like crypto.randomBytes. */
function seeded(seed) {
  let s = seed >>> 0 || 1;
  return (n) => {
    const bytes = Buffer.alloc(n);
    for (let i = 0; i < n; i++) {
      s ^= s << 13;
      s >>>= 0;
      s ^= s >>> 17;
      s ^= s << 5;
      s >>>= 0;
      bytes[i] = s >>> 24;
    }
    return bytes;
  };
}

/** `random` that records every draw, so the expected reply can be rebuilt from the same bytes. */
function recording(random) {
  const draws = [];
  const fn = (n) => {
    const bytes = random(n);
    draws.push(Buffer.from(bytes));
    return bytes;
  };
  return { fn, draws };
}

const suffixOf = (hash) => Buffer.from(hash).toString('hex').toUpperCase().slice(5);

/** `n` distinct records under one 5-hex prefix, in hash order, counts from 0 to 2^32 - 1. */
function makeRecords(n, random, prefix = [0x21, 0xbd, 0x10]) {
  const seen = new Map();
  while (seen.size < n) {
    const hash = random(20);
    hash[0] = prefix[0];
    hash[1] = prefix[1];
    hash[2] = prefix[2] | (hash[2] & 0x0f);
    const pick = random(1)[0];
    const count = pick < 8 ? [0, 1, 9, 10, 99, 100, 4294967295, 1234567890][pick] : 1 + (random(4).readUInt32BE() % 100000);
    seen.set(hash.toString('hex'), { hash, count });
  }
  return [...seen.values()].sort((a, b) => Buffer.compare(a.hash, b.hash));
}

/** The reply the plain way: every row as a string, one sort, joined by CRLF. */
function expectedReply(records, draws, pad) {
  const rows = records.map(({ hash, count }) => `${suffixOf(hash)}:${count}`);
  if (pad) {
    let total = 0;
    let d = 0;
    for (; d < draws.length; d++) {
      const value = draws[d].readUInt16BE();
      if (value < ACCEPT) {
        total = 800 + (value % SPAN);
        break;
      }
    }
    const padCount = Math.max(0, total - records.length);
    if (padCount > 0) {
      const noise = draws[d + 1];
      assert.equal(noise.length, 18 * padCount, '18 random bytes a padding row');
      for (let i = 0; i < padCount; i++) rows.push(`${noise.subarray(18 * i, 18 * i + 18).toString('hex').toUpperCase().slice(0, 35)}:0`);
    }
  }
  return rows.sort().join('\r\n');
}

function check(records, pad, random, message) {
  const { fn, draws } = recording(random);
  const got = rangeReplyBytes(records, pad, fn).toString('latin1');
  assert.equal(got, expectedReply(records, draws, pad), message);
  return got;
}

test('padded replies are exactly the plain sort of the records and the drawn rows', () => {
  const sizes = [0, 1, 2, 3, 7, 50, 400, 799, 800, 801, 900, 999, 1000, 1001, 1500];
  for (let trial = 0; trial < 120; trial++) {
    const random = seeded(1000 + trial);
    const records = makeRecords(sizes[trial % sizes.length], random);
    check(records, true, random, `trial ${trial}, ${records.length} records`);
  }
});

test('ties on any prefix of the suffix are ordered by the whole row', () => {
  for (let trial = 0; trial < 60; trial++) {
    const random = seeded(5000 + trial);
    const records = makeRecords(1 + (trial % 5), random);
    // Padding rows that copy a record's (or the previous row's) first `keep` digits, for every keep
    // from 0 to 35: ties on the first 32 bits, on 40, on all but the last digit, and whole.
    const tying = (n) => {
      const bytes = random(n);
      if (n <= 2) return bytes;
      for (let base = 0; base < n; base += 18) {
        const keep = (base / 18 + trial) % 36;
        const source = (base / 18) % 3 === 0 || base === 0
          ? Buffer.from(`${suffixOf(records[(base / 18) % records.length].hash)}0`, 'hex')
          : bytes.subarray(base - 18, base);
        const digits = source.toString('hex').slice(0, keep) + bytes.subarray(base, base + 18).toString('hex').slice(keep);
        Buffer.from(digits, 'hex').copy(bytes, base);
      }
      return bytes;
    };
    const got = check(records, true, tying, `trial ${trial}`);
    for (const { hash, count } of records) assert.ok(got.split('\r\n').includes(`${suffixOf(hash)}:${count}`));
  }
});

test('unpadded replies are the records alone, in order, every count in decimal', () => {
  const random = seeded(7);
  for (const n of [0, 1, 2, 5, 100, 1200]) {
    const records = makeRecords(n, random);
    const got = check(records, false, () => assert.fail('no random bytes without padding'), `${n} records`);
    assert.equal(got.split('\r\n').filter(Boolean).length, n);
    assert.equal(rangeReply(records, false), got);
  }
  assert.equal(rangeReply([], false), '');
  assert.equal(rangeReply([], true).split('\r\n').length >= 800, true);
});

test('the row total: 800 + a 16-bit draw mod 201, draws past 65,324 drawn again', () => {
  const script = (values) => {
    let call = 0;
    return (n) => {
      if (n !== 2) return randomBytes(n);
      const bytes = Buffer.alloc(2);
      bytes.writeUInt16BE(values[call++]);
      return bytes;
    };
  };
  const rows = (values, records = []) => {
    const text = rangeReplyBytes(records, true, script(values)).toString('latin1');
    return text ? text.split('\r\n').length : 0;
  };
  assert.equal(rows([0]), 800);
  assert.equal(rows([200]), 1000);
  assert.equal(rows([201]), 800);
  assert.equal(rows([ACCEPT - 1]), 1000);
  assert.equal(rows([ACCEPT, 65535, 5]), 805, 'the last whole multiple of 201 and past it are drawn again');
  // Records count toward the total; more records than the draw: no padding at all.
  const random = seeded(3);
  assert.equal(rows([100], makeRecords(850, random)), 900);
  assert.equal(rows([0], makeRecords(850, random)), 850);
});

test('with node:crypto: sorted, each record once, uniform padding digits and totals, fresh every reply', () => {
  const random = seeded(11);
  const recordSets = [[], makeRecords(1, random), makeRecords(3, random), makeRecords(40, random), makeRecords(900, random)];
  const digitCounts = Array.from({ length: 35 }, () => new Array(16).fill(0));
  let previous = new Set();
  let padRows = 0;
  for (let reply = 0; reply < 250; reply++) {
    const records = recordSets[reply % recordSets.length];
    const bytes = rangeReplyBytes(records, true);
    const rows = bytes.toString('latin1').split('\r\n');
    assert.ok(rows.length >= Math.max(800, records.length) && rows.length <= Math.max(1000, records.length), `${rows.length} rows`);
    assert.deepEqual(rows, [...rows].sort(), 'whole-line order is a plain sort');
    const real = new Map(records.map(({ hash, count }) => [`${suffixOf(hash)}:${count}`, 0]));
    const padding = [];
    for (const row of rows) {
      if (real.has(row)) real.set(row, real.get(row) + 1);
      else {
        assert.match(row, PAD_ROW);
        padding.push(row);
      }
    }
    for (const [row, seen] of real) assert.equal(seen, 1, `${row} once`);
    assert.equal(padding.length, rows.length - records.length);
    for (const row of padding) {
      assert.ok(!previous.has(row), 'no padding row repeats');
      for (let k = 0; k < 35; k++) digitCounts[k][parseInt(row[k], 16)]++;
    }
    previous = new Set(padding);
    padRows += padding.length;
  }
  // Chi-square over 15 degrees of freedom: 60 is p = 2.5e-7 (the leading digit), 70 is p = 4.5e-9
  // (each of the 35 positions: 1.6e-7 for all of them).
  const chi = (counts) => {
    const total = counts.reduce((a, b) => a + b, 0);
    return counts.reduce((sum, n) => sum + (n - total / 16) ** 2 / (total / 16), 0);
  };
  assert.ok(padRows > 150000);
  assert.ok(chi(digitCounts[0]) < 60, `leading digit: chi-square ${chi(digitCounts[0]).toFixed(1)}`);
  for (let k = 0; k < 35; k++) assert.ok(chi(digitCounts[k]) < 70, `digit ${k + 1}: chi-square ${chi(digitCounts[k]).toFixed(1)}`);

  // Totals of padding-only replies (39 bytes a row less the last CRLF): every value of 800..1000,
  // uniform. Chi-square over 200 degrees of freedom: 350 is p = 2.8e-10.
  const totals = new Array(SPAN).fill(0);
  const replies = 6030;
  for (let i = 0; i < replies; i++) {
    const rows = (rangeReplyBytes([], true).length + 2) / 39;
    assert.ok(Number.isInteger(rows) && rows >= 800 && rows <= 1000, `${rows} rows`);
    totals[rows - 800]++;
  }
  const expected = replies / SPAN;
  const chiTotals = totals.reduce((sum, n) => sum + (n - expected) ** 2 / expected, 0);
  assert.ok(chiTotals < 350, `row totals: chi-square ${chiTotals.toFixed(1)} over 200 degrees of freedom`);
});
