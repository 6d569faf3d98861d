/*
 * test_fuse.c — the binary fuse kinds (fuse8, fuse16), through the public API
 * only: measured error rate at the natural rates, no false negatives,
 * duplicate keys, the empty and one-key filters, deterministic bytes whatever
 * the insertion order, round trips, exact codes for corrupt payloads, the
 * static life cycle (add -> seal -> query), and the size bound at 10^6 keys.
 */
#include <math.h>
#include <stdlib.h>

#include "test_filters.h"

#define N_KEYS 200000
#define N_PROBES 1000000
#define PAYLOAD_HEADER 32u
/* Offsets in the fixed .bgf header (docs/FORMAT.md). */
#define OFF_CHECKSUM 8
#define OFF_KIND 20
#define OFF_K 24
#define OFF_M 32
#define OFF_ERROR_RATE 48
#define OFF_PAYLOAD_OFFSET 96
#define OFF_PAYLOAD_LENGTH 104

static const int KINDS[2] = {BG_KIND_FUSE8, BG_KIND_FUSE16};

static unsigned fingerprint_bits(int kind) { return kind == BG_KIND_FUSE8 ? 8u : 16u; }
static double natural_rate(int kind) { return ldexp(1.0, -(int)fingerprint_bits(kind)); }

static uint32_t get_u32(const uint8_t *p) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static uint64_t get_u64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}

/* A filter of `kind` holding "prefix<first>".."prefix<first+count-1>", added forwards or backwards. */
static bg_filter *build(int kind, const char *prefix, long first, long count, uint64_t seed,
                        int backwards, int seal) {
  bg_filter *f = NULL;
  if (bg_filter_create(kind, count > 0 ? (uint64_t)count : 1, 0.01, seed, BG_KEY_UTF8, &f) != BG_OK)
    return NULL;
  char key[64];
  for (long j = 0; j < count; j++) {
    long i = backwards ? first + count - 1 - j : first + j;
    size_t len = key_name(key, sizeof key, prefix, i);
    if (bg_filter_add(f, key, len) != BG_OK) {
      bg_filter_free(f);
      return NULL;
    }
  }
  if (seal && bg_filter_seal(f) != BG_OK) {
    bg_filter_free(f);
    return NULL;
  }
  return f;
}

/* The payload bytes of a filter's file (header fields such as count excluded). */
static int same_payload(const bg_filter *a, const bg_filter *b) {
  size_t size_a, size_b;
  uint8_t *fa = serialize_copy(a, &size_a), *fb = serialize_copy(b, &size_b);
  int same = 0;
  if (fa && fb) {
    uint64_t off_a = get_u64(fa + OFF_PAYLOAD_OFFSET), off_b = get_u64(fb + OFF_PAYLOAD_OFFSET);
    same = size_a - off_a == size_b - off_b && memcmp(fa + off_a, fb + off_b, size_a - off_a) == 0;
  }
  free(fa);
  free(fb);
  return same;
}

/* Members found (no false negatives) through single calls and through batches. */
static long count_missing(const bg_filter *f, const char *prefix, long count) {
  char key[64];
  long missing = 0;
  for (long i = 0; i < count; i++) {
    size_t len = key_name(key, sizeof key, prefix, i);
    if (bg_filter_contains(f, key, len) != 1) missing++;
  }
  return missing;
}

/* ---- the error rate at the natural rates ------------------------------------ */

