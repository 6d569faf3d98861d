// The Node side of `npm run bench:browser`: a child process bench/browser.mjs
// forks, running bench/browser-cases.mjs on request over IPC, so the Node
// rounds run in a process of their own (no playwright, no HTTP server) and
// alternate with the Chromium rounds.
//   { op: 'setup', config, filters } -> { info, ids }
//   { op: 'round', round }           -> { results }
import bloomFilters from 'bloom-filters/dist/bloom/bloom-filter.js';
import { BloomFilter as Bloomfilter } from 'bloomfilter';

import * as lib from '../js/index.js';
import * as staging from '../js/wasm/staging.js';
import { createBench } from './browser-cases.mjs';

// The bloom-filters class alone (its package index also loads classes that need
// Node's Buffer at import); the same one the package exports as BloomFilter.
const BloomFilters = bloomFilters.default ?? bloomFilters;

let bench = null;
const reply = (message) => process.send(message);

process.on('message', async (message) => {
  try {
    if (message.op === 'setup') {
      bench = await createBench({
        lib, staging, Bloomfilter, BloomFilters, config: message.config, filters: message.filters,
        log: (text) => reply({ log: text }),
      });
      reply({ info: { ...bench.info, runtime: `Node ${process.versions.node} (V8 ${process.versions.v8})` }, ids: bench.ids });
    } else if (message.op === 'round') {
      reply({ results: await bench.round(message.round) });
    } else if (message.op === 'exit') {
      process.disconnect();
    }
  } catch (error) {
    reply({ error: `${error?.stack ?? error}${error?.cause ? `\ncause: ${error.cause?.stack ?? error.cause}` : ''}` });
  }
});
