#!/usr/bin/env node
/**
 * bench/signing.mjs (npm run bench:signing): what signed generations cost, in
 * Node and in Debian's headless Chromium, side by side in one run.
 *
 * A site of a 1,000,000-key classic filter (p = 0.01), generations 1 and 2
 * (1% of the keys out, 1% in), published with the real `bloomgate publish`,
 * once signed 2-of-3 (`--sign` twice) and once unsigned, served from
 * 127.0.0.1. Rounds alternate which case goes first; medians are reported.
 *
 *   (a) manifest verification: parse the manifest (every field, the canonical
 *       bytes) and run the trust rule with 2-of-3 pinned keys: two Ed25519
 *       verifications, each signature first through the canonical checks
 *       (js/key-check.js: S < L, R canonical and not of small order). The
 *       first one in a fresh page or process (key import and each key's
 *       torsion check, [L]A = identity, once per key, included) and the median
 *       of later ones.
 *       target: <= 2 ms, Chromium and Node
 *   (b) an update by delta, generation 1 -> 2: openFilter from generation 1
 *       (`initial`), then refresh(): manifest, delta, its SHA-256, apply, the
 *       result's SHA-256, the new filter. Signed (keys, 2 of 3) against the
 *       same site unsigned (no keys).
 *       target: signed / unsigned <= 1.05
 *
 * Options: --rounds N (default 15), --keys N (default 1000000), --no-browser,
 * --out FILE (default bench/results/signing.md, which it writes).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, extname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { openFilter } from '../js/index.js';
import { parseManifest } from '../js/update/manifest.js';
import { judgeManifest } from '../js/update/trust.js';
import { keySetFromOptions } from '../js/signature.js';
import { engineMissing, launchEngine } from '../tests/browser/engines/index.mjs';
import { startLibraryServer } from '../tests/browser/helpers/each-engine.mjs';
import { buildGenerations } from './fresh-site.mjs';
import { median } from './timing.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({ options: { rounds: { type: 'string' }, keys: { type: 'string' }, 'no-browser': { type: 'boolean' }, out: { type: 'string' } } });
const ROUNDS = Number(values.rounds ?? 15);
const KEYS = Number(values.keys ?? 1_000_000);
const log = (text) => process.stderr.write(`${text}\n`);

async function cli(cwd, args) {
  const { main } = await import('../js/cli/main.js');
  const back = process.cwd();
  process.chdir(cwd);
  try {
    const status = await main(args);
    if (status !== 0) throw new Error(`bloomgate ${args.join(' ')} exited ${status}`);
  } finally {
    process.chdir(back);
  }
}

/** A static host for `dir`, with CORS (the bench page's origin, tests/browser/helpers/each-engine.mjs, is another). */
function serve(dir) {
  const types = { '.json': 'application/json' };
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    const cors = { 'access-control-allow-origin': '*', 'access-control-allow-headers': 'If-None-Match', 'cache-control': 'no-store' };
    const file = resolve(dir, `.${path}`);
    try {
      const body = readFileSync(file);
      return res.writeHead(200, { ...cors, 'content-type': types[extname(file)] ?? 'application/octet-stream' }).end(body);
    } catch {
      return res.writeHead(404, cors).end();
    }
  });
  return new Promise((done) => server.listen(0, '127.0.0.1', () => done({ server, origin: `http://127.0.0.1:${server.address().port}` })));
}

const PAGE = `<!doctype html><meta charset="utf-8"><title>signing bench</title><link rel="icon" href="data:,">
<script type="module">
  import { openFilter } from '/bloomgate/js/index.js';
  import { parseManifest } from '/bloomgate/js/update/manifest.js';
  import { judgeManifest } from '/bloomgate/js/update/trust.js';
  import { keySetFromOptions } from '/bloomgate/js/signature.js';
  window.bench = { openFilter, parseManifest, judgeManifest, keySetFromOptions };
  document.documentElement.dataset.ready = 'yes';
</script>`;

/** (a) in this realm: the first verification, then `repeat` more; ms. */
async function verification({ parseManifest: parse, judgeManifest: judge, keySetFromOptions: keySet }, text, url, keys, repeat) {
  const trusted = { ...keySet(keys, 2, 'bench'), seq: 0 };
  const once = async () => {
    const t0 = performance.now();
    const manifest = parse(text, url);
    await judge(manifest, { url, trusted, pinnedListId: null, inUse: null, nowMs: Date.now(), loadRotations: async () => [] });
    return performance.now() - t0;
  };
  const first = await once();
  const later = [];
  for (let i = 0; i < repeat; i++) later.push(await once());
  return { first, later };
}

