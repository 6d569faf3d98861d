#!/usr/bin/env node
/**
 * Rebuild colors.bgf (the small filter the example app loads) from colors.txt:
 *   node examples/vite/make-filter.mjs
 * The output is committed (well under 1 KB) so the example builds without this step.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

import { BloomFilter } from '../../js/index.js';

const here = new URL('.', import.meta.url);
const words = (await readFile(new URL('colors.txt', here), 'utf8')).split('\n').map((w) => w.trim()).filter(Boolean);
const filter = await BloomFilter.create({
  capacity: 100,
  errorRate: 0.001,
  metadata: { description: 'colour names for the Vite example', source: 'examples/vite/colors.txt' },
});
filter.addAll(words);
await writeFile(new URL('colors.bgf', here), filter.serialize());
process.stdout.write(`${fileURLToPath(new URL('colors.bgf', here))}: ${words.length} words, ${filter.stats().serializedBytes} bytes\n`);
filter.free();
