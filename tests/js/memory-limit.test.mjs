/**
 * The wasm memory cap (issue 21 item 3): on iOS and iPadOS (WebKit, every browser there) wasm
 * memory is capped at 512 MiB, and what would pass the cap is refused with an error naming it:
 * a filter file whose header says it is larger (E_TOO_LARGE, before anything is allocated),
 * bytes that large, a classic filter too large for it (E_TOO_LARGE, from its size), a filter that
 * would grow memory past the cap (E_NOMEM, freed at once).
 * Node has no navigator: the user agent is simulated in a child process
 * (tests/js/helpers/fresh-module.mjs --ua), the cap in this process with setMemoryLimit().
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import { BloomFilter, BloomgateError, loadFilter } from '../../js/index.js';
import { getMemoryLimit, heapSize, memoryLimitFor, setMemoryLimit } from '../../js/wasm/index.js';

const CHILD = fileURLToPath(new URL('./helpers/fresh-module.mjs', import.meta.url));
const MiB = 1024 * 1024;
const UA = {
  iPhone: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1',
  iPhoneChrome: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/126.0.6478.54 Mobile/15E148 Safari/604.1',
  iPad: 'Mozilla/5.0 (iPad; CPU OS 16_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.6 Mobile/15E148 Safari/604.1',
  iPadDesktop: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15',
  macSafari: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15',
  android: 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36',
  firefox: 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0',
};

function child(...args) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [CHILD, ...args], { timeout: 20000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${args[0]}: ${error.message}\n${stderr}`));
      else resolve(JSON.parse(stdout.trim().split('\n').pop()));
    });
  });
}

describe('the iOS memory cap', () => {
  after(() => setMemoryLimit(null));

  it('512 MiB for iPhone, iPad and iPadOS asking for the desktop site (a Mac with touch); none elsewhere', () => {
    assert.equal(memoryLimitFor({ userAgent: UA.iPhone, maxTouchPoints: 5 }), 512 * MiB);
    assert.equal(memoryLimitFor({ userAgent: UA.iPhoneChrome, maxTouchPoints: 5 }), 512 * MiB, 'Chrome on iOS is WebKit too');
    assert.equal(memoryLimitFor({ userAgent: UA.iPad, maxTouchPoints: 5 }), 512 * MiB);
    assert.equal(memoryLimitFor({ userAgent: UA.iPadDesktop, maxTouchPoints: 5 }), 512 * MiB);
    assert.equal(memoryLimitFor({ userAgent: UA.macSafari, maxTouchPoints: 0 }), null);
    assert.equal(memoryLimitFor({ userAgent: UA.android, maxTouchPoints: 5 }), null);
    assert.equal(memoryLimitFor({ userAgent: UA.firefox }), null);
    assert.equal(memoryLimitFor(undefined), null, 'Node, workers without navigator');
  });

  it('a page whose user agent is an iPhone gets the cap by itself; Node none', async () => {
    assert.equal((await child('limit-of', '--ua', UA.iPhone, '--touch', '5')).limit, 512 * MiB);
    assert.equal((await child('limit-of')).limit, null);
    assert.equal(getMemoryLimit(), null);
  });

  it('on an iPhone, a download whose header says 600 MiB is E_TOO_LARGE naming the cap, nothing allocated', async () => {
    const out = await child('ios-header', '--ua', UA.iPhone, '--touch', '5');
    assert.equal(out.limit, 512 * MiB);
    assert.equal(out.error?.code, 'E_TOO_LARGE', JSON.stringify(out.error));
    assert.match(out.error.message, /capped at 512 MiB/);
    assert.match(out.error.message, /iOS and iPadOS/);
    assert.ok(out.heap < 8 * MiB, `wasm memory stayed small: ${out.heap}`);
  });

  it('over a cap: files and bytes are E_TOO_LARGE, a filter that would grow memory past it E_NOMEM; smaller ones work', async () => {
    const small = await BloomFilter.create({ capacity: 10_000, errorRate: 0.01 });
    small.add('kept');
    const smallBytes = small.serialize();
    const previous = setMemoryLimit(24 * MiB);
    assert.equal(previous, null);
    const start = heapSize();
    assert.ok(start < 24 * MiB, `the test starts below the cap (${start})`);

    const huge = new Uint8Array(30 * MiB);
    for (const attempt of [() => loadFilter(huge), () => BloomFilter.from(huge)]) {
      const error = await attempt().then(() => null, (e) => e);
      assert.ok(error instanceof BloomgateError, String(error));
      assert.equal(error.code, 'E_TOO_LARGE');
      assert.match(error.message, /31457280-byte filter file .*capped at 24 MiB \(25165824 bytes\)/);
    }
    // A classic filter's size is known before it is created: refused without allocating.
    const heapBefore = heapSize();
    const sized = await BloomFilter.create({ capacity: 25_000_000, errorRate: 0.01 }).then(() => null, (e) => e);
    assert.ok(sized instanceof BloomgateError, String(sized));
    assert.equal(sized.code, 'E_TOO_LARGE');
    assert.match(sized.message, /a filter for 25000000 items at error rate 0.01 needs \d+ bytes .*capped at 24 MiB/);
    assert.equal(heapSize(), heapBefore, 'nothing allocated');
    // Another kind's is not: created, found to have grown memory past the cap, freed, refused.
    const grown = await BloomFilter.create({ kind: 'cuckoo', capacity: 25_000_000, errorRate: 0.01 }).then(() => null, (e) => e);
    assert.ok(grown instanceof BloomgateError, String(grown));
    assert.equal(grown.code, 'E_NOMEM');
    assert.match(grown.message, /a filter for 25000000 items .*capped at 24 MiB/);

    // Nothing lost: what was loaded answers, and a small filter still loads and is created.
    assert.equal(small.mightContain('kept'), true);
    const again = await loadFilter(smallBytes);
    assert.equal(again.mightContain('kept'), true);
    const fresh = await BloomFilter.create({ capacity: 1000, errorRate: 0.01 });
    fresh.add('x');
    assert.equal(fresh.mightContain('x'), true);
    for (const f of [small, again, fresh]) f.free();
    assert.equal(setMemoryLimit(null), 24 * MiB);
  });

  it('setMemoryLimit takes a positive whole number of bytes or null', () => {
    for (const bad of [0, -1, 1.5, Number.NaN, '512']) {
      assert.throws(() => setMemoryLimit(/** @type {any} */ (bad)), RangeError);
    }
    assert.equal(setMemoryLimit(null), null);
  });
});
