#!/usr/bin/env node
// node bench/batch-variants.mjs [--engines chromium,firefox,webkit] [--rounds N] [--min-ms MS] [--keys N] [--only a,b] [--ballast N]
//
// Where a batch of strings spends its time, per engine: mightContainMany(strings)
// against one mightContain a key, and the parts of the batch path alone (the
// join, one encodeInto of the joined chunk, a charCodeAt loop into wasm memory,
// the wasm call on keys already staged, reading the answers). 1,000 keys of 38
// ASCII characters a batch, as in bench:browser. ns per key, median of rounds.
import { benchOptions, loadAverage, median, runPageInEngines } from './page-runner.mjs';

const { opt, engines, rounds, minMs, keys, only } = benchOptions({ keys: 100000 });
// Objects kept alive in the page, as bench:browser's peers keep theirs (a full collection marks them).
const ballast = Number(opt('--ballast', 0));

const PAGE = `<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,">
<script type="module">
import { BloomFilter } from '/js/index.js';
import * as module from '/js/wasm/module.js';
import * as arenaMod from '/js/wasm/arena.js';
import * as callsOnly from '/js/wasm/calls.js';
import * as batches from '/js/wasm/batches.js';
import * as staging from '/js/wasm/staging.js';
import { KINDS } from '/js/wasm/contract.js';
import { makeKeys } from '/bench/browser-cases.mjs';
import { variants } from '/bench/batch-variants-page.mjs';
import { timeCases } from '/bench/page-timer.mjs';
const calls = { ...callsOnly, ...batches };
window.runVariants = async (config) => {
  window.__only = config.only;
  window.__ballast = Array.from({ length: config.ballast }, (_, i) => ({ i, s: String(i) }));
  const filter = await BloomFilter.create({ capacity: 1000000, errorRate: 0.01 });
  const members = makeKeys(0, config.keys);
  filter.addAll(members.strings);
  const cases = variants({ filter, module, arenaMod, staging, calls, KINDS, strings: members.strings, packed: members, batch: 1000 });
  const results = timeCases(cases, config);
  return { results, ua: navigator.userAgent, sink: window.__sink };
};
document.documentElement.dataset.ready = 'yes';
</script></head><body></body></html>`;

console.log(`# batch variants: ${process.argv.slice(2).join(' ')}`);
console.log(`# batch variants, ${new Date().toISOString()}, load ${loadAverage()}; ${rounds} rounds of >= ${minMs} ms; ns per key (median, min)`);
await runPageInEngines({
  page: PAGE, entry: 'runVariants', engines, config: { rounds, minMs, keys, only, ballast },
  report(name, version, { results }) {
    console.log(`\n## ${name} (${version}), load ${loadAverage().split(' ')[0]}`);
    console.log(`${'variant'.padEnd(36)} ${'median'.padStart(8)} ${'min'.padStart(8)}  ÷ single (median of rounds)`);
    for (const [variant, values] of Object.entries(results)) {
      const ratio = results.single ? median(values.map((v, r) => v / results.single[r])).toFixed(2) + '×' : '';
      console.log(`${variant.padEnd(36)} ${median(values).toFixed(1).padStart(8)} ${Math.min(...values).toFixed(1).padStart(8)}  ${ratio}`);
    }
  },
});
