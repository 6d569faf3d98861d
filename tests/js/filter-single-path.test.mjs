// The single-key path of a utf8 filter (bg_filter_add / bg_filter_contains: the
// item is its key, hashed by bg__hash_short for keys up to 128 bytes and probed
// without the kind table for classic filters) against the key path
// (addKey / mightContainKey: bg_filter_add_key, bg_hash), at every key length
// across XXH3's length classes (0, 1-3, 4-8, 9-16, 17-128, 129-240, 241+).
// tests/golden pins bg_hash itself to the native core.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { BloomFilter } from '../../js/index.js';

const utf8 = new TextEncoder();
const LENGTHS = Array.from({ length: 301 }, (_, i) => i);
const SEED = 0x9e3779b97f4a7c15n;

/** An ASCII key of `length` characters, different for each (length, salt). */
function asciiKey(length, salt) {
  let s = '';
  for (let i = 0; i < length; i++) s += String.fromCharCode(33 + ((i * 31 + length * 7 + salt * 13) % 94));
  return s;
}

/** A key of `length` bytes that is not ASCII (two-byte characters), as a string. */
function wideKey(length, salt) {
  let s = '';
  for (let i = 0; s.length < length; i++) s += i % 3 === 0 ? String.fromCharCode(0xe9 + ((i + salt) % 20)) : 'k';
  return s;
}

for (const kind of ['classic', 'blocked', 'counting']) {
  test(`${kind}: add(string) writes the bits addKey(its UTF-8) writes, key lengths 0-300`, async () => {
    for (const length of LENGTHS) {
      const byItem = await BloomFilter.create({ capacity: 64, errorRate: 0.01, kind, seed: SEED });
      const byKey = await BloomFilter.create({ capacity: 64, errorRate: 0.01, kind, seed: SEED });
      try {
        for (const key of [asciiKey(length, 1), asciiKey(length, 2), wideKey(length, 3)]) {
          byItem.add(key);
          byKey.addKey(utf8.encode(key));
        }
        byItem.add(utf8.encode(asciiKey(length, 4))); // a Uint8Array item takes the same path
        byKey.addKey(utf8.encode(asciiKey(length, 4)));
        assert.deepEqual(byItem.serialize(), byKey.serialize(), `${kind}, key length ${length}`);
      } finally {
        byItem.free();
        byKey.free();
      }
    }
  });
}

test('classic: mightContain(string) answers as mightContainKey(its UTF-8), members and non-members of every length 0-300', async () => {
  const filter = await BloomFilter.create({ capacity: 400, errorRate: 0.2, seed: SEED });
  try {
    for (const length of LENGTHS) filter.add(asciiKey(length, 5));
    let maybes = 0;
    let nos = 0;
    for (const length of LENGTHS) {
      assert.equal(filter.mightContain(asciiKey(length, 5)), true, `member of length ${length}`);
      for (let salt = 6; salt < 12; salt++) {
        const key = asciiKey(length, salt);
        const answer = filter.mightContain(key);
        assert.equal(answer, filter.mightContainKey(utf8.encode(key)), `key of length ${length}, salt ${salt}`);
        if (answer) maybes++;
        else nos++;
      }
    }
    // At p = 0.2 both answers occur: the comparison above covered "no" and "maybe".
    assert.ok(maybes > 0 && nos > 0, `maybes ${maybes}, nos ${nos}`);
  } finally {
    filter.free();
  }
});
