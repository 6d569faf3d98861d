/*
 * test_hash.c — where a key becomes bit positions.
 *
 * bg_hash must be exactly XXH3-128 (low, high) of the key; bg_positions must
 * follow docs/FORMAT.md's pseudo-code, which this file re-implements on its
 * own (reference_positions) rather than reusing the core's macro. The
 * portable 64x64->128 fallback in hash_inline.h, which no native or wasm build
 * of ours compiles, is checked here by compiling this file's copy of it with
 * __int128 hidden.
 */
#include <stdlib.h>

#include "test_util.h"

/* Hide __int128 from hash_inline.h so this translation unit gets its portable reduction. */
#if defined(__SIZEOF_INT128__)
#define TEST_HAS_INT128 1
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wbuiltin-macro-redefined"
#endif
#undef __SIZEOF_INT128__
#if defined(__clang__)
#pragma clang diagnostic pop
#endif
#endif
#include "hash_inline.h" /* also brings XXH3_128bits_withSeed (XXH_INLINE_ALL) */

/* docs/FORMAT.md, "Hash algorithm 1", written out independently. */
static uint64_t reference_reduce(uint64_t x, uint64_t m) {
  if (m <= UINT32_MAX) return ((x >> 32) * m) >> 32;
#if TEST_HAS_INT128
  return (uint64_t)(((unsigned __int128)x * m) >> 64);
#else
  /* Long multiplication on 16-bit digits: slow, obviously right. */
  uint32_t a[4], b[4], r[8] = {0};
  for (int i = 0; i < 4; i++)
    a[i] = (uint32_t)(x >> (16 * i)) & 0xffff, b[i] = (uint32_t)(m >> (16 * i)) & 0xffff;
  for (int i = 0; i < 4; i++) {
    uint32_t carry = 0;
    for (int j = 0; j < 4; j++) {
      uint32_t t = a[i] * b[j] + r[i + j] + carry;
      r[i + j] = t & 0xffff;
      carry = t >> 16;
    }
    r[i + 4] += carry;
  }
  return (uint64_t)r[4] | ((uint64_t)r[5] << 16) | ((uint64_t)r[6] << 32) | ((uint64_t)r[7] << 48);
#endif
}

static void reference_positions(uint64_t h1, uint64_t h2, uint64_t m, uint32_t k, uint64_t *out) {
  uint64_t x = h1, y = h2;
  for (uint32_t i = 0; i < k; i++) {
    out[i] = reference_reduce(x, m);
    x += y;
    y += i + 1;
  }
}

/* splitmix64: a deterministic stream of test inputs. */
static uint64_t next_random(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static const uint64_t interesting_m[] = {1,
                                         2,
                                         3,
                                         7,
                                         8,
                                         64,
                                         1000,
                                         1917012,
                                         9585059,
                                         (1ull << 31) + 11,
                                         UINT32_MAX - 1,
                                         UINT32_MAX,
                                         (1ull << 32),
                                         (1ull << 32) + 1,
                                         (1ull << 32) + (1ull << 20),
                                         (1ull << 40) + 3,
                                         BG_MAX_BITS,
                                         UINT64_MAX};

static void test_hash_is_xxh3_128(void) {
  /* Lengths cover every XXH3 size class: 0, 1-3, 4-8, 9-16, 17-128, 129-240, 241+. */
  static const size_t lengths[] = {0,  1,  2,   3,   4,   7,   8,   9,   15,  16,   17,
                                   31, 64, 127, 128, 129, 200, 239, 240, 241, 1000, 4096};
  static const uint64_t seeds[] = {0, 1, 42, (1ull << 63) + 5, UINT64_MAX};
  uint8_t data[4096];
  uint64_t state = 7;
  for (size_t i = 0; i < sizeof data; i++) data[i] = (uint8_t)next_random(&state);
  for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++) {
    for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++) {
      bg_hash_pair got = bg_hash(data, lengths[l], seeds[s]);
      XXH128_hash_t want = XXH3_128bits_withSeed(data, lengths[l], seeds[s]);
      CHECK_MSG(got.h1 == want.low64 && got.h2 == want.high64, "length %zu seed %" PRIu64, lengths[l],
                seeds[s]);
      /* Deterministic: the same input twice, and from a different address, gives the same pair. */
      uint8_t copy[4096 + 1];
      memcpy(copy + 1, data, lengths[l]);
      bg_hash_pair again = bg_hash(copy + 1, lengths[l], seeds[s]);
      CHECK(again.h1 == got.h1 && again.h2 == got.h2);
    }
  }
  /* The seed matters, and so does every byte. */
  bg_hash_pair a = bg_hash("key_0", 5, 0), b = bg_hash("key_0", 5, 1), c = bg_hash("key_1", 5, 0);
  CHECK(a.h1 != b.h1 && a.h2 != b.h2);
  CHECK(a.h1 != c.h1 && a.h2 != c.h2);
  /* NULL with length 0 is the empty key. */
  bg_hash_pair empty1 = bg_hash(NULL, 0, 9), empty2 = bg_hash("", 0, 9);
  CHECK(empty1.h1 == empty2.h1 && empty1.h2 == empty2.h2);
}

