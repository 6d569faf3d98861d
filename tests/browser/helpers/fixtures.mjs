/**
 * fixtures.mjs — the lists the escalation browser tests check against, built
 * the way a user builds them: `bloomgate build --format hibp|urls --store`
 * (which gives the filter and its store one random list id), plus the items
 * each test needs, found by asking the built filter itself:
 *
 *   - listed passwords (with their counts) and a listed URL;
 *   - clean passwords and a clean URL the filter says "maybe" for (its own
 *     false positives: never in the list, so every one must escalate and be
 *     settled by the endpoint). One clean password's range holds no listed
 *     suffix (an empty range file), the other's holds some (a reply with rows
 *     that do not include it).
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { BloomFilter, checkPassword, checkUrl, urlExpressions } from '../../../js/index.js';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const CLI = join(root, 'js', 'cli.js');

export const sha1Hex = (text) => createHash('sha1').update(text).digest('hex').toUpperCase();
export const sha256Hex = (text) => createHash('sha256').update(text).digest('hex');

/** Run the CLI; resolves to { stdout, stderr }, rejects with both on a non-zero exit. */
export function runCli(args, { timeout = 240000 } = {}) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [CLI, ...args], { cwd: root, timeout, maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
      if (error) {
        error.message += `\nbloomgate ${args.join(' ')}\n${stderr}`;
        reject(error);
      } else {
        resolve({ stdout, stderr });
      }
    });
  });
}

const LISTED_PASSWORDS = 2000;
const LISTED_HOSTS = 200;

/**
 * Build passwords.bgf/.bgs and urls.bgf/.bgs under `dir` with the CLI and pick the test items.
 * @returns {Promise<{ files: Record<string, string>, listIds: { passwords: string, urls: string },
 *   listedPasswords: Array<{ password: string, count: number }>, cleanPasswords: { emptyRange: string, sharedRange: string },
 *   listedUrl: { url: string, expression: string }, cleanUrl: string }>}
 */
export async function buildLists(dir) {
  await mkdir(dir, { recursive: true });
  const files = {
    passwordList: join(dir, 'passwords.txt'),
    passwordFilter: join(dir, 'passwords.bgf'),
    passwordStore: join(dir, 'passwords.bgs'),
    urlList: join(dir, 'urls.txt'),
    urlFilter: join(dir, 'urls.bgf'),
    urlStore: join(dir, 'urls.bgs'),
  };
  const listed = [];
  const rows = [];
  for (let i = 0; i < LISTED_PASSWORDS; i++) {
    const password = `listed-password-${i}`;
    const count = 1 + ((i * 7919) % 5000);
    listed.push({ password, count });
    rows.push(`${sha1Hex(password)}:${count}`);
  }
  await writeFile(files.passwordList, `${rows.join('\r\n')}\r\n`);
  const hosts = Array.from({ length: LISTED_HOSTS }, (_, i) => `listed-${i}.phish.test/`);
  await writeFile(files.urlList, `${hosts.join('\n')}\n`);
  // A high error rate keeps the search for the filter's own false positives short.
  await runCli(['build', files.passwordList, '--format', 'hibp', '--store', files.passwordStore, '-o', files.passwordFilter, '--error-rate', '0.05', '-q']);
  await runCli(['build', files.urlList, '--format', 'urls', '--store', files.urlStore, '-o', files.urlFilter, '--error-rate', '0.3', '-q']);

  const passwordFilter = await BloomFilter.from(await readFile(files.passwordFilter));
  const urlFilter = await BloomFilter.from(await readFile(files.urlFilter));
  try {
    const listedPrefixes = new Set(rows.map((row) => row.slice(0, 5)));
    const maybe = async (password) => {
      const answer = await checkPassword(password, { filter: passwordFilter });
      return answer.breached && !answer.confirmed; // "maybe", and no endpoint was asked
    };
    let emptyRange = null;
    let sharedRange = null;
    for (let i = 0; (emptyRange === null || sharedRange === null) && i < 2_000_000; i++) {
      const password = `clean-password-${i}`;
      const shared = listedPrefixes.has(sha1Hex(password).slice(0, 5));
      if (shared ? sharedRange !== null : emptyRange !== null) continue;
      if (!(await maybe(password))) continue;
      if (shared) sharedRange = password;
      else emptyRange = password;
    }
    if (emptyRange === null || sharedRange === null) throw new Error('no clean "maybe" passwords found');
    for (const { password } of listed.slice(0, 3)) {
      if (!(await maybe(password))) throw new Error(`the filter misses the listed ${password}`);
    }

    const listedUrl = { url: 'http://listed-7.phish.test/login?user=bob%40example.com', expression: 'listed-7.phish.test/' };
    const first = await checkUrl(listedUrl.url, { filter: urlFilter });
    if (first.confirmed || !first.listed) throw new Error('the URL filter misses the listed host');
    const hostSet = new Set(hosts);
    let cleanUrl = null;
    for (let i = 0; cleanUrl === null && i < 100_000; i++) {
      const url = `https://clean-${i}.example.org/account/settings?user=bob%40example.com`;
      if (urlExpressions(url).some((expression) => hostSet.has(expression))) continue;
      const answer = await checkUrl(url, { filter: urlFilter });
      if (answer.listed && !answer.confirmed) cleanUrl = url;
    }
    if (cleanUrl === null) throw new Error('no clean "maybe" URL found');
    return {
      files,
      listIds: { passwords: passwordFilter.listId, urls: urlFilter.listId },
      listedPasswords: listed.slice(0, 3),
      cleanPasswords: { emptyRange, sharedRange },
      listedUrl,
      cleanUrl,
    };
  } finally {
    passwordFilter.free();
    urlFilter.free();
  }
}

/** The 8-hex prefixes checkUrl may request for `url`: those of its expressions the filter says "maybe" for. */
export async function candidatePrefixes(url, filterPath) {
  const filter = await BloomFilter.from(await readFile(filterPath));
  try {
    return [...new Set(urlExpressions(url)
      .filter((expression) => filter.mightContainKey(createHash('sha256').update(expression).digest()))
      .map((expression) => sha256Hex(expression).slice(0, 8)))];
  } finally {
    filter.free();
  }
}
