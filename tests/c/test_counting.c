/*
 * test_counting.c — the counting Bloom filter (kind 5): its sizing and the
 * error rate at capacity, removals of other items without false negatives,
 * removal of an item never added, saturation (in memory, through a merge and
 * through a file), export to a classic filter, and the exact codes for
 * corrupt files. Public API only. Batches, round trips (removals on loaded
 * filters included), clear, merge rules and corruption in general are
 * test_conformance.c's.
 */
#include <math.h>
#include <stdlib.h>

#include "test_filters.h"

#define N_KEYS 200000
#define N_PROBES 200000

static bg_filter *make(uint64_t capacity, double p, uint64_t seed) {
  bg_filter *f = NULL;
  bg_status rc = bg_filter_create(BG_KIND_COUNTING, capacity, p, seed, BG_KEY_UTF8, &f);
  CHECK_STATUS(rc, BG_OK);
  return rc == BG_OK ? f : NULL;
}

/* How many of prefix<first..first+count) the filter reports present. */
static long count_present(const bg_filter *f, const char *prefix, long first, long count) {
  char key[48];
  long hits = 0;
  for (long i = first; i < first + count; i++) {
    size_t len = key_name(key, sizeof key, prefix, i);
    hits += bg_filter_contains(f, key, len) == 1;
  }
  return hits;
}

/* Payload bytes of two filters (files without metadata: the payload starts at 128). */
static int same_payload(const bg_filter *a, const bg_filter *b) {
  size_t sa, sb;
  uint8_t *fa = serialize_copy(a, &sa), *fb = serialize_copy(b, &sb);
  int same = fa && fb && sa == sb && memcmp(fa + 128, fb + 128, sa - 128) == 0;
  free(fa);
  free(fb);
  return same;
}

static unsigned counter_in(const uint8_t *payload, uint64_t i) {
  return (payload[i >> 1] >> ((i & 1) * 4)) & 15u;
}

/* The error rate at capacity, with no false negatives, at the two target rates. */
static void test_error_rate(double p) {
  bg_filter *f = make(N_KEYS, p, 0);
  REQUIRE(f != NULL);
  add_range(f, "key_", 0, N_KEYS);
  long missing = N_KEYS - count_present(f, "key_", 0, N_KEYS);
  CHECK_MSG(missing == 0, "%ld false negatives at p=%g", missing, p);
  long hits = count_present(f, "key_", N_KEYS, N_PROBES);
  double measured = (double)hits / N_PROBES;
  double sigma = sqrt(p * (1 - p) / N_PROBES);

  bg_info info;
  bg_filter_info(f, &info);
  uint64_t m;
  uint32_t k;
  CHECK_STATUS(bg_size_for(N_KEYS, p, &m, &k), BG_OK);
  /* Sized exactly like the classic kind; the payload is 4 bits per counter. */
  CHECK_EQ_U64(info.kind, BG_KIND_COUNTING);
  CHECK_EQ_U64(info.m, m);
  CHECK_EQ_U64(info.k, k);
  CHECK_EQ_U64(info.payload_bytes, (m + 1) / 2);
  CHECK_EQ_U64(info.count, N_KEYS);
  CHECK_NEAR(info.theoretical_error_rate, bg_theoretical_error_rate(m, k, N_KEYS), 1e-12);
  CHECK_NEAR(info.fill_ratio, (double)info.bits_set / (double)m, 1e-12);
  CHECK_NEAR(info.estimated_items, (double)N_KEYS, 0.01);
  CHECK_NEAR(info.estimated_error_rate, info.theoretical_error_rate, 0.03);
  printf("counting p=%g: m=%" PRIu64 " k=%u bits/key=%.2f (state %.2f) measured=%.5f target+4sigma=%.5f\n", p,
         info.m, info.k, (double)info.m / N_KEYS, 8.0 * (double)info.payload_bytes / N_KEYS, measured,
         p + 4 * sigma);
  CHECK_MSG(measured <= p + 4 * sigma, "measured %.5f > %.5f + 4 * %.5f", measured, p, sigma);
  bg_filter_free(f);
}

/*
 * Removing other items never makes a member disappear. A and B are added
 * interleaved; then B is removed while more A items arrive. Without
 * saturation the counters end where an A-only filter's are, byte for byte.
 */
