/**
 * openFilter() in Node against a real node:http filter site on 127.0.0.1
 * (bench/fresh-site.mjs): generations of one list, their deltas and
 * manifest.json, every request recorded.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { BloomgateError, checkPassword, checkUrl, createGate, directoryStorage, openFilter } from '../../js/index.js';
import { FilterSite, buildGenerations, checksumOf, manifestFor, sri } from '../../bench/fresh-site.mjs';
import { CLI } from './helpers/cli.mjs';

const SIZE = 4000;
const SHIFT = 40; // each generation removes 1% of the keys and adds 1%
const GENERATIONS = 5;

let generations;
let scratch;
let dirCount = 0;

before(async () => {
  generations = await buildGenerations({ count: GENERATIONS, size: SIZE, shift: SHIFT, capacity: 5000, errorRate: 0.01 });
  scratch = mkdtempSync(join(tmpdir(), 'bloomgate-open-filter-'));
});
after(() => rmSync(scratch, { recursive: true, force: true }));

const newDir = () => join(scratch, `store-${++dirCount}`);

/** A started site publishing generation `g` (deltas from the given generations). */
async function siteAt(g, options = {}) {
  const site = new FilterSite(generations);
  site.publish(g, options);
  await site.start();
  return site;
}

/** Collect a live filter's events. */
function recorder(live) {
  const events = [];
  for (const type of ['update', 'error', 'check']) live.addEventListener(type, (event) => events.push({ type, ...event.detail }));
  return events;
}

const errorCodes = (events) => events.filter((e) => e.type === 'error').map((e) => e.error.code);
const bytesEqual = (a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)) === 0;

/** Keys of generation g (first and last), and keys that left it. */
function expectGeneration(live, g) {
  assert.equal(live.generation, g);
  assert.ok(bytesEqual(live.serialize(), generations.files[g]), `the filter in use is byte for byte generation ${g}`);
  const keys = generations.keysOf(g);
  assert.equal(live.mightContain(keys[0]), true);
  assert.equal(live.mightContain(keys[keys.length - 1]), true);
  assert.deepEqual(live.mightContainMany([keys[1], keys[2]]), [true, true]);
  assert.deepEqual([...live.mightContainMany([keys[1], keys[2]], new Uint8Array(2))], [1, 1], 'into reaches the filter in use');
}

