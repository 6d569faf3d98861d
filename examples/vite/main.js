// A bundled app: Vite resolves 'bloomgate' and emits both the wasm module and
// the filter file as hashed assets (each found through new URL(…, import.meta.url)).
import { loadFilter } from 'bloomgate';

const status = document.getElementById('status');
const answer = document.getElementById('answer');

async function main() {
  let filter;
  try {
    filter = await loadFilter(new URL('./colors.bgf', import.meta.url));
  } catch (error) {
    status.dataset.state = 'error';
    status.textContent = `The filter could not be loaded (${error.code ?? error.name}): ${error.message}`;
    return;
  }
  const stats = filter.stats();
  status.dataset.state = 'ready';
  status.textContent = `Filter ready: ${stats.n} words, ${stats.serializedBytes} bytes, ${stats.kind}, ` +
    `target error rate ${stats.errorRate}.`;
  document.getElementById('ask').addEventListener('submit', (event) => {
    event.preventDefault();
    const word = document.getElementById('word').value.trim().toLowerCase();
    if (!word) return;
    const maybe = filter.mightContain(word);
    answer.dataset.answer = maybe ? 'maybe' : 'no';
    answer.textContent = maybe ? `"${word}": maybe in the list` : `"${word}": definitely not in the list`;
  });
}

main();
