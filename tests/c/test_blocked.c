/*
 * test_blocked.c — the split-block Bloom filter (kind 2): sizing against the
 * exact expected rate, measured error rate at capacity (both sides), no false
 * negatives, describe, exact error codes for corrupt headers, and the scalar
 * and vector block tests agreeing. Batches, round trips, merge, clear and
 * corruption in general are test_conformance.c's (at k = 8 and k = 16).
 *
 * Built natively (vector path: SSE2, SSE4.1 or AVX2 by -m flags; scalar with
 * -DBG_BLOCKED_SCALAR) and with emcc (-msimd128 -msse2, run under node). The
 * sizing and golden-file vectors are the same in every build, which is what
 * makes files agree byte for byte between native and wasm.
 */
#include <math.h>
#include <stdlib.h>

#include "test_filters.h"

/* blocked.c's test hooks (internal, not in bloomgate.h): one block, either path. */
int bg__blocked_block_contains(const uint8_t *block, uint32_t k, uint64_t h2, int vector);
void bg__blocked_block_add(uint8_t *block, uint32_t k, uint64_t h2, int vector);
const char *bg__blocked_simd_path(void);

#define N_KEYS 200000
#define N_PROBES 400000

/* ---- helpers ---------------------------------------------------------------- */

#define KEY "key_" /* every key here is KEY<i> */

static bg_filter *make(uint64_t capacity, double p, uint64_t seed) {
  bg_filter *f = NULL;
  bg_status rc = bg_filter_create(BG_KIND_BLOCKED, capacity, p, seed, BG_KEY_UTF8, &f);
  CHECK_STATUS(rc, BG_OK);
  return rc == BG_OK ? f : NULL;
}

/* A deterministic 64-bit stream (splitmix64), for random blocks and hash pairs. */
static uint64_t rng_state = 0x243F6A8885A308D3u;
static uint64_t rng(void) {
  uint64_t z = (rng_state += 0x9E3779B97F4A7C15u);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
  return z ^ (z >> 31);
}

/* ---- sizing --------------------------------------------------------------- */

/*
 * (n, p) -> (k, m). Each m is the fewest blocks whose exact expected rate
 * (binomial block loads) is <= p: checked against an independent 40-digit
 * evaluation of the same sum (mpmath), where m - one block lies above p. The
 * same table must hold in the wasm build, so files agree across builds.
 */
static void test_sizing(void) {
  static const struct {
    uint64_t n;
    double p;
    uint32_t k;
    uint64_t m;
  } vectors[] = {
      {1, 0.01, 8, 256},
      {10, 1e-5, 8, 512},
      {10, 1e-9, 16, 512},
      {10, 1e-15, 16, 4096},
      {1000, 0.5, 8, 3328},
      {1000, 0.01, 8, 10752},
      {1000, 0.001, 8, 16896},
      {1000, 0.0005, 16, 18944},
      {200000, 0.01, 8, 2105856},
      {200000, 0.001, 8, 3378176},
      {200000, 0.0001, 16, 4601856},
      {200000, 1e-9, 16, 17266688},
      {1000000, 0.1, 8, 5988608},
      {1000000, 0.01, 8, 10529280},
      {1000000, 0.001, 8, 16889856},
      {1000000, 0.0007, 16, 18059776},
      {1000000, 1e-6, 16, 39237632},
      {10000000, 0.01, 8, 105292544},
      {10000000, 0.001, 8, 168898304},
      {1000000, 1e-15, 16, 556395008},
  };
  for (size_t i = 0; i < sizeof vectors / sizeof vectors[0]; i++) {
    bg_filter *f = NULL;
    /* The largest vector's payload (70 MB) is allocated zeroed and never touched. */
    bg_status rc = bg_filter_create(BG_KIND_BLOCKED, vectors[i].n, vectors[i].p, 1, BG_KEY_UTF8, &f);
    if (rc == BG_E_NOMEM) continue;
    CHECK_STATUS_AT(rc, BG_OK, "n=%" PRIu64 " p=%g", vectors[i].n, vectors[i].p);
    if (!f) continue;
    bg_info info;
    bg_filter_info(f, &info);
    CHECK_MSG(info.k == vectors[i].k && info.m == vectors[i].m,
              "n=%" PRIu64 " p=%g: k=%u m=%" PRIu64 ", expected k=%u m=%" PRIu64, vectors[i].n, vectors[i].p,
              info.k, info.m, vectors[i].k, vectors[i].m);
    CHECK_EQ_U64(info.payload_bytes, vectors[i].m / 8);
    bg_filter_free(f);
  }

  /* Too large for 2^43 bits; out-of-range arguments are the generic layer's E_RANGE. */
  bg_filter *f = NULL;
  CHECK_STATUS(bg_filter_create(BG_KIND_BLOCKED, (uint64_t)1 << 53, 1e-15, 0, BG_KEY_UTF8, &f), BG_E_TOO_LARGE);
  CHECK(f == NULL);
  CHECK_STATUS(bg_filter_create(BG_KIND_BLOCKED, 0, 0.01, 0, BG_KEY_UTF8, &f), BG_E_RANGE);
  CHECK_STATUS(bg_filter_create(BG_KIND_BLOCKED, 10, 1.0, 0, BG_KEY_UTF8, &f), BG_E_RANGE);
  /* A rate next to 1 still sizes (one block), and nothing hangs. */
  CHECK_STATUS(bg_filter_create(BG_KIND_BLOCKED, 1000000, 0.999999999, 0, BG_KEY_UTF8, &f), BG_OK);
  bg_filter_free(f);
  /* Tiny rates take 64-byte blocks; a key alone in its block still matches 32^-16 of queries. */
  CHECK_STATUS(bg_filter_create(BG_KIND_BLOCKED, 1000, 1e-20, 0, BG_KEY_UTF8, &f), BG_OK);
  if (f) {
    bg_info info;
    bg_filter_info(f, &info);
    CHECK(info.k == 16 && info.m % 512 == 0);
    bg_filter_free(f);
  }
  f = NULL;
  CHECK_STATUS(bg_filter_create(BG_KIND_BLOCKED, 1000000, 1e-300, 0, BG_KEY_UTF8, &f), BG_E_TOO_LARGE);
}

