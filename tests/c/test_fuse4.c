/*
 * test_fuse4.c — the kind fuse4 (docs/kinds/fuse4.md), through the public API:
 * every fingerprint width w = 1..32 with every value width r = 0..8 at small n
 * (no false negatives, every member's exact value, measured error rate within
 * 2^-w, the width chosen from p, m and the payload size), values and
 * duplicates, the refusals (E_RANGE, E_ARG, E_STATIC, E_UNSUPPORTED),
 * deterministic bytes whatever the order, r = 0 identical to a plain filter,
 * tiny n, round trips, the size bound at 10^4 and 10^6 keys, sharded
 * payloads built from h1 and values, and exact codes for truncated and
 * corrupt payloads. Batches and corruption in general are test_conformance.c's.
 * `test_fuse4 --write-corpus DIR` writes the fuzzer's fuse4 seeds (tests/fuzz/corpus).
 */
#include <math.h>
#include <stdlib.h>

#include "test_filters.h"

#define HEADER 40u
#define PAD 7u
#define OFF_CHECKSUM 8
#define OFF_K 24
#define OFF_M 32
#define OFF_COUNT 56
#define OFF_PAYLOAD_OFFSET 96
#define OFF_PAYLOAD_LENGTH 104

static uint32_t get_u32(const uint8_t *p) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static uint64_t get_u64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}

/* The value key i gets in a filter of r value bits. */
static uint32_t value_of(long i, unsigned r) {
  return r ? (uint32_t)((i * 2654435761u) >> 7) & ((1u << r) - 1) : 0;
}

/* A sealed fuse4 filter of "prefix<i>", i in [0, count), each with value_of(i, r), added forwards or backwards. */
static bg_filter *build(double p, unsigned r, const char *prefix, long count, uint64_t seed, int backwards) {
  bg_filter *f = NULL;
  if (bg_filter_create_with_values(BG_KIND_FUSE4, count > 0 ? (uint64_t)count : 1, p, seed, BG_KEY_UTF8, r,
                                   &f) != BG_OK)
    return NULL;
  char key[64];
  for (long j = 0; j < count; j++) {
    long i = backwards ? count - 1 - j : j;
    size_t len = key_name(key, sizeof key, prefix, i);
    if (bg_filter_add_value(f, key, len, value_of(i, r)) != BG_OK) {
      bg_filter_free(f);
      return NULL;
    }
  }
  if (bg_filter_seal(f) != BG_OK) {
    bg_filter_free(f);
    return NULL;
  }
  return f;
}

/* Members whose answer is not "maybe" with exactly their value. */
static long wrong_members(const bg_filter *f, unsigned r, const char *prefix, long count) {
  long wrong = 0;
  char key[64];
  for (long i = 0; i < count; i++) {
    size_t len = key_name(key, sizeof key, prefix, i);
    uint32_t v = 0xdead;
    if (bg_filter_value(f, key, len, &v) != 1 || v != value_of(i, r) || bg_filter_contains(f, key, len) != 1)
      wrong++;
  }
  return wrong;
}

static long false_positives(const bg_filter *f, long probes) {
  long hits = 0;
  char key[64];
  for (long i = 0; i < probes; i++) {
    size_t len = key_name(key, sizeof key, "absent-", i);
    uint32_t v = 0xdead;
    int answer = bg_filter_value(f, key, len, &v);
    CHECK(answer == 0 || answer == 1);
    CHECK(answer == 0 ? v == 0xdead : v < 256);
    hits += answer == 1;
  }
  return hits;
}

