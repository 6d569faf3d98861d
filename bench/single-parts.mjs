#!/usr/bin/env node
// node bench/single-parts.mjs [--engines chromium,firefox,webkit] [--rounds N] [--min-ms MS] [--keys N] [--only a,b]
//
// Where one add(string) / mightContain(string) spends its time, per engine:
// the public calls against the npm `bloomfilter` package, and the parts alone
// (the wrapper in js/filter.js, calls.js, stageKey's charCodeAt loop, an
// export that returns at once, the wasm call on keys already in memory, with
// and without the item-key step, the hash alone). 38-character ASCII keys in a
// 1M-key, 1 % classic filter, as in bench:browser. ns per key, median of rounds.
import { readFileSync } from 'node:fs';
import path from 'node:path';

import { benchOptions, loadAverage, median, runPageInEngines } from './page-runner.mjs';

const { opt, engines, rounds, minMs, keys, only } = benchOptions({ keys: 200000 });
// --alt FILE: a second build of the module, its raw calls timed beside the current one's ('alt ...' beside 'cur ...').
const alt = opt('--alt', '');
const alt2 = opt('--alt2', '');
// --base NAME: also print each case's median ratio (per round) to that case.
const baseCase = opt('--base', '');
// --old DIR: a copy of an older js/ + wasm/ (git archive REV js wasm package.json | tar -x -C DIR), its add and mightContain timed as 'old.*'.
const oldDir = opt('--old', '');

const PAGE = `<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,">
<script type="module">
import { BloomFilter } from '/js/index.js';
import * as module from '/js/wasm/module.js';
import * as calls from '/js/wasm/calls.js';
import * as staging from '/js/wasm/staging.js';
import { makeKeys } from '/bench/browser-cases.mjs';
import { KINDS } from '/js/wasm/contract.js';
import { parts, rawCases, rawSetup, stagingCases } from '/bench/single-parts-page.mjs';
import { timeCases } from '/bench/page-timer.mjs';
import { BloomFilter as Bloomfilter } from '/node_modules/bloomfilter/bloomfilter.js';
window.runParts = async (config) => setup(config);
async function setup(config) {
  const filter = await BloomFilter.create({ capacity: 1000000, errorRate: 0.01 });
  const fresh = await BloomFilter.create({ capacity: 1000000, errorRate: 0.01 });
  const { m, k } = filter.stats();
  const bf = new Bloomfilter(Math.ceil(m / 32) * 32, k);
  const bfFresh = new Bloomfilter(Math.ceil(m / 32) * 32, k);
  const mem = makeKeys(0, config.keys);
  const non = makeKeys(5000000, config.keys);
  filter.addAll(mem.strings);
  for (const s of mem.strings) bf.add(s);
  const len = 38;
  const ex = module.ex;
  const packedBase = module.mallocOrThrow(mem.bytes.length);
  const packedNon = module.mallocOrThrow(non.bytes.length);
  module.HEAPU8.set(mem.bytes, packedBase);
  module.HEAPU8.set(non.bytes, packedNon);
  const misc = module.mallocOrThrow(1024);
  // Raw handles for the wasm-level cases: the same size and keys as the BloomFilter's.
  const rawPtr = calls.filterCreate(KINDS.find((x) => x.name === 'classic').id, 1000000, 0.01, 0, 0, 0);
  const rawFresh = calls.filterCreate(KINDS.find((x) => x.name === 'classic').id, 1000000, 0.01, 0, 0, 0);
  for (let i = 0; i < config.keys; i++) module.ex.bg_filter_add(rawPtr, packedBase + i * len, len);
  const callsPlus = Object.assign(Object.create(null), calls, { __ptr: rawPtr, __freshPtr: rawFresh });
  let { cases, sink } = parts({ filter, fresh, bf, bfFresh, ex: module.ex, staging, calls: callsPlus, members: mem.strings, probes: non.strings, packedBase, packedNon, len, misc });
  cases = { ...cases, ...stagingCases({ ex: module.ex, at: misc, probes: non.strings, sink }) };
  cases = { ...cases, ...rawCases('cur', { ...rawSetup(module, mem, non), sink }) };
  if (config.alt) {
    const alt = await import('/js/wasm/module.js?alt');
    await alt.init(await (await fetch('/alt.wasm')).arrayBuffer());
    cases = { ...cases, ...rawCases('alt', { ...rawSetup(alt, mem, non), sink }) };
  }
  if (config.alt2) {
    const alt = await import('/js/wasm/module.js?alt2');
    await alt.init(await (await fetch('/alt2.wasm')).arrayBuffer());
    cases = { ...cases, ...rawCases('alt2', { ...rawSetup(alt, mem, non), sink }) };
  }
  if (config.old) {
    const oldLib = await import('/old/js/index.js');
    const oldFilter = await oldLib.BloomFilter.create({ capacity: 1000000, errorRate: 0.01 });
    const oldFresh = await oldLib.BloomFilter.create({ capacity: 1000000, errorRate: 0.01 });
    oldFilter.addAll(mem.strings);
    const members = mem.strings, probes = non.strings;
    cases['old.add'] = () => { const f = oldFresh; for (let i = 0; i < members.length; i++) f.add(members[i]); return members.length; };
    cases['old.member'] = () => { let h = 0; const f = oldFilter; for (let i = 0; i < members.length; i++) if (f.mightContain(members[i])) h++; sink.value += h; return members.length; };
    cases['old.nonmember'] = () => { let h = 0; const f = oldFilter; for (let i = 0; i < probes.length; i++) if (f.mightContain(probes[i])) h++; sink.value += h; return probes.length; };
  }
  const results = timeCases(cases, config);
  return { results, ua: navigator.userAgent, sink: sink.value };
}
document.documentElement.dataset.ready = 'yes';
</script></head><body></body></html>`;