/* ---- the rate at capacity, and no false negatives ---------------------------- */

static void check_rate(double p) {
  bg_filter *f = make(N_KEYS, p, 0x5eed);
  REQUIRE(f);
  add_range(f, KEY, 0, N_KEYS);
  char buf[32];
  long negatives = 0, positives = 0;
  for (long i = 0; i < N_KEYS; i++)
    if (bg_filter_contains(f, buf, key_name(buf, sizeof buf, KEY, i)) != 1) negatives++;
  CHECK_MSG(negatives == 0, "p=%g: %ld false negatives", p, negatives);
  for (long i = N_KEYS; i < N_KEYS + N_PROBES; i++)
    if (bg_filter_contains(f, buf, key_name(buf, sizeof buf, KEY, i)) == 1) positives++;
  double measured = (double)positives / N_PROBES, sigma = sqrt(p * (1 - p) / N_PROBES);
  CHECK_MSG(measured <= p + 4 * sigma, "p=%g: measured %.6f > %.6f", p, measured, p + 4 * sigma);
  /* Sized by the exact rate, it is not grossly oversized either. */
  CHECK_MSG(measured >= p / 2, "p=%g: measured %.6f, suspiciously low", p, measured);

  bg_info info;
  bg_filter_info(f, &info);
  CHECK_EQ_U64(info.kind, BG_KIND_BLOCKED);
  CHECK_EQ_U64(info.count, N_KEYS);
  CHECK(info.theoretical_error_rate <= p && info.theoretical_error_rate > p * 0.9);
  /* The rate read off the blocks is this filter's actual rate for random keys. */
  CHECK_MSG(fabs(info.estimated_error_rate - measured) <= 6 * sigma, "p=%g: estimated %.6f, measured %.6f", p,
            info.estimated_error_rate, measured);
  CHECK_NEAR(info.estimated_items, N_KEYS, 0.01);
  CHECK_NEAR(info.fill_ratio, (double)info.bits_set / (double)info.m, 1e-12);
  printf("  p=%g: k=%u, %.3f bits/key, measured %.5f (theory %.5f, from fill %.5f)\n", p, info.k,
         (double)info.m / N_KEYS, measured, info.theoretical_error_rate, info.estimated_error_rate);
  bg_filter_free(f);
}