static void test_error_rate(int kind) {
  bg_filter *f = NULL;
  CHECK_STATUS(bg_filter_create(kind, N_KEYS, natural_rate(kind), 7, BG_KEY_UTF8, &f), BG_OK);
  REQUIRE(f != NULL);
  batch keys;
  REQUIRE(batch_make(&keys, "key_", 0, N_KEYS));
  CHECK_STATUS(bg_filter_add_many(f, keys.items, keys.offsets, keys.count), BG_OK);
  CHECK_STATUS(bg_filter_seal(f), BG_OK);

  CHECK_EQ_U64(count_missing(f, "key_", N_KEYS), 0);
  uint8_t *results = malloc(N_KEYS);
  REQUIRE(results != NULL);
  CHECK_STATUS(bg_filter_contains_many(f, keys.items, keys.offsets, keys.count, results), BG_OK);
  long batch_missing = 0;
  for (long i = 0; i < N_KEYS; i++) batch_missing += results[i] != 1;
  CHECK_EQ_U64(batch_missing, 0);
  free(results);
  batch_free(&keys);

  char key[64];
  long positives = 0, bad_answers = 0;
  for (long i = 0; i < N_PROBES; i++) {
    size_t len = key_name(key, sizeof key, "probe_", i);
    int r = bg_filter_contains(f, key, len);
    bad_answers += r != 0 && r != 1;
    positives += r == 1;
  }
  CHECK_EQ_U64(bad_answers, 0);
  double p = natural_rate(kind), measured = (double)positives / N_PROBES;
  double sigma = sqrt(p * (1 - p) / N_PROBES);
  printf("%s: %d keys, measured false-positive rate %.6f%% over %d probes (natural %.6f%%)\n",
         bg_kind_name(kind), N_KEYS, 100 * measured, N_PROBES, 100 * p);
  CHECK_MSG(measured <= p + 4 * sigma, "measured %.8f > %.8f + 4 sigma", measured, p);
  /* The lower side matters too: a filter that answers "no" too often is broken, not good. */
  if (kind == BG_KIND_FUSE8) CHECK_MSG(measured >= p - 4 * sigma, "measured %.8f far below %.8f", measured, p);

  bg_info info;
  bg_filter_info(f, &info);
  CHECK_EQ_U64(info.k, 3);
  CHECK_EQ_U64(info.count, N_KEYS);
  CHECK_EQ_U64(info.bits_set, N_KEYS); /* one cell per distinct key */
  CHECK_EQ_U64(info.m % fingerprint_bits(kind), 0);
  CHECK_EQ_U64(info.payload_bytes, PAYLOAD_HEADER + info.m / 8);
  CHECK_NEAR(info.fill_ratio, (double)N_KEYS / (double)(info.m / fingerprint_bits(kind)), 1e-12);
  CHECK_NEAR(info.estimated_error_rate, p, 1e-12);
  CHECK_NEAR(info.theoretical_error_rate, p, 1e-12);
  CHECK_NEAR(info.error_rate, p, 1e-12);
  bg_filter_free(f);
}

/* Batches answer as single calls do, members and non-members mixed. */
static void test_batches_equal_singles(int kind) {
  bg_filter *f = build(kind, "k", 0, 5000, 3, 0, 1);
  REQUIRE(f != NULL);
  batch mixed;
  REQUIRE(batch_make(&mixed, "k", 2500, 5003)); /* not a multiple of the group size */
  uint8_t *results = malloc(mixed.count);
  REQUIRE(results != NULL);
  CHECK_STATUS(bg_filter_contains_many(f, mixed.items, mixed.offsets, mixed.count, results), BG_OK);
  long differ = 0;
  for (size_t i = 0; i < mixed.count; i++) {
    int single = bg_filter_contains(f, mixed.items + mixed.offsets[i], mixed.offsets[i + 1] - mixed.offsets[i]);
    differ += single != results[i];
  }
  CHECK_EQ_U64(differ, 0);
  for (size_t i = 0; i < 2500; i++) CHECK(results[i] == 1);
  free(results);
  batch_free(&mixed);

  /* add_many builds the same filter as single adds. */
  bg_filter *g = NULL;
  CHECK_STATUS(bg_filter_create(kind, 5000, 0.01, 3, BG_KEY_UTF8, &g), BG_OK);
  REQUIRE(g != NULL);
  batch keys;
  REQUIRE(batch_make(&keys, "k", 0, 5000));
  CHECK_STATUS(bg_filter_add_many(g, keys.items, keys.offsets, keys.count), BG_OK);
  CHECK_STATUS(bg_filter_seal(g), BG_OK);
  CHECK(same_file(f, g));
  batch_free(&keys);
  bg_filter_free(g);
  bg_filter_free(f);
}

/* ---- duplicates, empty, one key --------------------------------------------- */