/* Every w in 1..32 with every r in 0..8 at a few hundred keys. */
static void test_every_width(void) {
  const long n = 300;
  for (unsigned w = 1; w <= 32; w++) {
    for (unsigned r = 0; r <= 8; r++) {
      /* p = 1.5 * 2^-w also needs w bits (2^-(w-1) is above it); both forms are asked for in turn. */
      double p = ldexp(r % 2 ? 1.5 : 1.0, -(int)w);
      if (p >= 1.0) p = 0.75;
      bg_filter *f = build(p, r, "key-", n, 7 + w, 0);
      CHECK_MSG(f != NULL, "w=%u r=%u: build failed", w, r);
      if (!f) continue;
      CHECK_MSG(wrong_members(f, r, "key-", n) == 0, "w=%u r=%u: members without their exact value", w, r);
      bg_info info;
      bg_filter_info(f, &info);
      CHECK_EQ_U64(info.value_bits, r);
      CHECK_EQ_U64(info.k, 4);
      CHECK_MSG(info.build_attempts >= 1, "w=%u r=%u: attempts %u", w, r, info.build_attempts);
      CHECK_MSG(info.estimated_error_rate == ldexp(1.0, -(int)w), "w=%u r=%u: rate %g", w, r,
                info.estimated_error_rate);
      CHECK_MSG(info.m % (w + r) == 0, "w=%u r=%u: m %" PRIu64 " is not whole cells", w, r, info.m);
      uint64_t cells = info.m / (w + r);
      CHECK_EQ_U64(info.payload_bytes, HEADER + (cells * (w + r) + 7) / 8 + PAD);
      /* Measured rate within 2^-w plus four standard deviations. */
      long probes = 20000;
      double rate = ldexp(1.0, -(int)w), bound = rate + 4 * sqrt(rate * (1 - rate) / (double)probes);
      double measured = (double)false_positives(f, probes) / (double)probes;
      CHECK_MSG(measured <= bound, "w=%u r=%u: measured %g above %g", w, r, measured, bound);
      if (w <= 6) CHECK_MSG(measured >= rate / 2, "w=%u r=%u: measured %g far below 2^-w", w, r, measured);
      bg_filter_free(f);
    }
  }
}

/* The same keys and seed give the same bytes in any order; another seed other bytes; a reload the same answers. */
static void test_determinism_and_round_trip(void) {
  bg_filter *a = build(0.001, 5, "det-", 5000, 99, 0), *b = build(0.001, 5, "det-", 5000, 99, 1);
  bg_filter *c = build(0.001, 5, "det-", 5000, 100, 0);
  CHECK(a && b && c);
  if (a && b && c) {
    CHECK(same_file(a, b));
    CHECK(!same_file(a, c));
    size_t size = 0;
    uint8_t *file = serialize_copy(a, &size);
    CHECK(file != NULL);
    bg_filter *copy = NULL, *owned = NULL;
    CHECK_STATUS(bg_filter_deserialize(file, size, &copy), BG_OK);
    uint8_t *buffer = malloc(size);
    if (buffer) {
      memcpy(buffer, file, size);
      CHECK_STATUS(bg_filter_deserialize_owned(buffer, size, &owned), BG_OK);
      if (!owned) free(buffer);
    }
    if (copy) {
      CHECK(wrong_members(copy, 5, "det-", 5000) == 0);
      CHECK(same_file(a, copy));
      bg_info info;
      bg_filter_info(copy, &info);
      CHECK_EQ_U64(info.value_bits, 5);
      CHECK(info.build_attempts >= 1);
    }
    if (owned) CHECK(wrong_members(owned, 5, "det-", 5000) == 0);
    bg_filter_free(copy);
    bg_filter_free(owned);
    free(file);
  }
  bg_filter_free(a);
  bg_filter_free(b);
  bg_filter_free(c);
}

/* r = 0: add_value(.., 0) and add give the same file; any other value is E_RANGE. */
static void test_no_values(void) {
  bg_filter *a = NULL, *b = NULL;
  CHECK_STATUS(bg_filter_create(BG_KIND_FUSE4, 100, 0.01, 5, BG_KEY_UTF8, &a), BG_OK);
  CHECK_STATUS(bg_filter_create_with_values(BG_KIND_FUSE4, 100, 0.01, 5, BG_KEY_UTF8, 0, &b), BG_OK);
  if (!a || !b) return;
  char key[64];
  for (long i = 0; i < 100; i++) {
    size_t len = key_name(key, sizeof key, "plain-", i);
    CHECK_STATUS(bg_filter_add(a, key, len), BG_OK);
    CHECK_STATUS(bg_filter_add_value(b, key, len, 0), BG_OK);
  }
  CHECK_STATUS(bg_filter_add_value(b, "x", 1, 1), BG_E_RANGE);
  CHECK_STATUS(bg_filter_seal(a), BG_OK);
  CHECK_STATUS(bg_filter_seal(b), BG_OK);
  CHECK(same_file(a, b));
  uint32_t v = 9;
  CHECK(bg_filter_value(a, "plain-7", 7, &v) == 1 && v == 0);
  bg_filter_free(a);
  bg_filter_free(b);
  /* Kinds without values: value 0 is a plain add, a value reads back 0. */
  bg_filter *classic = NULL;
  CHECK_STATUS(bg_filter_create(BG_KIND_CLASSIC, 100, 0.01, 5, BG_KEY_UTF8, &classic), BG_OK);
  if (classic) {
    CHECK_STATUS(bg_filter_add_value(classic, "a", 1, 0), BG_OK);
    CHECK_STATUS(bg_filter_add_value(classic, "b", 1, 1), BG_E_RANGE);
    v = 9;
    CHECK(bg_filter_value(classic, "a", 1, &v) == 1 && v == 0);
    CHECK_STATUS(bg_filter_add_h1_values(classic, NULL, NULL, 0), BG_E_UNSUPPORTED);
    bg_filter_free(classic);
  }
}

