/*
 * test_cuckoo.c — the cuckoo filter (kind 7): its geometry and the error
 * rate at capacity, removals of other items without false negatives, removal
 * of an item never added, inserts into a full filter (E_FULL, the file
 * unchanged, nothing lost), duplicates, fingerprint widths from 4 to 32 bits
 * (each through a file), and the exact codes for corrupt files. Public API
 * only. Batches, round trips (removals and relocating inserts on loaded
 * filters included), clear, merge and corruption in general are
 * test_conformance.c's.
 */
#include <math.h>
#include <stdlib.h>

#include "test_filters.h"

#define N_KEYS 200000
#define N_PROBES 200000

static bg_filter *make(uint64_t capacity, double p, uint64_t seed) {
  bg_filter *f = NULL;
  bg_status rc = bg_filter_create(BG_KIND_CUCKOO, capacity, p, seed, BG_KEY_UTF8, &f);
  CHECK_STATUS(rc, BG_OK);
  return rc == BG_OK ? f : NULL;
}

static long count_present(const bg_filter *f, const char *prefix, long first, long count) {
  char key[48];
  long hits = 0;
  for (long i = first; i < first + count; i++) {
    size_t len = key_name(key, sizeof key, prefix, i);
    hits += bg_filter_contains(f, key, len) == 1;
  }
  return hits;
}

/*
 * The geometry the kind documents: B = ceil(5n / 19); f = the smallest width
 * with 8 / 2^f <= p and B <= 2^(4f).
 */
static uint64_t expected_buckets(uint64_t n) { return (5 * n + 18) / 19; }
/* A semi-sorted bucket: a 12-bit index of the four sorted high nibbles, then four (f - 4)-bit low parts. */
static uint64_t bucket_bits(uint32_t f) { return 4 * (uint64_t)f - 4; }
static uint32_t expected_bits(double p, uint64_t n) {
  uint32_t f = 4;
  while (8.0 / ldexp(1.0, (int)f) > p || ldexp(1.0, (int)(4 * f)) < (double)expected_buckets(n)) f++;
  return f;
}

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
  uint32_t bits = expected_bits(p, N_KEYS);
  uint64_t buckets = expected_buckets(N_KEYS);
  CHECK_EQ_U64(info.kind, BG_KIND_CUCKOO);
  CHECK_EQ_U64(info.m, buckets * bucket_bits(bits));
  CHECK_EQ_U64(info.k, 2);
  CHECK_EQ_U64(info.payload_bytes, 16 + (buckets * bucket_bits(bits) + 7) / 8);
  CHECK_EQ_U64(info.count, N_KEYS);
  CHECK_EQ_U64(info.bits_set, N_KEYS); /* one occupied slot per item */
  CHECK_NEAR(info.fill_ratio, (double)N_KEYS / (4.0 * (double)buckets), 1e-12);
  CHECK(info.fill_ratio <= 0.95);
  CHECK_NEAR(info.estimated_items, (double)N_KEYS, 1e-12);
  /* What the kind predicts: 8 * load fingerprints compared, each equal with probability 1/(2^f - 1). */
  double predicted = 1.0 - pow(1.0 - 1.0 / (ldexp(1.0, (int)bits) - 1.0), 8.0 * info.fill_ratio);
  CHECK_NEAR(info.theoretical_error_rate, predicted, 1e-9);
  CHECK_NEAR(info.estimated_error_rate, predicted, 1e-9);
  CHECK(info.theoretical_error_rate <= p);
  double predicted_sigma = sqrt(predicted * (1 - predicted) / N_PROBES);
  printf("cuckoo p=%g: f=%u buckets=%" PRIu64 " bits/key=%.2f (file %.2f) measured=%.5f predicted=%.5f "
         "target+4sigma=%.5f\n",
         p, bits, buckets, (double)info.m / N_KEYS, 8.0 * (double)info.payload_bytes / N_KEYS, measured,
         predicted, p + 4 * sigma);
  CHECK_MSG(measured <= p + 4 * sigma, "measured %.5f > %.5f + 4 * %.5f", measured, p, sigma);
  CHECK_MSG(fabs(measured - predicted) <= 4 * predicted_sigma, "measured %.5f vs predicted %.5f", measured,
            predicted);
  bg_filter_free(f);
}

