/*
 * fuse_shared.h — what the two binary fuse files (fuse.c: 3-wise fuse8 and
 * fuse16; fuse4.c: 4-wise fuse4) share: the mixer that turns a key's h1 into
 * the word its cells and fingerprint come from, and the internal seed of each
 * build attempt. Internal; changing either changes every fuse file.
 */
#ifndef BLOOMGATE_FUSE_SHARED_H
#define BLOOMGATE_FUSE_SHARED_H

#include <stddef.h>
#include <stdint.h>

/* SplitMix64's finalizer: a bijection on 64-bit words with full avalanche. */
static inline uint64_t fuse_mix(uint64_t x) {
  x ^= x >> 30;
  x *= UINT64_C(0xbf58476d1ce4e5b9);
  x ^= x >> 27;
  x *= UINT64_C(0x94d049bb133111eb);
  x ^= x >> 31;
  return x;
}

/* The internal seed of build attempt `attempt` (0, 1, ...) for a filter seed. */
static inline uint64_t fuse_attempt_seed(uint64_t seed, uint32_t attempt) {
  return fuse_mix(seed + UINT64_C(0x9e3779b97f4a7c15) * ((uint64_t)attempt + 1));
}

/*
 * Sort n hashes ascending through key_scratch[n], and their values (when
 * values is not NULL) alongside through value_scratch[n]: an LSD radix sort
 * on the top 32 bits (four passes of 8 bits), then insertion sort for words
 * that share those bits (hashes, so such runs are short: about n^2 / 2^33
 * adjacent pairs in all). Defined in fuse4.c.
 */
void bg__fuse_sort(uint64_t *keys, uint8_t *values, uint64_t *key_scratch, uint8_t *value_scratch, size_t n);

#endif /* BLOOMGATE_FUSE_SHARED_H */