static void test_refusals(void) {
  bg_filter *f = NULL;
  CHECK_STATUS(bg_filter_create_with_values(BG_KIND_FUSE4, 10, 0.01, 1, BG_KEY_UTF8, 9, &f), BG_E_RANGE);
  CHECK_STATUS(bg_filter_create_with_values(BG_KIND_CLASSIC, 10, 0.01, 1, BG_KEY_UTF8, 1, &f),
               BG_E_UNSUPPORTED);
  CHECK_STATUS(bg_filter_create_with_values(BG_KIND_FUSE8, 10, 0.01, 1, BG_KEY_UTF8, 1, &f), BG_E_UNSUPPORTED);
  CHECK_STATUS(bg_filter_create(BG_KIND_FUSE4, 10, ldexp(1.0, -33), 1, BG_KEY_UTF8, &f), BG_E_RANGE);
  CHECK_STATUS(bg_filter_create(BG_KIND_FUSE4, 10, ldexp(1.0, -32), 1, BG_KEY_UTF8, &f), BG_OK);
  bg_filter_free(f);
  f = NULL;
  CHECK_STATUS(bg_filter_create_with_values(BG_KIND_FUSE4, 10, 0.01, 1, BG_KEY_UTF8, 3, &f), BG_OK);
  if (!f) return;
  uint32_t v = 0;
  CHECK_STATUS(bg_filter_add(f, "a", 1), BG_E_ARG); /* a value is required */
  CHECK_STATUS(bg_filter_add_key(f, "a", 1), BG_E_ARG);
  CHECK_STATUS(bg_filter_add_value(f, "a", 1, 8), BG_E_RANGE);    /* 2^3 */
  CHECK_STATUS(bg_filter_value(f, "a", 1, &v), BG_E_UNSUPPORTED); /* not sealed */
  CHECK_STATUS(bg_filter_value(f, "a", 1, NULL), BG_E_ARG);
  uint64_t h1[2] = {1, 2};
  uint8_t values[2] = {1, 9};
  CHECK_STATUS(bg_filter_add_h1_values(f, h1, NULL, 2), BG_E_ARG);
  CHECK_STATUS(bg_filter_add_h1_values(f, h1, values, 2), BG_E_RANGE); /* the first stays added */
  bg_info info;
  bg_filter_info(f, &info);
  CHECK_EQ_U64(info.count, 1);
  CHECK_STATUS(bg_filter_add_value(f, "a", 1, 7), BG_OK);
  CHECK_STATUS(bg_filter_seal(f), BG_OK);
  CHECK_STATUS(bg_filter_add_value(f, "b", 1, 1), BG_E_STATIC);
  CHECK_STATUS(bg_filter_add(f, "b", 1), BG_E_STATIC);
  CHECK(bg_filter_value(f, "a", 1, &v) == 1 && v == 7);
  CHECK_STATUS(bg_filter_merge(f, f), BG_E_UNSUPPORTED);
  CHECK_STATUS(bg_filter_remove(f, "a", 1), BG_E_UNSUPPORTED);
  bg_filter_free(f);
}

/* A key added twice with different values keeps the larger, whatever the order. */
static void test_duplicates(void) {
  for (int order = 0; order < 2; order++) {
    bg_filter *f = NULL;
    CHECK_STATUS(bg_filter_create_with_values(BG_KIND_FUSE4, 10, 0.01, 3, BG_KEY_UTF8, 4, &f), BG_OK);
    if (!f) continue;
    CHECK_STATUS(bg_filter_add_value(f, "dup", 3, order ? 2 : 11), BG_OK);
    CHECK_STATUS(bg_filter_add_value(f, "other", 5, 3), BG_OK);
    CHECK_STATUS(bg_filter_add_value(f, "dup", 3, order ? 11 : 2), BG_OK);
    CHECK_STATUS(bg_filter_add_value(f, "dup", 3, 5), BG_OK);
    CHECK_STATUS(bg_filter_seal(f), BG_OK);
    uint32_t v = 0;
    CHECK(bg_filter_value(f, "dup", 3, &v) == 1 && v == 11);
    CHECK(bg_filter_value(f, "other", 5, &v) == 1 && v == 3);
    bg_info info;
    bg_filter_info(f, &info);
    CHECK_EQ_U64(info.count, 4);    /* every add */
    CHECK_EQ_U64(info.bits_set, 2); /* distinct keys */
    bg_filter_free(f);
  }
}