static void test_duplicates(int kind) {
  /* Every key twice, the second round in the opposite order. */
  bg_filter *f = NULL;
  CHECK_STATUS(bg_filter_create(kind, 20000, 0.01, 11, BG_KEY_UTF8, &f), BG_OK);
  REQUIRE(f != NULL);
  char key[64];
  for (int round = 0; round < 2; round++)
    for (long j = 0; j < 10000; j++) {
      long i = round ? 9999 - j : j;
      CHECK_STATUS_AT(bg_filter_add(f, key, key_name(key, sizeof key, "dup", i)), BG_OK, "key %ld", i);
    }
  CHECK_STATUS(bg_filter_seal(f), BG_OK);
  CHECK_EQ_U64(count_missing(f, "dup", 10000), 0);
  bg_info info;
  bg_filter_info(f, &info);
  CHECK_EQ_U64(info.count, 20000); /* items added */
  CHECK_EQ_U64(info.bits_set, 10000); /* distinct keys */
  /* The structure is the one built from each key once. */
  bg_filter *once = build(kind, "dup", 0, 10000, 11, 0, 1);
  REQUIRE(once != NULL);
  CHECK(same_payload(f, once));
  bg_filter_free(once);
  bg_filter_free(f);

  /* 1000 copies of one key. */
  CHECK_STATUS(bg_filter_create(kind, 1000, 0.01, 12, BG_KEY_UTF8, &f), BG_OK);
  REQUIRE(f != NULL);
  for (int i = 0; i < 1000; i++) CHECK_STATUS(bg_filter_add(f, "same", 4), BG_OK);
  CHECK_STATUS(bg_filter_seal(f), BG_OK);
  CHECK(bg_filter_contains(f, "same", 4) == 1);
  bg_filter_info(f, &info);
  CHECK_EQ_U64(info.count, 1000);
  CHECK_EQ_U64(info.bits_set, 1);
  bg_filter_free(f);
}

static void test_empty(int kind) {
  bg_filter *f = NULL;
  CHECK_STATUS(bg_filter_create(kind, 100, 0.01, 5, BG_KEY_UTF8, &f), BG_OK);
  REQUIRE(f != NULL);
  CHECK_STATUS(bg_filter_seal(f), BG_OK);
  char key[64];
  long positives = 0;
  for (long i = 0; i < 20000; i++) positives += bg_filter_contains(f, key, key_name(key, sizeof key, "e", i)) != 0;
  CHECK_EQ_U64(positives, 0);
  CHECK(bg_filter_contains(f, "", 0) == 0);
  bg_info info;
  bg_filter_info(f, &info);
  CHECK_EQ_U64(info.m, 0);
  CHECK_EQ_U64(info.k, 3);
  CHECK_EQ_U64(info.payload_bytes, PAYLOAD_HEADER);
  CHECK(info.estimated_error_rate == 0.0);

  size_t size;
  uint8_t *file = serialize_copy(f, &size);
  REQUIRE(file != NULL);
  bg_filter *g = NULL;
  CHECK_STATUS(bg_filter_deserialize(file, size, &g), BG_OK);
  if (g) {
    CHECK(bg_filter_contains(g, "e1", 2) == 0);
    CHECK(same_file(f, g));
    CHECK_STATUS(bg_filter_add(g, "x", 1), BG_E_STATIC);
    bg_filter_free(g);
  }
  free(file);
  bg_filter_free(f);
}

static void test_one_key(int kind) {
  bg_filter *f = build(kind, "only", 0, 1, 9, 0, 1);
  REQUIRE(f != NULL);
  CHECK(bg_filter_contains(f, "only0", 5) == 1);
  char key[64];
  long positives = 0;
  for (long i = 0; i < 100000; i++) positives += bg_filter_contains(f, key, key_name(key, sizeof key, "other", i)) == 1;
  /* A 12-cell filter is still a fuse filter: non-members pass at about 2^-bits. */
  double p = natural_rate(kind), sigma = sqrt(p * (1 - p) / 100000);
  CHECK_MSG((double)positives / 100000 <= p + 4 * sigma, "%ld false positives", positives);
  size_t size;
  uint8_t *file = serialize_copy(f, &size);
  REQUIRE(file != NULL);
  bg_filter *g = NULL;
  CHECK_STATUS(bg_filter_deserialize(file, size, &g), BG_OK);
  if (g) {
    CHECK(bg_filter_contains(g, "only0", 5) == 1);
    bg_filter_free(g);
  }
  free(file);
  bg_filter_free(f);
}

/* ---- determinism ------------------------------------------------------------- */

static void test_determinism(int kind) {
  bg_filter *a = build(kind, "d", 0, 30000, 21, 0, 1);
  bg_filter *b = build(kind, "d", 0, 30000, 21, 0, 1);
  bg_filter *reversed = build(kind, "d", 0, 30000, 21, 1, 1);
  bg_filter *other_seed = build(kind, "d", 0, 30000, 22, 0, 1);
  REQUIRE(a && b && reversed && other_seed);
  CHECK(same_file(a, b));
  CHECK(same_file(a, reversed));
  CHECK(!same_payload(a, other_seed));
  bg_filter_free(a);
  bg_filter_free(b);
  bg_filter_free(reversed);
  bg_filter_free(other_seed);
}