/** (b) in this realm: one update by delta from generation 1; ms from refresh() to its end. */
async function deltaUpdate(open, manifestUrl, initial, keys, listId) {
  const live = await open(manifestUrl, { storage: false, initial, refreshSeconds: 0, ...(keys ? { keys, threshold: 2, listId } : {}) });
  // openFilter starts its first check in the background: wait for it, then time a fresh update.
  await live.refresh();
  live.close();
  const again = await open(manifestUrl, { storage: false, initial, ...(keys ? { keys, threshold: 2, listId } : {}) });
  const t0 = performance.now();
  const outcome = await again.refresh();
  const ms = performance.now() - t0;
  const ok = outcome.changed === true && outcome.source === 'delta' && again.generation === 2;
  again.close();
  if (!ok) throw new Error(`the update was not a delta to generation 2: ${JSON.stringify({ changed: outcome.changed, source: outcome.source, error: outcome.error?.message })}`);
  return ms;
}

async function main() {
  const dir = await mkdtemp(join(tmpdir(), 'bloomgate-bench-signing-'));
  try {
    log(`building generations 1 and 2 of ${KEYS} keys ...`);
    const generations = await buildGenerations({ count: 2, size: KEYS, shift: KEYS / 100, capacity: KEYS, errorRate: 0.01 });
    writeFileSync(join(dir, 'g1.bgf'), generations.files[1]);
    writeFileSync(join(dir, 'g2.bgf'), generations.files[2]);
    const keys = [];
    const { generateKeyFile } = await import('../js/cli/signing.js');
    for (const name of ['k1', 'k2', 'k3']) keys.push(await generateKeyFile(join(dir, `${name}.key`)));
    for (const [site, sign] of [['signed', ['--sign', 'k1.key', '--sign', 'k2.key']], ['unsigned', []]]) {
      mkdirSync(join(dir, site));
      for (const g of [1, 2]) await cli(dir, ['publish', `g${g}.bgf`, '--dir', site, '-q', ...sign]);
    }
    const hosts = { signed: await serve(join(dir, 'signed')), unsigned: await serve(join(dir, 'unsigned')) };
    const url = (site) => `${hosts[site].origin}/manifest.json`;
    const manifestText = readFileSync(join(dir, 'signed', 'manifest.json'), 'utf8');
    const { listId } = JSON.parse(manifestText); // openFilter with keys binds to one list
    const initial = new Uint8Array(generations.files[1]);

    const results = { node: {}, chromium: null };
    log('Node: manifest verification ...');
    const nodeVerify = await verification({ parseManifest, judgeManifest, keySetFromOptions }, manifestText, url('signed'), keys, 200);
    results.node.verifyFirst = nodeVerify.first;
    results.node.verify = median(nodeVerify.later);
    log('Node: delta updates, signed and unsigned alternating ...');
    const nodeRounds = { signed: [], unsigned: [] };
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? ['signed', 'unsigned'] : ['unsigned', 'signed'];
      for (const site of order) nodeRounds[site].push(await deltaUpdate(openFilter, url(site), initial, site === 'signed' ? keys : null, listId));
    }
    results.node.signed = median(nodeRounds.signed);
    results.node.unsigned = median(nodeRounds.unsigned);

    if (!values['no-browser'] && engineMissing('chromium') === null) {
      const pages = await startLibraryServer({ '/': PAGE });
      const browser = await launchEngine('chromium');
      try {
        const page = await browser.newPage();
        await page.goto(`${pages.origin}/`);
        await page.waitFor(() => document.documentElement.dataset.ready === 'yes');
        log('Chromium: manifest verification ...');
        const verify = await page.evaluate(async ({ text, manifestUrl, pinned }) => {
          const { parseManifest: parse, judgeManifest: judge, keySetFromOptions: keySet } = window.bench;
          const trusted = { ...keySet(pinned, 2, 'bench'), seq: 0 };
          const once = async () => {
            const t0 = performance.now();
            await judge(parse(text, manifestUrl), { url: manifestUrl, trusted, pinnedListId: null, inUse: null, nowMs: Date.now(), loadRotations: async () => [] });
            return performance.now() - t0;
          };
          const first = await once();
          const later = [];
          for (let i = 0; i < 200; i++) later.push(await once());
          return { first, later };
        }, { text: manifestText, manifestUrl: url('signed'), pinned: keys });
        log('Chromium: delta updates ...');
        const rounds = { signed: [], unsigned: [] };
        for (let round = 0; round < ROUNDS; round++) {
          const order = round % 2 === 0 ? ['signed', 'unsigned'] : ['unsigned', 'signed'];
          for (const site of order) {
            rounds[site].push(await page.evaluate(async ({ manifestUrl, bytes, pinned, listId }) => {
              const initialBytes = Uint8Array.from(atob(bytes), (c) => c.charCodeAt(0));
              const extra = pinned ? { keys: pinned, threshold: 2, listId } : {};
              const warm = await window.bench.openFilter(manifestUrl, { storage: false, initial: initialBytes, ...extra });
              await warm.refresh();
              warm.close();
              const live = await window.bench.openFilter(manifestUrl, { storage: false, initial: initialBytes, ...extra });
              const t0 = performance.now();
              const outcome = await live.refresh();
              const ms = performance.now() - t0;
              const ok = outcome.changed && outcome.source === 'delta' && live.generation === 2;
              live.close();
              if (!ok) throw new Error(`not a delta update: ${outcome.error?.message}`);
              return ms;
            }, { manifestUrl: url(site), bytes: Buffer.from(initial).toString('base64'), pinned: site === 'signed' ? keys : null, listId }));
          }
        }
        results.chromium = { verifyFirst: verify.first, verify: median(verify.later), signed: median(rounds.signed), unsigned: median(rounds.unsigned) };
      } finally {
        await browser.close();
        await pages.close();
      }
    }
    for (const host of Object.values(hosts)) host.server.close();
    report(results);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function report(results) {
  const ms = (value) => `${value.toFixed(3)} ms`;
  const rows = [['Node', results.node]];
  if (results.chromium) rows.push(['Chromium', results.chromium]);
  const lines = [
    '# Signed generations: what verification costs',
    '',
    `\`node bench/signing.mjs --rounds ${ROUNDS} --keys ${KEYS}\`, ${new Date().toISOString().slice(0, 16)} UTC, ` +
      `${cpus().length} cores, load average at the end ${loadavg().map((l) => l.toFixed(1)).join(' ')}. ` +
      `A 1,000,000-key classic filter at p = 0.01 (${KEYS} keys here), generations 1 -> 2, sites published by the real CLI, signed 2-of-3 and unsigned; medians of ${ROUNDS} alternating rounds (verification: of 200).`,
    '',
    '| runtime | verify a manifest, first (key import, torsion checks) | verify, median | target <= 2 ms | delta update, signed | unsigned | signed / unsigned | target <= 1.05 |',
    '|:---|---:|---:|:---:|---:|---:|---:|:---:|',
  ];
  for (const [name, r] of rows) {
    const ratio = r.signed / r.unsigned;
    lines.push(`| ${name} | ${ms(r.verifyFirst)} | ${ms(r.verify)} | ${r.verify <= 2 ? 'met' : '**FAIL**'} | ${ms(r.signed)} | ${ms(r.unsigned)} | ${ratio.toFixed(3)} | ${ratio <= 1.05 ? 'met' : '**FAIL**'} |`);
  }
  lines.push('', 'Verification is parsing the manifest (every field, the canonical bytes) and the trust rule (js/update/trust.js) with two Ed25519 signatures to check, each first through the canonical checks (S < L, R canonical and not of small order), then through node:crypto in Node and WebCrypto in Chromium. The first verification also checks each signing key for a small-order component ([L]A = identity: the curve\'s constants and one scalar multiplication per key, once). The delta update is refresh() from generation 1 to 2: the manifest, the delta, its SHA-256, applying it, the result\'s SHA-256 and the new filter; both cases check the same version-2 manifest\'s digests, and only the signed one verifies signatures.', '');
  const text = lines.join('\n');
  process.stdout.write(`${text}\n`);
  writeFileSync(values.out ?? join(here, 'results', 'signing.md'), text);
}

await main();