/* n = 0 .. 40: every member exact; the empty filter says no and has no cells. */
static void test_tiny(void) {
  for (long n = 0; n <= 40; n++) {
    bg_filter *f = build(0.01, 2, "tiny-", n, (uint64_t)n, 0);
    CHECK_MSG(f != NULL, "n=%ld", n);
    if (!f) continue;
    CHECK_MSG(wrong_members(f, 2, "tiny-", n) == 0, "n=%ld", n);
    bg_info info;
    bg_filter_info(f, &info);
    if (n == 0) {
      CHECK_EQ_U64(info.m, 0);
      CHECK_EQ_U64(info.payload_bytes, HEADER);
      CHECK(bg_filter_contains(f, "tiny-0", 6) == 0);
    }
    size_t size = 0;
    uint8_t *file = serialize_copy(f, &size);
    bg_filter *g = NULL;
    CHECK_STATUS(bg_filter_deserialize(file, size, &g), BG_OK);
    if (g) CHECK_MSG(wrong_members(g, 2, "tiny-", n) == 0, "n=%ld reloaded", n);
    bg_filter_free(g);
    free(file);
    bg_filter_free(f);
  }
}

/* Payload bits per key over log2(1/eps) + r, eps = 2^-w: <= 1.15 at 10^4 keys, <= 1.08 at 10^6. */
static void test_size(void) {
  static const struct {
    long n;
    double p, bound;
    unsigned r;
  } cases[] = {{10000, 0.1, 1.15, 0},       {10000, 0.01, 1.15, 0},        {10000, 0.001, 1.15, 3},
               {10000, 1.0 / 256, 1.15, 0}, {10000, 1.0 / 65536, 1.15, 3}, {1000000, 1.0 / 256, 1.08, 0},
               {1000000, 0.01, 1.08, 3}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    bg_filter *f = build(cases[c].p, cases[c].r, "size-", cases[c].n, 11, 0);
    CHECK(f != NULL);
    if (!f) continue;
    bg_info info;
    bg_filter_info(f, &info);
    double floor_bits = -log2(info.estimated_error_rate) + cases[c].r;
    double ratio = (double)info.payload_bytes * 8.0 / (double)cases[c].n / floor_bits;
    CHECK_MSG(ratio <= cases[c].bound, "n=%ld p=%g r=%u: %.4f x the floor (bound %.2f)", cases[c].n, cases[c].p,
              cases[c].r, ratio, cases[c].bound);
    if (cases[c].n == 1000000) CHECK(wrong_members(f, cases[c].r, "size-", 1000) == 0);
    bg_filter_free(f);
  }
}

/* url filters: the value of the first (most specific) expression that matches. */
static void test_url_values(void) {
  bg_filter *f = NULL;
  CHECK_STATUS(bg_filter_create_with_values(BG_KIND_FUSE4, 10, 0.001, 1, BG_KEY_URL, 2, &f), BG_OK);
  if (!f) return;
  const char *a = "http://evil.example/", *b = "http://evil.example/deeper/page.html";
  CHECK_STATUS(bg_filter_add_value(f, a, strlen(a), 1), BG_OK);
  CHECK_STATUS(bg_filter_add_value(f, b, strlen(b), 3), BG_OK);
  CHECK_STATUS(bg_filter_seal(f), BG_OK);
  uint32_t v = 0;
  CHECK(bg_filter_value(f, b, strlen(b), &v) == 1 && v == 3);
  const char *c = "http://evil.example/other";
  CHECK(bg_filter_value(f, c, strlen(c), &v) == 1 && v == 1);
  bg_filter_free(f);
}

/* ---- corrupt and truncated files ------------------------------------------ */

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
  free(copy);
}

