// In a bench page (served as /bench/page-timer.mjs): time named cases in rounds,
// the order rotated by one each round, each case repeating whole passes for at
// least minMs. A case returns how many operations its pass did. Returns
// { name: [ns per operation, one per round] }. Used by bench/batch-variants.mjs
// and bench/single-parts.mjs through bench/page-runner.mjs.
export function timeCases(cases, { rounds, minMs, only = '' }) {
  const chosen = only ? Object.fromEntries(only.split(',').map((name) => {
    if (typeof cases[name] !== 'function') throw new Error(`no case ${name}`);
    return [name, cases[name]];
  })) : cases;
  const names = Object.keys(chosen);
  const results = Object.fromEntries(names.map((name) => [name, []]));
  for (let r = 0; r < rounds; r++) {
    const order = names.slice(r % names.length).concat(names.slice(0, r % names.length));
    for (const name of order) {
      let elapsed = 0;
      let ops = 0;
      do {
        const t = performance.now();
        ops += chosen[name]();
        elapsed += performance.now() - t;
      } while (elapsed < minMs);
      results[name].push(elapsed * 1e6 / ops);
    }
  }
  return results;
}
