/**
 * The extension's service worker: loads the wasm module and a url filter,
 * checks top-level navigations, sends listed pages to warning.html, and keeps
 * the filter fresh from a filter site (`bloomgate publish`) with openFilter().
 *
 * MV3 service workers forbid dynamic import(), so the library is imported
 * statically and the module is handed to init() explicitly (compiled here,
 * which the CSP allows through 'wasm-unsafe-eval').
 *
 * The worker is stopped when idle and started again by the next event, often
 * a navigation: it answers that first check from the copy openFilter() keeps
 * in IndexedDB (bytes, no base64, no size cap), with no network.
 *
 * Updates are believed only when signed by the publisher key(s) this build pins
 * (publisher.js, written by build.mjs --key ... --list-id ...) and only for the
 * list it names. A build without a key follows no filter site at all: it
 * answers from its bundled filter, and the popup says an update needs a key.
 */
import { PUBLISHER } from './publisher.js';
import { checkUrl, createGate, indexedDbStorage, init, loadFilter, openFilter } from './vendor/js/index.js';

/** keys, threshold and listId for openFilter() and checkUrl(); null when this build pins no key. */
const TRUST = PUBLISHER.keys === null ? null : { keys: PUBLISHER.keys, threshold: PUBLISHER.threshold, listId: PUBLISHER.listId };
const NO_KEY = {
  ok: false,
  code: 'NO_KEY',
  message: 'this build pins no publisher key, so it follows no filter site (an unsigned update could come from anyone); ' +
    'updates need a publisher key: rebuild with build.mjs --key ed25519:... --list-id ... (bloomgate keygen, bloomgate publish --sign)',
};

/**
 * This start of the worker: when it began (ms since the epoch), and when it had
 * a filter and answered its first navigation (ms after it began, on its own clock).
 */
const coldStart = {
  startedAt: Math.round(performance.timeOrigin),
  scriptMs: performance.now(), // the library's modules loaded and evaluated
  wasmMs: null,
  readyMs: null,
  firstCheckMs: null,
  source: null,
};

const WASM_PATH = 'vendor/wasm/bloomgate.wasm';
const BUNDLED_FILTER = 'filters/urls.bgf';
const ALARM = 'bloomgate-update';
const DEFAULT_SETTINGS = {
  /** The filter site's manifest.json, as `bloomgate publish` writes it ('' = the bundled filter, never updated). */
  manifestUrl: '',
  /** Optional hash-prefix endpoint (GET {hashesUrl}/{8 hex}) to confirm "maybe" answers. */
  hashesUrl: '',
  /** How often to look for a new generation (never more often than the manifest's minRefreshSeconds). */
  updateMinutes: 360,
};
const REDIRECT_DEDUPE_MS = 3000;
/** The filter copies: one per manifest URL, in this extension's IndexedDB. */
const storage = indexedDbStorage({ name: 'bloomgate-extension' });

/** { filter, kind: 'bundled' | 'live' }: the filter in use (a live one is a FreshFilter). */
let current = null;
/** url -> the listed expression that matched, from the last confirmation. */
const matchedExpression = new Map();
/** url -> the host a confirmation sent a hash prefix of its listed expression to. */
const prefixSent = new Map();
/** tabId -> last http(s) URL that committed without a warning (for "go back"). */
const lastSafeUrl = new Map();
/** tabId -> { url, at } of the last redirect to the warning page. */
const recentRedirects = new Map();