/* A and B added interleaved, then B removed while more A arrive: every A stays. */
static void test_remove_others(void) {
  enum { N = 30000 };
  bg_filter *f = make(3 * N, 0.001, 3);
  REQUIRE(f != NULL);
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
    /* The additions after removals reuse the freed slots and relocate others (load ~89%). */
    len = key_name(key, sizeof key, "A", N + i);
    CHECK_STATUS(bg_filter_add(f, key, len), BG_OK);
    if (i % 1000 == 0) CHECK_EQ_U64(count_present(f, "A", 0, N + i + 1), N + i + 1);
  }
  CHECK_EQ_U64(count_present(f, "A", 0, 2 * N), 2 * N);
  long b_left = count_present(f, "B", 0, N);
  CHECK_MSG(b_left < N / 100, "%ld of %d removed items still reported", b_left, N);
  bg_info info;
  bg_filter_info(f, &info);
  CHECK_EQ_U64(info.count, 2 * N);
  CHECK_EQ_U64(info.bits_set, 2 * N);
  bg_filter_free(f);
}

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
    if (bg_filter_contains(f, key, len) != 0) continue; /* a false positive removes a matching fingerprint */
    CHECK_STATUS_AT(bg_filter_remove(f, key, len), BG_E_NOT_FOUND, "%s", key);
    CHECK_STATUS(bg_filter_remove_key(f, key, len), BG_E_NOT_FOUND);
    tried++;
  }
  CHECK(tried > 1950);
  uint8_t *after = serialize_copy(f, &after_size);
  REQUIRE(after != NULL);
  CHECK(before_size == after_size && memcmp(before, after, before_size) == 0);
  CHECK_EQ_U64(count_present(f, "k", 0, 1000), 1000);
  free(before);
  free(after);
  bg_filter_free(f);
}

/*
 * Past capacity the table fills up. Every insert that cannot be placed
 * returns E_FULL and leaves the file byte-identical; every insert that
 * returned OK stays present.
 */
static void test_full(void) {
  enum { CAPACITY = 5000, ATTEMPTS = 8000 };
  bg_filter *f = make(CAPACITY, 0.01, 21);
  REQUIRE(f != NULL);
  uint8_t *accepted = calloc(ATTEMPTS, 1);
  REQUIRE(accepted != NULL);
  char key[48];
  long ok = 0, full = 0, first_full = -1, unchanged = 0;
  for (long i = 0; i < ATTEMPTS; i++) {
    size_t len = key_name(key, sizeof key, "f", i);
    size_t before_size;
    uint8_t *before = first_full >= 0 ? serialize_copy(f, &before_size) : NULL;
    bg_status rc = bg_filter_add(f, key, len);
    if (rc == BG_OK) {
      accepted[i] = 1;
      ok++;
    } else {
      CHECK_STATUS_AT(rc, BG_E_FULL, "%s", key);
      full++;
      if (first_full < 0) {
        first_full = i;
        /* The first failure: rebuild the filter as it was before it and compare. */
        bg_filter *replay = make(CAPACITY, 0.01, 21);
        REQUIRE(replay != NULL);
        for (long j = 0; j < i; j++) {
          size_t l = key_name(key, sizeof key, "f", j);
          CHECK_STATUS(bg_filter_add(replay, key, l), BG_OK);
        }
        CHECK(same_file(f, replay));
        bg_filter_free(replay);
      }
    }
    if (before) {
      if (rc != BG_OK) {
        size_t after_size;
        uint8_t *after = serialize_copy(f, &after_size);
        CHECK(after && after_size == before_size && memcmp(before, after, before_size) == 0);
        unchanged += after && memcmp(before, after, before_size) == 0;
        free(after);
      }
      free(before);
    }
  }
  bg_info info;
  bg_filter_info(f, &info);
  printf("cuckoo full: capacity %d, first E_FULL at insert %ld (%.3f x capacity), %ld accepted, %ld refused, "
         "final load %.4f\n",
         CAPACITY, first_full, (double)first_full / CAPACITY, ok, full, info.fill_ratio);
  CHECK(first_full >= CAPACITY); /* capacity is always reachable */
  CHECK(full > 100);
  CHECK_EQ_U64(unchanged, full - 1); /* every refusal after the first compared against its own snapshot */
  CHECK_EQ_U64(info.count, ok);
  CHECK_EQ_U64(info.bits_set, ok);
  CHECK(info.fill_ratio > 0.96);
  long lost = 0;
  for (long i = 0; i < ATTEMPTS; i++) {
    if (!accepted[i]) continue;
    size_t len = key_name(key, sizeof key, "f", i);
    lost += bg_filter_contains(f, key, len) != 1;
  }
  CHECK_EQ_U64(lost, 0);

  /* Removing makes room again. */
  for (long i = 0; i < 100; i++) {
    size_t len = key_name(key, sizeof key, "f", i);
    CHECK_STATUS(bg_filter_remove(f, key, len), BG_OK);
  }
  long again = 0;
  for (long i = 0; i < 100; i++) {
    size_t len = key_name(key, sizeof key, "again", i);
    again += bg_filter_add(f, key, len) == BG_OK;
  }
  CHECK(again > 50);
  free(accepted);
  bg_filter_free(f);
}

