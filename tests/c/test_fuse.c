/*
 * test_fuse.c — the binary fuse kinds (fuse8, fuse16), through the public API
 * only: measured error rate at the natural rates (both sides), no false
 * negatives, duplicate keys, the empty and one-key filters, deterministic
 * bytes whatever the insertion order, exact codes for corrupt payloads, the
 * static life cycle (add -> seal -> query), the size bound at 10^6 keys, and
 * sharded files (assembled here as docs/kinds/fuse.md specifies them): their
 * answers, their bytes, and exact codes for every corrupt shard table.
 * Batches, round trips, clear, merge and corruption in general are
 * test_conformance.c's.
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
static bg_filter *build(int kind, const char *prefix, long first, long count, uint64_t seed, int backwards,
                        int seal) {
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
  CHECK_EQ_U64(info.count, 20000);    /* items added */
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
  for (long i = 0; i < 20000; i++)
    positives += bg_filter_contains(f, key, key_name(key, sizeof key, "e", i)) != 0;
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
  for (long i = 0; i < 100000; i++)
    positives += bg_filter_contains(f, key, key_name(key, sizeof key, "other", i)) == 1;
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
  if (f)
    bg_filter_free(f);
  else
    free(copy);
}

static uint8_t *payload_of(uint8_t *file) { return file + get_u64(file + OFF_PAYLOAD_OFFSET); }

static void edit_bits(uint8_t *file, size_t *size) {
  (void)size;
  payload_of(file)[0] ^= 24; /* 8<->16 */
}
static void edit_reserved(uint8_t *file, size_t *size) {
  (void)size;
  payload_of(file)[2] = 1;
}
static void edit_segment_not_pow2(uint8_t *file, size_t *size) {
  (void)size;
  uint8_t *p = payload_of(file);
  put_u32(p + 4, get_u32(p + 4) + 1);
}
static void edit_segment_too_long(uint8_t *file, size_t *size) {
  (void)size;
  put_u32(payload_of(file) + 4, (uint32_t)1 << 19);
}
static void edit_segment_count_zero(uint8_t *file, size_t *size) {
  (void)size;
  put_u32(payload_of(file) + 8, 0);
}
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
static void edit_no_keys(uint8_t *file, size_t *size) {
  (void)size;
  put_u64(payload_of(file) + 16, 0);
}
static void edit_k(uint8_t *file, size_t *size) {
  (void)size;
  put_u32(file + OFF_K, 2);
}
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
static void edit_empty_with_seed(uint8_t *file, size_t *size) {
  (void)size;
  payload_of(file)[24] = 1;
}
static void edit_empty_with_cells(uint8_t *file, size_t *size) {
  (void)size;
  put_u32(payload_of(file) + 4, 4);
}