describe('openFilter: first open and the request policy', () => {
  it('downloads the full file when nothing is persisted, with private requests only', async () => {
    const site = await siteAt(1);
    const seen = [];
    const fetchSpy = (input, init) => {
      seen.push({ url: String(input), init });
      return fetch(input, init);
    };
    try {
      const live = await openFilter(site.manifestUrl, { storage: false, fetch: fetchSpy });
      expectGeneration(live, 1);
      const stats = live.stats();
      assert.equal(stats.source, 'full');
      assert.equal(stats.generation, 1);
      assert.equal(stats.listId, generations.listId);
      assert.equal(stats.lastError, null);
      assert.ok(stats.lastCheck > 0 && stats.lastUpdate >= stats.lastCheck);
      assert.equal(stats.bytesDownloaded, generations.files[1].length + Buffer.byteLength(site.files.get('/manifest.json')));
      assert.equal(stats.n, SIZE);
      assert.deepEqual(site.paths(), ['/manifest.json', '/filter-1.bgf']);
      for (const { init } of seen) {
        assert.equal(init.credentials, 'omit');
        assert.equal(init.referrerPolicy, 'no-referrer');
        assert.equal(init.redirect, 'manual');
        assert.equal(init.cache, 'no-store');
        assert.equal(init.method, 'GET');
      }
      // The first request names no ETag; no request carries cookies or a referrer.
      assert.deepEqual(Object.keys(seen[0].init.headers ?? {}), []);
      for (const request of site.requests) {
        assert.equal(request.headers.cookie, undefined);
        assert.equal(request.headers.referer, undefined);
        assert.equal(request.headers.authorization, undefined);
      }
      live.close();
      assert.throws(() => live.mightContain('x'), (error) => error.code === 'E_FREED');
    } finally {
      await site.stop();
    }
  });

  it('rejects with a clear error when nothing is persisted and the site is down', async () => {
    const site = await siteAt(1);
    await site.stop();
    await assert.rejects(openFilter(site.manifestUrl, { storage: directoryStorage(newDir()), timeoutMs: 5000 }), (error) => {
      assert.ok(error instanceof BloomgateError);
      assert.equal(error.code, 'E_FETCH');
      assert.match(error.message, /no persisted copy to start from/);
      assert.match(error.message, /manifest\.json/);
      return true;
    });
  });

  it('rejects a first open whose manifest or file is bad, with its code', async () => {
    const cases = [
      ['garbage', (site) => site.setManifest('<html>502 Bad Gateway</html>'), 'E_MANIFEST'],
      ['another format', (site) => site.setManifest({ format: 'bloomgate-escalation', version: 1 }), 'E_MANIFEST'],
      ['a newer manifest version', (site) => site.setManifest({ ...site.manifest, version: 2 }), 'E_MANIFEST'],
      ['no integrity', (site) => site.setManifest({ ...site.manifest, full: { ...site.manifest.full, integrity: undefined } }), 'E_MANIFEST'],
      ['a manifest over 64 KiB', (site) => site.setManifest({ ...site.manifest, padding: 'x'.repeat(70000) }), 'E_MANIFEST'],
      ['an integrity mismatch', (site) => site.setManifest({ ...site.manifest, full: { ...site.manifest.full, integrity: sri(Buffer.from('other')) } }), 'E_INTEGRITY'],
      ['HTTP 500', (site) => site.overrides.set('/manifest.json', { status: 500, body: 'oops' }), 'E_FETCH'],
      ['a missing file', (site) => site.files.delete('/filter-1.bgf'), 'E_FETCH'],
      ['a file larger than maxBytes', () => {}, 'E_TOO_LARGE', { maxBytes: 1024 }],
      ['another list than asked for', () => {}, 'E_LIST', { listId: 'ff'.repeat(16) }],
    ];
    for (const [what, spoil, code, extra = {}] of cases) {
      const site = await siteAt(1);
      spoil(site);
      try {
        await assert.rejects(openFilter(site.manifestUrl, { storage: false, ...extra }), (error) => {
          assert.equal(error.code, code, `${what}: ${error.message}`);
          return true;
        }, what);
      } finally {
        await site.stop();
      }
    }
  });

  it('refuses a redirect and does not follow it', async () => {
    const site = await siteAt(1);
    site.overrides.set('/manifest.json', { status: 302, headers: { location: '/elsewhere.json' } });
    try {
      await assert.rejects(openFilter(site.manifestUrl, { storage: false }), (error) => error.code === 'E_FETCH' && /redirect/.test(error.message));
      assert.deepEqual(site.paths(), ['/manifest.json']);
      site.overrides.delete('/manifest.json');
      site.overrides.set('/filter-1.bgf', { status: 301, headers: { location: '/filter-9.bgf' } });
      await assert.rejects(openFilter(site.manifestUrl, { storage: false }), (error) => error.code === 'E_FETCH' && /redirect/.test(error.message));
      assert.ok(!site.paths().includes('/filter-9.bgf'));
    } finally {
      await site.stop();
    }
  });

  it('validates its arguments', async () => {
    await assert.rejects(openFilter('/relative/manifest.json'), TypeError);
    await assert.rejects(openFilter('ftp://127.0.0.1/manifest.json'), TypeError);
    await assert.rejects(openFilter('http://127.0.0.1:1/m.json', { storage: {} }), TypeError);
    await assert.rejects(openFilter('http://127.0.0.1:1/m.json', { refreshSeconds: -1 }), RangeError);
    await assert.rejects(openFilter('http://127.0.0.1:1/m.json', { maxBytes: 10 }), RangeError);
    await assert.rejects(openFilter('http://127.0.0.1:1/m.json', { listId: 'xyz' }), TypeError);
    await assert.rejects(openFilter('http://127.0.0.1:1/m.json', { autoRefresh: 'yes' }), TypeError);
  });
});