static uint8_t *payload_of(uint8_t *file) { return file + get_u64(file + OFF_PAYLOAD_OFFSET); }
static void edit_w0(uint8_t *f, size_t *s) { (void)s, payload_of(f)[0] = 0; }
static void edit_w33(uint8_t *f, size_t *s) { (void)s, payload_of(f)[0] = 33; }
static void edit_w_other(uint8_t *f, size_t *s) { (void)s, payload_of(f)[0]++; }
static void edit_r9(uint8_t *f, size_t *s) { (void)s, payload_of(f)[2] = 9; }
static void edit_reserved3(uint8_t *f, size_t *s) { (void)s, payload_of(f)[3] = 1; }
static void edit_reserved36(uint8_t *f, size_t *s) { (void)s, payload_of(f)[37] = 1; }
static void edit_segment_pow2(uint8_t *f, size_t *s) { (void)s, put_u32(payload_of(f) + 4, 3); }
static void edit_segment_long(uint8_t *f, size_t *s) { (void)s, put_u32(payload_of(f) + 4, 1u << 19); }
static void edit_count_zero(uint8_t *f, size_t *s) { (void)s, put_u32(payload_of(f) + 8, 0); }
static void edit_array(uint8_t *f, size_t *s) {
  (void)s, put_u32(payload_of(f) + 12, get_u32(payload_of(f) + 12) + 1);
}
static void edit_keys(uint8_t *f, size_t *s) { (void)s, put_u64(payload_of(f) + 16, 1u << 30); }
static void edit_attempts(uint8_t *f, size_t *s) { (void)s, put_u32(payload_of(f) + 32, 0); }
static void edit_pad(uint8_t *f, size_t *s) { f[*s - 1] = 1; }
static void edit_k(uint8_t *f, size_t *s) { (void)s, put_u32(f + OFF_K, 3); }
static void edit_m(uint8_t *f, size_t *s) { (void)s, put_u64(f + OFF_M, get_u64(f + OFF_M) + 1); }
static void edit_longer(uint8_t *f, size_t *s) {
  (void)f;
  put_u64(f + OFF_PAYLOAD_LENGTH, get_u64(f + OFF_PAYLOAD_LENGTH) - 1);
  (*s)--;
}
static void edit_shard_bits(uint8_t *f, size_t *s) { (void)s, payload_of(f)[1] = 25; }
static void edit_no_keys(uint8_t *f, size_t *s) { (void)s, put_u64(payload_of(f) + 16, 0); }

/* Bits past the last cell (in its last byte) must be zero. */
static void edit_tail_bits(uint8_t *f, size_t *s) {
  uint8_t *p = payload_of(f);
  uint64_t bits = (uint64_t)get_u32(p + 12) * (p[0] + p[2]);
  if (bits % 8)
    p[HEADER + bits / 8] |= 0x80;
  else
    (void)s;
}

