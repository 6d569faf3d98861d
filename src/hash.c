/* hash.c — the exported face of the hashing scheme in hash_inline.h. */
#include "hash_inline.h"

#if defined(__wasm__)
/* Short keys in bg__hash_short below: the long paths are all this copy keeps (the compiler knows len > 128). */
bg_hash_pair bg_hash(const void *key, size_t len, uint64_t seed) {
  if (len <= 128) return bg__hash_short(key, len, seed);
  return bg__hash_xxh3(key, len, seed);
}
#else
bg_hash_pair bg_hash(const void *key, size_t len, uint64_t seed) { return bg__hash_xxh3(key, len, seed); }
#endif

void bg_positions(bg_hash_pair hash, uint64_t m, uint32_t k, uint64_t *out) {
  if (m == 0) return;
  uint32_t n = 0;
  BG__FOR_EACH_POSITION(hash, m, k, pos, out[n++] = pos);
}

#if defined(__wasm__)
/*
 * XXH3_128bits_withSeed's own dispatch for keys up to 128 bytes, calling the
 * header's short-input functions (XXH_INLINE_ALL makes them visible) with the
 * default secret and the seed, as XXH3_128bits_internal does: the same hash,
 * compiled without the long paths. tests/golden and the C tests pin it to
 * bg_hash; a header that renamed these functions fails to compile, not to hash.
 */
bg_hash_pair bg__hash_short(const void *key, size_t len, uint64_t seed) {
  XXH128_hash_t h;
  if (len <= 16) {
    h = XXH3_len_0to16_128b((const xxh_u8 *)key, len, XXH3_kSecret, seed);
  } else if (len <= 128) {
    h = XXH3_len_17to128_128b((const xxh_u8 *)key, len, XXH3_kSecret, sizeof XXH3_kSecret, seed);
  } else {
    return bg_hash(key, len, seed);
  }
  bg_hash_pair pair = {h.low64, h.high64};
  return pair;
}
#endif