/* XXH3-128 of known inputs, frozen since xxHash 0.8.0: catches a different hash being linked. */
static void test_hash_known_values(void) {
  XXH128_hash_t want = XXH3_128bits_withSeed("", 0, 0);
  bg_hash_pair got = bg_hash("", 0, 0);
  CHECK_EQ_U64(got.h1, want.low64);
  CHECK_EQ_U64(got.h2, want.high64);
  /* XXH3_64bits("") with seed 0 is 0x2d06800538d394c2 (xxHash's own test value);
   * the library's 64-bit function must agree, or the header on this system is not 0.8. */
  CHECK_EQ_U64(XXH3_64bits("", 0), 0x2d06800538d394c2ull);
}

static void test_positions_follow_spec(void) {
  uint64_t state = 12345;
  uint64_t got[BG_MAX_K], want[BG_MAX_K];
  for (size_t mi = 0; mi < sizeof interesting_m / sizeof interesting_m[0]; mi++) {
    uint64_t m = interesting_m[mi];
    for (int trial = 0; trial < 2000; trial++) {
      bg_hash_pair h = {next_random(&state), next_random(&state)};
      if (trial == 0) h.h1 = 0, h.h2 = 0;
      if (trial == 1) h.h1 = UINT64_MAX, h.h2 = UINT64_MAX;
      if (trial == 2) h.h1 = UINT64_MAX, h.h2 = 1;
      uint32_t k = (uint32_t)(trial % BG_MAX_K) + 1;
      bg_positions(h, m, k, got);
      reference_positions(h.h1, h.h2, m, k, want);
      int same = 1, in_range = 1;
      for (uint32_t i = 0; i < k; i++) {
        if (got[i] != want[i]) same = 0;
        if (got[i] >= m) in_range = 0;
      }
      CHECK_MSG(same, "m=%" PRIu64 " k=%u h1=%016" PRIx64 " h2=%016" PRIx64, m, k, h.h1, h.h2);
      CHECK_MSG(in_range, "position >= m=%" PRIu64 " for h1=%016" PRIx64, m, h.h1);
    }
  }
  /* m = 1: every probe lands on bit 0. */
  bg_hash_pair h = bg_hash("x", 1, 0);
  bg_positions(h, 1, 5, got);
  for (int i = 0; i < 5; i++) CHECK_EQ_U64(got[i], 0);
  /* Probe i is h1 + i h2 + (i^3 - i)/6 (mod 2^64), reduced. */
  h.h1 = 0x0123456789abcdefull;
  h.h2 = 0xfedcba9876543210ull;
  bg_positions(h, UINT64_MAX, 10, got);
  for (uint64_t i = 0; i < 10; i++) {
    uint64_t x = h.h1 + i * h.h2 + (i * i * i - i) / 6;
    CHECK_EQ_U64(got[i], reference_reduce(x, UINT64_MAX));
  }
}