static void test_corrupt(void) {
  bg_filter *f = build(ldexp(1.0, -10), 3, "bad-", 301, 4, 0);
  CHECK(f != NULL);
  if (!f) return;
  size_t size = 0;
  uint8_t *file = serialize_copy(f, &size);
  bg_filter_free(f);
  if (!file) return;
  static const struct {
    file_edit edit;
    int code;
    const char *what;
  } edits[] = {
      {edit_w0, BG_E_PAYLOAD, "w = 0"},
      {edit_w33, BG_E_PAYLOAD, "w = 33"},
      {edit_w_other, BG_E_PAYLOAD, "another w (length and m disagree)"},
      {edit_r9, BG_E_PAYLOAD, "r = 9"},
      {edit_reserved3, BG_E_PAYLOAD, "reserved byte 3"},
      {edit_reserved36, BG_E_PAYLOAD, "reserved bytes 36..39"},
      {edit_segment_pow2, BG_E_PAYLOAD, "segment length not a power of two"},
      {edit_segment_long, BG_E_PAYLOAD, "segment length above 2^18"},
      {edit_count_zero, BG_E_PAYLOAD, "no segments"},
      {edit_array, BG_E_PAYLOAD, "array length"},
      {edit_keys, BG_E_PAYLOAD, "more keys than cells"},
      {edit_attempts, BG_E_PAYLOAD, "zero attempts"},
      {edit_pad, BG_E_PAYLOAD, "padding not zero"},
      {edit_k, BG_E_HEADER, "k = 3"},
      {edit_m, BG_E_HEADER, "m"},
      {edit_longer, BG_E_PAYLOAD, "one byte short"},
      {edit_shard_bits, BG_E_PAYLOAD, "shard bits 25"},
      {edit_no_keys, BG_E_PAYLOAD, "no keys but cells"},
  };
  for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++)
    expect_code(file, size, edits[i].edit, edits[i].code, edits[i].what);
  /* Bits past the last cell: six keys take 12 cells of 13 bits, half a byte left over. */
  bg_filter *tiny = build(ldexp(1.0, -10), 3, "bad-", 6, 4, 0);
  size_t tiny_size = 0;
  uint8_t *tiny_file = tiny ? serialize_copy(tiny, &tiny_size) : NULL;
  bg_filter_free(tiny);
  CHECK(tiny_file && (get_u32(payload_of(tiny_file) + 12) * 13u) % 8 != 0);
  if (tiny_file) expect_code(tiny_file, tiny_size, edit_tail_bits, BG_E_PAYLOAD, "bits past the last cell");
  free(tiny_file);
  /* Every truncation is refused. */
  for (size_t cut = 0; cut < size; cut++) {
    bg_filter *g = NULL;
    int rc = bg_filter_deserialize(file, cut, &g);
    CHECK_MSG(rc < 0 && g == NULL, "cut at %zu: %s", cut, bg_status_name(rc));
    bg_filter_free(g);
  }
  /* Every single bit flip in the payload, checksum restamped: refused, or answers every member exactly. */
  uint8_t *copy = malloc(size);
  uint64_t offset = get_u64(file + OFF_PAYLOAD_OFFSET);
  for (size_t byte = (size_t)offset; copy && byte < size; byte += 3) {
    memcpy(copy, file, size);
    copy[byte] ^= (uint8_t)(1u << (byte % 8));
    reseal(copy, size);
    bg_filter *g = NULL;
    if (bg_filter_deserialize(copy, size, &g) == BG_OK) {
      /* A flipped cell bit or seed gives a valid but different filter: it must still answer, never crash. */
      char key[64];
      for (long i = 0; i < 301; i++) {
        size_t len = key_name(key, sizeof key, "bad-", i);
        uint32_t v = 0;
        int answer = bg_filter_value(g, key, len, &v);
        CHECK(answer == 0 || (answer == 1 && v < 8));
      }
      bg_filter_free(g);
    }
  }
  free(copy);
  free(file);
}

/* ---- sharded payloads ------------------------------------------------------ */

/*
 * A sharded fuse4 file of 2^bits shards (docs/FORMAT.md, fuse4): each shard
 * is the unsharded payload of its keys, built from their h1 and values.
 */
static uint8_t *sharded_file(unsigned bits, unsigned r, long count, uint64_t seed, size_t *size_out) {
  size_t shards = (size_t)1 << bits;
  uint64_t *h1 = malloc((size_t)count * sizeof(uint64_t) * shards);
  uint8_t *values = malloc((size_t)count * shards);
  size_t *n = calloc(shards, sizeof *n), *lengths = calloc(shards, sizeof *lengths);
  uint8_t **payloads = calloc(shards, sizeof *payloads), *file = NULL;
  if (!h1 || !values || !n || !lengths || !payloads) goto done;
  char key[64];
  for (long i = 0; i < count; i++) {
    size_t len = key_name(key, sizeof key, "shard-", i);
    bg_hash_pair h = bg_hash(key, len, seed);
    size_t s = h.h2 >> (64 - bits);
    h1[s * (size_t)count + n[s]] = h.h1;
    values[s * (size_t)count + n[s]++] = (uint8_t)value_of(i, r);
  }
  uint64_t payload_length = HEADER + 8 * (shards + 1), cells = 0, keys = 0;
  for (size_t s = 0; s < shards; s++) {
    bg_filter *f = NULL;
    if (bg_filter_create_with_values(BG_KIND_FUSE4, n[s] ? n[s] : 1, 0.001, seed, BG_KEY_UTF8, r, &f) != BG_OK)
      goto done;
    bg_status rc = bg_filter_add_h1_values(f, h1 + s * (size_t)count, values + s * (size_t)count, n[s]);
    if (rc == BG_OK) rc = bg_filter_seal(f);
    size_t size = 0;
    uint8_t *part = rc == BG_OK ? serialize_copy(f, &size) : NULL;
    bg_filter_free(f);
    if (!part) goto done;
    lengths[s] = size - 128;
    payloads[s] = malloc(lengths[s]);
    if (payloads[s]) memcpy(payloads[s], part + 128, lengths[s]);
    free(part);
    if (!payloads[s]) goto done;
    payload_length += lengths[s];
    cells += get_u32(payloads[s] + 12);
    keys += get_u64(payloads[s] + 16);
  }
  bg_filter *t = build(0.001, r, "none-", 0, seed, 0);
  size_t template_size = 0;
  uint8_t *template_file = t ? serialize_copy(t, &template_size) : NULL;
  bg_filter_free(t);
  if (!template_file) goto done;
  *size_out = (size_t)(128 + payload_length);
  file = calloc(1, *size_out);
  if (file) {
    memcpy(file, template_file, 128);
    put_u64(file + OFF_COUNT, (uint64_t)count);
    put_u64(file + OFF_M, cells * (template_file[128] + r));
    put_u64(file + OFF_PAYLOAD_LENGTH, payload_length);
    uint8_t *payload = file + 128, *at = payload + HEADER + 8 * (shards + 1);
    payload[0] = template_file[128];
    payload[1] = (uint8_t)bits;
    payload[2] = (uint8_t)r;
    put_u64(payload + 16, keys);
    for (size_t s = 0; s < shards; s++) {
      put_u64(payload + HEADER + 8 * s, (uint64_t)(at - payload));
      memcpy(at, payloads[s], lengths[s]);
      at += lengths[s];
    }
    put_u64(payload + HEADER + 8 * shards, (uint64_t)(at - payload));
    reseal(file, *size_out);
  }
  free(template_file);
done:
  for (size_t s = 0; payloads && s < shards; s++) free(payloads[s]);
  free(payloads);
  free(lengths);
  free(n);
  free(h1);
  free(values);
  return file;
}

