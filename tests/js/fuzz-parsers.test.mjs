// Mutation fuzzing of the two parsers written in JavaScript: the .bgs exact
// store reader and the HIBP dump line parser. libFuzzer drives the C readers
// (tests/fuzz); it cannot drive JavaScript here (Jazzer.js 4 needs glibc 2.38,
// Debian 12 has 2.36, and 2.1 builds from source at install), so this is a
// seeded, bounded mutator in the same spirit: valid inputs, mutated (bit flips,
// byte writes, truncations, extensions, swapped records, header fields), half
// of them with their checksum recomputed so mutations reach past it. Each
// input must either be refused with a BloomgateError/CliError code, or be
// read as something consistent. BG_FUZZ_JS_ITERATIONS scales the run
// (default 1500 stores, 20000 lines); BG_FUZZ_JS_SEED picks the sequence.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { StoreReader, writeStore } from '../../js/store.js';
import { RecordReader } from '../../js/cli/records.js';
import { LineSplitter } from '../../js/cli/lines.js';
import { prng } from './helpers/prng.mjs';

const SCALE = Number(process.env.BG_FUZZ_JS_ITERATIONS ?? 1);
const SEED = Number(process.env.BG_FUZZ_JS_SEED ?? 0x5eed);

function recomputeChecksum(bytes) {
  if (bytes.length >= 16) bytes.set(createHash('sha256').update(bytes.subarray(16)).digest().subarray(0, 8), 8);
}

function mutateStore(base, r) {
  let bytes = Uint8Array.from(base);
  const rounds = 1 + r.int(4);
  for (let i = 0; i < rounds; i++) {
    switch (r.int(7)) {
      case 0: bytes[r.int(bytes.length)] ^= 1 << r.int(8); break;
      case 1: bytes[r.int(bytes.length)] = r.byte(); break;
      case 2: bytes = bytes.subarray(0, r.int(bytes.length)); break;
      case 3: bytes = Uint8Array.from([...bytes, ...Array.from({ length: 1 + r.int(64) }, r.byte)]); break;
      case 4: { // a header field (offsets 16..80) set to an edge value
        const at = 16 + r.int(64);
        if (at < bytes.length) bytes[at] = [0, 1, 0x7f, 0x80, 0xff][r.int(5)];
        break;
      }
      case 5: { // two records swapped (24-byte sha1 records after the index)
        const records = bytes.length - 24 * 40;
        if (records > 0) {
          const a = records + 24 * r.int(40);
          const b = records + 24 * r.int(40);
          const copy = bytes.slice(a, a + 24);
          bytes.copyWithin(a, b, b + 24);
          bytes.set(copy, b);
        }
        break;
      }
      default: { // one record's hash moved to another bucket
        const at = bytes.length - 24 * (1 + r.int(40));
        if (at > 0) bytes[at] = r.byte();
      }
    }
  }
  if (r.chance(0.5)) recomputeChecksum(bytes);
  return bytes;
}

function compare(a, b) {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return 0;
}

/** A store that opened must be what a reader relies on: sorted, counted, found by its prefixes. */
async function checkConsistent(store) {
  let previous = null;
  let n = 0;
  const all = [];
  for await (const { hash, count } of store.records()) {
    const copy = Uint8Array.from(hash);
    if (previous) assert.ok(compare(previous, copy) < 0, 'records strictly ascending');
    assert.ok(Number.isInteger(count) && count >= 0);
    previous = copy;
    all.push(copy);
    n++;
  }
  assert.equal(n, store.count);
  for (const hash of all.slice(0, 8)) {
    const found = await store.lookup(hash.subarray(0, 3), 20);
    assert.ok(found.some((record) => compare(record.hash, hash) === 0), 'every record is found under its prefix');
    for (const record of found) assert.equal(compare(record.hash.subarray(0, 2), hash.subarray(0, 2)), 0);
  }
}

