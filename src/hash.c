/* hash.c — the exported face of the hashing scheme in hash_inline.h. */
#include "hash_inline.h"

bg_hash_pair bg_hash(const void *key, size_t len, uint64_t seed) { return bg__hash_xxh3(key, len, seed); }

void bg_positions(bg_hash_pair hash, uint64_t m, uint32_t k, uint64_t *out) {
  if (m == 0) return;
  uint32_t n = 0;
  BG__FOR_EACH_POSITION(hash, m, k, pos, out[n++] = pos);
}
