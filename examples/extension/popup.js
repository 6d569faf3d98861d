// The popup: the filter in use (generation, list id, size), the gate's counters, settings.
const $ = (id) => document.getElementById(id);
const number = new Intl.NumberFormat('en');

function formatBytes(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

function formatUpdate(update) {
  if (!update) return 'No update attempted yet.';
  const when = new Date(update.at).toLocaleString();
  if (update.ok) return `Last update (${when}): ${update.message}.`;
  return `Last update failed (${when}): ${update.code}: ${update.message}. Still using the last good filter.`;
}

const SOURCES = {
  persisted: 'the copy in IndexedDB of',
  full: 'the full file from',
  delta: 'a delta from',
};

function describeSource(filter) {
  if (filter.source === 'bundled') return 'bundled with the extension';
  return `${SOURCES[filter.source] ?? filter.source} ${filter.manifestUrl}`;
}

/** How long the worker took, the last time it started, to have a filter and to answer its first check. */
function describeColdStart(cold) {
  if (!cold || cold.readyMs === null) return 'starting';
  const first = cold.firstCheckMs === null ? 'no navigation checked yet' : `first check answered at ${cold.firstCheckMs.toFixed(0)} ms`;
  return `filter ready at ${cold.readyMs.toFixed(0)} ms (${cold.source}), ${first}`;
}

/** The key(s) and list this build believes updates from (publisher.js), or why it takes none. */
function describePublisher(publisher) {
  if (!publisher?.keys) {
    return 'no key pinned: this build follows no filter site and answers from its bundled filter; ' +
      'updates need a publisher key (rebuild with build.mjs --key ed25519:… --list-id …)';
  }
  const keys = publisher.keys.map((key) => `${key.slice(0, 16)}…`).join(', ');
  return `${keys} (${publisher.threshold} of ${publisher.keys.length} must sign), list ${publisher.listId}`;
}

function render(state) {
  if (!state?.ok) {
    $('last-update').textContent = `The filter is not loaded: ${state?.error?.message ?? 'no answer from the extension'}`;
    return;
  }
  const { filter, gate, lastUpdate, settings } = state;
  $('generation').textContent = String(filter.generation);
  $('list-id').textContent = filter.listId;
  $('size').textContent = `${formatBytes(filter.serializedBytes)} (${filter.kind}, target error rate ${filter.errorRate})`;
  $('items').textContent = number.format(filter.items);
  $('source').textContent = describeSource(filter);
  $('cold-start').textContent = describeColdStart(state.coldStart);
  $('publisher').textContent = describePublisher(state.publisher);
  $('last-update').textContent = formatUpdate(lastUpdate);
  $('checks').textContent = number.format(gate.checks);
  $('local').textContent = number.format(gate.localNegatives);
  $('escalations').textContent = number.format(gate.escalations);
  $('confirmed').textContent = number.format(gate.confirmed);
  $('false-positives').textContent = number.format(gate.falsePositives);
  $('cache-hits').textContent = number.format(gate.cacheHits);
  $('errors').textContent = number.format(gate.errors);
  for (const [id, key] of [['manifest-url', 'manifestUrl'], ['hashes-url', 'hashesUrl']]) {
    if (document.activeElement !== $(id)) $(id).value = settings[key] ?? '';
  }
  document.body.dataset.ready = 'true';
}

async function refresh() {
  render(await chrome.runtime.sendMessage({ type: 'status' }));
}

$('update').addEventListener('click', async () => {
  $('update').disabled = true;
  $('last-update').textContent = 'Updating…';
  try {
    const reply = await chrome.runtime.sendMessage({ type: 'update' });
    render(reply.status ?? reply);
  } finally {
    $('update').disabled = false;
  }
});

$('settings').addEventListener('submit', async (event) => {
  event.preventDefault();
  const form = new FormData(event.target);
  const reply = await chrome.runtime.sendMessage({ type: 'settings', settings: Object.fromEntries(form) });
  $('settings-message').textContent = reply?.settings ? 'Saved.' : `Not saved: ${reply?.error?.message}`;
  await refresh();
});

refresh();
