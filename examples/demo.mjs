#!/usr/bin/env node
/**
 * The bloomgate demo (`npm run demo`): real filters from data that npm
 * packages ship, the reference server on 127.0.0.1, the example pages, and a
 * scripted run that shows what the front gate saves.
 *
 *   passwords  49k common passwords from @zxcvbn-ts/language-common
 *   urls       13.7k phishing domains from eth-phishing-detect
 *
 * Options: --once (exit after the scripted run), --port N (default 8787; 0 = any free port).
 * A port in use or not allowed exits 64 with what to do ("port 8787 is in use; try --port 8788").
 * Everything is local: no request leaves 127.0.0.1.
 */
import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

import { cannotListen, CliError, usageError } from '../js/cli/errors.js';
import { BloomFilter, checkPassword, checkUrl } from '../js/index.js';
import { startReferenceServer } from '../js/server.js';
import { writeStore } from '../js/store.js';
import { commonPasswords, root, siteMounts } from './site.mjs';

const out = join(root, 'build', 'demo');
const require = createRequire(import.meta.url);

/** The two lists, as the packages ship them. */
async function loadLists() {
  const passwords = await commonPasswords(); // most common first
  const phishing = require('eth-phishing-detect/src/config.json').blacklist;
  return { passwords, phishing };
}

// Each list has one identity, shared by its filter and its exact store: the server's
// manifest names it, and clients believe a "not listed" only from the list they hold.
// Fixed here so the demo's files are reproducible ('bloomgate build --store' draws one).
const PASSWORD_LIST_ID = '00000000000000000000000064656d6f'; // "demo"
const URL_LIST_ID = '00000000000000000000000075726c73'; // "urls"

async function buildPasswordFilter(passwords) {
  const filter = await BloomFilter.create({
    capacity: passwords.length,
    errorRate: 0.001,
    keyEncoding: 'sha1',
    listId: PASSWORD_LIST_ID,
    metadata: { source: '@zxcvbn-ts/language-common passwords-common', description: 'common passwords (demo)' },
  });
  const records = passwords.map((password, rank) => {
    const hash = createHash('sha1').update(password, 'utf8').digest();
    filter.addKey(hash);
    // The package ships a ranking, not breach counts: the demo derives counts from rank.
    return { hash, count: passwords.length - rank };
  });
  return { filter, store: writeStore(records, { hashType: 'sha1', listId: PASSWORD_LIST_ID }) };
}

async function buildUrlFilter(domains) {
  const filter = await BloomFilter.create({
    capacity: domains.length,
    errorRate: 0.01,
    keyEncoding: 'url',
    listId: URL_LIST_ID,
    metadata: { source: 'eth-phishing-detect blacklist', description: 'phishing domains (demo)' },
  });
  const { urlExpressions } = await import('../js/url.js');
  const records = [];
  for (const domain of domains) {
    // A listed domain is the expression "domain/": every URL on that host matches it.
    const [expression] = urlExpressions(domain);
    const hash = createHash('sha256').update(expression, 'utf8').digest();
    filter.addKey(hash);
    records.push({ hash, count: 1 });
  }
  return { filter, store: writeStore(records, { hashType: 'sha256', listId: URL_LIST_ID }) };
}

/** A deterministic stream of passphrases no common-password list holds. */
function cleanPasswords(count) {
  const words = ['copper', 'lantern', 'orbit', 'meadow', 'quartz', 'harbor', 'violet', 'canyon', 'ember', 'tundra'];
  return Array.from({ length: count }, (_, i) => `${words[i % 10]}-${words[(i * 7 + 3) % 10]}-${words[(i * 3 + 1) % 10]}-${1000 + i}`);
}

function sample(list, count) {
  const step = Math.max(1, Math.floor(list.length / count));
  return Array.from({ length: count }, (_, i) => list[(i * step) % list.length]);
}

async function scriptedRun(baseUrl, passwordFilter, urlFilter, lists) {
  const tally = () => ({ checks: 0, local: 0, escalated: 0, listed: 0, falsePositives: 0, missed: 0 });
  const passwords = tally();
  const breached = sample(lists.passwords, 200);
  for (const [password, expected] of [...breached.map((p) => [p, true]), ...cleanPasswords(1000).map((p) => [p, false])]) {
    const result = await checkPassword(password, { filter: passwordFilter, rangeUrl: `${baseUrl}/range` });
    count(passwords, result.escalated, result.breached, expected);
  }
  const urls = tally();
  const listed = sample(lists.phishing, 200).map((domain) => `https://${domain}/login?next=/wallet`);
  const clean = Array.from({ length: 1000 }, (_, i) => `https://shop-${i}.example.org/cart/${i % 7}?item=${i}`);
  for (const [url, expected] of [...listed.map((u) => [u, true]), ...clean.map((u) => [u, false])]) {
    const result = await checkUrl(url, { filter: urlFilter, hashesUrl: `${baseUrl}/hashes` });
    count(urls, result.escalated, result.listed, expected);
  }
  return { passwords, urls };
}