/* The portable reduction compiled into this file agrees with the library's. */
static void test_portable_reduce(void) {
  uint64_t state = 99;
  for (size_t mi = 0; mi < sizeof interesting_m / sizeof interesting_m[0]; mi++) {
    uint64_t m = interesting_m[mi];
    for (int trial = 0; trial < 5000; trial++) {
      uint64_t x = trial == 0 ? UINT64_MAX : trial == 1 ? 0 : next_random(&state);
      uint64_t lib[1];
      bg_hash_pair h = {x, 0};
      bg_positions(h, m, 1, lib);
      CHECK_MSG(bg__reduce(x, m) == lib[0] && reference_reduce(x, m) == lib[0],
                "x=%016" PRIx64 " m=%" PRIu64 ": portable %" PRIu64 ", library %" PRIu64, x, m,
                bg__reduce(x, m), lib[0]);
    }
  }
  /* Above 2^32 bits the high positions are reachable. */
  CHECK_EQ_U64(bg__reduce(UINT64_MAX, (1ull << 40) + 3), (1ull << 40) + 2);
  CHECK_EQ_U64(bg__reduce(1ull << 63, 1ull << 33), 1ull << 32);
}

/* Pearson's chi-square over `buckets` equally likely cells. */
static double chi_square(const uint64_t *counts, size_t buckets, uint64_t total) {
  double expected = (double)total / (double)buckets, sum = 0;
  for (size_t i = 0; i < buckets; i++) {
    double d = (double)counts[i] - expected;
    sum += d * d / expected;
  }
  return sum;
}

/*
 * Uniformity smoke test: positions of real keys over 64 equal cells. With 63
 * degrees of freedom the statistic has mean 63 and standard deviation 11.2;
 * 150 is ~7.7 sigma, so only a real bias (a stuck bit, a modulo skew, probes
 * repeating) fails it. Inputs are fixed, so the result is deterministic.
 */
static void test_uniform_positions(void) {
  enum { BUCKETS = 64, KEYS = 20000, K = 7 };
  static const uint64_t ms[] = {64, 64 * 1000, (1ull << 32) + 64 * 3, ((1ull << 40) + 3) / 64 * 64};
  char key[32];
  uint64_t pos[K];
  for (size_t mi = 0; mi < sizeof ms / sizeof ms[0]; mi++) {
    uint64_t m = ms[mi];
    uint64_t cell = m / BUCKETS;
    uint64_t counts[BUCKETS] = {0}, first_counts[BUCKETS] = {0}, total = 0;
    for (int i = 0; i < KEYS; i++) {
      int len = snprintf(key, sizeof key, "key_%d", i);
      bg_positions(bg_hash(key, (size_t)len, 42), m, K, pos);
      for (int j = 0; j < K; j++) counts[pos[j] / cell]++, total++;
      first_counts[pos[0] / cell]++;
    }
    double all = chi_square(counts, BUCKETS, total), first = chi_square(first_counts, BUCKETS, KEYS);
    CHECK_MSG(all < 150.0, "m=%" PRIu64 ": chi-square of all probes %.1f", m, all);
    CHECK_MSG(first < 150.0, "m=%" PRIu64 ": chi-square of first probes %.1f", m, first);
  }
  /* A non-power-of-two m whose cells are unequal by one position: compare shares, not counts. */
  {
    uint64_t m = 1000, counts[3] = {0};
    for (int i = 0; i < 30000; i++) {
      int len = snprintf(key, sizeof key, "probe-%d", i);
      bg_positions(bg_hash(key, (size_t)len, 7), m, 1, pos);
      counts[pos[0] * 3 / m]++;
    }
    /* Thirds of [0, 1000) hold 334, 333, 333 positions; each share within 3% of 1/3. */
    for (int c = 0; c < 3; c++)
      CHECK_MSG(counts[c] > 9700 && counts[c] < 10300, "third %d: %" PRIu64, c, counts[c]);
  }
}

/* The k probes of one key are (almost always) distinct: double hashing did not collapse. */
static void test_probes_distinct(void) {
  char key[32];
  uint64_t pos[BG_MAX_K];
  int collisions = 0;
  for (int i = 0; i < 2000; i++) {
    int len = snprintf(key, sizeof key, "distinct-%d", i);
    bg_positions(bg_hash(key, (size_t)len, 0), 1917012, 7, pos);
    for (int a = 0; a < 7; a++)
      for (int b = a + 1; b < 7; b++) collisions += pos[a] == pos[b];
  }
  /* Expected ~ 2000 * 21 / 1.9e6 = 0.02 collisions. */
  CHECK_MSG(collisions <= 2, "%d repeated probes", collisions);
}

int main(void) {
  test_hash_is_xxh3_128();
  test_hash_known_values();
  test_positions_follow_spec();
  test_portable_reduce();
  test_uniform_positions();
  test_probes_distinct();
  return test_report("test_hash");
}
