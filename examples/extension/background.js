/**
 * The extension's service worker: loads the wasm module and a url filter,
 * checks top-level navigations, sends listed pages to warning.html, and keeps
 * the filter fresh from a configured URL.
 *
 * MV3 service workers forbid dynamic import(), so the library is imported
 * statically and the module is handed to init() explicitly (compiled here,
 * which the CSP allows through 'wasm-unsafe-eval').
 */
import { checkUrl, createGate, init, loadFilter } from './vendor/js/index.js';

const WASM_PATH = 'vendor/wasm/bloomgate.wasm';
const BUNDLED_FILTER = 'filters/urls.bgf';
const ALARM = 'bloomgate-update';
const DEFAULT_SETTINGS = {
  /** Where newer generations of the filter are published ('' = never update). */
  updateUrl: '',
  /** Optional SRI ("sha256-...") the download must match. */
  updateIntegrity: '',
  /** Optional hash-prefix endpoint (GET {hashesUrl}/{8 hex}) to confirm "maybe" answers. */
  hashesUrl: '',
  /** How often to look for a new filter. */
  updateMinutes: 360,
};
const REDIRECT_DEDUPE_MS = 3000;

/** { filter, source, updatedAt }: the filter in use. */
let current = null;
/** url -> the listed expression that matched, from the last confirmation. */
const matchedExpression = new Map();
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
    const answer = await checkUrl(url, { filter: current.filter, hashesUrl: settings.hashesUrl || undefined, signal });
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
/* Filter: bundled, stored, updated                                          */
/* ------------------------------------------------------------------------ */

function toBase64(bytes) {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

function fromBase64(text) {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

async function getSettings() {
  const { settings } = await chrome.storage.local.get('settings');
  return { ...DEFAULT_SETTINGS, ...settings };
}

function describeError(error) {
  return { code: error?.code ?? error?.name ?? 'Error', message: String(error?.message ?? error) };
}

async function compileWasm() {
  const response = await fetch(chrome.runtime.getURL(WASM_PATH));
  return WebAssembly.compile(await response.arrayBuffer());
}

function use(filter, source, updatedAt) {
  const previous = current;
  current = { filter, source, updatedAt };
  if (gate === null) gate = makeGate();
  gate.clearCache();
  matchedExpression.clear();
  previous?.filter.free();
}

/** The bundled filter, unless storage holds a newer generation of the same list (or another list). */
async function start() {
  await init(compileWasm());
  const bundled = await loadFilter(chrome.runtime.getURL(BUNDLED_FILTER));
  const { storedFilter } = await chrome.storage.local.get('storedFilter');
  if (storedFilter) {
    try {
      const stored = await loadFilter(fromBase64(storedFilter.data));
      const a = stored.stats();
      const b = bundled.stats();
      if (stored.keyEncoding === 'url' && (a.listId !== b.listId || a.generation >= b.generation)) {
        bundled.free();
        use(stored, storedFilter.source, storedFilter.updatedAt);
        return;
      }
      stored.free();
    } catch (error) {
      // Storage was damaged: fall back to the bundled filter and say so in the popup.
      await chrome.storage.local.set({ lastUpdate: { ok: false, at: Date.now(), ...describeError(error), what: 'stored filter unreadable; using the bundled one' } });
    }
  }
  use(bundled, 'bundled', null);
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
 * Download the configured filter. Only a filter that downloads completely,
 * passes the SRI and checksum checks, is a url filter and is not an older
 * generation of the same list replaces the current one; otherwise the last
 * good filter stays and the popup shows why.
 */
async function updateFilter() {
  await whenReady();
  const settings = await getSettings();
  const at = Date.now();
  let result;
  if (!settings.updateUrl) {
    result = { ok: false, at, code: 'NO_URL', message: 'no update URL is configured' };
  } else {
    let filter = null;
    try {
      filter = await loadFilter(settings.updateUrl, {
        integrity: settings.updateIntegrity || undefined,
        signal: AbortSignal.timeout(60000),
        fetch: (input, init) => fetch(input, { ...init, cache: 'no-cache' }),
      });
      if (filter.keyEncoding !== 'url') {
        throw Object.assign(new Error(`the download is a '${filter.keyEncoding}' filter, not a url filter`), { code: 'E_KEY_ENCODING' });
      }
      const next = filter.stats();
      const now = current.filter.stats();
      if (next.listId === now.listId && next.generation < now.generation) {
        throw Object.assign(new Error(`the download is generation ${next.generation}, older than ${now.generation} in use`), { code: 'E_STALE' });
      }
      if (next.listId === now.listId && next.generation === now.generation) {
        result = { ok: true, at, changed: false, message: `generation ${next.generation} is already in use` };
        filter.free();
      } else {
        await chrome.storage.local.set({ storedFilter: { data: toBase64(filter.serialize()), source: settings.updateUrl, updatedAt: at } });
        use(filter, settings.updateUrl, at);
        result = { ok: true, at, changed: true, message: `now using generation ${next.generation}` };
      }
      filter = null;
    } catch (error) {
      filter?.free();
      result = { ok: false, at, ...describeError(error) };
    }
  }
  await chrome.storage.local.set({ lastUpdate: result });
  return result;
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
      source: current.source,
      updatedAt: current.updatedAt,
    },
    gate: gate.stats(),
    lastUpdate: lastUpdate ?? null,
    settings,
  };
}

async function saveSettings(input) {
  const settings = await getSettings();
  for (const key of ['updateUrl', 'updateIntegrity', 'hashesUrl']) {
    if (typeof input[key] === 'string') settings[key] = input[key].trim();
  }
  if (Number.isFinite(input.updateMinutes)) settings.updateMinutes = Math.max(1, Math.round(input.updateMinutes));
  for (const key of ['updateUrl', 'hashesUrl']) {
    if (settings[key] && !/^https?:\/\//i.test(settings[key])) throw new TypeError(`${key} must be an http(s) URL`);
  }
  await chrome.storage.local.set({ settings });
  gate?.clearCache();
  await schedule();
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
  update: async () => ({ update: await updateFilter(), status: await status() }),
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