/* ---- round trips ------------------------------------------------------------ */

static void test_round_trip(int kind) {
  bg_filter *f = build(kind, "rt", 0, 20000, 31, 0, 0);
  REQUIRE(f != NULL);
  const char meta[] = "{\"source\":\"test\"}";
  CHECK_STATUS(bg_filter_set_metadata(f, meta, sizeof meta - 1), BG_OK);
  CHECK_STATUS(bg_filter_seal(f), BG_OK);
  size_t size;
  uint8_t *file = serialize_copy(f, &size);
  REQUIRE(file != NULL);
  CHECK_EQ_U64(file[OFF_KIND], (uint64_t)kind);
  CHECK_EQ_U64(get_u32(file + OFF_K), 3);

  bg_filter *copy = NULL, *owned = NULL;
  CHECK_STATUS(bg_filter_deserialize(file, size, &copy), BG_OK);
  uint8_t *buffer = malloc(size);
  REQUIRE(buffer != NULL);
  memcpy(buffer, file, size);
  CHECK_STATUS(bg_filter_deserialize_owned(buffer, size, &owned), BG_OK);
  if (!owned) free(buffer);
  REQUIRE(copy && owned);

  batch probes;
  REQUIRE(batch_make(&probes, "rt", 10000, 40000)); /* half members, half not */
  uint8_t *r0 = malloc(probes.count), *r1 = malloc(probes.count), *r2 = malloc(probes.count);
  REQUIRE(r0 && r1 && r2);
  CHECK_STATUS(bg_filter_contains_many(f, probes.items, probes.offsets, probes.count, r0), BG_OK);
  CHECK_STATUS(bg_filter_contains_many(copy, probes.items, probes.offsets, probes.count, r1), BG_OK);
  CHECK_STATUS(bg_filter_contains_many(owned, probes.items, probes.offsets, probes.count, r2), BG_OK);
  CHECK(memcmp(r0, r1, probes.count) == 0);
  CHECK(memcmp(r0, r2, probes.count) == 0);
  CHECK_EQ_U64(count_missing(copy, "rt", 20000), 0);
  CHECK_EQ_U64(count_missing(owned, "rt", 20000), 0);
  free(r0);
  free(r1);
  free(r2);
  batch_free(&probes);

  /* Re-serialized byte for byte, also into the buffer the owned filter lives in. */
  CHECK(same_file(f, copy));
  CHECK(same_file(f, owned));
  size_t written = 0;
  CHECK_STATUS(bg_filter_serialize(owned, buffer, size, &written), BG_OK);
  CHECK(written == size && memcmp(buffer, file, size) == 0);
  size_t meta_len = 0;
  const uint8_t *meta_back = bg_filter_metadata(copy, &meta_len);
  CHECK(meta_len == sizeof meta - 1 && memcmp(meta_back, meta, meta_len) == 0);

  /* A loaded filter is sealed: it answers, takes no keys, and sealing again changes nothing. */
  CHECK_STATUS(bg_filter_seal(copy), BG_OK);
  CHECK_STATUS(bg_filter_add(copy, "new", 3), BG_E_STATIC);
  CHECK_STATUS(bg_filter_add(owned, "new", 3), BG_E_STATIC);
  CHECK(same_file(f, copy));

  bg_filter_free(copy);
  bg_filter_free(owned);
  free(file);
  bg_filter_free(f);
}

/* ---- corrupt files ---------------------------------------------------------- */

/* Apply `edit` to a copy of file, restamp the checksum, and expect `code` from both readers. */
typedef void (*file_edit)(uint8_t *file, size_t *size);

static void expect_code(const uint8_t *file, size_t size, file_edit edit, int code, const char *what) {
  uint8_t *copy = malloc(size);
  if (!copy) return;
  memcpy(copy, file, size);
  size_t new_size = size;
  edit(copy, &new_size);
  put_u64(copy + OFF_CHECKSUM, bg_file_checksum(copy, new_size));
  bg_filter *f = NULL;
  CHECK_STATUS_AT(bg_filter_deserialize(copy, new_size, &f), code, "%s", what);
  CHECK_MSG(f == NULL, "%s: a filter came back", what);
  bg_filter_free(f);
  CHECK_STATUS_AT(bg_filter_deserialize_owned(copy, new_size, &f), code, "%s (owned)", what);
  if (f) bg_filter_free(f);
  else free(copy);
}