function count(t, escalated, listed, expected) {
  t.checks++;
  if (escalated) t.escalated++;
  else t.local++;
  if (listed) t.listed++;
  if (escalated && !listed) t.falsePositives++;
  if (expected && !listed) t.missed++; // must stay 0: no false negatives
}

function table(rows) {
  const header = ['', 'checks', 'answered locally', 'escalated', 'listed', 'false positives'];
  const lines = [header, ...rows.map(([name, t]) => [name, t.checks, t.local, t.escalated, t.listed, t.falsePositives])]
    .map((cells) => cells.map((cell, i) => (i === 0 ? String(cell).padEnd(10) : String(cell).padStart(header[i].length))).join('  '));
  return lines.join('\n');
}

function kib(bytes) {
  return `${(bytes / 1024).toFixed(1)} KiB`;
}

/** Throws the "port 8787 is in use; try --port 8788" usage error when the port cannot be listened on. */
async function portFree(port) {
  const { createServer } = await import('node:net');
  await new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', async (error) => reject((await cannotListen(error, '127.0.0.1', port)) ?? error));
    probe.listen(port, '127.0.0.1', () => probe.close(resolve));
  });
}

async function main() {
  let values;
  try {
    ({ values } = parseArgs({ options: { once: { type: 'boolean' }, port: { type: 'string' } } }));
  } catch (error) {
    throw usageError(`${error.message} (options: --once, --port N)`);
  }
  const port = values.port === undefined ? 8787 : Number(values.port);
  if (!/^[0-9]+$/.test(values.port ?? '0') || port > 65535) throw usageError(`invalid --port '${values.port}': expected 0..65535`);

  // A port in use fails now, not after the filters are built (the listen below still checks).
  if (port !== 0) await portFree(port);
  const lists = await loadLists();
  const passwordBuild = await buildPasswordFilter(lists.passwords);
  const urlBuild = await buildUrlFilter(lists.phishing);
  await mkdir(out, { recursive: true });
  const files = {
    passwordsFilter: join(out, 'passwords.bgf'),
    passwordsStore: join(out, 'passwords.bgs'),
    urlsFilter: join(out, 'urls.bgf'),
    urlsStore: join(out, 'urls.bgs'),
  };
  const passwordBytes = passwordBuild.filter.serialize();
  const urlBytes = urlBuild.filter.serialize();
  await writeFile(files.passwordsFilter, passwordBytes);
  await writeFile(files.passwordsStore, passwordBuild.store);
  await writeFile(files.urlsFilter, urlBytes);
  await writeFile(files.urlsStore, urlBuild.store);

  let started;
  try {
    started = await startReferenceServer({
      port,
      filters: { passwords: files.passwordsFilter, urls: files.urlsFilter },
      passwordStore: files.passwordsStore,
      urlStore: files.urlsStore,
      staticDir: siteMounts(),
    });
  } catch (error) {
    // "port 8787 is in use; try --port 8788", as `bloomgate serve` says it (exit 64).
    throw (await cannotListen(error, '127.0.0.1', port)) ?? error;
  }
  const { server, url } = started;

  const ps = passwordBuild.filter.stats();
  const us = urlBuild.filter.stats();
  process.stdout.write(`bloomgate demo — serving ${url}/
  signup form   ${url}/signup/
  URL checker   ${url}/url-checker/

filters
  passwords.bgf  ${lists.passwords.length.toLocaleString('en-US')} common passwords (@zxcvbn-ts/language-common), key sha1, ${ps.kind}, p = ${ps.errorRate}, ${kib(passwordBytes.length)}
  urls.bgf       ${lists.phishing.length.toLocaleString('en-US')} phishing domains (eth-phishing-detect), key url, ${us.kind}, p = ${us.errorRate} of clean URLs, ${kib(urlBytes.length)}
  ("seen N times" counts are made up from list rank: the package ships no counts)

`);
  const { passwords, urls } = await scriptedRun(url, passwordBuild.filter, urlBuild.filter, lists);
  process.stdout.write(`scripted run (only hash prefixes went to the server)
${table([['passwords', passwords], ['urls', urls]])}
false negatives: ${passwords.missed + urls.missed}
`);
  passwordBuild.filter.free();
  urlBuild.filter.free();
  if (passwords.missed + urls.missed > 0) process.exitCode = 1;

  if (values.once) {
    server.closeAllConnections();
    server.close();
    return;
  }
  process.stdout.write('\nopen the pages above; Ctrl-C stops the server\n');
  await new Promise((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  server.closeAllConnections();
  server.close();
}

main().catch((error) => {
  if (error instanceof CliError) {
    process.stderr.write(`demo: ${error.message} (${error.code})\n`);
    process.exitCode = error.exitCode;
    return;
  }
  process.stderr.write(`demo: ${error?.message ?? error}\n`);
  process.exitCode = 1;
});