test('fuzz: the .bgs reader refuses a mutated store with a code, or reads a consistent one', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bloomgate-fuzz-bgs-'));
  const r = prng(SEED);
  const sha1 = (text) => createHash('sha1').update(text).digest();
  const bases = [
    writeStore(Array.from({ length: 40 }, (_, i) => ({ hash: sha1(`pw${i}`), count: i + 1 })), { hashType: 'sha1', listId: 'ab'.repeat(16), generation: 2, minCount: 1 }),
    writeStore(Array.from({ length: 40 }, (_, i) => ({ hash: sha1(`x${i}`), count: 1 })), { hashType: 'sha1' }),
  ];
  const codes = new Map();
  let opened = 0;
  try {
    const iterations = Math.round(1500 * SCALE);
    for (let i = 0; i < iterations; i++) {
      const bytes = mutateStore(bases[i % bases.length], r);
      const path = join(dir, `s${i % 4}.bgs`);
      writeFileSync(path, bytes);
      let store = null;
      try {
        store = await StoreReader.open(path);
      } catch (error) {
        assert.equal(error?.name, 'BloomgateError', `input ${i}: ${error?.stack ?? error}`);
        assert.match(error.code, /^E_[A-Z_]+$/);
        codes.set(error.code, (codes.get(error.code) ?? 0) + 1);
        continue;
      }
      opened++;
      try {
        await checkConsistent(store);
      } catch (error) {
        writeFileSync(join(tmpdir(), `bloomgate-fuzz-bgs-failure-${i}.bgs`), bytes);
        throw new Error(`input ${i} opened but is inconsistent (saved in ${tmpdir()}): ${error.message}`, { cause: error });
      } finally {
        await store.close();
      }
    }
    assert.ok(codes.size >= 4, `mutations reach several checks: ${[...codes.keys()].join(', ')}`);
    assert.ok(opened > 0 || iterations < 100, 'some mutations (e.g. count bytes) still open');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

const HEX = '0123456789ABCDEF';
/** The grammar the parser implements, written independently: [BOM] 40 hex ':' digits [CR]. */
function referenceParse(line) {
  let text = line;
  if (text.startsWith('\ufeff')) text = text.slice(1);
  if (text.endsWith('\r')) text = text.slice(0, -1);
  const match = /^([0-9A-Fa-f]{40}):(\d{1,10})$/.exec(text);
  return match ? { hex: match[1].toUpperCase(), count: Number(match[2]) } : null;
}

function mutateLine(r) {
  const hex = Array.from({ length: 40 }, () => HEX[r.int(16)]).join('');
  let line = `${r.chance(0.2) ? hex.toLowerCase() : hex}:${r.int(100000)}`;
  const mutations = r.int(3);
  for (let i = 0; i < mutations; i++) {
    const at = r.int(line.length + 1);
    switch (r.int(6)) {
      case 0: line = line.slice(0, at) + line.slice(at + 1); break;
      case 1: line = line.slice(0, at) + ':G \t0\ufeff'[r.int(6)] + line.slice(at); break;
      case 2: // an NTLM-length hash, rarely: it fails the whole batch (a dump is refused, not skipped)
        line = r.chance(0.01) ? line.slice(0, 32) + line.slice(40) : line.slice(0, 39) + line.slice(40);
        break;
      case 3: line = `\ufeff${line}`; break;
      case 4: line = `${line}\r`; break;
      default: line = `${line.slice(0, 41)}99999999999`;
    }
  }
  return line;
}

test('fuzz: the HIBP line parser takes exactly the rows the grammar allows, and fails cleanly on the rest', () => {
  const r = prng(SEED ^ 0x9e3779b9);
  const iterations = Math.round(20000 * SCALE);
  const outcomes = new Map();
  for (let i = 0; i < iterations; i += 50) {
    const lines = Array.from({ length: 50 }, () => mutateLine(r));
    const accepted = [];
    const reader = new RecordReader('hibp', {
      minCount: 0,
      skipInvalid: true,
      onKey: (key, count) => accepted.push({ hex: Buffer.from(key).toString('hex').toUpperCase(), count }),
    });
    const splitter = new LineSplitter(reader.line);
    let failure = null;
    try {
      splitter.push(Buffer.from(lines.join('\n'))); // the CLI reads Buffers
      splitter.end();
    } catch (error) {
      failure = error;
    }
    if (failure) {
      assert.equal(failure.name, 'CliError', `batch ${i}: ${failure.stack}`);
      assert.match(failure.code, /^E_[A-Z_]+$/);
      outcomes.set(failure.code, (outcomes.get(failure.code) ?? 0) + 1);
      continue;
    }
    const expected = lines.map(referenceParse).filter((row) => row !== null && row.count <= 0xffffffff);
    for (const row of accepted) {
      assert.equal(row.hex.length, 40);
      assert.ok(Number.isInteger(row.count) && row.count >= 0);
    }
    // Everything the grammar allows is taken, with its count (the parser may cap huge counts).
    const taken = new Set(accepted.map((row) => row.hex));
    for (const row of expected) assert.ok(taken.has(row.hex), `batch ${i}: ${row.hex}:${row.count} was dropped`);
    assert.ok(accepted.length <= lines.length);
    outcomes.set('ok', (outcomes.get('ok') ?? 0) + 1);
  }
  assert.ok(outcomes.get('ok') > 0, `outcomes: ${JSON.stringify([...outcomes])}`);
});