static uint8_t *payload_of(uint8_t *file) { return file + get_u64(file + OFF_PAYLOAD_OFFSET); }

static void edit_bits(uint8_t *file, size_t *size) { (void)size; payload_of(file)[0] ^= 24; /* 8<->16 */ }
static void edit_reserved(uint8_t *file, size_t *size) { (void)size; payload_of(file)[2] = 1; }
static void edit_segment_not_pow2(uint8_t *file, size_t *size) {
  (void)size;
  uint8_t *p = payload_of(file);
  put_u32(p + 4, get_u32(p + 4) + 1);
}
static void edit_segment_too_long(uint8_t *file, size_t *size) {
  (void)size;
  put_u32(payload_of(file) + 4, (uint32_t)1 << 19);
}
static void edit_segment_count_zero(uint8_t *file, size_t *size) { (void)size; put_u32(payload_of(file) + 8, 0); }
static void edit_segment_count_overflow(uint8_t *file, size_t *size) {
  (void)size;
  put_u32(payload_of(file) + 8, 0xffffffffu);
}
static void edit_array_length(uint8_t *file, size_t *size) {
  (void)size;
  uint8_t *p = payload_of(file);
  put_u32(p + 12, get_u32(p + 12) - get_u32(p + 4));
}
static void edit_too_many_keys(uint8_t *file, size_t *size) {
  (void)size;
  uint8_t *p = payload_of(file);
  put_u64(p + 16, (uint64_t)get_u32(p + 12) + 1);
}
static void edit_no_keys(uint8_t *file, size_t *size) { (void)size; put_u64(payload_of(file) + 16, 0); }
static void edit_k(uint8_t *file, size_t *size) { (void)size; put_u32(file + OFF_K, 2); }
static void edit_m(uint8_t *file, size_t *size) {
  (void)size;
  put_u64(file + OFF_M, get_u64(file + OFF_M) + 8);
}
static void edit_error_rate(uint8_t *file, size_t *size) {
  (void)size;
  double below = 1e-9;
  uint64_t bits;
  memcpy(&bits, &below, sizeof bits);
  put_u64(file + OFF_ERROR_RATE, bits);
}
static void edit_kind_swap(uint8_t *file, size_t *size) {
  (void)size;
  file[OFF_KIND] = file[OFF_KIND] == BG_KIND_FUSE8 ? BG_KIND_FUSE16 : BG_KIND_FUSE8;
}
/* One byte fewer of payload, with the header saying so: the length no longer fits the geometry. */
static void edit_short_payload(uint8_t *file, size_t *size) {
  put_u64(file + OFF_PAYLOAD_LENGTH, get_u64(file + OFF_PAYLOAD_LENGTH) - 1);
  *size -= 1;
}
/* A payload shorter than its own 32-byte header. */
static void edit_tiny_payload(uint8_t *file, size_t *size) {
  uint64_t offset = get_u64(file + OFF_PAYLOAD_OFFSET);
  put_u64(file + OFF_PAYLOAD_LENGTH, 16);
  *size = (size_t)offset + 16;
}
static void edit_empty_with_seed(uint8_t *file, size_t *size) { (void)size; payload_of(file)[24] = 1; }
static void edit_empty_with_cells(uint8_t *file, size_t *size) { (void)size; put_u32(payload_of(file) + 4, 4); }

