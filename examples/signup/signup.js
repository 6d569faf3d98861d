// Signup password meter: strength from zxcvbn-ts, breach check from bloomgate.
// Every keystroke gets the local answer and sends nothing; only the password the
// user settles on (leaving the field, pressing Enter, signing up) is escalated,
// and only when the filter says "maybe": watchField wires input -> local and
// change/submit -> settle, with no timer, and drops an answer for a password the
// user has since changed.
import { loadFilter, passwordChecker, watchField } from 'bloomgate';

const input = document.getElementById('password');
const bar = document.getElementById('strength-bar');
const strengthText = document.getElementById('strength-text');
const status = document.getElementById('breach-status');
const COLORS = ['#b3261e', '#d0611c', '#c99a00', '#5a9c2f', '#17733a'];
const LABELS = ['very weak', 'weak', 'fair', 'strong', 'very strong'];

let filterError = null;

function say(text, tone) {
  status.textContent = text;
  status.className = `status ${tone}`;
}

// data-filter / data-strength on <body> say when each part is ready (and let tests wait for it).
const filterReady = loadFilter('/filters/passwords.bgf')
  .catch((error) => { filterError = error; document.body.dataset.filter = 'failed'; return null; });

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

// The breach status: the local answer while typing, the settled answer once final.
function showBreach(result, { final }) {
  if (result === null) return say('', '');
  if (!result.breached) return say('Not found in known breaches.', 'ok');
  if (result.confirmed) return say(...describe(result));
  // A local "maybe": checked with the server once the password is settled on.
  say(final ? 'Possibly breached (not confirmed).' : 'Possibly breached — checked when you leave the field.', 'warn');
}

input.addEventListener('input', () => {
  showStrength(input.value);
  if (filterError) say("Couldn't check against known breaches right now (the breach list did not load).", 'warn');
});

filterReady.then((filter) => {
  if (!filter) return;
  const check = passwordChecker({ filter, rangeUrl: '/range' });
  watchField(input, check, {
    onResult: showBreach,
    onError: () => say("Couldn't check against known breaches right now.", 'warn'),
  });
  document.body.dataset.filter = 'ready';
  // Typed before the filter arrived: answer now, and settle what was already left.
  if (input.value) {
    showBreach(check.local(input.value), { final: false });
    if (document.activeElement !== input) {
      const { value } = input;
      check.settle(value).then(
        (result) => { if (input.value === value && !result.superseded) showBreach(result, { final: true }); },
        () => say("Couldn't check against known breaches right now.", 'warn'),
      );
    }
  }
});

document.getElementById('signup').addEventListener('submit', (event) => event.preventDefault());
