// Signup password meter: strength from zxcvbn-ts, breach check from bloomgate.
// Every keystroke gets the local answer; escalations are debounced and
// de-duplicated, so typing a long clean password sends no request at all.
import { checkPassword, loadFilter } from 'bloomgate';

const input = document.getElementById('password');
const bar = document.getElementById('strength-bar');
const strengthText = document.getElementById('strength-text');
const status = document.getElementById('breach-status');
const DEBOUNCE_MS = 350;
const COLORS = ['#b3261e', '#d0611c', '#c99a00', '#5a9c2f', '#17733a'];
const LABELS = ['very weak', 'weak', 'fair', 'strong', 'very strong'];

let filter = null;
let filterError = null;
const answers = new Map(); // password -> Promise of the server's answer (one request each)
let timer = 0;
let typed = 0;

function say(text, tone) {
  status.textContent = text;
  status.className = `status ${tone}`;
}

// data-filter / data-strength on <body> say when each part is ready (and let tests wait for it).
const filterReady = loadFilter('/filters/passwords.bgf')
  .then((loaded) => { filter = loaded; document.body.dataset.filter = 'ready'; })
  .catch((error) => { filterError = error; document.body.dataset.filter = 'failed'; });

// Strength is independent of the breach check: it keeps working if the check cannot.
const strength = (async () => {
  try {
    const [{ ZxcvbnFactory }, common] = await Promise.all([import('@zxcvbn-ts/core'), import('@zxcvbn-ts/language-common')]);
    const estimator = new ZxcvbnFactory({ dictionary: common.dictionary, graphs: common.adjacencyGraphs });
    document.body.dataset.strength = 'ready';
    return (password) => estimator.check(password);
  } catch {
    document.body.dataset.strength = 'unavailable';
    return null;
  }
})();

async function showStrength(password) {
  const zxcvbn = await strength;
  if (!password) {
    bar.style.width = '0';
    strengthText.textContent = 'Type a password to see its strength.';
    return;
  }
  if (!zxcvbn) {
    strengthText.textContent = `Length ${password.length} (strength estimator unavailable)`;
    return;
  }
  const { score } = zxcvbn(password);
  bar.style.width = `${(score + 1) * 20}%`;
  bar.style.background = COLORS[score];
  strengthText.textContent = `Strength: ${LABELS[score]}`;
}

// The count is sightings: how many times the password turns up across breach dumps
// (one breach can hold it many times), not a number of breaches.
function describe(result) {
  if (!result.breached) return ['Not found in known breaches.', 'ok'];
  const times = result.count === 1 ? 'once' : `${result.count.toLocaleString()} times`;
  return [`Seen ${times} in breaches — please choose another password.`, 'bad'];
}

async function onInput() {
  const password = input.value;
  const mine = ++typed;
  showStrength(password);
  clearTimeout(timer);
  if (!password) return say('', '');
  await filterReady;
  if (mine !== typed) return;
  if (filterError) return say("Couldn't check against known breaches right now (the breach list did not load).", 'warn');
  // Local answer first: "definitely not" needs no network at all.
  const local = await checkPassword(password, { filter });
  if (mine !== typed) return;
  if (!local.breached) return say('Not found in known breaches.', 'ok');
  say('Possibly breached — checking…', 'warn');
  timer = setTimeout(async () => {
    if (!answers.has(password)) {
      const pending = checkPassword(password, { filter, rangeUrl: '/range' });
      pending.catch(() => answers.delete(password)); // failures are retried on the next keystroke
      answers.set(password, pending);
    }
    try {
      const result = await answers.get(password);
      if (mine === typed) say(...describe(result));
    } catch {
      if (mine === typed) say("Couldn't check against known breaches right now.", 'warn');
    }
  }, DEBOUNCE_MS);
}

input.addEventListener('input', onInput);
document.getElementById('signup').addEventListener('submit', (event) => event.preventDefault());