static void edit_shard_r(uint8_t *f, size_t *s) {
  (void)s;
  uint8_t *p = payload_of(f);
  p[get_u64(p + HEADER) + 2] ^= 1; /* the first shard's r */
}
static void edit_shard_table(uint8_t *f, size_t *s) {
  (void)s;
  uint8_t *p = payload_of(f);
  put_u64(p + HEADER + 8, get_u64(p + HEADER + 8) + 1);
}
static void edit_shard_keys(uint8_t *f, size_t *s) {
  (void)s;
  uint8_t *p = payload_of(f);
  put_u64(p + 16, get_u64(p + 16) + 1);
}

static void test_sharded(void) {
  size_t size = 0;
  uint8_t *file = sharded_file(2, 4, 4000, 21, &size);
  CHECK(file != NULL);
  if (!file) return;
  bg_filter *f = NULL;
  CHECK_STATUS(bg_filter_deserialize(file, size, &f), BG_OK);
  if (f) {
    CHECK(wrong_members(f, 4, "shard-", 4000) == 0);
    long probes = 100000, fp = false_positives(f, probes);
    CHECK_MSG(fp <= probes / 1024 + 4 * 10, "sharded: %ld false positives in %ld", fp, probes);
    bg_info info;
    bg_filter_info(f, &info);
    CHECK_EQ_U64(info.value_bits, 4);
    CHECK_EQ_U64(info.bits_set, 4000);
    size_t again = 0;
    uint8_t *copy = serialize_copy(f, &again);
    CHECK(copy && again == size && memcmp(copy, file, size) == 0);
    free(copy);
    bg_filter_free(f);
  }
  expect_code(file, size, edit_shard_r, BG_E_PAYLOAD, "a shard of another r");
  expect_code(file, size, edit_shard_table, BG_E_PAYLOAD, "shard table");
  expect_code(file, size, edit_shard_keys, BG_E_PAYLOAD, "key count of the whole");
  free(file);
}

/* ---- the fuzzer's seed corpus (test_fuse4 --write-corpus tests/fuzz/corpus) ---- */

static int write_file(const char *dir, const char *name, const uint8_t *bytes, size_t size) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *out = fopen(path, "wb");
  if (!out) return 0;
  int ok = fwrite(bytes, 1, size, out) == size;
  return fclose(out) == 0 && ok;
}

static int write_filter(const char *dir, const char *name, bg_filter *f) {
  size_t size = 0;
  uint8_t *file = f ? serialize_copy(f, &size) : NULL;
  int ok = file && write_file(dir, name, file, size);
  free(file);
  bg_filter_free(f);
  return ok;
}