static void test_remove_others(void) {
  enum { N = 20000 };
  bg_filter *f = make(3 * N, 0.01, 3), *only_a = make(3 * N, 0.01, 3);
  REQUIRE(f && only_a);
  char key[48];
  for (long i = 0; i < N; i++) {
    size_t len = key_name(key, sizeof key, "A", i);
    CHECK_STATUS(bg_filter_add(f, key, len), BG_OK);
    len = key_name(key, sizeof key, "B", i);
    CHECK_STATUS(bg_filter_add(f, key, len), BG_OK);
  }
  for (long i = 0; i < N; i++) {
    size_t len = key_name(key, sizeof key, "B", i);
    CHECK_STATUS_AT(bg_filter_remove(f, key, len), BG_OK, "%s", key);
    len = key_name(key, sizeof key, "A", N + i);
    CHECK_STATUS(bg_filter_add(f, key, len), BG_OK);
    /* Every A added so far is still there, checked as we go for a sample. */
    if (i % 1000 == 0) CHECK_EQ_U64(count_present(f, "A", 0, N + i + 1), N + i + 1);
  }
  CHECK_EQ_U64(count_present(f, "A", 0, 2 * N), 2 * N);
  long b_left = count_present(f, "B", 0, N);
  CHECK_MSG(b_left < N / 20, "%ld of %d removed items still reported", b_left, N);
  bg_info info;
  bg_filter_info(f, &info);
  CHECK_EQ_U64(info.count, 2 * N);

  add_range(only_a, "A", 0, 2 * N);
  CHECK(same_file(f, only_a));
  bg_filter_free(f);
  bg_filter_free(only_a);
}

/* Removing an item that was never added: E_NOT_FOUND, and not one byte changes. */
static void test_remove_absent(void) {
  bg_filter *f = make(1000, 0.01, 11);
  REQUIRE(f != NULL);
  CHECK_STATUS(bg_filter_remove(f, "nothing", 7), BG_E_NOT_FOUND);
  add_range(f, "k", 0, 1000);
  size_t before_size, after_size;
  uint8_t *before = serialize_copy(f, &before_size);
  REQUIRE(before != NULL);
  char key[48];
  long tried = 0;
  for (long i = 0; i < 2000; i++) {
    size_t len = key_name(key, sizeof key, "never", i);
    if (bg_filter_contains(f, key, len) != 0) continue; /* a false positive would pass the check */
    CHECK_STATUS_AT(bg_filter_remove(f, key, len), BG_E_NOT_FOUND, "%s", key);
    CHECK_STATUS(bg_filter_remove_key(f, key, len), BG_E_NOT_FOUND);
    tried++;
  }
  CHECK(tried > 1900);
  uint8_t *after = serialize_copy(f, &after_size);
  REQUIRE(after != NULL);
  CHECK(before_size == after_size && memcmp(before, after, before_size) == 0);
  CHECK_EQ_U64(count_present(f, "k", 0, 1000), 1000);
  free(before);
  free(after);
  bg_filter_free(f);
}

/*
 * Counting without saturation: an item added three times is removed after
 * three removals. Saturation: after 20 adds its counters stop at 15 and no
 * longer know how many adds they stand for, so removals leave them at 15
 * and the item stays present — a false positive at worst, never a false
 * negative for some other item sharing those counters.
 */
static void test_counts_and_saturation(void) {
  bg_filter *f = make(1000, 0.01, 5);
  REQUIRE(f != NULL);
  for (int i = 0; i < 3; i++) CHECK_STATUS(bg_filter_add(f, "thrice", 6), BG_OK);
  for (int i = 0; i < 3; i++) {
    CHECK(bg_filter_contains(f, "thrice", 6) == 1);
    CHECK_STATUS(bg_filter_remove(f, "thrice", 6), BG_OK);
  }
  CHECK(bg_filter_contains(f, "thrice", 6) == 0);
  CHECK_STATUS(bg_filter_remove(f, "thrice", 6), BG_E_NOT_FOUND);
  bg_info info;
  bg_filter_info(f, &info);
  CHECK_EQ_U64(info.bits_set, 0);
  CHECK_EQ_U64(info.count, 0);

  for (int i = 0; i < 20; i++) CHECK_STATUS(bg_filter_add(f, "often", 5), BG_OK);
  size_t size;
  uint8_t *file = serialize_copy(f, &size);
  REQUIRE(file != NULL);
  uint64_t pos[BG_MAX_K];
  bg_filter_info(f, &info);
  bg_positions(bg_hash("often", 5, 5), info.m, info.k, pos);
  for (uint32_t i = 0; i < info.k; i++) CHECK_EQ_U64(counter_in(file + 128, pos[i]), 15);
  free(file);
  for (int i = 0; i < 20; i++) CHECK_STATUS_AT(bg_filter_remove(f, "often", 5), BG_OK, "removal %d", i);
  CHECK(bg_filter_contains(f, "often", 5) == 1);
  file = serialize_copy(f, &size);
  REQUIRE(file != NULL);
  for (uint32_t i = 0; i < info.k; i++) CHECK_EQ_U64(counter_in(file + 128, pos[i]), 15);
  free(file);
  bg_filter_free(f);
}