// The gate answers "definitely not" locally and asks confirm() only on "maybe".
// It reads the current filter on each call, so updates swap in without a new
// gate; it is made once the first filter is loaded (it reads the filter's stats).
let gate = null;
const makeGate = () => createGate({
  filter: {
    mightContain: (url) => current.filter.mightContain(url),
    stats: () => current.filter.stats(),
  },
  async confirm(url, { signal }) {
    const settings = await getSettings();
    const hashesUrl = settings.hashesUrl || undefined;
    // Every request but the endpoint's manifest.json carries a hash prefix (a reply or its proof):
    // count them, so the warning page says exactly what left the browser, even when the check failed.
    let sent = false;
    const countingFetch = (input, init) => {
      if (!new URL(String(input)).pathname.endsWith('/manifest.json')) sent = true;
      return fetch(input, init);
    };
    let answer;
    try {
      answer = await checkUrl(url, { filter: current.filter, hashesUrl, signal, fetch: countingFetch, ...TRUST });
    } finally {
      if (sent) prefixSent.set(url, new URL(hashesUrl).host);
    }
    if (answer.listed) matchedExpression.set(url, answer.expression);
    // Without a hashes endpoint a "maybe" counts as listed: the warning page
    // lets the person continue, so a rare false positive costs one click.
    return answer.listed;
  },
  // A hashes endpoint that is down must not turn listed pages into clean ones.
  onError: 'listed',
  cache: { maxEntries: 2000, ttlMs: 30 * 60 * 1000 },
});

/* ------------------------------------------------------------------------ */
/* Filter: bundled, or kept fresh from a filter site                         */
/* ------------------------------------------------------------------------ */

async function getSettings() {
  const { settings } = await chrome.storage.local.get('settings');
  return { ...DEFAULT_SETTINGS, ...settings };
}

function describeError(error) {
  return { code: error?.code ?? error?.name ?? 'Error', message: String(error?.message ?? error) };
}