static void test_corrupt(int kind) {
  bg_filter *f = build(kind, "c", 0, 3000, 41, 0, 1);
  REQUIRE(f != NULL);
  size_t size;
  uint8_t *file = serialize_copy(f, &size);
  REQUIRE(file != NULL);
  bg_filter_free(f);

  /* Without restamping the checksum, any edit is caught there first. */
  uint8_t *raw = malloc(size);
  REQUIRE(raw != NULL);
  memcpy(raw, file, size);
  payload_of(raw)[PAYLOAD_HEADER] ^= 1;
  bg_filter *g = NULL;
  CHECK_STATUS(bg_filter_deserialize(raw, size, &g), BG_E_CHECKSUM);
  free(raw);

  expect_code(file, size, edit_bits, BG_E_PAYLOAD, "fingerprint bits");
  expect_code(file, size, edit_reserved, BG_E_PAYLOAD, "reserved byte");
  expect_code(file, size, edit_segment_not_pow2, BG_E_PAYLOAD, "segment length not a power of two");
  expect_code(file, size, edit_segment_too_long, BG_E_PAYLOAD, "segment length above 2^18");
  expect_code(file, size, edit_segment_count_zero, BG_E_PAYLOAD, "no segments");
  expect_code(file, size, edit_segment_count_overflow, BG_E_PAYLOAD, "segment count overflowing");
  expect_code(file, size, edit_array_length, BG_E_PAYLOAD, "array length");
  expect_code(file, size, edit_too_many_keys, BG_E_PAYLOAD, "more keys than cells");
  expect_code(file, size, edit_no_keys, BG_E_PAYLOAD, "cells without keys");
  expect_code(file, size, edit_k, BG_E_HEADER, "k");
  expect_code(file, size, edit_m, BG_E_HEADER, "m");
  expect_code(file, size, edit_error_rate, BG_E_HEADER, "error rate below the natural rate");
  expect_code(file, size, edit_kind_swap, BG_E_PAYLOAD, "kind swapped");
  expect_code(file, size, edit_short_payload, BG_E_PAYLOAD, "payload one byte short");
  expect_code(file, size, edit_tiny_payload, BG_E_PAYLOAD, "payload shorter than its header");
  free(file);

  /* The empty filter's payload has nothing but zeros after the width byte. */
  f = build(kind, "c", 0, 0, 41, 0, 1);
  REQUIRE(f != NULL);
  file = serialize_copy(f, &size);
  REQUIRE(file != NULL);
  bg_filter_free(f);
  expect_code(file, size, edit_empty_with_seed, BG_E_PAYLOAD, "empty filter with a seed");
  expect_code(file, size, edit_empty_with_cells, BG_E_PAYLOAD, "empty filter with a segment length");
  free(file);
}

/* ---- the static life cycle -------------------------------------------------- */

static void test_life_cycle(int kind) {
  bg_filter *f = NULL;
  /* Below the natural rate is refused; at it and above is fine. */
  CHECK_STATUS(bg_filter_create(kind, 100, natural_rate(kind) * 0.99, 0, BG_KEY_UTF8, &f), BG_E_RANGE);
  CHECK(f == NULL);
  CHECK_STATUS(bg_filter_create(kind, 100, natural_rate(kind), 0, BG_KEY_UTF8, &f), BG_OK);
  bg_filter_free(f);
  CHECK_STATUS(bg_filter_create(kind, 100, 0.01, 0, BG_KEY_UTF8, &f), BG_OK);
  REQUIRE(f != NULL);

  /* Before sealing: no queries, no payload. */
  CHECK_STATUS(bg_filter_add(f, "a", 1), BG_OK);
  CHECK_STATUS(bg_filter_add_key(f, "b", 1), BG_OK);
  CHECK_STATUS(bg_filter_contains(f, "a", 1), BG_E_UNSUPPORTED);
  CHECK_STATUS(bg_filter_contains_key(f, "b", 1), BG_E_UNSUPPORTED);
  batch probes;
  REQUIRE(batch_make(&probes, "p", 0, 3));
  uint8_t results[3];
  CHECK_STATUS(bg_filter_contains_many(f, probes.items, probes.offsets, probes.count, results), BG_E_UNSUPPORTED);
  bg_info info;
  bg_filter_info(f, &info);
  CHECK_EQ_U64(info.payload_bytes, 0);
  CHECK_EQ_U64(info.m, 0);
  CHECK_EQ_U64(info.count, 2);
  CHECK_NEAR(info.fill_ratio, 0.02, 1e-12);
  /*
   * Serializing requires a sealed filter: an unsealed one has no payload, so
   * the generic layer refuses with E_UNSUPPORTED. Were a file written anyway,
   * it must not load as a filter.
   */
  {
    uint8_t buf[4096];
    size_t written = 0;
    CHECK_STATUS(bg_filter_serialize(f, buf, sizeof buf, &written), BG_E_UNSUPPORTED);
  }

  CHECK_STATUS(bg_filter_seal(f), BG_OK);
  CHECK_STATUS(bg_filter_seal(f), BG_OK); /* idempotent */
  CHECK(bg_filter_contains(f, "a", 1) == 1);
  CHECK(bg_filter_contains_key(f, "b", 1) == 1);
  CHECK_STATUS(bg_filter_contains_many(f, probes.items, probes.offsets, probes.count, results), BG_OK);
  CHECK_STATUS(bg_filter_add(f, "c", 1), BG_E_STATIC);
  CHECK_STATUS(bg_filter_add_key(f, "c", 1), BG_E_STATIC);
  CHECK_STATUS(bg_filter_add_many(f, probes.items, probes.offsets, probes.count), BG_E_STATIC);
  bg_filter_info(f, &info);
  CHECK_EQ_U64(info.count, 2); /* refused adds are not counted */
  CHECK(info.payload_bytes > PAYLOAD_HEADER);

  /* Operations a static filter does not have. */
  CHECK_STATUS(bg_filter_remove(f, "a", 1), BG_E_UNSUPPORTED);
  bg_filter *g = build(kind, "x", 0, 2, 0, 0, 1), *classic = NULL;
  REQUIRE(g != NULL);
  CHECK_STATUS(bg_filter_merge(f, g), BG_E_UNSUPPORTED);
  CHECK_STATUS(bg_filter_to_classic(f, &classic), BG_E_UNSUPPORTED);
  CHECK(classic == NULL);
  bg_filter_free(g);

  /* clear(): empty and unsealed again; the same keys rebuild the same filter. */
  size_t size_before;
  uint8_t *before = serialize_copy(f, &size_before);
  REQUIRE(before != NULL);
  bg_filter_clear(f);
  CHECK_STATUS(bg_filter_contains(f, "a", 1), BG_E_UNSUPPORTED);
  bg_filter_info(f, &info);
  CHECK_EQ_U64(info.count, 0);
  CHECK_EQ_U64(info.payload_bytes, 0);
  CHECK_STATUS(bg_filter_add(f, "a", 1), BG_OK);
  CHECK_STATUS(bg_filter_add_key(f, "b", 1), BG_OK);
  CHECK_STATUS(bg_filter_seal(f), BG_OK);
  size_t size_after;
  uint8_t *after = serialize_copy(f, &size_after);
  CHECK(after && size_after == size_before && memcmp(before, after, size_before) == 0);
  free(before);
  free(after);
  batch_free(&probes);
  bg_filter_free(f);
}

