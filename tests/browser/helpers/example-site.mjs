/**
 * example-site.mjs — the example pages (examples/site.mjs mounts) on the
 * reference server on 127.0.0.1, with the filters and stores they load:
 *
 *   passwords  the common-password list the demo uses, counts derived from rank
 *              as the demo derives them (the package ships no counts);
 *   urls       a few phishing hosts (`listedHosts`), enough for the URL checker
 *              to answer "listed" and "not listed".
 *
 * Each list has one id shared by its filter and store: the server's manifest
 * must name the filter's list before a page believes its "not listed".
 */
import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { BloomFilter, urlExpressions } from '../../../js/index.js';
import { startReferenceServer } from '../../../js/server.js';
import { writeStore } from '../../../js/store.js';
import { commonPasswords, siteMounts } from '../../../examples/site.mjs';

export const listedHosts = ['login-wallet.example', 'secure-update.example', 'paypa1-verify.example'];

const listId = (name) => createHash('sha256').update(name).digest('hex').slice(0, 32);

async function writePasswords(dir) {
  const passwords = await commonPasswords();
  const id = listId('example site passwords');
  const filter = await BloomFilter.create({ capacity: passwords.length, errorRate: 0.001, keyEncoding: 'sha1', listId: id });
  const records = passwords.map((password, rank) => {
    const hash = createHash('sha1').update(password).digest();
    filter.addKey(hash);
    return { hash, count: passwords.length - rank };
  });
  await writeFile(join(dir, 'passwords.bgf'), filter.serialize());
  filter.free();
  await writeFile(join(dir, 'passwords.bgs'), writeStore(records, { hashType: 'sha1', listId: id }));
  return passwords;
}

async function writeUrls(dir) {
  const id = listId('example site urls');
  const filter = await BloomFilter.create({ capacity: 1000, errorRate: 0.01, keyEncoding: 'url', listId: id });
  const records = listedHosts.map((host) => {
    const [expression] = urlExpressions(host); // "host/": every URL on the host
    const hash = createHash('sha256').update(expression).digest();
    filter.addKey(hash);
    return { hash, count: 1 };
  });
  await writeFile(join(dir, 'urls.bgf'), filter.serialize());
  filter.free();
  await writeFile(join(dir, 'urls.bgs'), writeStore(records, { hashType: 'sha256', listId: id }));
}

/**
 * Build the files under `dir` and start the server.
 * @returns {Promise<{ server: import('node:http').Server, base: string, passwords: string[], stop: () => Promise<void> }>}
 */
export async function startExampleSite(dir) {
  const passwords = await writePasswords(dir);
  await writeUrls(dir);
  const { server, url } = await startReferenceServer({
    filters: { passwords: join(dir, 'passwords.bgf'), urls: join(dir, 'urls.bgf') },
    passwordStore: join(dir, 'passwords.bgs'),
    urlStore: join(dir, 'urls.bgs'),
    staticDir: siteMounts(),
  });
  const stop = () => new Promise((resolve) => {
    if (!server.listening) return resolve();
    server.closeAllConnections();
    server.close(() => resolve());
  });
  return { server, base: url, passwords, stop };
}