/* One key's two buckets hold 8 copies; the 9th is refused, and copies come out one by one. */
static void test_duplicates(void) {
  bg_filter *f = make(100000, 0.01, 4);
  REQUIRE(f != NULL);
  for (int i = 0; i < 8; i++) CHECK_STATUS_AT(bg_filter_add(f, "dup", 3), BG_OK, "copy %d", i + 1);
  size_t before_size, after_size;
  uint8_t *before = serialize_copy(f, &before_size);
  REQUIRE(before != NULL);
  CHECK_STATUS(bg_filter_add(f, "dup", 3), BG_E_FULL);
  uint8_t *after = serialize_copy(f, &after_size);
  REQUIRE(after != NULL);
  CHECK(before_size == after_size && memcmp(before, after, before_size) == 0);
  free(before);
  free(after);
  bg_info info;
  bg_filter_info(f, &info);
  CHECK_EQ_U64(info.count, 8);
  for (int i = 0; i < 8; i++) {
    CHECK(bg_filter_contains(f, "dup", 3) == 1);
    CHECK_STATUS_AT(bg_filter_remove(f, "dup", 3), BG_OK, "removal %d", i + 1);
  }
  CHECK(bg_filter_contains(f, "dup", 3) == 0);
  CHECK_STATUS(bg_filter_remove(f, "dup", 3), BG_E_NOT_FOUND);
  bg_filter_info(f, &info);
  CHECK_EQ_U64(info.count, 0);
  CHECK_EQ_U64(info.bits_set, 0);
  bg_filter_free(f);
}

