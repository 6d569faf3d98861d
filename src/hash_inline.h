/*
 * hash_inline.h — where a key becomes bit positions. The one definition of the
 * hashing scheme (BG_HASH_XXH3_128 in docs/FORMAT.md), inlined into the hot
 * loops of every filter kind; hash.c exports the same functions for callers
 * and tests. Changing anything here changes every filter file: bump the hash
 * algorithm id instead.
 */
#ifndef BLOOMGATE_HASH_INLINE_H
#define BLOOMGATE_HASH_INLINE_H

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "bloomgate.h"

static inline bg_hash_pair bg__hash_xxh3(const void *key, size_t len, uint64_t seed) {
  XXH128_hash_t h = XXH3_128bits_withSeed(key, len, seed);
  bg_hash_pair pair = {h.low64, h.high64};
  return pair;
}

#if defined(__wasm__)
/*
 * In wasm, XXH3-128 compiles to one ~5,000-instruction function that is called
 * rather than inlined anyway; every file that hashed kept its own copy, and
 * two copies cost 4 KB of the 45 KB gzip budget. There, every caller shares
 * hash.c's bg_hash.
 */
#define bg__hash bg_hash
/*
 * Keys up to 128 bytes (XXH3's short paths: most keys a page asks about) hash
 * in hash.c's bg__hash_short, the same function compiled without the long-input
 * code: a small function whose multiplies inline, where bg_hash is one large
 * function that calls its 64x64->128 multiply. Longer keys go to bg_hash.
 */
bg_hash_pair bg__hash_short(const void *key, size_t len, uint64_t seed);
#else
#define bg__hash bg__hash_xxh3
#define bg__hash_short bg__hash_xxh3
#endif

/*
 * Map a uniform 64-bit x onto [0, m) without division or modulo bias
 * (Lemire's multiply-shift): floor(x * m / 2^64). Filters below 2^32 bits use
 * the top 32 bits of x and one 64-bit multiply, which wasm does natively; only
 * larger filters pay for the 64x64->128 product.
 */
static inline uint64_t bg__reduce(uint64_t x, uint64_t m) {
  if (m <= UINT32_MAX) return ((x >> 32) * m) >> 32;
#if defined(__SIZEOF_INT128__)
  return (uint64_t)(((unsigned __int128)x * m) >> 64);
#else
  uint64_t x_lo = (uint32_t)x, x_hi = x >> 32, m_lo = (uint32_t)m, m_hi = m >> 32;
  uint64_t lo_lo = x_lo * m_lo, hi_lo = x_hi * m_lo, lo_hi = x_lo * m_hi, hi_hi = x_hi * m_hi;
  uint64_t cross = (lo_lo >> 32) + (uint32_t)hi_lo + lo_hi;
  return hi_hi + (hi_lo >> 32) + (cross >> 32);
#endif
}

/*
 * Enhanced double hashing (Dillinger & Manolios): probe i sits at
 * h1 + i*h2 + (i^3 - i)/6 (mod 2^64), computed incrementally. The cubic term
 * keeps probes distinct when h2 happens to be a multiple of the stride that
 * plain double hashing would repeat on.
 */
#define BG__FOR_EACH_POSITION(pair, m, k, pos, body) \
  do {                                               \
    uint64_t bg__x = (pair).h1, bg__y = (pair).h2;   \
    for (uint32_t bg__i = 0; bg__i < (k); bg__i++) { \
      uint64_t pos = bg__reduce(bg__x, (m));         \
      body;                                          \
      bg__x += bg__y;                                \
      bg__y += bg__i + 1;                            \
    }                                                \
  } while (0)

#endif /* BLOOMGATE_HASH_INLINE_H */
