// Timing helpers: a case repeats whole passes until a minimum time has elapsed,
// rounds interleave the cases, and the median over rounds is reported.

/** Every answer a pass computes is added here, so no engine can drop the work. */
export const sink = { value: 0 };

const now = () => process.hrtime.bigint();

/**
 * Run case.pass() (after an untimed case.setup(), when given) until minMs of
 * timed work has accumulated. Returns nanoseconds per operation; pass() returns
 * how many operations it did. Both may be async (load cases are).
 */
export async function measure(benchCase, minMs) {
  const minNs = BigInt(Math.round(minMs * 1e6));
  let elapsed = 0n;
  let ops = 0;
  do {
    if (benchCase.setup) await benchCase.setup();
    const start = now();
    const done = benchCase.pass();
    ops += done instanceof Promise ? await done : done;
    elapsed += now() - start;
  } while (elapsed < minNs);
  if (benchCase.teardown) await benchCase.teardown();
  return Number(elapsed) / ops;
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/**
 * Warm every case up, then run `rounds` rounds; each round runs every case once,
 * in an order rotated by one per round so implementations alternate and none
 * always runs first (or right after a GC-heavy neighbour). Returns
 * Map(case id -> { median, min, samples }) in ns per operation.
 */
export async function runRounds(cases, { rounds, minMs, warmupMs = minMs / 2, onProgress }) {
  for (const c of cases) await measure(c, warmupMs);
  const samples = new Map(cases.map((c) => [c.id, []]));
  for (let r = 0; r < rounds; r++) {
    for (let j = 0; j < cases.length; j++) {
      const c = cases[(j + r) % cases.length];
      samples.get(c.id).push(await measure(c, minMs));
    }
    if (onProgress) onProgress(r + 1, rounds);
  }
  const out = new Map();
  for (const [id, values] of samples) out.set(id, { median: median(values), min: Math.min(...values), samples: values });
  return out;
}
