// URL checker: canonicalize and match locally; escalate "maybe" expressions by hash prefix.
import { canonicalizeUrl, checkUrl, loadFilter, urlExpressions } from 'bloomgate';
import { readUrl } from './url-input.js';

const form = document.getElementById('check');
const input = document.getElementById('url');
const result = document.getElementById('result');
const details = document.getElementById('details');
const filterReady = loadFilter('/filters/urls.bgf');

function say(text, tone) {
  result.textContent = text;
  result.className = `status ${tone}`;
}

function show(canonical, expressions) {
  details.replaceChildren();
  const p = document.createElement('p');
  p.append('Canonical form: ');
  const code = document.createElement('code');
  code.textContent = canonical;
  p.append(code);
  const list = document.createElement('ul');
  for (const expression of expressions) {
    const item = document.createElement('li');
    const c = document.createElement('code');
    c.textContent = expression;
    item.append(c);
    list.append(item);
  }
  details.append(p, `Expressions checked (${expressions.length}):`, list);
}

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  const { url, notUrl } = readUrl(input.value);
  if (notUrl) {
    details.replaceChildren();
    return say(`Not a URL: ${notUrl}. Enter a web address, such as https://example.com/login.`, 'warn');
  }
  let filter;
  try {
    filter = await filterReady;
  } catch (error) {
    return say(`The phishing list could not be loaded: ${error.message}`, 'warn');
  }
  try {
    show(canonicalizeUrl(url), urlExpressions(url));
    const answer = await checkUrl(url, { filter, hashesUrl: '/hashes' });
    if (answer.listed) say(`Listed: ${answer.expression} is a known phishing site.`, 'bad');
    else if (answer.escalated) say('Not listed (the local filter said "maybe"; the server confirmed it is not).', 'ok');
    else say('Not listed (answered locally, nothing was sent).', 'ok');
  } catch (error) {
    if (error.code === 'E_URL') {
      details.replaceChildren();
      say('Not a URL: it cannot be canonicalized. Enter a web address, such as https://example.com/login.', 'warn');
    } else {
      say(`Couldn't check right now: ${error.message}`, 'warn');
    }
  }
});
