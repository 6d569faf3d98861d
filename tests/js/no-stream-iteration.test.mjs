/**
 * Streams are read with a reader loop (getReader() + read()), never by async iteration
 * (`for await (... of stream)`), which no shipped Safari supports over a ReadableStream
 * (issue 21 item 3):
 *
 *   - no module a browser can load (every file esbuild reaches from the browser entries,
 *     package "imports" resolved for the browser) has a `for await` or Symbol.asyncIterator,
 *     and neither has the single file it makes (`bloomgate/bundle`);
 *   - loadFilter streams a body whose ReadableStream has no async iterator (as Safari's), in
 *     small pieces, with integrity.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import { buildSync } from 'esbuild';

import { bundleSource, liteSource } from '../../scripts/build-bundle.mjs';
import { BloomFilter, loadFilter } from '../../js/index.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const ENTRIES = ['js/index.js', 'js/entry.js', 'js/entry-inline.js', 'js/inline.js'].map((path) => `${root}${path}`);
const ITERATION = /for\s+await\s*\(|Symbol\.asyncIterator/;

describe('no async iteration over streams in what browsers run', () => {
  it('no module reachable from the browser entries iterates asynchronously', () => {
    const result = buildSync({
      entryPoints: ENTRIES, bundle: true, format: 'esm', platform: 'browser', write: false, metafile: true,
      outdir: '/tmp/bg-no-stream-iteration', logLevel: 'silent',
    });
    const files = Object.keys(result.metafile.inputs).filter((path) => path.startsWith('js/'));
    assert.ok(files.includes('js/load.js') && files.includes('js/http.js') && files.includes('js/persist-idb.js'),
      `the scan sees the library: ${files.join(', ')}`);
    const offenders = files.filter((path) => ITERATION.test(readFileSync(`${root}${path}`, 'utf8')));
    assert.deepEqual(offenders, [], 'a `for await` or Symbol.asyncIterator in a module browsers load');
  });

  it('the single file and bloomgate/lite have none either', () => {
    assert.doesNotMatch(bundleSource(), ITERATION);
    assert.doesNotMatch(liteSource(), ITERATION);
  });

  it('loadFilter reads a stream that cannot be iterated (as in Safari), piece by piece, with integrity', async () => {
    const filter = await BloomFilter.create({ capacity: 5000, errorRate: 0.01 });
    for (let i = 0; i < 5000; i++) filter.add(`k${i}`);
    const bytes = filter.serialize();
    filter.free();
    let at = 0;
    let reads = 0;
    const stream = new ReadableStream({
      pull(controller) {
        if (at >= bytes.length) return controller.close();
        controller.enqueue(bytes.slice(at, at + 333));
        at += 333;
        reads++;
      },
    });
    Object.defineProperty(stream, Symbol.asyncIterator, { value: undefined });
    Object.defineProperty(stream, 'values', { value: undefined });
    // A Response as Safari's: its body can only be read through getReader().
    const response = {
      ok: true, status: 200, url: 'https://cdn.example/k.bgf', bodyUsed: false, body: stream,
      headers: new Headers({ 'content-length': String(bytes.length) }),
      arrayBuffer: () => assert.fail('read as a stream, not at once'),
    };
    const integrity = `sha256-${createHash('sha256').update(bytes).digest('base64')}`;
    const loaded = await loadFilter(/** @type {any} */ (response), { integrity });
    assert.ok(reads >= Math.floor(bytes.length / 333));
    assert.equal(Array.from({ length: 5000 }, (_, i) => loaded.mightContain(`k${i}`)).every(Boolean), true);
    assert.deepEqual(loaded.serialize(), bytes);
    loaded.free();
  });
});