/* The published classic filter answers like the counting one and equals a classic built directly. */
static void test_to_classic(void) {
  enum { N = 50000, PROBES = 100000 };
  bg_filter *f = make(N, 0.01, 99), *direct = NULL, *exported = NULL;
  REQUIRE(f != NULL);
  CHECK_STATUS(bg_filter_create(BG_KIND_CLASSIC, N, 0.01, 99, BG_KEY_UTF8, &direct), BG_OK);
  REQUIRE(direct != NULL);
  CHECK_STATUS(bg_filter_set_metadata(f, "{\"list\":\"x\"}", 12), BG_OK);
  CHECK_STATUS(bg_filter_set_metadata(direct, "{\"list\":\"x\"}", 12), BG_OK);
  /* Add some extra items to the counting filter and remove them again: the export must not see them. */
  add_range(f, "t", 0, N);
  add_range(f, "gone", 0, 1000);
  char key[48];
  for (long i = 0; i < 1000; i++) {
    size_t len = key_name(key, sizeof key, "gone", i);
    CHECK_STATUS(bg_filter_remove(f, key, len), BG_OK);
  }
  add_range(direct, "t", 0, N);
  CHECK_STATUS(bg_filter_to_classic(f, &exported), BG_OK);
  REQUIRE(exported != NULL);

  bg_info ci, ei, di;
  bg_filter_info(f, &ci);
  bg_filter_info(exported, &ei);
  bg_filter_info(direct, &di);
  CHECK_EQ_U64(ei.kind, BG_KIND_CLASSIC);
  CHECK_EQ_U64(ei.m, ci.m);
  CHECK_EQ_U64(ei.k, ci.k);
  CHECK_EQ_U64(ei.seed, 99);
  CHECK_EQ_U64(ei.bits_set, ci.bits_set); /* set bits = non-zero counters */
  CHECK_EQ_U64(ei.count, N);
  CHECK(same_payload(exported, direct));
  CHECK(same_file(exported, direct)); /* header and metadata too */

  long differ = 0;
  for (long i = 0; i < PROBES; i++) {
    size_t len = key_name(key, sizeof key, "t", i); /* half members, half not */
    int a = bg_filter_contains(f, key, len), b = bg_filter_contains(exported, key, len);
    differ += a != b || a < 0;
  }
  CHECK_EQ_U64(differ, 0);
  CHECK_EQ_U64(count_present(exported, "t", 0, N), N);

  /* Only counting filters export. */
  bg_filter *none = (bg_filter *)1;
  CHECK_STATUS(bg_filter_to_classic(direct, &none), BG_E_UNSUPPORTED);
  CHECK(none == NULL);
  CHECK_STATUS(bg_filter_to_classic(NULL, &none), BG_E_ARG);
  bg_filter_free(exported);
  bg_filter_free(direct);
  bg_filter_free(f);
}