function formatBytes(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** What the popup shows as the last update's result. */
function recordUpdate(result) {
  return chrome.storage.local.set({ lastUpdate: { at: Date.now(), ...result } }).catch(() => {});
}

async function compileWasm() {
  const response = await fetch(chrome.runtime.getURL(WASM_PATH));
  return WebAssembly.compile(await response.arrayBuffer());
}

/** Answers may change with the filter: forget the cached ones. */
function filterChanged() {
  gate?.clearCache();
  matchedExpression.clear();
  prefixSent.clear();
}

function use(filter, kind) {
  const previous = current;
  current = { filter, kind };
  if (gate === null) gate = makeGate();
  filterChanged();
  if (previous && previous.filter !== filter) (previous.kind === 'live' ? previous.filter.close() : previous.filter.free());
}

/**
 * A live filter for the configured manifest: the IndexedDB copy at once when
 * there is one (it asks the site in the background when its interval has
 * passed), else the site's full file. Updates replace it only after the
 * downloaded delta or file passes its SRI digest and the core's checksums and
 * is a newer generation of the same list, signed by the pinned keys; otherwise
 * the last good filter stays and the popup says why (E_SIGNATURE, E_LIST,
 * E_DELTA, E_INTEGRITY, E_FETCH, E_STALE, ...).
 */
function openLive(settings) {
  return openFilter(settings.manifestUrl, {
    ...TRUST,
    storage,
    refreshSeconds: Math.max(60, settings.updateMinutes * 60),
    onUpdate: (update) => {
      filterChanged();
      const how = update.source === 'delta' ? 'a delta' : 'the full file';
      recordUpdate({ ok: true, changed: true, source: update.source, message: `now using generation ${update.generation} (${how}, ${formatBytes(update.bytes)})` });
    },
    onCheck: (check) => {
      if (!check.changed) recordUpdate({ ok: true, changed: false, message: `generation ${check.generation} is up to date${check.notModified ? ' (not modified)' : ''}` });
    },
    onError: (error, detail) => recordUpdate({ ok: false, ...describeError(error), stage: detail.stage }),
  });
}

/** The live filter when a manifest is configured and it opens; the bundled filter otherwise. */
async function start() {
  await init(compileWasm());
  coldStart.wasmMs = performance.now();
  const settings = await getSettings();
  if (settings.manifestUrl && TRUST !== null) {
    try {
      use(await openLive(settings), 'live');
      coldStart.source = current.filter.stats().source;
      coldStart.readyMs = performance.now();
      return;
    } catch (error) {
      // Nothing persisted and the site unreachable: the bundled filter until an update works.
      await recordUpdate({ ok: false, ...describeError(error) });
    }
  }
  use(await loadFilter(chrome.runtime.getURL(BUNDLED_FILTER)), 'bundled');
  coldStart.source = 'bundled';
  coldStart.readyMs = performance.now();
}

let ready = start();
ready.catch(() => {}); // reported through status(); each listener awaits `ready` again

async function whenReady() {
  try {
    await ready;
  } catch {
    ready = start(); // e.g. a storage hiccup at startup: try again on the next event
    await ready;
  }
}

/**
 * Look for a newer generation now (force: even when the manifest's interval
 * has not passed, for "Update now"). With no live filter yet, or a new
 * manifest URL, open one; it replaces the filter in use only once it opened.
 */
async function updateFilter({ force = false } = {}) {
  await whenReady();
  const settings = await getSettings();
  if (!settings.manifestUrl) {
    await recordUpdate({ ok: false, code: 'NO_URL', message: 'no filter manifest URL is configured' });
  } else if (TRUST === null) {
    await recordUpdate(NO_KEY);
  } else if (current.kind !== 'live' || current.filter.manifestUrl !== new URL(settings.manifestUrl).href) {
    try {
      use(await openLive(settings), 'live');
    } catch (error) {
      await recordUpdate({ ok: false, ...describeError(error) });
    }
  } else {
    const outcome = await current.filter.refresh({ force });
    if (!outcome.checked) {
      await recordUpdate({ ok: true, changed: false, message: `not asked: the site allows the next check at ${new Date(outcome.nextCheck).toLocaleTimeString()}` });
    }
  }
  const { lastUpdate } = await chrome.storage.local.get('lastUpdate');
  return lastUpdate;
}

async function schedule() {
  const { updateMinutes } = await getSettings();
  await chrome.alarms.clear(ALARM);
  await chrome.alarms.create(ALARM, { delayInMinutes: 1, periodInMinutes: Math.max(1, updateMinutes) });
}

chrome.runtime.onInstalled.addListener(() => { schedule(); });
chrome.runtime.onStartup.addListener(() => { updateFilter(); });
chrome.alarms.onAlarm.addListener((alarm) => {
  if (alarm.name === ALARM) updateFilter();
});

/* ------------------------------------------------------------------------ */
/* Navigations                                                               */
/* ------------------------------------------------------------------------ */

async function allowedExpressions() {
  const { allowed } = await chrome.storage.session.get('allowed');
  return new Set(allowed ?? []);
}

/** The listed expression for a URL, or null when the URL is clean or allowed. */
async function listedExpression(url) {
  await whenReady();
  const { listed } = await gate.check(url);
  coldStart.firstCheckMs ??= performance.now();
  if (!listed) return null;
  let expression = matchedExpression.get(url);
  if (!expression) expression = (await checkUrl(url, { filter: current.filter })).expression ?? url;
  const allowed = await allowedExpressions();
  return allowed.has(expression) ? null : expression;
}

async function inspect(tabId, url, committed) {
  if (!/^https?:/i.test(url)) return;
  let expression;
  try {
    expression = await listedExpression(url);
  } catch (error) {
    console.warn('bloomgate: could not check', url, error);
    return;
  }
  if (expression === null) {
    if (committed) lastSafeUrl.set(tabId, url);
    return;
  }
  // A navigation already sent to the warning page from onBeforeNavigate may
  // still commit before the redirect wins: do not redirect it a second time.
  const recent = recentRedirects.get(tabId);
  recentRedirects.delete(tabId);
  if (committed && recent && recent.url === url && Date.now() - recent.at < REDIRECT_DEDUPE_MS) return;
  if (!committed) recentRedirects.set(tabId, { url, at: Date.now() });
  const warning = new URL(chrome.runtime.getURL('warning.html'));
  warning.searchParams.set('url', url);
  warning.searchParams.set('expression', expression);
  // What left the browser for this answer: nothing, or a 4-byte hash prefix (warning.js says which).
  const sent = prefixSent.get(url);
  if (sent) warning.searchParams.set('sentTo', sent);
  const from = lastSafeUrl.get(tabId);
  if (from && from !== url) warning.searchParams.set('from', from);
  try {
    await chrome.tabs.update(tabId, { url: warning.href });
  } catch (error) {
    console.warn('bloomgate: could not show the warning page', error); // the tab is gone
  }
}

// onBeforeNavigate catches a navigation before the request goes out; onCommitted
// also catches a server redirect that ends on a listed URL.
chrome.webNavigation.onBeforeNavigate.addListener((details) => {
  if (details.frameId === 0 && details.documentLifecycle !== 'prerender') inspect(details.tabId, details.url, false);
});
chrome.webNavigation.onCommitted.addListener((details) => {
  if (details.frameId === 0) inspect(details.tabId, details.url, true);
});
chrome.tabs.onRemoved.addListener((tabId) => {
  lastSafeUrl.delete(tabId);
  recentRedirects.delete(tabId);
});

/* ------------------------------------------------------------------------ */
/* Messages from the popup and the warning page                              */
/* ------------------------------------------------------------------------ */

async function status() {
  const { lastUpdate } = await chrome.storage.local.get('lastUpdate');
  const settings = await getSettings();
  try {
    await whenReady();
  } catch (error) {
    return { ok: false, error: describeError(error), lastUpdate, settings };
  }
  const stats = current.filter.stats();
  return {
    ok: true,
    filter: {
      generation: stats.generation,
      listId: stats.listId,
      serializedBytes: stats.serializedBytes,
      items: stats.n,
      errorRate: stats.errorRate,
      kind: stats.kind,
      // 'bundled', or how the live filter's generation arrived: 'persisted', 'full' or 'delta'
      source: current.kind === 'bundled' ? 'bundled' : stats.source,
      manifestUrl: current.kind === 'live' ? current.filter.manifestUrl : null,
      updatedAt: current.kind === 'live' ? stats.lastUpdate : null,
      lastCheck: current.kind === 'live' ? stats.lastCheck : null,
      bytesDownloaded: current.kind === 'live' ? stats.bytesDownloaded : 0,
    },
    coldStart,
    gate: gate.stats(),
    lastUpdate: lastUpdate ?? null,
    publisher: PUBLISHER,
    settings,
  };
}

async function saveSettings(input) {
  const settings = await getSettings();
  const previousUrl = settings.manifestUrl;
  for (const key of ['manifestUrl', 'hashesUrl']) {
    if (typeof input[key] === 'string') settings[key] = input[key].trim();
  }
  if (Number.isFinite(input.updateMinutes)) settings.updateMinutes = Math.max(1, Math.round(input.updateMinutes));
  for (const key of ['manifestUrl', 'hashesUrl']) {
    if (settings[key] && !/^https?:\/\//i.test(settings[key])) throw new TypeError(`${key} must be an http(s) URL`);
  }
  await chrome.storage.local.set({ settings });
  gate?.clearCache();
  await schedule();
  // A new site: open it now (the filter in use stays until it has opened).
  if (settings.manifestUrl && settings.manifestUrl !== previousUrl) await updateFilter();
  return settings;
}

async function allow(expression) {
  if (typeof expression !== 'string' || !expression) throw new TypeError('nothing to allow');
  const allowed = await allowedExpressions();
  allowed.add(expression);
  await chrome.storage.session.set({ allowed: [...allowed] });
  return { ok: true };
}

const handlers = {
  status: () => status(),
  update: async () => ({ update: await updateFilter({ force: true }), status: await status() }),
  settings: async (message) => ({ settings: await saveSettings(message.settings ?? {}) }),
  allow: (message) => allow(message.expression),
};

chrome.runtime.onMessage.addListener((message, sender, sendResponse) => {
  // Only the extension's own pages talk to the worker.
  if (sender.id !== chrome.runtime.id || !sender.url?.startsWith(chrome.runtime.getURL(''))) return false;
  const handler = handlers[message?.type];
  if (!handler) return false;
  Promise.resolve()
    .then(() => handler(message))
    .then((reply) => sendResponse(reply), (error) => sendResponse({ ok: false, error: describeError(error) }));
  return true;
});