console.log(`# single parts, ${new Date().toISOString()}, ${process.argv.slice(2).join(' ')}; load ${loadAverage()}; ${rounds} rounds of >= ${minMs} ms; ns per key (median, min)`);
const ref = { 'bg.member': 'bf.member', 'bg.nonmember': 'bf.nonmember', 'bg.add': 'bf.add' };
await runPageInEngines({
  page: PAGE, entry: 'runParts', engines, config: { rounds, minMs, keys, only, alt, alt2, old: Boolean(oldDir) },
  extraDirs: ['node_modules/bloomfilter'],
  route(pathname) {
    if (pathname === '/alt.wasm' && alt) return readFileSync(alt);
    if (pathname === '/alt2.wasm' && alt2) return readFileSync(alt2);
    if (oldDir && /^\/old\/(js|wasm)\/[\w./-]+$/.test(pathname)) {
      try { return readFileSync(path.join(oldDir, pathname.slice(5))); } catch { return undefined; }
    }
    return undefined;
  },
  report(name, version, { results }) {
    console.log(`\n## ${name} (${version}), load ${loadAverage().split(' ')[0]}`);
    for (const [variant, values] of Object.entries(results)) {
      const peer = results[ref[variant]];
      const base = /^alt2? /.test(variant) ? results[variant.replace(/^alt2? /, 'cur ')] : undefined;
      const ratio = peer ? '  ÷ bloomfilter ' + median(values.map((v, r) => v / peer[r])).toFixed(2) + '×'
        : base ? '  ÷ cur ' + median(values.map((v, r) => v / base[r])).toFixed(2) + '× (fastest ' + (Math.min(...values) / Math.min(...base)).toFixed(2) + '×)' : '';
      const toBase = baseCase && results[baseCase] ? `  ÷ ${baseCase} ${median(values.map((v, r) => v / results[baseCase][r])).toFixed(2)}×` : '';
      console.log(`${variant.padEnd(30)} ${median(values).toFixed(1).padStart(8)} ${Math.min(...values).toFixed(1).padStart(8)}${ratio}${toBase}`);
    }
  },
});