/* Merge adds counters (saturating at 15); what must match is test_conformance.c's. */
static void test_merge(void) {
  enum { N = 10000 };
  bg_filter *a = make(2 * N, 0.01, 1), *b = make(2 * N, 0.01, 1), *both = make(2 * N, 0.01, 1);
  REQUIRE(a && b && both);
  add_range(a, "m", 0, N);
  add_range(b, "m", N, N);
  add_range(both, "m", 0, 2 * N);
  CHECK_STATUS(bg_filter_merge(a, b), BG_OK);
  CHECK(same_file(a, both));
  /* A merged item can be removed like any other. */
  CHECK_STATUS(bg_filter_remove(a, "m15000", 6), BG_OK);
  CHECK_STATUS(bg_filter_remove(both, "m15000", 6), BG_OK);
  CHECK(same_file(a, both));

  /* Saturation: 10 + 10 adds of one key stop at 15. */
  bg_filter *x = make(100, 0.01, 2), *y = make(100, 0.01, 2);
  REQUIRE(x && y);
  for (int i = 0; i < 10; i++) {
    CHECK_STATUS(bg_filter_add(x, "sat", 3), BG_OK);
    CHECK_STATUS(bg_filter_add(y, "sat", 3), BG_OK);
  }
  CHECK_STATUS(bg_filter_merge(x, y), BG_OK);
  size_t size;
  uint8_t *file = serialize_copy(x, &size);
  REQUIRE(file != NULL);
  bg_info info;
  bg_filter_info(x, &info);
  CHECK_EQ_U64(info.count, 20);
  uint64_t pos[BG_MAX_K];
  bg_positions(bg_hash("sat", 3, 2), info.m, info.k, pos);
  for (uint32_t i = 0; i < info.k; i++) CHECK_EQ_U64(counter_in(file + 128, pos[i]), 15);
  free(file);
  bg_filter_free(x);
  bg_filter_free(y);
  bg_filter_free(a);
  bg_filter_free(b);
  bg_filter_free(both);
}

/* Saturated counters through a file: loaded in place they stay at 15 under removals, like the original's. */
static void test_saturated_round_trip(void) {
  bg_filter *f = make(1000, 0.001, 1234);
  REQUIRE(f != NULL);
  add_range(f, "r", 0, 1000);
  for (int i = 0; i < 20; i++) CHECK_STATUS(bg_filter_add(f, "many", 4), BG_OK);
  size_t size;
  uint8_t *file = serialize_copy(f, &size);
  REQUIRE(file != NULL);
  bg_filter *owned = NULL;
  CHECK_STATUS(bg_filter_deserialize_owned(file, size, &owned), BG_OK);
  REQUIRE(owned != NULL);
  for (int i = 0; i < 20; i++) {
    CHECK_STATUS(bg_filter_remove(f, "many", 4), BG_OK);
    CHECK_STATUS(bg_filter_remove(owned, "many", 4), BG_OK);
  }
  CHECK(bg_filter_contains(owned, "many", 4) == 1);
  CHECK(same_file(f, owned));
  bg_filter_free(owned); /* frees file */
  bg_filter_free(f);
}

/* Edit a file's field, restamp the checksum, and expect a code from the reader. */
static void expect_code(const uint8_t *file, size_t size, bg_status code, const char *what) {
  bg_filter *f = (bg_filter *)1;
  CHECK_STATUS_AT(bg_filter_deserialize(file, size, &f), code, "%s", what);
  CHECK(code == BG_OK ? f != NULL : f == NULL);
  if (code == BG_OK) bg_filter_free(f);
  CHECK_STATUS_AT(bg_file_validate(file, size, NULL), code, "%s (validate)", what);
  uint8_t *buffer = malloc(size);
  if (!buffer) return;
  memcpy(buffer, file, size);
  f = (bg_filter *)1;
  CHECK_STATUS_AT(bg_filter_deserialize_owned(buffer, size, &f), code, "%s (owned)", what);
  if (code == BG_OK) {
    CHECK(f != NULL);
    bg_filter_free(f); /* it owns the buffer now */
  } else {
    CHECK(f == NULL);
    free(buffer);
  }
}