/* bits_set is the payload's popcount; an empty filter reports zero everywhere. */
static void test_describe(void) {
  bg_filter *f = make(1000, 0.01, 3);
  REQUIRE(f);
  bg_info info;
  bg_filter_info(f, &info);
  CHECK_EQ_U64(info.bits_set, 0);
  CHECK(info.theoretical_error_rate == 0.0 && info.estimated_error_rate == 0.0);
  add_range(f, KEY, 0, 1000);
  bg_filter_info(f, &info);
  size_t size;
  uint8_t *file = serialize_copy(f, &size);
  REQUIRE(file);
  uint64_t pop = 0;
  for (size_t i = size - info.payload_bytes; i < size; i++) pop += (uint64_t)__builtin_popcount(file[i]);
  CHECK_EQ_U64(info.bits_set, pop);
  /* A given bit stays clear with probability (1 - 1/(32 blocks))^n. */
  double blocks = (double)info.m / (32.0 * info.k);
  CHECK_NEAR((double)info.bits_set, (double)info.m * (1 - pow(1 - 1 / (32 * blocks), 1000)), 0.03);
  CHECK_NEAR(info.estimated_items, 1000, 0.05);
  free(file);
  bg_filter_free(f);
}

/* ---- corrupt files ---------------------------------------------------------------- */

static void expect_load(const uint8_t *file, size_t size, bg_status want, const char *what) {
  bg_filter *f = NULL;
  CHECK_STATUS_AT(bg_filter_deserialize(file, size, &f), want, "%s", what);
  CHECK(f == NULL || want == BG_OK);
  bg_filter_free(f);
  uint8_t *owned = malloc(size);
  if (!owned) return;
  memcpy(owned, file, size);
  f = NULL;
  bg_status rc = bg_filter_deserialize_owned(owned, size, &f);
  CHECK_STATUS_AT(rc, want, "%s (owned)", what);
  if (rc == BG_OK)
    bg_filter_free(f);
  else
    free(owned);
}

static void test_corrupt(void) {
  bg_filter *f = make(2000, 0.01, 11);
  REQUIRE(f);
  add_range(f, KEY, 0, 2000);
  size_t size;
  uint8_t *good = serialize_copy(f, &size);
  REQUIRE(good);
  uint8_t *file = malloc(size);
  REQUIRE(file);
  bg_info info;
  bg_filter_info(f, &info);
  size_t payload_at = size - info.payload_bytes;
  expect_load(good, size, BG_OK, "intact");

#define CORRUPT(what, edit, code)        \
  do {                                   \
    memcpy(file, good, size);            \
    edit;                                \
    reseal(file, size);                  \
    expect_load(file, size, code, what); \
  } while (0)

  CORRUPT("k = 0", put_u32(file + 24, 0), BG_E_HEADER);
  CORRUPT("k = 9", put_u32(file + 24, 9), BG_E_HEADER);
  CORRUPT("k = 32", put_u32(file + 24, 32), BG_E_HEADER);
  CORRUPT("m = 0", put_u64(file + 32, 0), BG_E_HEADER);
  CORRUPT("m not whole blocks", put_u64(file + 32, info.m + 8), BG_E_HEADER);
  CORRUPT("m one block more", put_u64(file + 32, info.m + 256), BG_E_PAYLOAD);
  CORRUPT("m one block less", put_u64(file + 32, info.m - 256), BG_E_PAYLOAD);
  CORRUPT("m too large", put_u64(file + 32, ((uint64_t)1 << 43) + 256), BG_E_HEADER);
  CORRUPT("capacity 0", put_u64(file + 40, 0), BG_E_HEADER);
  CORRUPT("capacity > 2^53", put_u64(file + 40, ((uint64_t)1 << 53) + 1), BG_E_HEADER);
  CORRUPT("error rate 0", put_u64(file + 48, 0), BG_E_HEADER);
  CORRUPT("error rate 1", put_u64(file + 48, 0x3FF0000000000000u), BG_E_HEADER);
  CORRUPT("error rate NaN", put_u64(file + 48, 0x7FF8000000000000u), BG_E_HEADER);
  /* Any bit pattern is a valid payload: a flipped bit with a fresh checksum loads. */
  CORRUPT("payload bit", file[payload_at + 5] ^= 0x10, BG_OK);
  if (info.k == 8 && info.m % 512 == 0)
    CORRUPT("k = 16, same m", put_u32(file + 24, 16), BG_OK);
  else
    CORRUPT("k = 16, m not whole 64-byte blocks", put_u32(file + 24, 16), BG_E_HEADER);
#undef CORRUPT
  /* A stale checksum and every truncation: test_conformance.c. */

  free(file);
  free(good);
  bg_filter_free(f);
}

/* ---- scalar and vector block tests agree ------------------------------------------- */