/* Every width works the same way: 4 (no low part), 5, 10, 16, 17 and 32 bits (28-bit low parts). */
static void test_widths(void) {
  static const struct {
    double p;
    uint32_t bits;
  } cases[] = {{0.9, 4}, {0.5, 4}, {0.3, 5}, {0.01, 10}, {0.0001, 17}, {1.25e-4, 16}, {2e-9, 32}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    enum { N = 3000 };
    bg_filter *f = make(N, cases[c].p, 77);
    REQUIRE(f != NULL);
    bg_info info;
    bg_filter_info(f, &info);
    CHECK_EQ_U64(expected_bits(cases[c].p, N), cases[c].bits);
    CHECK_EQ_U64(info.m, expected_buckets(N) * bucket_bits(cases[c].bits));
    add_range(f, "w", 0, N);
    CHECK_EQ_U64(count_present(f, "w", 0, N), N);
    long hits = count_present(f, "x", 0, 20000);
    double measured = hits / 20000.0, sigma = sqrt(cases[c].p * (1 - cases[c].p) / 20000);
    CHECK_MSG(measured <= cases[c].p + 4 * sigma, "p=%g measured %.5f", cases[c].p, measured);
    /* Remove the even keys; the odd ones stay. */
    char key[48];
    for (long i = 0; i < N; i += 2) {
      size_t len = key_name(key, sizeof key, "w", i);
      CHECK_STATUS(bg_filter_remove(f, key, len), BG_OK);
    }
    long odd = 0;
    for (long i = 1; i < N; i += 2) {
      size_t len = key_name(key, sizeof key, "w", i);
      odd += bg_filter_contains(f, key, len) == 1;
    }
    CHECK_EQ_U64(odd, N / 2);
    bg_filter_info(f, &info);
    CHECK_EQ_U64(info.bits_set, N / 2);
    /* Round trip at this width. */
    size_t size;
    uint8_t *file = serialize_copy(f, &size);
    REQUIRE(file != NULL);
    bg_filter *g = NULL;
    CHECK_STATUS(bg_filter_deserialize(file, size, &g), BG_OK);
    CHECK(g && same_file(f, g));
    bg_info loaded;
    bg_filter_info(g, &loaded);
    CHECK_EQ_U64(loaded.bits_set, N / 2); /* occupied slots recounted from the table */
    bg_filter_free(g);
    free(file);
    bg_filter_free(f);
  }
  /* Large tables get at least ceil(log2(B) / 4) bits: 4 bits up to 65,536 buckets, then 5. */
  static const struct {
    uint64_t capacity;
    double p;
    uint64_t buckets;
    uint32_t bits;
  } floors[] = {{249000, 0.5, 65527, 4},
                {249040, 0.5, 65537, 5},
                {1000000, 0.5, 263158, 5},
                {1000000, 0.3, 263158, 5},
                {1000000, 0.2, 263158, 6}};
  for (size_t c = 0; c < sizeof floors / sizeof floors[0]; c++) {
    bg_filter *g = make(floors[c].capacity, floors[c].p, 0);
    REQUIRE(g != NULL);
    bg_info info;
    bg_filter_info(g, &info);
    CHECK_EQ_U64(expected_buckets(floors[c].capacity), floors[c].buckets);
    CHECK_EQ_U64(expected_bits(floors[c].p, floors[c].capacity), floors[c].bits);
    CHECK_EQ_U64(info.m, floors[c].buckets * bucket_bits(floors[c].bits));
    bg_filter_free(g);
  }

  /* Rates below 8 / 2^32 would need fingerprints wider than 32 bits. */
  bg_filter *f = NULL;
  CHECK_STATUS(bg_filter_create(BG_KIND_CUCKOO, 100, 1e-9, 0, BG_KEY_UTF8, &f), BG_E_RANGE);
  CHECK(f == NULL);
  /* 2^40 items at 1%: 4 * B * f = 1.1e13 bits, past BG_MAX_BITS (8.8e12). */
  CHECK_STATUS(bg_filter_create(BG_KIND_CUCKOO, (uint64_t)1 << 40, 0.01, 0, BG_KEY_UTF8, &f), BG_E_TOO_LARGE);
  CHECK(f == NULL);

  /* Tiny filters: one bucket. */
  f = make(1, 0.01, 0);
  REQUIRE(f != NULL);
  for (int i = 0; i < 4; i++) CHECK_STATUS(bg_filter_add(f, &i, sizeof i), BG_OK);
  for (int i = 0; i < 4; i++) CHECK(bg_filter_contains(f, &i, sizeof i) == 1);
  int fifth = 4;
  CHECK_STATUS(bg_filter_add(f, &fifth, sizeof fifth), BG_E_FULL);
  bg_filter_free(f);
}

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
    bg_filter_free(f);
  } else {
    CHECK(f == NULL);
    free(buffer);
  }
}

