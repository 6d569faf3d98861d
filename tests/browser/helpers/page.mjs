/**
 * page.mjs — the page the escalation browser tests drive. It imports the
 * library as an unbundled page does (examples/site.mjs mounts js/ and wasm/
 * at /bloomgate/), loads the password and URL filters from its own origin's
 * /filters/, and exposes both to page.evaluate. Checks run with the options a
 * caller passes (the tests pass none but the endpoint: the defaults are what
 * is under test) and come back as plain data: { result } or { error }.
 */
import { join } from 'node:path';

import { root } from './fixtures.mjs';

export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>bloomgate escalation test page</title>
  <script type="module">
    import * as bloomgate from '/bloomgate/js/index.js';
    window.bloomgate = bloomgate;
    window.filters = Promise.all([
      bloomgate.loadFilter('/filters/passwords.bgf'),
      bloomgate.loadFilter('/filters/urls.bgf'),
    ]).then(([passwords, urls]) => ({ passwords, urls }));
    window.filters.then(
      () => { document.documentElement.dataset.ready = 'yes'; },
      (error) => { document.documentElement.dataset.ready = 'failed: ' + error.message; },
    );
  </script>
</head>
<body><p>bloomgate escalation test page</p></body>
</html>
`;

/** The library as examples/site.mjs mounts it (for js/server.js staticDir). */
export function libraryMounts() {
  return [
    { prefix: '/bloomgate/js/', dir: join(root, 'js') },
    { prefix: '/bloomgate/wasm/', dir: join(root, 'wasm') },
  ];
}

/**
 * Open `url` in a new page and wait until the library and both filters are loaded.
 * `console` collects the page's console messages (Chromium logs CORS refusals there).
 */
export async function openTestPage(context, url) {
  const page = await context.newPage();
  const consoleMessages = [];
  page.on('console', (message) => consoleMessages.push(message.text()));
  await page.goto(url);
  await page.waitForFunction(() => document.documentElement.dataset.ready !== undefined, null, { timeout: 20000 });
  const ready = await page.evaluate(() => document.documentElement.dataset.ready);
  if (ready !== 'yes') throw new Error(`test page at ${url}: ${ready}\n${consoleMessages.join('\n')}`);
  return { page, console: consoleMessages };
}

/**
 * The same for a page of any engine (tests/browser/engines/): navigate `tab` to `url` (a fresh
 * document) and wait until the library and both filters are loaded. Fails with the page's reason.
 */
export async function loadTestPage(tab, url) {
  await tab.goto(url);
  const ready = await tab.waitFor(() => document.documentElement.dataset.ready, null, { timeout: 30000 });
  if (ready !== 'yes') throw new Error(`test page at ${url}: ${ready}`);
  return tab;
}

/**
 * checkPassword (kind 'password', endpoint = rangeUrl) or checkUrl (kind 'url',
 * endpoint = hashesUrl) in the page, with default options unless `options` says otherwise.
 * @returns {Promise<{ result?: object, error?: { name: string, code?: string, message: string } }>}
 */
export function check(page, kind, item, endpoint, options = {}) {
  return page.evaluate(async ({ kind, item, endpoint, options }) => {
    const { passwords, urls } = await window.filters;
    try {
      const result = kind === 'password'
        ? await window.bloomgate.checkPassword(item, { filter: passwords, rangeUrl: endpoint, ...options })
        : await window.bloomgate.checkUrl(item, { filter: urls, hashesUrl: endpoint, ...options });
      return { result };
    } catch (error) {
      return { error: { name: error?.name, code: error?.code, message: String(error?.message ?? error) } };
    }
  }, { kind, item, endpoint, options });
}
