// URL checker: canonicalize and match locally as the URL is typed (nothing sent); escalate
// "maybe" expressions by hash prefix only for the URL the user settles on: the field's change
// (leaving it, pressing Enter) or the form's submit. urlChecker's settle() aborts an escalation
// the user has moved on from and shares one for the same URL (change, then submit: one request).
import { canonicalizeUrl, loadFilter, urlChecker, urlExpressions } from 'bloomgate';
import { readUrl } from './url-input.js';

const form = document.getElementById('check');
const input = document.getElementById('url');
const result = document.getElementById('result');
const details = document.getElementById('details');
const checkReady = loadFilter('/filters/urls.bgf').then((filter) => urlChecker({ filter, hashesUrl: '/hashes' }));
let check = null; // once the filter has loaded
// data-filter on <body> says when the local answers start (and lets tests wait for it).
checkReady.then((ready) => { check = ready; document.body.dataset.filter = 'ready'; }, () => { document.body.dataset.filter = 'failed'; });

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

function describe(answer) {
  if (answer.listed && answer.confirmed) return say(`Listed: ${answer.expression} is a known phishing site.`, 'bad');
  if (answer.listed) return say(`Possibly listed (${answer.expression}): press Check to confirm with the server.`, 'warn');
  if (answer.escalated) return say('Not listed (the local filter said "maybe"; the server confirmed it is not).', 'ok');
  return say('Not listed (answered locally, nothing was sent).', 'ok');
}

// While typing: the local answer only, no request (a local() of a new URL also supersedes an
// escalation still in flight for an earlier one).
input.addEventListener('input', () => {
  if (!check) return;
  const { url } = readUrl(input.value);
  if (url === undefined) {
    check.cancel();
    details.replaceChildren();
    return say('', '');
  }
  try {
    describe(check.local(url));
    show(canonicalizeUrl(url), urlExpressions(url));
  } catch {
    check.cancel(); // not canonicalizable yet ("https:"): said when settled
    details.replaceChildren();
    say('', '');
  }
});

/** The URL in the field is final: answer it, escalating a "maybe". */
async function settle({ quietWhenEmpty }) {
  const text = input.value;
  if (quietWhenEmpty && text.trim() === '') return;
  const { url, notUrl } = readUrl(text);
  if (notUrl) {
    details.replaceChildren();
    return say(`Not a URL: ${notUrl}. Enter a web address, such as https://example.com/login.`, 'warn');
  }
  let checker;
  try {
    checker = await checkReady;
  } catch (error) {
    return say(`The phishing list could not be loaded: ${error.message}`, 'warn');
  }
  try {
    show(canonicalizeUrl(url), urlExpressions(url));
    const answer = await checker.settle(url);
    if (answer.superseded || input.value !== text) return; // the user has moved on
    describe(answer);
  } catch (error) {
    if (input.value !== text) return;
    if (error.code === 'E_URL') {
      details.replaceChildren();
      say('Not a URL: it cannot be canonicalized. Enter a web address, such as https://example.com/login.', 'warn');
    } else {
      say(`Couldn't check right now: ${error.message}`, 'warn');
    }
  }
}

input.addEventListener('change', () => settle({ quietWhenEmpty: true }));
form.addEventListener('submit', (event) => {
  event.preventDefault();
  settle({ quietWhenEmpty: false });
});