describe('openFilter: updates', () => {
  it('follows a delta chain over four generations, byte-identical to the full files, fetching only deltas', async () => {
    const site = await siteAt(1);
    try {
      const live = await openFilter(site.manifestUrl, { storage: directoryStorage(newDir()) });
      const events = recorder(live);
      expectGeneration(live, 1);
      for (let g = 2; g <= GENERATIONS; g++) {
        site.clearLog();
        site.publish(g, { deltasFrom: [g - 1, Math.max(1, g - 2)] });
        const before = live.stats().bytesDownloaded;
        const outcome = await live.refresh();
        assert.equal(outcome.changed, true);
        assert.equal(outcome.source, 'delta');
        expectGeneration(live, g);
        // The delta from the generation in use was fetched; the full file was not.
        assert.deepEqual(site.paths(), ['/manifest.json', `/delta-${g - 1}-${g}.bgd`]);
        const deltaLength = site.files.get(`/delta-${g - 1}-${g}.bgd`).length;
        assert.ok(deltaLength < generations.files[g].length / 4, `delta ${deltaLength} bytes vs file ${generations.files[g].length}`);
        assert.equal(live.stats().bytesDownloaded - before, deltaLength + Buffer.byteLength(site.files.get('/manifest.json')));
        assert.equal(live.stats().source, 'delta');
        // The keys generation g removed are gone (no false negatives for the ones it added).
        const added = generations.keysOf(g).slice(-SHIFT);
        assert.ok(added.every((key) => live.mightContain(key)));
      }
      assert.deepEqual(events.filter((e) => e.type === 'update').map((e) => [e.previousGeneration, e.generation, e.source]),
        [[1, 2, 'delta'], [2, 3, 'delta'], [3, 4, 'delta'], [4, 5, 'delta']]);
      assert.deepEqual(errorCodes(events), []);
      live.close();
    } finally {
      await site.stop();
    }
  });

  it('revalidates with If-None-Match: a 304 downloads nothing', async () => {
    const site = await siteAt(2, { deltasFrom: [1] });
    try {
      const live = await openFilter(site.manifestUrl, { storage: false });
      const events = recorder(live);
      const before = live.stats().bytesDownloaded;
      site.clearLog();
      const outcome = await live.refresh();
      assert.equal(outcome.notModified, true);
      assert.equal(outcome.changed, false);
      assert.deepEqual(site.log(), ['GET /manifest.json 304']);
      assert.equal(site.requests[0].headers['if-none-match'], site.requests[0].headers['if-none-match'].trim());
      assert.match(site.requests[0].headers['if-none-match'], /^"/);
      assert.equal(live.stats().bytesDownloaded, before);
      assert.deepEqual(events.map((e) => [e.type, e.status]), [['check', 304]]);
      expectGeneration(live, 2);
      live.close();
    } finally {
      await site.stop();
    }
  });

  it('asks no more often than minRefreshSeconds, and refreshSeconds only makes it slower', async () => {
    let now = 1_000_000_000_000;
    const site = await siteAt(1, { minRefreshSeconds: 3600 });
    try {
      const live = await openFilter(site.manifestUrl, { storage: false, now: () => now });
      site.clearLog();
      now += 3599 * 1000;
      assert.equal((await live.refresh()).checked, false);
      assert.deepEqual(site.paths(), []);
      assert.equal(live.stats().nextCheck, 1_000_000_000_000 + 3600 * 1000);
      now += 1000;
      assert.equal((await live.refresh()).checked, true);
      assert.deepEqual(site.paths(), ['/manifest.json']);
      // force: a person pressing "update now"
      assert.equal((await live.refresh({ force: true })).checked, true);
      assert.equal(site.paths().length, 2);
      live.close();

      site.publish(1, { minRefreshSeconds: 10 });
      const slower = await openFilter(site.manifestUrl, { storage: false, now: () => now, refreshSeconds: 60 });
      site.clearLog();
      now += 30 * 1000;
      assert.equal((await slower.refresh()).checked, false);
      now += 30 * 1000;
      assert.equal((await slower.refresh()).checked, true);
      assert.equal(slower.stats().minRefreshSeconds, 60);
      slower.close();

      // A manifest cannot lock clients out for more than a day.
      site.publish(1, { minRefreshSeconds: 10 ** 9 });
      const capped = await openFilter(site.manifestUrl, { storage: false, now: () => now });
      assert.equal(capped.stats().minRefreshSeconds, 86400);
      capped.close();
    } finally {
      await site.stop();
    }
  });

  it('takes the full file when no delta starts at the generation in use, or the delta is not smaller', async () => {
    const site = await siteAt(1);
    try {
      const live = await openFilter(site.manifestUrl, { storage: false });
      site.publish(3, { deltasFrom: [2] }); // the client holds 1: no one-hop delta for it
      site.clearLog();
      assert.equal((await live.refresh()).source, 'full');
      assert.deepEqual(site.paths(), ['/manifest.json', '/filter-3.bgf']);
      expectGeneration(live, 3);
      site.publish(4, {
        deltasFrom: [3],
        manifest: (m) => ({ ...m, deltas: m.deltas.map((d) => ({ ...d, length: m.full.length })) }),
      });
      site.clearLog();
      assert.equal((await live.refresh()).source, 'full');
      assert.deepEqual(site.paths(), ['/manifest.json', '/filter-4.bgf']);
      live.close();
    } finally {
      await site.stop();
    }
  });

  it('keeps answering from the old generation while an update is under way (one swap, no half-built filter)', async () => {
    const site = await siteAt(1);
    try {
      const live = await openFilter(site.manifestUrl, { storage: false });
      const always = generations.keysOf(2)[0]; // in generations 1 and 2
      const gone = generations.keysOf(1)[0]; // removed by generation 2
      site.publish(2, { deltasFrom: [1] });
      const seen = new Set();
      let stop = false;
      let queries = 0;
      const spin = async () => {
        while (!stop) {
          assert.equal(live.mightContain(always), true);
          seen.add(`${live.generation}:${live.mightContain(gone)}`);
          queries++;
          await new Promise((resolve) => setImmediate(resolve));
        }
      };
      const spinning = spin();
      await live.refresh();
      stop = true;
      await spinning;
      assert.ok(queries > 2);
      assert.ok(seen.has('1:true'));
      assert.equal(live.generation, 2);
      live.close();
    } finally {
      await site.stop();
    }
  });

  it('refreshes on a timer only when asked (autoRefresh), without keeping Node alive', async () => {
    const site = await siteAt(1, { minRefreshSeconds: 1 });
    try {
      const manual = await openFilter(site.manifestUrl, { storage: false });
      const auto = await openFilter(site.manifestUrl, { storage: false, autoRefresh: true });
      site.publish(2, { deltasFrom: [1], minRefreshSeconds: 1 });
      const updated = new Promise((resolve) => auto.addEventListener('update', (event) => resolve(event.detail), { once: true }));
      const detail = await Promise.race([updated, new Promise((_, reject) => setTimeout(() => reject(new Error('no timer update')), 5000))]);
      assert.equal(detail.generation, 2);
      assert.equal(detail.source, 'delta');
      assert.equal(auto.generation, 2);
      assert.equal(manual.generation, 1);
      manual.close();
      auto.close();
    } finally {
      await site.stop();
    }
  });
});

describe('openFilter: bad updates keep the last good filter', () => {
  /** A live filter at generation 2 (persisted in a directory), and a site that offers generation 3 by `spoil`. */
  async function liveAt2() {
    const site = await siteAt(2, { deltasFrom: [1] });
    const dir = newDir();
    const live = await openFilter(site.manifestUrl, { storage: directoryStorage(dir) });
    const events = recorder(live);
    return { site, live, events, dir };
  }

  function assertStillGeneration2(live, events, code) {
    expectGeneration(live, 2);
    assert.equal(live.stats().lastError?.code, code);
    assert.ok(errorCodes(events).includes(code), `events: ${errorCodes(events)}`);
    assert.ok(!events.some((e) => e.type === 'update'));
  }

  /** Publish generation 3 with a delta from 2 replaced by `bytes` (integrity made to match, so the core judges it). */
  function offerDelta(site, bytes, { withFull = false } = {}) {
    site.publish(3, { deltasFrom: [2] });
    site.files.set('/delta-2-3.bgd', bytes);
    site.setManifest({ ...site.manifest, deltas: [{ from: 2, url: 'delta-2-3.bgd', length: bytes.length, integrity: sri(bytes) }] });
    if (!withFull) site.files.delete('/filter-3.bgf');
  }

  const deltaCases = [
    ['a corrupted delta', (site) => {
      const bytes = Uint8Array.from(site.delta(2, 3));
      bytes[bytes.length - 3] ^= 0x5a;
      return bytes;
    }, ['E_CHECKSUM', 'E_DELTA']],
    ['a truncated delta', (site) => site.delta(2, 3).slice(0, -20), ['E_TRUNCATED', 'E_DELTA']],
    ['a delta for another base', (site) => site.delta(1, 3), ['E_DELTA_BASE']],
    ['a replayed delta (older target)', (site) => site.delta(1, 2), ['E_STALE']],
    ['garbage for a delta', () => new TextEncoder().encode('<html>not a delta</html>'), ['E_MAGIC', 'E_TRUNCATED']],
  ];

  for (const [what, make, codes] of deltaCases) {
    it(`refuses ${what}; with no full file either, generation 2 stays and answers`, async () => {
      const { site, live, events, dir } = await liveAt2();
      try {
        offerDelta(site, make(site));
        site.clearLog();
        const outcome = await live.refresh();
        assert.equal(outcome.changed, false);
        const [deltaError] = events.filter((e) => e.type === 'error' && e.stage === 'delta').map((e) => e.error.code);
        assert.ok(codes.includes(deltaError), `${what}: ${deltaError} (${errorCodes(events)})`);
        assertStillGeneration2(live, events, 'E_FETCH'); // then the full file was missing
        assert.deepEqual(site.paths(), ['/manifest.json', '/delta-2-3.bgd', '/filter-3.bgf']);
        // The persisted copy is still generation 2.
        live.close();
        const again = await openFilter(site.manifestUrl, { storage: directoryStorage(dir), refreshSeconds: 3600 });
        assert.equal(again.stats().source, 'persisted');
        expectGeneration(again, 2);
        again.close();
      } finally {
        await site.stop();
      }
    });
  }

  it('falls back to the full file when the delta is refused', async () => {
    const { site, live, events } = await liveAt2();
    try {
      const bad = Uint8Array.from(site.delta(2, 3));
      bad[200] ^= 1;
      offerDelta(site, bad, { withFull: true });
      site.clearLog();
      const outcome = await live.refresh();
      assert.equal(outcome.source, 'full');
      expectGeneration(live, 3);
      assert.deepEqual(site.paths(), ['/manifest.json', '/delta-2-3.bgd', '/filter-3.bgf']);
      assert.equal(events.filter((e) => e.type === 'error').length, 1);
      assert.equal(events.find((e) => e.type === 'error').stage, 'delta');
      assert.ok(live.stats().lastError !== null, 'the refused delta stays the last error of that check');
      // A clean check afterwards clears it.
      await live.refresh();
      assert.equal(live.stats().lastError, null);
      live.close();
    } finally {
      await site.stop();
    }
  });

  it('refuses a delta whose bytes do not match the manifest integrity, before applying it', async () => {
    const { site, live, events } = await liveAt2();
    try {
      site.publish(3, { deltasFrom: [2] });
      site.files.set('/delta-2-3.bgd', site.delta(1, 3).subarray(0, site.delta(2, 3).length));
      site.files.delete('/filter-3.bgf');
      await live.refresh();
      assert.equal(events.find((e) => e.stage === 'delta').error.code, 'E_INTEGRITY');
      assertStillGeneration2(live, events, 'E_FETCH');
      live.close();
    } finally {
      await site.stop();
    }
  });

  const manifestCases = [
    ['garbage for a manifest', (site) => site.setManifest('{"format": "bloomgate-filter", "version": 1, "listId": '), 'E_MANIFEST'],
    ['a binary blob for a manifest', (site) => site.overrides.set('/manifest.json', { body: new Uint8Array([0xff, 0xfe, 0, 1, 2]) }), 'E_MANIFEST'],
    ['an older generation (a replayed manifest)', (site) => site.publish(1), 'E_STALE'],
    ['another list', (site) => site.setManifest({ ...manifestFor('0123'.repeat(8), 3, site.generations.files[3]) }), 'E_LIST'],
    ['an HTTP error', (site) => site.overrides.set('/manifest.json', { status: 503, body: 'busy' }), 'E_FETCH'],
    ['a dropped connection', (site) => site.overrides.set('/manifest.json', (req, res) => res.destroy()), 'E_FETCH'],
    ['a full file that fails its integrity', (site) => {
      site.publish(3);
      site.setManifest({ ...site.manifest, full: { ...site.manifest.full, integrity: sri(site.generations.files[4]) } });
    }, 'E_INTEGRITY'],
    ['a full file of another generation', (site) => {
      site.publish(3);
      site.files.set('/filter-3.bgf', site.generations.files[4]);
      site.setManifest({ ...site.manifest, full: { ...site.manifest.full, integrity: sri(site.generations.files[4]) } });
    }, 'E_MANIFEST'],
    ['a full file that is generation 2 again', (site) => {
      site.publish(3);
      site.files.set('/filter-3.bgf', site.generations.files[2]);
      site.setManifest({ ...site.manifest, full: { ...site.manifest.full, integrity: sri(site.generations.files[2]), length: site.generations.files[2].length } });
    }, 'E_STALE'],
    ['a truncated full file', (site) => {
      site.publish(3);
      site.overrides.set('/filter-3.bgf', (req, res) => {
        res.writeHead(200, { 'content-length': site.generations.files[3].length });
        res.write(Buffer.from(site.generations.files[3].subarray(0, 5000)));
        setTimeout(() => res.destroy(), 20);
      });
    }, 'E_FETCH'],
    ['the same generation with other bytes', (site) => {
      site.publish(2);
      site.setManifest({ ...site.manifest, full: { ...site.manifest.full, checksum: checksumOf(site.generations.files[3]) } });
    }, 'E_MANIFEST'],
  ];

  // Refused from the manifest alone: nothing else is fetched.
  const MANIFEST_ONLY = new Set(['E_MANIFEST', 'E_STALE', 'E_LIST']);

  for (const [what, spoil, code] of manifestCases) {
    it(`keeps generation 2 on ${what} (${code})`, async () => {
      const { site, live, events } = await liveAt2();
      try {
        spoil(site);
        site.clearLog();
        const outcome = await live.refresh();
        if (MANIFEST_ONLY.has(code) && !what.startsWith('a full file')) assert.deepEqual(site.paths(), ['/manifest.json']);
        assert.equal(outcome.changed, false);
        assert.equal(outcome.error?.code, code, outcome.error?.message);
        assertStillGeneration2(live, events, code);
        live.close();
      } finally {
        await site.stop();
      }
    });
  }

  it('does not take the interval of a manifest it refused', async () => {
    const { site, live } = await liveAt2();
    try {
      site.setManifest({ ...manifestFor('0123'.repeat(8), 3, site.generations.files[3]), minRefreshSeconds: 86400 });
      assert.equal((await live.refresh()).error?.code, 'E_LIST');
      assert.equal(live.stats().minRefreshSeconds, 0);
      site.publish(1, { minRefreshSeconds: 86400 });
      assert.equal((await live.refresh()).error?.code, 'E_STALE');
      assert.equal(live.stats().minRefreshSeconds, 0);
      assert.equal((await live.refresh()).checked, true, 'still asked at once');
      live.close();
    } finally {
      await site.stop();
    }
  });

  it('keeps generation 2 when the site is down, and updates when it is back', async () => {
    const { site, live, events } = await liveAt2();
    try {
      site.publish(3, { deltasFrom: [2] });
      await site.stop();
      await live.refresh();
      assertStillGeneration2(live, events, 'E_FETCH');
      await site.start();
      assert.equal((await live.refresh()).source, 'delta');
      expectGeneration(live, 3);
      assert.equal(live.stats().lastError, null);
      live.close();
    } finally {
      await site.stop();
    }
  });

  it('keeps using a new generation whose persisting failed (quota), and says so; storage keeps the old copy', async () => {
    const site = await siteAt(2, { deltasFrom: [1] });
    const stored = new Map();
    let full = false;
    const storage = {
      async get(key) {
        return stored.get(key) ?? null;
      },
      async set(key, bytes, meta) {
        if (full) throw new DOMException('The quota has been exceeded.', 'QuotaExceededError');
        stored.set(key, { bytes: Uint8Array.from(bytes), meta: { ...meta } });
      },
      async delete(key) {
        stored.delete(key);
      },
    };
    try {
      const live = await openFilter(site.manifestUrl, { storage });
      const events = recorder(live);
      full = true;
      site.publish(3, { deltasFrom: [2] });
      const outcome = await live.refresh();
      assert.equal(outcome.changed, true);
      expectGeneration(live, 3);
      assert.equal(live.stats().lastError.code, 'E_STORAGE');
      assert.match(live.stats().lastError.message, /quota/i);
      assert.deepEqual(errorCodes(events), ['E_STORAGE']);
      assert.ok(bytesEqual(stored.get(site.manifestUrl).bytes, generations.files[2]), 'storage still holds generation 2, whole');
      live.close();
    } finally {
      await site.stop();
    }
  });
});

describe('openFilter: persisted copies', () => {
  it('starts offline from the persisted copy, and keeps it when the background check fails', async () => {
    const site = await siteAt(3, { deltasFrom: [2] });
    const dir = newDir();
    const errors = [];
    try {
      const first = await openFilter(site.manifestUrl, { storage: directoryStorage(dir) });
      first.close();
      await site.stop();
      const live = await openFilter(site.manifestUrl, { storage: directoryStorage(dir), onError: (error) => errors.push(error.code) });
      assert.equal(live.stats().source, 'persisted');
      expectGeneration(live, 3);
      const outcome = await live.refresh(); // the background check started at open
      assert.equal(outcome.error?.code, 'E_FETCH');
      assert.deepEqual(errors, ['E_FETCH']);
      expectGeneration(live, 3);
      live.close();
    } finally {
      await site.stop();
    }
  });

  it('persists the ETag and the last check: a restart within minRefreshSeconds asks nothing, after it a 304', async () => {
    let now = 2_000_000_000_000;
    const site = await siteAt(2, { deltasFrom: [1], minRefreshSeconds: 600 });
    const dir = newDir();
    try {
      const first = await openFilter(site.manifestUrl, { storage: directoryStorage(dir), now: () => now });
      first.close();
      site.clearLog();
      now += 60 * 1000;
      const second = await openFilter(site.manifestUrl, { storage: directoryStorage(dir), now: () => now });
      assert.equal(second.stats().source, 'persisted');
      assert.equal((await second.refresh()).checked, false);
      assert.deepEqual(site.paths(), []);
      second.close();
      now += 600 * 1000;
      const third = await openFilter(site.manifestUrl, { storage: directoryStorage(dir), now: () => now });
      const outcome = await third.refresh(); // joins the check the open started
      assert.equal(outcome.notModified, true);
      assert.deepEqual(site.log(), ['GET /manifest.json 304']);
      assert.equal(third.stats().bytesDownloaded, 0);
      third.close();
    } finally {
      await site.stop();
    }
  });

  it('discards a corrupt persisted copy (never uses it) and downloads the filter again', async () => {
    const site = await siteAt(2);
    const dir = newDir();
    try {
      (await openFilter(site.manifestUrl, { storage: directoryStorage(dir) })).close();
      const [file] = readdirSync(dir).filter((name) => name.endsWith('.bgf'));
      const bytes = readFileSync(join(dir, file));
      bytes[bytes.length - 10] ^= 0x40;
      writeFileSync(join(dir, file), bytes);
      const errors = [];
      site.clearLog();
      const live = await openFilter(site.manifestUrl, { storage: directoryStorage(dir), onError: (error) => errors.push(error.code) });
      assert.deepEqual(errors, ['E_CHECKSUM']);
      assert.equal(live.stats().source, 'full');
      expectGeneration(live, 2);
      assert.deepEqual(site.paths(), ['/manifest.json', '/filter-2.bgf']);
      assert.ok(bytesEqual(readFileSync(join(dir, file)), generations.files[2]), 'the good copy replaced the corrupt one');
      live.close();

      // Corrupt again with the site down: no copy to use, so the open fails.
      writeFileSync(join(dir, file), bytes);
      await site.stop();
      await assert.rejects(openFilter(site.manifestUrl, { storage: directoryStorage(dir) }), (error) => error.code === 'E_FETCH');
      assert.deepEqual(readdirSync(dir).filter((name) => name.endsWith('.bgf')), [], 'the corrupt copy was deleted');
    } finally {
      await site.stop();
    }
  });

  it('writes the directory atomically: the .bgf and its meta, no temporary files left', async () => {
    const site = await siteAt(1);
    const dir = newDir();
    try {
      const live = await openFilter(site.manifestUrl, { storage: directoryStorage(dir) });
      site.publish(2, { deltasFrom: [1] });
      await live.refresh();
      const names = readdirSync(dir).sort();
      assert.equal(names.length, 2, names.join(' '));
      assert.ok(names[0].endsWith('.bgf') && names[1].endsWith('.json'));
      assert.ok(bytesEqual(readFileSync(join(dir, names[0])), generations.files[2]));
      const meta = JSON.parse(readFileSync(join(dir, names[1]), 'utf8'));
      assert.equal(meta.key, site.manifestUrl);
      assert.equal(meta.generation, 2);
      assert.equal(meta.checksum, checksumOf(generations.files[2]));
      assert.match(meta.etag, /^"/);
      live.close();
    } finally {
      await site.stop();
    }
  });

  it('storage: false writes nothing; storageKey separates copies of one manifest', async () => {
    const site = await siteAt(1);
    const dir = newDir();
    try {
      (await openFilter(site.manifestUrl, { storage: false })).close();
      const a = await openFilter(site.manifestUrl, { storage: directoryStorage(dir), storageKey: 'a' });
      site.publish(2, { deltasFrom: [1] });
      await a.refresh();
      a.close();
      const b = await openFilter(site.manifestUrl, { storage: directoryStorage(dir), storageKey: 'b', refreshSeconds: 3600 });
      assert.equal(b.stats().source, 'full');
      const a2 = await openFilter(site.manifestUrl, { storage: directoryStorage(dir), storageKey: 'a', refreshSeconds: 3600 });
      assert.equal(a2.stats().source, 'persisted');
      assert.equal(a2.generation, 2);
      a2.close();
      b.close();
    } finally {
      await site.stop();
    }
  });

  it('starts from an initial file when nothing is persisted, offline too, and updates from it by delta', async () => {
    const site = await siteAt(2, { deltasFrom: [1] });
    const dir = newDir();
    try {
      const live = await openFilter(site.manifestUrl, { storage: directoryStorage(dir), initial: () => generations.files[1] });
      assert.equal(live.stats().source, 'initial');
      expectGeneration(live, 1);
      const outcome = await live.refresh(); // the check the open started
      assert.equal(outcome.source, 'delta');
      assert.ok(site.paths().includes('/delta-1-2.bgd') && !site.paths().includes('/filter-2.bgf'));
      expectGeneration(live, 2);
      live.close();
      const again = await openFilter(site.manifestUrl, { storage: directoryStorage(dir), initial: generations.files[1], refreshSeconds: 3600 });
      assert.equal(again.stats().source, 'persisted', 'the persisted copy wins over the initial file');
      assert.equal(again.generation, 2);
      again.close();
      await site.stop();
      const offline = await openFilter(site.manifestUrl, { storage: false, initial: generations.files[1] });
      assert.equal(offline.stats().source, 'initial');
      assert.equal((await offline.refresh()).error?.code, 'E_FETCH');
      expectGeneration(offline, 1);
      offline.close();
      const errors = [];
      const corrupt = Uint8Array.from(generations.files[1]);
      corrupt[300] ^= 1;
      await assert.rejects(openFilter(site.manifestUrl, { storage: false, initial: corrupt, onError: (e) => errors.push(e.code) }));
      assert.equal(errors[0], 'E_CHECKSUM');
    } finally {
      await site.stop();
    }
  });

  it('stores the initial file with the first check, so a restart within minRefreshSeconds asks nothing', async () => {
    const site = await siteAt(1, { minRefreshSeconds: 600 });
    const dir = newDir();
    try {
      const live = await openFilter(site.manifestUrl, { storage: directoryStorage(dir), initial: generations.files[1] });
      assert.equal((await live.refresh()).changed, false);
      live.close();
      site.clearLog();
      const again = await openFilter(site.manifestUrl, { storage: directoryStorage(dir) });
      assert.equal(again.stats().source, 'persisted');
      assert.equal((await again.refresh()).checked, false);
      assert.deepEqual(site.paths(), []);
      again.close();
    } finally {
      await site.stop();
    }
  });

  it('persists by default in Node, in the per-user cache directory', { skip: process.platform === 'win32' || process.platform === 'darwin' }, async () => {
    const site = await siteAt(1);
    const cache = join(scratch, 'xdg-cache');
    const saved = process.env.XDG_CACHE_HOME;
    process.env.XDG_CACHE_HOME = cache;
    try {
      (await openFilter(site.manifestUrl)).close();
      const dir = join(cache, 'bloomgate', 'filters');
      const names = readdirSync(dir);
      assert.equal(names.filter((name) => name.endsWith('.bgf')).length, 1);
      await site.stop();
      const offline = await openFilter(site.manifestUrl, { refreshSeconds: 3600 });
      assert.equal(offline.stats().source, 'persisted');
      assert.equal(offline.stats().storage, 'directory');
      offline.close();
    } finally {
      if (saved === undefined) delete process.env.XDG_CACHE_HOME;
      else process.env.XDG_CACHE_HOME = saved;
      await site.stop();
    }
  });

  it('refuses a persisted copy of another list than the one asked for', async () => {
    const site = await siteAt(1);
    const dir = newDir();
    try {
      (await openFilter(site.manifestUrl, { storage: directoryStorage(dir) })).close();
      await site.stop();
      const errors = [];
      await assert.rejects(openFilter(site.manifestUrl, { storage: directoryStorage(dir), listId: 'ab'.repeat(16), onError: (e) => errors.push(e.code) }));
      assert.equal(errors[0], 'E_LIST');
    } finally {
      await site.stop();
    }
  });
});

describe('openFilter: the checks accept a live filter', () => {
  it('checkPassword, checkUrl and createGate answer from it', async () => {
    const passwords = await buildGenerations({ count: 2, size: 200, shift: 10, keyEncoding: 'sha1', prefix: 'password-', listId: 'aa'.repeat(16) });
    const urls = await buildGenerations({
      count: 2, size: 200, shift: 10, keyEncoding: 'url', listId: 'bb'.repeat(16), keyOf: (i) => `phish-${i}.example/`,
    });
    const passwordSite = new FilterSite(passwords);
    passwordSite.publish(1);
    await passwordSite.start();
    const urlSite = new FilterSite(urls);
    urlSite.publish(1);
    await urlSite.start();
    try {
      const pw = await openFilter(passwordSite.manifestUrl, { storage: false });
      assert.equal(pw.keyEncoding, 'sha1');
      assert.equal((await checkPassword('password-5', { filter: pw })).breached, true);
      assert.equal((await checkPassword('correct horse battery staple', { filter: pw })).breached, false);
      passwordSite.publish(2, { deltasFrom: [1] });
      await pw.refresh();
      assert.equal(pw.generation, 2);
      assert.equal((await checkPassword('password-205', { filter: pw })).breached, true);

      const live = await openFilter(urlSite.manifestUrl, { storage: false });
      const listed = await checkUrl('https://phish-7.example/login', { filter: live });
      assert.equal(listed.listed, true);
      assert.equal(listed.expression, 'phish-7.example/');
      assert.equal((await checkUrl('https://fine.example/', { filter: live })).listed, false);
      const confirmations = [];
      const gate = createGate({ filter: live, confirm: async (item) => { confirmations.push(item); return true; } });
      assert.deepEqual(await gate.check('https://phish-3.example/x'), { listed: true, escalated: true, falsePositive: false });
      assert.equal((await gate.check('https://fine.example/')).escalated, false);
      assert.deepEqual(confirmations, ['https://phish-3.example/x']);
      assert.equal(gate.stats().localNegatives, 1);
      urlSite.publish(2, { deltasFrom: [1] });
      await live.refresh();
      assert.equal((await checkUrl('https://phish-205.example/a', { filter: live })).listed, true);
      pw.close();
      live.close();
    } finally {
      await passwordSite.stop();
      await urlSite.stop();
    }
  });
});

describe('openFilter against a site written by `bloomgate publish`', () => {
  it('follows generations published by the CLI, as deltas', async () => {
    const { spawnSync } = await import('node:child_process');
    const { createServer } = await import('node:http');
    const { readFile } = await import('node:fs/promises');
    const siteDir = join(scratch, 'cli-site');
    const publish = (g) => {
      const path = join(scratch, `cli-${g}.bgf`);
      writeFileSync(path, generations.files[g]);
      const result = spawnSync(process.execPath, [CLI, 'publish', path, '--dir', siteDir, '--keep', '2', '-q'], { encoding: 'utf8' });
      assert.equal(result.status, 0, result.stderr);
    };
    const requests = [];
    const server = createServer(async (req, res) => {
      requests.push(req.url);
      try {
        const body = await readFile(join(siteDir, new URL(req.url, 'http://x').pathname));
        res.writeHead(200, { 'content-length': body.length }).end(body);
      } catch {
        res.writeHead(404).end();
      }
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${server.address().port}/manifest.json`;
    try {
      publish(1);
      const live = await openFilter(url, { storage: false });
      expectGeneration(live, 1);
      for (const g of [2, 3]) {
        publish(g);
        requests.length = 0;
        const outcome = await live.refresh({ force: true }); // the CLI's default minRefreshSeconds is an hour
        assert.equal(outcome.source, 'delta');
        assert.deepEqual(requests, ['/manifest.json', `/delta-${g - 1}-${g}.bgd`]);
        expectGeneration(live, g);
      }
      live.close();
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
