/** xorshift32: a reproducible sequence for a seed (fuzzing and generated inputs in tests). */
export function prng(seed) {
  let x = seed >>> 0 || 1;
  const next = () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x;
  };
  return { next, int: (n) => next() % n, byte: () => next() & 255, chance: (p) => next() / 2 ** 32 < p };
}