static int write_corpus(const char *dir) {
  int ok = write_filter(dir, "kind_fuse4.bgf", build(0.01, 0, "corpus-", 60, 1, 0));
  ok &= write_filter(dir, "kind_fuse4_values.bgf", build(ldexp(1.0, -5), 3, "corpus-", 40, 2, 0));
  ok &= write_filter(dir, "kind_fuse4_empty.bgf", build(0.5, 8, "corpus-", 0, 3, 0));
  size_t size = 0;
  uint8_t *sharded = sharded_file(1, 2, 30, 4, &size);
  ok &= sharded && write_file(dir, "kind_fuse4_sharded.bgf", sharded, size);
  free(sharded);
  return ok;
}

/* bg_filter_add_many_values: the file of adding one by one (several batch groups); refusals as documented. */
static void test_add_many_values(void) {
  enum { N = 1000 };
  static uint8_t items[N * 16];
  static uint32_t offsets[N + 1];
  static uint8_t values[N];
  for (long i = 0; i < N; i++) {
    offsets[i + 1] = offsets[i] + (uint32_t)key_name((char *)items + offsets[i], 16, "many-", i);
    values[i] = (uint8_t)value_of(i, 6);
  }
  bg_filter *one = build(0.001, 6, "many-", N, 7, 0), *many = NULL;
  CHECK_STATUS(bg_filter_create_with_values(BG_KIND_FUSE4, N, 0.001, 7, BG_KEY_UTF8, 6, &many), BG_OK);
  CHECK(one && many);
  if (!one || !many) {
    bg_filter_free(one);
    bg_filter_free(many);
    return;
  }
  CHECK_STATUS(bg_filter_add_many_values(many, items, offsets, NULL, N), BG_E_ARG); /* r > 0 needs values */
  CHECK_STATUS(bg_filter_add_many_values(many, items, offsets, values, 0), BG_OK);
  CHECK_STATUS(bg_filter_add_many_values(many, NULL, offsets, values, 1), BG_E_ARG);
  bg_info info;
  bg_filter_info(many, &info);
  CHECK_EQ_U64(info.count, 0);
  CHECK_STATUS(bg_filter_add_many_values(many, items, offsets, values, N), BG_OK);
  bg_filter_info(many, &info);
  CHECK_EQ_U64(info.count, N);
  CHECK_STATUS(bg_filter_seal(many), BG_OK);
  CHECK(same_file(one, many));
  CHECK(wrong_members(many, 6, "many-", N) == 0);
  bg_filter_free(many);
  many = NULL;
  /* A value of 2^r stops the batch there: the items before it stay added and counted. */
  CHECK_STATUS(bg_filter_create_with_values(BG_KIND_FUSE4, N, 0.001, 7, BG_KEY_UTF8, 6, &many), BG_OK);
  if (many) {
    values[300] = 64;
    CHECK_STATUS(bg_filter_add_many_values(many, items, offsets, values, N), BG_E_RANGE);
    bg_filter_info(many, &info);
    CHECK_EQ_U64(info.count, 300);
    values[300] = (uint8_t)value_of(300, 6);
  }
  bg_filter_free(many);
  /* Kinds without values take all-zero values (as bg_filter_add_value(.., 0)), and refuse any other. */
  bg_filter *plain = NULL, *classic = NULL;
  CHECK_STATUS(bg_filter_create(BG_KIND_CLASSIC, N, 0.01, 7, BG_KEY_UTF8, &plain), BG_OK);
  CHECK_STATUS(bg_filter_create(BG_KIND_CLASSIC, N, 0.01, 7, BG_KEY_UTF8, &classic), BG_OK);
  if (plain && classic) {
    static const uint8_t zeros[N];
    CHECK_STATUS(bg_filter_add_many(plain, items, offsets, N), BG_OK);
    CHECK_STATUS(bg_filter_add_many_values(classic, items, offsets, zeros, N), BG_OK);
    CHECK(same_file(plain, classic));
    CHECK_STATUS(bg_filter_add_many_values(classic, items, offsets, values + 1, 1), BG_E_RANGE);
  }
  bg_filter_free(plain);
  bg_filter_free(classic);
  bg_filter_free(one);
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "--write-corpus") == 0) return write_corpus(argv[2]) ? 0 : 1;
  test_every_width();
  test_determinism_and_round_trip();
  test_no_values();
  test_refusals();
  test_add_many_values();
  test_duplicates();
  test_tiny();
  test_size();
  test_url_values();
  test_corrupt();
  test_sharded();
  return test_report("test_fuse4");
}