static void test_corrupt(void) {
  /* capacity 1 at p = 0.01: one bucket of 10-bit fingerprints, 12 + 4 * 6 = 36 bits: the last byte has 4 unused bits. */
  bg_filter *f = make(1, 0.01, 8);
  REQUIRE(f != NULL);
  CHECK_STATUS(bg_filter_add(f, "one", 3), BG_OK);
  CHECK_STATUS(bg_filter_add(f, "two", 3), BG_OK);
  size_t size;
  uint8_t *good = serialize_copy(f, &size);
  REQUIRE(good != NULL);
  CHECK_EQ_U64(size, 128 + 16 + 5);
  const uint8_t *payload = good + 128;
  CHECK_EQ_U64(payload[0], 1);  /* bucket count, u64 */
  CHECK_EQ_U64(payload[8], 10); /* fingerprint bits */
  CHECK_EQ_U64(payload[9], 4);  /* slots per bucket */
  CHECK_EQ_U64(payload[10], 1); /* bucket encoding: semi-sorted */
  uint8_t *file = malloc(size + 64);
  REQUIRE(file != NULL);
  expect_code(good, size, BG_OK, "untouched");

#define RESET() memcpy(file, good, size)
  RESET();
  file[size - 1] |= 0x10; /* bit 36 of the table: past the last bucket */
  reseal(file, size);
  expect_code(file, size, BG_E_PAYLOAD, "bits past the last bucket");

  RESET();
  file[128 + 16] = 0xFF; /* the bucket's 12-bit index: 4095, past the 3876 sorted nibble tuples */
  file[128 + 17] |= 0x0F;
  reseal(file, size);
  expect_code(file, size, BG_E_PAYLOAD, "bucket index 4095");
  RESET();
  file[128 + 16] = 0x24; /* 3876 = 0xF24, the first index past the last tuple */
  file[128 + 17] = (uint8_t)((file[128 + 17] & 0xF0) | 0x0F);
  reseal(file, size);
  expect_code(file, size, BG_E_PAYLOAD, "bucket index 3876");
  RESET();
  file[128 + 16] = 0x23; /* 3875: the last tuple (four 15s) is a valid bucket */
  file[128 + 17] = (uint8_t)((file[128 + 17] & 0xF0) | 0x0F);
  reseal(file, size);
  expect_code(file, size, BG_OK, "bucket index 3875");

  RESET();
  file[128 + 16] ^= 0x01; /* a fingerprint changed: only the checksum could tell */
  reseal(file, size);
  expect_code(file, size, BG_OK, "fingerprint changed, new checksum");

  static const struct {
    unsigned offset;
    uint8_t value;
    const char *what;
  } preamble_edits[] = {
      {0, 2, "bucket count"},       {7, 1, "bucket count high byte"}, {8, 12, "fingerprint bits"},
      {8, 0, "fingerprint bits 0"}, {9, 8, "slots per bucket"},       {10, 0, "bucket encoding 0"},
      {10, 2, "bucket encoding 2"}, {11, 1, "reserved byte"},         {15, 0x80, "last reserved byte"}};
  for (size_t i = 0; i < sizeof preamble_edits / sizeof preamble_edits[0]; i++) {
    RESET();
    file[128 + preamble_edits[i].offset] = preamble_edits[i].value;
    reseal(file, size);
    expect_code(file, size, BG_E_PAYLOAD, preamble_edits[i].what);
  }

  RESET();
  put_u32(file + 24, 3);
  reseal(file, size);
  expect_code(file, size, BG_E_HEADER, "k = 3");
  RESET();
  put_u64(file + 32, 56);
  reseal(file, size);
  expect_code(file, size, BG_E_HEADER, "m disagrees with capacity and rate");
  RESET();
  put_u64(file + 40, 2); /* capacity 2 still needs one bucket: the same file is valid */
  reseal(file, size);
  expect_code(file, size, BG_OK, "capacity 2");
  put_u64(file + 40, 4); /* capacity 4 needs two buckets */
  reseal(file, size);
  expect_code(file, size, BG_E_HEADER, "capacity 4");
  put_u64(file + 40, 0);
  reseal(file, size);
  expect_code(file, size, BG_E_HEADER, "capacity 0");
  RESET();
  double rate = 0.001; /* 13-bit fingerprints */
  memcpy(file + 48, &rate, 8);
  reseal(file, size);
  expect_code(file, size, BG_E_HEADER, "error rate of another width");
  rate = 1e-10;
  memcpy(file + 48, &rate, 8);
  reseal(file, size);
  expect_code(file, size, BG_E_HEADER, "error rate beyond 32-bit fingerprints");
  put_u64(file + 48, 0x7FF8000000000000ull);
  reseal(file, size);
  expect_code(file, size, BG_E_HEADER, "error rate NaN");

  RESET();
  put_u64(file + 104, 16 + 4); /* payload one byte short, file cut to match */
  reseal(file, size - 1);
  expect_code(file, size - 1, BG_E_PAYLOAD, "payload one byte short");
  RESET();
  put_u64(file + 104, 10); /* shorter than the preamble */
  reseal(file, size - 11);
  expect_code(file, size - 11, BG_E_PAYLOAD, "payload shorter than its preamble");
  RESET();
  memset(file + size, 0, 64);
  put_u64(file + 104, 16 + 6);
  reseal(file, size + 1);
  expect_code(file, size + 1, BG_E_PAYLOAD, "payload one byte long");
  /* A stale checksum and truncations: test_conformance.c. */
#undef RESET
  free(file);
  free(good);
  bg_filter_free(f);
}