static void test_corrupt(void) {
  /* An odd m, so the payload ends in an unused nibble. */
  uint64_t capacity = 100, m = 0;
  uint32_t k;
  for (; capacity < 200; capacity++) {
    CHECK_STATUS(bg_size_for(capacity, 0.01, &m, &k), BG_OK);
    if (m & 1) break;
  }
  REQUIRE(m & 1);
  bg_filter *f = make(capacity, 0.01, 8);
  REQUIRE(f != NULL);
  add_range(f, "c", 0, (long)capacity);
  size_t size;
  uint8_t *good = serialize_copy(f, &size);
  REQUIRE(good != NULL);
  CHECK_EQ_U64(size, 128 + (m + 1) / 2);
  uint8_t *file = malloc(size + 64);
  REQUIRE(file != NULL);
  expect_code(good, size, BG_OK, "untouched");

#define RESET() memcpy(file, good, size)
  RESET();
  file[size - 1] |= 0x10; /* the nibble past m */
  reseal(file, size);
  expect_code(file, size, BG_E_PAYLOAD, "unused nibble set");

  RESET();
  file[size - 1] ^= 0x01; /* a counter changed: only the checksum could tell */
  reseal(file, size);
  expect_code(file, size, BG_OK, "counter changed, new checksum");

  RESET();
  put_u64(file + 32, m + 1); /* m even now: still ceil((m+1)/2) bytes... */
  reseal(file, size);
  expect_code(file, size, BG_OK, "m + 1 fits the same payload");
  put_u64(file + 32, m + 2); /* ...but m + 2 needs one more byte */
  reseal(file, size);
  expect_code(file, size, BG_E_PAYLOAD, "m too large for the payload");
  put_u64(file + 32, 0);
  reseal(file, size);
  expect_code(file, size, BG_E_HEADER, "m = 0");
  put_u64(file + 32, ((uint64_t)1 << 41) + 1);
  reseal(file, size);
  expect_code(file, size, BG_E_HEADER, "m beyond 2^41 counters");

  RESET();
  put_u32(file + 24, 0);
  reseal(file, size);
  expect_code(file, size, BG_E_HEADER, "k = 0");
  put_u32(file + 24, 65);
  reseal(file, size);
  expect_code(file, size, BG_E_HEADER, "k = 65");

  RESET();
  put_u64(file + 40, 0);
  reseal(file, size);
  expect_code(file, size, BG_E_HEADER, "capacity 0");

  RESET();
  put_u64(file + 48, 0x7FF8000000000000ull); /* NaN */
  reseal(file, size);
  expect_code(file, size, BG_E_HEADER, "error rate NaN");
  put_u64(file + 48, 0x3FF0000000000000ull); /* 1.0 */
  reseal(file, size);
  expect_code(file, size, BG_E_HEADER, "error rate 1");

  RESET();
  put_u64(file + 104, (m + 1) / 2 - 1); /* payload one byte short, file cut to match */
  reseal(file, size - 1);
  expect_code(file, size - 1, BG_E_PAYLOAD, "payload one byte short");

  RESET();
  memset(file + size, 0, 64);
  put_u64(file + 104, (m + 1) / 2 + 1); /* one byte long */
  reseal(file, size + 1);
  expect_code(file, size + 1, BG_E_PAYLOAD, "payload one byte long");

  /* A stale checksum, truncations and unknown kinds: test_conformance.c. */
#undef RESET
  free(file);
  free(good);
  bg_filter_free(f);
}

static void test_create_and_keys(void) {
  bg_filter *f = NULL;
  CHECK_STATUS(bg_filter_create(BG_KIND_COUNTING, 0, 0.01, 0, BG_KEY_UTF8, &f), BG_E_RANGE);
  CHECK_STATUS(bg_filter_create(BG_KIND_COUNTING, 10, 1.0, 0, BG_KEY_UTF8, &f), BG_E_RANGE);
  /* 2^41 counters at most (4 bits each fill the payload limit): 2^38 items at 1% need ~2^41.3. */
  CHECK_STATUS(bg_filter_create(BG_KIND_COUNTING, (uint64_t)1 << 38, 0.01, 0, BG_KEY_UTF8, &f), BG_E_TOO_LARGE);
  CHECK(f == NULL);
  CHECK(f == NULL);
  CHECK(strcmp(bg_kind_name(BG_KIND_COUNTING), "counting") == 0);

  /* SHA-1 keys: items and their digests are the same keys. */
  CHECK_STATUS(bg_filter_create(BG_KIND_COUNTING, 100, 0.01, 0, BG_KEY_SHA1, &f), BG_OK);
  REQUIRE(f != NULL);
  uint8_t digest[20];
  bg_sha1("password", 8, digest);
  CHECK_STATUS(bg_filter_add(f, "password", 8), BG_OK);
  CHECK(bg_filter_contains_key(f, digest, 20) == 1);
  CHECK_STATUS(bg_filter_remove_key(f, digest, 20), BG_OK);
  CHECK(bg_filter_contains(f, "password", 8) == 0);
  CHECK_STATUS(bg_filter_remove(f, "password", 8), BG_E_NOT_FOUND);
  CHECK_STATUS(bg_filter_remove(NULL, "x", 1), BG_E_ARG);
  CHECK_STATUS(bg_filter_remove(f, NULL, 1), BG_E_ARG);
  bg_filter_free(f);
}

int main(void) {
  test_error_rate(0.01);
  test_error_rate(0.001);
  test_remove_others();
  test_remove_absent();
  test_counts_and_saturation();
  test_to_classic();
  test_merge();
  test_saturated_round_trip();
  test_corrupt();
  test_create_and_keys();
  return test_report("test_counting");
}