static void test_paths(void) {
  printf("  vector path: %s\n", bg__blocked_simd_path());
  _Alignas(64) uint8_t block[64], a[64], v[64];
  long disagreements = 0, hits = 0, trials = 0;
  for (uint32_t k = 8; k <= 16; k += 8) {
    for (int round = 0; round < 4000; round++) {
      /* Blocks from empty to nearly full, built by the scalar path. */
      memset(block, 0, sizeof block);
      int keys = round % 80;
      for (int i = 0; i < keys; i++) bg__blocked_block_add(block, k, rng(), 0);
      for (int q = 0; q < 64; q++) {
        uint64_t h2 = rng();
        int s = bg__blocked_block_contains(block, k, h2, 0), vec = bg__blocked_block_contains(block, k, h2, 1);
        disagreements += s != vec;
        hits += s;
        trials++;
      }
      /* The same insert by both paths leaves the same bytes, and the key is then present. */
      uint64_t h2 = rng();
      memcpy(a, block, 64);
      memcpy(v, block, 64);
      bg__blocked_block_add(a, k, h2, 0);
      bg__blocked_block_add(v, k, h2, 1);
      CHECK(memcmp(a, v, 64) == 0);
      CHECK(bg__blocked_block_contains(a, k, h2, 0) == 1 && bg__blocked_block_contains(v, k, h2, 1) == 1);
      /* Words past k are never touched. */
      if (k == 8) CHECK(memcmp(a + 32, block + 32, 32) == 0 && memcmp(v + 32, block + 32, 32) == 0);
    }
  }
  CHECK_MSG(disagreements == 0, "%ld of %ld answers differ between paths", disagreements, trials);
  /* Both outcomes were exercised. */
  CHECK(hits > trials / 20 && hits < trials - trials / 20);

  /* Every bit of every word is reachable (the masks cover bit 31, the float trick's edge). */
  uint8_t seen[64] = {0};
  for (int i = 0; i < 20000; i++) {
    memset(block, 0, sizeof block);
    bg__blocked_block_add(block, 16, rng(), 1);
    for (int j = 0; j < 64; j++) seen[j] |= block[j];
  }
  int all = 1;
  for (int j = 0; j < 64; j++) all &= seen[j] == 0xFF;
  CHECK(all);
}

/*
 * Within one block, a key's k bits are uniform and independent across words:
 * the measured rate of a block holding j keys matches (1 - (31/32)^j)^k.
 */
static void test_block_rate(void) {
  _Alignas(64) uint8_t block[64];
  static const int loads[] = {16, 32, 48};
  for (uint32_t k = 8; k <= 16; k += 8) {
    for (size_t l = 0; l < sizeof loads / sizeof loads[0]; l++) {
      long hits = 0, trials = 0;
      for (int round = 0; round < 2000; round++) {
        memset(block, 0, sizeof block);
        for (int i = 0; i < loads[l]; i++) bg__blocked_block_add(block, k, rng(), 1);
        for (int q = 0; q < 200; q++, trials++) hits += bg__blocked_block_contains(block, k, rng(), 1);
      }
      double expected = pow(1 - pow(31.0 / 32.0, loads[l]), k), measured = (double)hits / (double)trials;
      /* Queries share blocks, so allow for the blocks' own spread: 5% relative plus 5 sigma. */
      double tolerance = 0.05 * expected + 5 * sqrt(expected / (double)trials);
      CHECK_MSG(fabs(measured - expected) <= tolerance, "k=%u, %d keys: measured %.6f, expected %.6f", k,
                loads[l], measured, expected);
    }
  }
}

/*
 * The bytes of a filter do not depend on the build: this file's XXH3-64
 * checksum (the header's) is the same natively, in wasm, scalar or vector.
 */
static void test_golden(void) {
  static const struct {
    double p;
    uint64_t checksum;
  } golden[] = {{0.01, 0x3b3c726e6e31e702u}, {1e-4, 0x0c973f8c1c25f967u}};
  for (size_t g = 0; g < sizeof golden / sizeof golden[0]; g++) {
    bg_filter *f = make(5000, golden[g].p, 0x0123456789abcdefu);
    REQUIRE(f);
    add_range(f, KEY, 0, 5000);
    size_t size;
    uint8_t *file = serialize_copy(f, &size);
    REQUIRE(file);
    uint64_t sum = 0;
    for (int i = 7; i >= 0; i--) sum = (sum << 8) | file[8 + i];
    printf("  golden p=%g: %zu bytes, checksum 0x%016" PRIx64 "\n", golden[g].p, size, sum);
    CHECK_EQ_U64(sum, golden[g].checksum);
    free(file);
    bg_filter_free(f);
  }
}

int main(void) {
  test_sizing();
  test_paths();
  test_block_rate();
  test_golden();
  test_describe();
  test_corrupt();
  check_rate(0.01);
  check_rate(0.001);
  check_rate(0.0001);
  return test_report("test_blocked");
}