static void test_corrupt(int kind) {
  bg_filter *f = build(kind, "c", 0, 3000, 41, 0, 1);
  REQUIRE(f != NULL);
  size_t size;
  uint8_t *file = serialize_copy(f, &size);
  REQUIRE(file != NULL);
  bg_filter_free(f);

  /* A stale checksum and truncations: test_conformance.c. */
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
  CHECK_STATUS(bg_filter_contains_many(f, probes.items, probes.offsets, probes.count, results),
               BG_E_UNSUPPORTED);
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

  /* Remove, merge, to_classic and clear() of a static filter: test_conformance.c. */
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

/* ---- sharded files ------------------------------------------------------------ */

#define OFF_COUNT 56

/* Per-shard collections of h1 values. */
typedef struct {
  uint64_t *h1;
  size_t n;
} shard_keys;

/*
 * A sharded file of the keys prefix0 .. prefix<count-1>, assembled as
 * docs/kinds/fuse.md specifies: each key goes to the shard named by the top
 * `bits` bits of its h2 (bits = 0: one shard, the unsharded layout); each
 * shard is the payload of the unsharded filter of its keys, built here from
 * their h1 with bg_filter_add_h1; the header is that of the filter (capacity
 * `count`, metadata) with count, m and payload_length of the whole.
 */
static uint8_t *sharded_file(int kind, unsigned bits, const char *prefix, long count, uint64_t seed,
                             size_t *size_out) {
  size_t shards = (size_t)1 << bits;
  shard_keys *keys = calloc(shards, sizeof *keys);
  uint8_t **payloads = calloc(shards, sizeof *payloads);
  size_t *lengths = calloc(shards, sizeof *lengths);
  uint8_t *file = NULL;
  if (!keys || !payloads || !lengths) goto done;
  for (size_t i = 0; i < shards; i++) {
    keys[i].h1 = malloc((size_t)(count > 0 ? count : 1) * sizeof(uint64_t));
    if (!keys[i].h1) goto done;
  }
  char key[64];
  for (long i = 0; i < count; i++) {
    size_t len = key_name(key, sizeof key, prefix, i);
    bg_hash_pair h = bg_hash(key, len, seed);
    shard_keys *to = &keys[bits ? h.h2 >> (64 - bits) : 0];
    to->h1[to->n++] = h.h1;
  }
  /* The shards, and the payload length and m of the whole. */
  uint64_t payload_length = bits ? 32 + 8 * (shards + 1) : 0, cells = 0, key_count = 0;
  unsigned width = kind == BG_KIND_FUSE8 ? 1 : 2;
  for (size_t i = 0; i < shards; i++) {
    bg_filter *f = NULL;
    if (bg_filter_create(kind, keys[i].n ? keys[i].n : 1, 0.01, seed, BG_KEY_UTF8, &f) != BG_OK) goto done;
    bg_status rc = bg_filter_add_h1(f, keys[i].h1, keys[i].n);
    if (rc == BG_OK) rc = bg_filter_seal(f);
    size_t size = 0;
    uint8_t *shard_file = rc == BG_OK ? serialize_copy(f, &size) : NULL;
    bg_filter_free(f);
    if (!shard_file) goto done;
    /* No metadata: the payload starts right after the 128-byte header. */
    lengths[i] = size - 128;
    payloads[i] = malloc(lengths[i]);
    if (!payloads[i]) {
      free(shard_file);
      goto done;
    }
    memcpy(payloads[i], shard_file + 128, lengths[i]);
    free(shard_file);
    payload_length += lengths[i];
    cells += get_u32(payloads[i] + 12);
    key_count += get_u64(payloads[i] + 16);
  }
  /* The header and metadata: the filter's, sealed empty. */
  bg_filter *t = NULL;
  if (bg_filter_create(kind, count > 0 ? (uint64_t)count : 1, 0.01, seed, BG_KEY_UTF8, &t) != BG_OK) goto done;
  const char meta[] = "{\"source\":\"sharded\"}";
  size_t template_size = 0;
  uint8_t *template_file = NULL;
  if (bg_filter_set_metadata(t, meta, sizeof meta - 1) == BG_OK && bg_filter_seal(t) == BG_OK)
    template_file = serialize_copy(t, &template_size);
  bg_filter_free(t);
  if (!template_file) goto done;
  uint64_t offset = get_u64(template_file + OFF_PAYLOAD_OFFSET);
  *size_out = (size_t)(offset + payload_length);
  file = calloc(1, *size_out);
  if (!file) {
    free(template_file);
    goto done;
  }
  memcpy(file, template_file, (size_t)offset);
  free(template_file);
  put_u64(file + OFF_COUNT, (uint64_t)count);
  put_u64(file + OFF_M, cells * 8 * width);
  put_u64(file + OFF_PAYLOAD_LENGTH, payload_length);
  uint8_t *payload = file + offset, *at = payload;
  if (bits) {
    payload[0] = (uint8_t)(8 * width);
    payload[1] = (uint8_t)bits;
    put_u64(payload + 16, key_count);
    at = payload + 32 + 8 * (shards + 1);
  }
  for (size_t i = 0; i < shards; i++) {
    if (bits) put_u64(payload + 32 + 8 * i, (uint64_t)(at - payload));
    memcpy(at, payloads[i], lengths[i]);
    at += lengths[i];
  }
  if (bits) put_u64(payload + 32 + 8 * shards, (uint64_t)(at - payload));
  reseal(file, *size_out);
done:
  for (size_t i = 0; keys && payloads && i < shards; i++) {
    free(keys[i].h1);
    free(payloads[i]);
  }
  free(keys);
  free(payloads);
  free(lengths);
  return file;
}

/* A filter loaded from a copy of file (NULL on failure, with the status reported). */
static bg_filter *load_copy(const uint8_t *file, size_t size, int owned) {
  bg_filter *f = NULL;
  if (!owned) {
    CHECK_STATUS(bg_filter_deserialize(file, size, &f), BG_OK);
    return f;
  }
  uint8_t *buffer = malloc(size);
  if (!buffer) return NULL;
  memcpy(buffer, file, size);
  CHECK_STATUS(bg_filter_deserialize_owned(buffer, size, &f), BG_OK);
  if (!f) free(buffer);
  return f;
}

static void test_sharded(int kind) {
  const long n = 20000;
  /* One shard is the unsharded file itself, byte for byte. */
  size_t size = 0;
  uint8_t *one = sharded_file(kind, 0, "sh", n, 51, &size);
  REQUIRE(one != NULL);
  bg_filter *plain = build(kind, "sh", 0, n, 51, 0, 0);
  REQUIRE(plain != NULL);
  const char meta[] = "{\"source\":\"sharded\"}";
  CHECK_STATUS(bg_filter_set_metadata(plain, meta, sizeof meta - 1), BG_OK);
  CHECK_STATUS(bg_filter_seal(plain), BG_OK);
  size_t plain_size;
  uint8_t *plain_file = serialize_copy(plain, &plain_size);
  CHECK(plain_file && plain_size == size && memcmp(plain_file, one, size) == 0);
  free(plain_file);
  bg_filter_free(plain);
  free(one);

  for (unsigned bits = 1; bits <= 4; bits += 3) {
    uint8_t *file = sharded_file(kind, bits, "sh", n, 51, &size);
    REQUIRE(file != NULL);
    for (int owned = 0; owned < 2; owned++) {
      bg_filter *f = load_copy(file, size, owned);
      REQUIRE(f != NULL);
      CHECK_EQ_U64(count_missing(f, "sh", n), 0);
      /* Batches answer as single calls do, members and non-members mixed. */
      batch mixed;
      REQUIRE(batch_make(&mixed, "sh", n / 2, (size_t)n));
      uint8_t *results = malloc(mixed.count);
      REQUIRE(results != NULL);
      CHECK_STATUS(bg_filter_contains_many(f, mixed.items, mixed.offsets, mixed.count, results), BG_OK);
      long differ = 0, members = 0;
      for (size_t i = 0; i < mixed.count; i++) {
        int single =
            bg_filter_contains(f, mixed.items + mixed.offsets[i], mixed.offsets[i + 1] - mixed.offsets[i]);
        differ += single != results[i];
        members += i < (size_t)(n / 2) && results[i] == 1;
      }
      CHECK_EQ_U64(differ, 0);
      CHECK_EQ_U64(members, n / 2);
      free(results);
      batch_free(&mixed);
      /* Non-members pass at the natural rate, as in one filter. */
      char key[64];
      long positives = 0;
      const long probes = 400000;
      for (long i = 0; i < probes; i++)
        positives += bg_filter_contains(f, key, key_name(key, sizeof key, "nope", i)) == 1;
      double p = natural_rate(kind), sigma = sqrt(p * (1 - p) / probes), measured = (double)positives / probes;
      CHECK_MSG(measured <= p + 4 * sigma, "%u shard bits: measured %.6f", bits, measured);
      if (kind == BG_KIND_FUSE8)
        CHECK_MSG(measured >= p - 4 * sigma, "%u shard bits: measured %.6f", bits, measured);
      bg_info info;
      bg_filter_info(f, &info);
      CHECK_EQ_U64(info.count, (uint64_t)n);
      CHECK_EQ_U64(info.bits_set, (uint64_t)n);
      CHECK_EQ_U64(info.m, get_u64(file + OFF_M));
      CHECK_EQ_U64(info.payload_bytes, get_u64(file + OFF_PAYLOAD_LENGTH));
      CHECK_EQ_U64(info.serialized_bytes, size);
      CHECK_NEAR(info.fill_ratio, (double)n / (double)(info.m / fingerprint_bits(kind)), 1e-12);
      CHECK_NEAR(info.estimated_error_rate, p, 1e-12);
      /* The same bytes back, also into the buffer an owned filter lives in; sealed for good. */
      size_t again_size;
      uint8_t *again = serialize_copy(f, &again_size);
      CHECK(again && again_size == size && memcmp(again, file, size) == 0);
      free(again);
      CHECK_STATUS(bg_filter_seal(f), BG_OK);
      CHECK_STATUS(bg_filter_add(f, "new", 3), BG_E_STATIC);
      /* clear(): empty, unsealed, unsharded again. */
      bg_filter_clear(f);
      CHECK_STATUS(bg_filter_contains(f, "sh1", 3), BG_E_UNSUPPORTED);
      CHECK_STATUS(bg_filter_add(f, "sh1", 3), BG_OK);
      CHECK_STATUS(bg_filter_seal(f), BG_OK);
      CHECK(bg_filter_contains(f, "sh1", 3) == 1);
      bg_filter_info(f, &info);
      CHECK_EQ_U64(info.bits_set, 1);
      bg_filter_free(f);
    }
    printf("%s: %ld keys in %u shards: %.4f bits/key of fingerprints, %.4f bits/key for the whole file\n",
           bg_kind_name(kind), n, 1u << bits, (double)get_u64(file + OFF_M) / (double)n,
           8.0 * (double)size / (double)n);
    free(file);
  }

  /* Empty shards: one key in 16 shards, and no key at all. */
  for (long count = 0; count <= 1; count++) {
    uint8_t *file = sharded_file(kind, 4, "lone", count, 52, &size);
    REQUIRE(file != NULL);
    bg_filter *f = load_copy(file, size, 1);
    REQUIRE(f != NULL);
    CHECK_EQ_U64(count_missing(f, "lone", count), 0);
    char key[64];
    long positives = 0;
    for (long i = 0; i < 20000; i++)
      positives += bg_filter_contains(f, key, key_name(key, sizeof key, "other", i)) == 1;
    CHECK_MSG(positives < 20000 / 16 * natural_rate(kind) * 3 + 3, "%ld false positives", positives);
    bg_info info;
    bg_filter_info(f, &info);
    CHECK_EQ_U64(info.bits_set, (uint64_t)count);
    bg_filter_free(f);
    free(file);
  }
}

/* Edits of a sharded file's payload (4 shards). */
static uint8_t *table_of(uint8_t *file) { return payload_of(file) + 32; }
static uint8_t *shard_of(uint8_t *file, unsigned i) {
  return payload_of(file) + get_u64(table_of(file) + 8 * i);
}
static void edit_shard_bits_high(uint8_t *file, size_t *size) {
  (void)size;
  payload_of(file)[1] = 25;
}
static void edit_shard_bits_big_table(uint8_t *file, size_t *size) {
  (void)size;
  payload_of(file)[1] = 20;
}
static void edit_sharded_reserved2(uint8_t *file, size_t *size) {
  (void)size;
  payload_of(file)[2] = 1;
}
static void edit_sharded_reserved4(uint8_t *file, size_t *size) {
  (void)size;
  payload_of(file)[4] = 1;
}
static void edit_sharded_reserved15(uint8_t *file, size_t *size) {
  (void)size;
  payload_of(file)[15] = 1;
}
static void edit_sharded_reserved24(uint8_t *file, size_t *size) {
  (void)size;
  payload_of(file)[24] = 1;
}
static void edit_sharded_key_count(uint8_t *file, size_t *size) {
  (void)size;
  put_u64(payload_of(file) + 16, get_u64(payload_of(file) + 16) + 1);
}
static void edit_table_start(uint8_t *file, size_t *size) {
  (void)size;
  put_u64(table_of(file), get_u64(table_of(file)) + 8);
}
static void edit_table_backwards(uint8_t *file, size_t *size) {
  (void)size;
  put_u64(table_of(file) + 16, get_u64(table_of(file) + 8) - 1);
}
static void edit_table_past_end(uint8_t *file, size_t *size) {
  (void)size;
  put_u64(table_of(file) + 16, get_u64(file + OFF_PAYLOAD_LENGTH) + 32);
}
static void edit_table_end_short(uint8_t *file, size_t *size) {
  (void)size;
  put_u64(table_of(file) + 32, get_u64(file + OFF_PAYLOAD_LENGTH) - 1);
}
static void edit_table_swap(uint8_t *file, size_t *size) {
  /* Shards 1 and 2 exchanged in the table but not in the bytes: lengths no longer match. */
  (void)size;
  uint8_t *t = table_of(file);
  uint64_t a = get_u64(t + 8), b = get_u64(t + 16);
  put_u64(t + 8, b);
  put_u64(t + 16, a);
}
static void edit_shard_width(uint8_t *file, size_t *size) {
  (void)size;
  shard_of(file, 1)[0] ^= 24;
}
static void edit_shard_nested(uint8_t *file, size_t *size) {
  (void)size;
  shard_of(file, 2)[1] = 1;
}
static void edit_shard_reserved(uint8_t *file, size_t *size) {
  (void)size;
  shard_of(file, 3)[3] = 1;
}
static void edit_shard_segment(uint8_t *file, size_t *size) {
  (void)size;
  uint8_t *shard = shard_of(file, 0);
  put_u32(shard + 4, get_u32(shard + 4) * 2);
}
static void edit_shard_array_length(uint8_t *file, size_t *size) {
  (void)size;
  uint8_t *shard = shard_of(file, 1);
  put_u32(shard + 12, get_u32(shard + 12) - get_u32(shard + 4));
}
static void edit_shard_too_many_keys(uint8_t *file, size_t *size) {
  (void)size;
  uint8_t *shard = shard_of(file, 2);
  put_u64(shard + 16, (uint64_t)get_u32(shard + 12) + 1);
}
static void edit_shard_keys_moved(uint8_t *file, size_t *size) {
  /* One key moved from shard 0's count to shard 1's: each still plausible, the sum unchanged. */
  (void)size;
  uint8_t *a = shard_of(file, 0), *b = shard_of(file, 1);
  put_u64(a + 16, get_u64(a + 16) - 1);
  put_u64(b + 16, get_u64(b + 16) + 1);
}
static void edit_shard_empty_with_seed(uint8_t *file, size_t *size) {
  /* Shard 0 claims no keys but keeps its geometry. */
  (void)size;
  uint8_t *shard = shard_of(file, 0);
  put_u64(payload_of(file) + 16, get_u64(payload_of(file) + 16) - get_u64(shard + 16));
  put_u64(shard + 16, 0);
}
static void edit_sharded_m(uint8_t *file, size_t *size) {
  (void)size;
  put_u64(file + OFF_M, get_u64(file + OFF_M) + 8);
}
/* The payload (and file) one byte shorter, the header saying so: the last shard no longer fits. */
static void edit_sharded_short(uint8_t *file, size_t *size) {
  put_u64(file + OFF_PAYLOAD_LENGTH, get_u64(file + OFF_PAYLOAD_LENGTH) - 1);
  *size -= 1;
}
/* A payload that ends inside its own table. */
static void edit_sharded_inside_table(uint8_t *file, size_t *size) {
  put_u64(file + OFF_PAYLOAD_LENGTH, 48);
  *size = (size_t)(get_u64(file + OFF_PAYLOAD_OFFSET) + 48);
}

static void test_sharded_corrupt(int kind) {
  size_t size = 0;
  uint8_t *file = sharded_file(kind, 2, "sc", 4000, 61, &size);
  REQUIRE(file != NULL);
  bg_filter *f = load_copy(file, size, 0);
  REQUIRE(f != NULL);
  bg_filter_free(f);

  /* Without a fresh checksum any edit is caught there; a cut file is caught before, by its length. */
  uint8_t *raw = malloc(size);
  REQUIRE(raw != NULL);
  memcpy(raw, file, size);
  put_u64(table_of(raw), get_u64(table_of(raw)) + 8);
  bg_filter *g = NULL;
  CHECK_STATUS(bg_filter_deserialize(raw, size, &g), BG_E_CHECKSUM);
  CHECK_STATUS(bg_filter_deserialize(file, size - 1, &g), BG_E_TRUNCATED);
  CHECK_STATUS(bg_filter_deserialize(file, (size_t)get_u64(file + OFF_PAYLOAD_OFFSET) + 40, &g),
               BG_E_TRUNCATED);
  free(raw);

  expect_code(file, size, edit_shard_bits_high, BG_E_PAYLOAD, "shard bits above 24");
  expect_code(file, size, edit_shard_bits_big_table, BG_E_PAYLOAD, "a table longer than the payload");
  expect_code(file, size, edit_sharded_reserved2, BG_E_PAYLOAD, "sharded: reserved byte 2");
  expect_code(file, size, edit_sharded_reserved4, BG_E_PAYLOAD, "sharded: reserved byte 4");
  expect_code(file, size, edit_sharded_reserved15, BG_E_PAYLOAD, "sharded: reserved byte 15");
  expect_code(file, size, edit_sharded_reserved24, BG_E_PAYLOAD, "sharded: reserved byte 24");
  expect_code(file, size, edit_sharded_key_count, BG_E_PAYLOAD, "key count not the shards' sum");
  expect_code(file, size, edit_table_start, BG_E_PAYLOAD, "table not starting after itself");
  expect_code(file, size, edit_table_backwards, BG_E_PAYLOAD, "table going backwards");
  expect_code(file, size, edit_table_past_end, BG_E_PAYLOAD, "table entry past the payload");
  expect_code(file, size, edit_table_end_short, BG_E_PAYLOAD, "table ending before the payload");
  expect_code(file, size, edit_table_swap, BG_E_PAYLOAD, "shards swapped in the table");
  expect_code(file, size, edit_shard_width, BG_E_PAYLOAD, "shard of the other width");
  expect_code(file, size, edit_shard_nested, BG_E_PAYLOAD, "shard with shards");
  expect_code(file, size, edit_shard_reserved, BG_E_PAYLOAD, "shard reserved byte");
  expect_code(file, size, edit_shard_segment, BG_E_PAYLOAD, "shard segment length");
  expect_code(file, size, edit_shard_array_length, BG_E_PAYLOAD, "shard array length");
  expect_code(file, size, edit_shard_too_many_keys, BG_E_PAYLOAD, "shard with more keys than cells");
  expect_code(file, size, edit_shard_empty_with_seed, BG_E_PAYLOAD, "empty shard with cells");
  expect_code(file, size, edit_sharded_m, BG_E_HEADER, "m not the shards' cells");
  expect_code(file, size, edit_sharded_short, BG_E_PAYLOAD, "payload one byte short");
  expect_code(file, size, edit_sharded_inside_table, BG_E_PAYLOAD, "payload ending in its table");
  expect_code(file, size, edit_k, BG_E_HEADER, "sharded: k");
  /* Moving a key between shards' counts keeps every check true: the counts are not the keys. */
  uint8_t *moved = malloc(size);
  REQUIRE(moved != NULL);
  memcpy(moved, file, size);
  size_t moved_size = size;
  edit_shard_keys_moved(moved, &moved_size);
  reseal(moved, moved_size);
  CHECK_STATUS(bg_filter_deserialize(moved, moved_size, &g), BG_OK);
  bg_filter_free(g);
  free(moved);
  free(file);
}

int main(void) {
  for (int i = 0; i < 2; i++) {
    int kind = KINDS[i];
    test_error_rate(kind);
    test_duplicates(kind);
    test_empty(kind);
    test_one_key(kind);
    test_determinism(kind);
    test_corrupt(kind);
    test_life_cycle(kind);
    test_size(kind);
    test_sharded(kind);
    test_sharded_corrupt(kind);
  }
  return test_report("test_fuse");
}
