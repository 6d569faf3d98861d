// The warning page: shows what was listed, and goes back or continues.
const params = new URLSearchParams(location.search);
const url = params.get('url') ?? '';
const expression = params.get('expression') ?? '';
const from = params.get('from');
// What left the browser for this answer: background.js sets sentTo when it asked a hash-prefix endpoint.
const sentTo = params.get('sentTo');

document.getElementById('url').textContent = url;
document.getElementById('expression').textContent = expression;
document.getElementById('privacy').textContent = sentTo
  ? `Checked with a Bloom filter on this device, then at ${sentTo}, which was sent a 4-byte hash prefix of the listed expression (not the address).`
  : 'Checked on this device with a Bloom filter: the address was not sent anywhere.';
const message = document.getElementById('message');
const continueButton = document.getElementById('continue');
if (!/^https?:\/\//i.test(url)) continueButton.disabled = true;

document.getElementById('back').addEventListener('click', async () => {
  // The listed page never committed, so "back" is the last safe page of this tab.
  if (from && /^https?:\/\//i.test(from)) {
    location.replace(from);
  } else if (history.length > 1) {
    history.back();
  } else {
    const tab = await chrome.tabs.getCurrent();
    await chrome.tabs.update(tab.id, { url: typeof browser === 'undefined' ? 'chrome://newtab/' : 'about:blank' });
  }
});

continueButton.addEventListener('click', async () => {
  continueButton.disabled = true;
  const reply = await chrome.runtime.sendMessage({ type: 'allow', expression });
  if (!reply?.ok) {
    message.textContent = `Could not continue: ${reply?.error?.message ?? 'the extension did not answer'}`;
    continueButton.disabled = false;
    return;
  }
  // replace(): the warning page does not stay in the tab's history.
  location.replace(url);
});