/* ---- size ---------------------------------------------------------------------- */

/*
 * At 10^6 keys the payload stays within 1.13 * log2(1/eps) bits per key, plus
 * the headers (128 bytes + 32 bytes of payload header: 0.0013 bits per key).
 */
static void test_size(int kind) {
  const long n = 1000000;
  bg_filter *f = NULL;
  CHECK_STATUS(bg_filter_create(kind, (uint64_t)n, 0.01, 1, BG_KEY_UTF8, &f), BG_OK);
  REQUIRE(f != NULL);
  long refused = 0;
  for (long i = 0; i < n; i++) {
    uint64_t key = (uint64_t)i;
    refused += bg_filter_add_key(f, &key, sizeof key) != BG_OK;
  }
  CHECK_EQ_U64(refused, 0);
  CHECK_STATUS(bg_filter_seal(f), BG_OK);
  bg_info info;
  bg_filter_info(f, &info);
  double payload_bits = (double)info.m / (double)n;
  double file_bits = 8.0 * (double)info.serialized_bytes / (double)n;
  double bound = 1.13 * fingerprint_bits(kind);
  printf("%s: %ld keys: %.4f bits/key of fingerprints, %.4f bits/key for the whole file (bound %.2f)\n",
         bg_kind_name(kind), n, payload_bits, file_bits, bound);
  CHECK_MSG(payload_bits <= bound, "%.5f bits per key", payload_bits);
  CHECK_MSG(file_bits <= bound + 0.002, "%.5f bits per key with headers", file_bits);
  long missing = 0;
  for (long i = 0; i < n; i += 97) {
    uint64_t key = (uint64_t)i;
    missing += bg_filter_contains_key(f, &key, sizeof key) != 1;
  }
  CHECK_EQ_U64(missing, 0);
  bg_filter_free(f);
}

int main(void) {
  for (int i = 0; i < 2; i++) {
    int kind = KINDS[i];
    test_error_rate(kind);
    test_batches_equal_singles(kind);
    test_duplicates(kind);
    test_empty(kind);
    test_one_key(kind);
    test_determinism(kind);
    test_round_trip(kind);
    test_corrupt(kind);
    test_life_cycle(kind);
    test_size(kind);
  }
  return test_report("test_fuse");
}