/*
 * Writers store a bucket's fingerprints in ascending order, but readers accept low parts of
 * equal nibbles in any order. A bucket whose empty slots do not come first still takes exactly
 * as many new fingerprints as it has empty slots, and nothing already in it is lost.
 */
static void test_unsorted_bucket(void) {
  bg_filter *f = make(1, 0.01, 5); /* one bucket of 10-bit fingerprints: index, then 4 x 6-bit lows */
  REQUIRE(f != NULL);
  size_t size;
  uint8_t *file = serialize_copy(f, &size);
  REQUIRE(file != NULL);
  bg_filter_free(f);
  uint8_t *table = file + 128 + 16;
  /* nibbles (0, 0, 0, 0): index 0; lows (5, 0, 0, 0): fingerprint 5 first, the empty slots after. */
  table[1] = 0x50; /* table bits 12..15 are bits 0..3 of the first low part */
  reseal(file, size);
  f = NULL;
  CHECK_STATUS(bg_filter_deserialize(file, size, &f), BG_OK);
  REQUIRE(f != NULL);
  bg_info info;
  bg_filter_info(f, &info);
  CHECK_EQ_U64(info.bits_set, 1); /* one occupied slot, counted wherever it sits */
  char key[32];
  int added = 0;
  for (int i = 0; i < 3; i++) {
    size_t len = key_name(key, sizeof key, "u", i);
    added += bg_filter_add(f, key, len) == BG_OK;
  }
  CHECK_EQ_U64(added, 3); /* three empty slots, three items */
  for (int i = 0; i < 3; i++) {
    size_t len = key_name(key, sizeof key, "u", i);
    CHECK_EQ_U64(bg_filter_contains(f, key, len), 1);
  }
  bg_filter_info(f, &info);
  CHECK_EQ_U64(info.bits_set, 4);
  size_t len = key_name(key, sizeof key, "u", 3);
  CHECK_STATUS(bg_filter_add(f, key, len), BG_E_FULL); /* now truly full */
  bg_filter_free(f);
  free(file);
}

int main(void) {
  test_error_rate(0.01);
  test_error_rate(0.001);
  test_remove_others();
  test_remove_absent();
  test_full();
  test_duplicates();
  test_widths();
  test_corrupt();
  test_unsorted_bucket();
  return test_report("test_cuckoo");
}
