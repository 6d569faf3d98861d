/*
 * chrome-shim.js — the part of the extension platform the example extension uses, for running
 * its own files as plain pages where no browser can load an extension (WebKitGTK: see
 * tests/browser/extension-webkit.test.mjs). A classic script, loaded before the extension's
 * scripts by the harness server (tests/browser/helpers/extension-harness.mjs).
 *
 * The background page (/__harness/background.html, which imports the extension's own
 * background.js) holds the listeners; every other page of the origin (popup.html,
 * warning.html) reaches it with chrome.runtime.sendMessage over a BroadcastChannel, as an
 * extension page reaches its worker. chrome.storage is localStorage under a prefix (shared by
 * the origin's pages, as the extension's storage is). The test plays the browser's part:
 * window.harness.fire('webNavigation.onBeforeNavigate', details) where the browser would fire
 * the event, and reads window.harness.tabUpdates for each chrome.tabs.update the extension asked.
 */
(() => {
  const background = location.pathname === '/__harness/background.html';
  const channel = new BroadcastChannel('bloomgate-extension-harness');
  const newEvent = () => {
    const listeners = [];
    return {
      listeners,
      addListener: (listener) => { listeners.push(listener); },
      removeListener: (listener) => {
        const at = listeners.indexOf(listener);
        if (at >= 0) listeners.splice(at, 1);
      },
      hasListener: (listener) => listeners.includes(listener),
    };
  };

  const keysOf = (prefix, keys) => {
    if (keys === null || keys === undefined) {
      const all = [];
      for (let i = 0; i < localStorage.length; i++) {
        const key = localStorage.key(i);
        if (key.startsWith(prefix)) all.push(key.slice(prefix.length));
      }
      return { names: all, defaults: {} };
    }
    if (typeof keys === 'string') return { names: [keys], defaults: {} };
    if (Array.isArray(keys)) return { names: keys, defaults: {} };
    return { names: Object.keys(keys), defaults: keys };
  };
  const storageArea = (name) => {
    const prefix = `harness-${name}:`;
    return {
      async get(keys) {
        const { names, defaults } = keysOf(prefix, keys);
        const out = {};
        for (const key of names) {
          const stored = localStorage.getItem(prefix + key);
          if (stored !== null) out[key] = JSON.parse(stored);
          else if (key in defaults) out[key] = defaults[key];
        }
        return out;
      },
      async set(items) {
        for (const [key, value] of Object.entries(items)) localStorage.setItem(prefix + key, JSON.stringify(value));
      },
      async remove(keys) {
        for (const key of typeof keys === 'string' ? [keys] : keys) localStorage.removeItem(prefix + key);
      },
      async clear() {
        for (const key of keysOf(prefix, null).names) localStorage.removeItem(prefix + key);
      },
    };
  };

  const runtime = {
    id: 'bloomgate-extension-harness',
    getURL: (path) => new URL(String(path).replace(/^\//, ''), `${location.origin}/`).href,
    onMessage: newEvent(),
    onInstalled: newEvent(),
    onStartup: newEvent(),
  };

  /** Hand `message` to the onMessage listeners as the browser does; resolves to the reply. */
  const dispatch = (message, sender) => new Promise((resolve) => {
    let answered = false;
    let pending = false;
    const sendResponse = (reply) => {
      if (!answered) {
        answered = true;
        resolve(reply);
      }
    };
    for (const listener of runtime.onMessage.listeners) {
      if (listener(message, sender, sendResponse) === true) pending = true;
    }
    if (!pending) sendResponse(undefined);
  });

  const waiting = new Map();
  if (background) {
    channel.onmessage = ({ data }) => {
      if (data?.kind !== 'request') return;
      dispatch(data.message, { id: runtime.id, url: data.url }).then((reply) => {
        channel.postMessage({ kind: 'reply', id: data.id, reply });
      });
    };
  } else {
    channel.onmessage = ({ data }) => {
      if (data?.kind !== 'reply' || !waiting.has(data.id)) return;
      waiting.get(data.id)(data.reply);
      waiting.delete(data.id);
    };
    runtime.sendMessage = (message) => new Promise((resolve) => {
      const id = `${Date.now()}-${Math.random()}`;
      waiting.set(id, resolve);
      channel.postMessage({ kind: 'request', id, message, url: location.href });
    });
  }

  const harness = {
    /** Each chrome.tabs.update the extension asked for: { tabId, url }. */
    tabUpdates: [],
    events: {
      'runtime.onInstalled': runtime.onInstalled,
      'runtime.onStartup': runtime.onStartup,
    },
    /** Fire an event as the browser would (listeners are called, their work is not awaited). */
    fire(name, details) {
      const event = harness.events[name];
      if (!event) throw new Error(`harness: no event ${name}`);
      for (const listener of event.listeners) listener(details);
      return event.listeners.length;
    },
    /** A message to the background page's listeners as an extension page sends it. */
    message: (message) => dispatch(message, { id: runtime.id, url: runtime.getURL('popup.html') }),
  };

  const alarms = { onAlarm: newEvent(), create: async () => {}, clear: async () => true };
  const webNavigation = { onBeforeNavigate: newEvent(), onCommitted: newEvent() };
  const tabs = {
    onRemoved: newEvent(),
    getCurrent: async () => ({ id: 1 }),
    update: async (tabId, properties) => {
      harness.tabUpdates.push({ tabId, url: properties.url });
      return { id: tabId, url: properties.url };
    },
  };
  Object.assign(harness.events, {
    'alarms.onAlarm': alarms.onAlarm,
    'webNavigation.onBeforeNavigate': webNavigation.onBeforeNavigate,
    'webNavigation.onCommitted': webNavigation.onCommitted,
    'tabs.onRemoved': tabs.onRemoved,
  });

  window.chrome = {
    runtime,
    storage: { local: storageArea('local'), session: storageArea('session') },
    alarms,
    tabs,
    webNavigation,
  };
  window.harness = harness;
})();
