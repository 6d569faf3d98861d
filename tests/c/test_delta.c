/*
 * test_delta.c — .bgd delta files (src/delta.c, docs/FORMAT.md "Delta files"):
 *   - chains of four generations give byte-identical files for every kind,
 *     with metadata that moves the payload, layers that grow, a skipped
 *     generation, and a metadata-only change (no changed bits);
 *   - a wrong base (another list, generation, bytes; a replay) is
 *     E_DELTA_BASE, every truncation E_TRUNCATED, every single-byte corruption
 *     (as is, and with the delta's checksum re-stamped) some error, a small
 *     buffer E_BUFFER, a result that fails its checks E_DELTA; the buffer is
 *     the base, byte for byte, after each;
 *   - encode refuses incompatible pairs;
 *   - the size target: a 1M-key classic filter at p = 0.01 whose next
 *     generation drops 1% of the keys and adds 1% has a delta within 1.1x of
 *     log2 C(m, changed bits) / 8 bytes plus its fixed header. The other
 *     kinds' sizes (the table in docs/FORMAT.md) are printed, not asserted,
 *     when BG_DELTA_SIZES=1 is set: ten 1M-key builds, slow under ASan.
 *   test_delta --write-corpus DIR writes tests/fuzz/delta_corpus (see fuzz_delta.c).
 */
#include <math.h>
#include <stdlib.h>

#include "bloomgate.h"
#include "test_util.h"

static const uint8_t LIST_A[16] = {0xa1, 0x5e, 0x11, 0x57, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
static const uint8_t LIST_B[16] = {0xb2, 0x5e, 0x11, 0x57, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};

typedef struct {
  uint8_t *bytes;
  size_t len;
} blob;

static void blob_free(blob *b) {
  free(b->bytes);
  b->bytes = NULL;
  b->len = 0;
}

static uint64_t get_u64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}
static void put_u64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static void reseal(uint8_t *file, size_t len) { put_u64(file + 8, bg_file_checksum(file, len)); }

/* What one file of a list is built from. */
typedef struct {
  int kind;
  uint64_t capacity;
  double error_rate;
  uint64_t seed;
  int key_encoding;
  const uint8_t *list_id;
  uint64_t generation;
  long first, count; /* keys "key-<first>" .. "key-<first+count-1>", in that order */
  const char *metadata;
} spec;

static blob build(const spec *s) {
  blob out = {NULL, 0};
  bg_filter *f = NULL;
  if (bg_filter_create(s->kind, s->capacity, s->error_rate, s->seed, s->key_encoding, &f) != BG_OK) return out;
  char key[48];
  for (long i = s->first; i < s->first + s->count; i++) {
    int len = snprintf(key, sizeof key, "key-%ld", i);
    if (bg_filter_add(f, key, (size_t)len) != BG_OK) {
      bg_filter_free(f);
      return out;
    }
  }
  if (s->metadata && bg_filter_set_metadata(f, s->metadata, strlen(s->metadata)) != BG_OK) {
    bg_filter_free(f);
    return out;
  }
  bg_filter_set_identity(f, s->list_id, s->generation);
  if (bg_filter_seal(f) == BG_OK) {
    size_t size = bg_filter_serialized_size(f), written = 0;
    out.bytes = malloc(size);
    if (out.bytes && bg_filter_serialize(f, out.bytes, size, &written) == BG_OK && written == size) {
      out.len = size;
    } else {
      blob_free(&out);
    }
  }
  bg_filter_free(f);
  return out;
}

/* The delta from base to target (two calls: the size, then the bytes). */
static blob encode(const blob *base, const blob *target) {
  blob out = {NULL, 0};
  size_t need = 0;
  if (bg_delta_encode(base->bytes, base->len, target->bytes, target->len, NULL, 0, &need) != BG_E_BUFFER)
    return out;
  out.bytes = malloc(need);
  size_t written = 0;
  if (!out.bytes ||
      bg_delta_encode(base->bytes, base->len, target->bytes, target->len, out.bytes, need, &written) != BG_OK ||
      written != need) {
    blob_free(&out);
    return out;
  }
  out.len = written;
  return out;
}

static size_t max_size(size_t a, size_t b) { return a > b ? a : b; }

/* A buffer of exactly `capacity` bytes holding `base`; ASan sees any write past it. */
static uint8_t *buffer_with(const blob *base, size_t capacity) {
  uint8_t *buffer = malloc(capacity ? capacity : 1);
  if (buffer) memcpy(buffer, base->bytes, base->len);
  return buffer;
}

/* Apply expecting failure with `want` (or any error when want is 0); the buffer must still be the base. */
static void expect_refused(const blob *base, size_t capacity, const uint8_t *delta, size_t delta_len, int want,
                           const char *what) {
  uint8_t *buffer = buffer_with(base, capacity);
  if (!buffer) return;
  size_t new_len = 12345;
  int rc = bg_delta_apply(buffer, base->len, capacity, delta, delta_len, &new_len);
  if (want)
    CHECK_STATUS_AT(rc, want, "%s", what);
  else
    CHECK_MSG(rc < 0, "%s: got %s", what, bg_status_name(rc));
  CHECK_MSG(memcmp(buffer, base->bytes, base->len) == 0, "%s: buffer changed", what);
  CHECK_MSG(new_len == 12345, "%s: new_len written on failure", what);
  free(buffer);
}

/* base -> target through a delta: peek says what it is, apply gives the target's bytes. */
static void check_pair(const blob *base, const blob *target, const char *what) {
  blob delta = encode(base, target);
  CHECK_MSG(delta.bytes != NULL, "%s: encode", what);
  if (!delta.bytes) return;
  size_t need = 0;
  uint8_t one;
  CHECK_STATUS_AT(bg_delta_encode(base->bytes, base->len, target->bytes, target->len, &one, 1, &need),
                  BG_E_BUFFER, "%s", what);
  CHECK_EQ_U64(need, delta.len);

  bg_delta_info info;
  CHECK_STATUS_AT(bg_delta_peek(delta.bytes, delta.len, &info), BG_OK, "%s", what);
  bg_header hb, ht;
  CHECK_STATUS(bg_file_validate(base->bytes, base->len, &hb), BG_OK);
  CHECK_STATUS(bg_file_validate(target->bytes, target->len, &ht), BG_OK);
  CHECK_EQ_U64(info.version, BG_DELTA_VERSION);
  CHECK(memcmp(info.list_id, hb.list_id, 16) == 0);
  CHECK_EQ_U64(info.base_generation, hb.generation);
  CHECK_EQ_U64(info.base_length, base->len);
  CHECK_EQ_U64(info.base_checksum, hb.checksum);
  CHECK_EQ_U64(info.target_generation, ht.generation);
  CHECK_EQ_U64(info.target_length, target->len);
  CHECK_EQ_U64(info.target_checksum, ht.checksum);
  CHECK_EQ_U64(info.delta_length, delta.len);

  size_t capacity = max_size(base->len, target->len), new_len = 0;
  uint8_t *buffer = buffer_with(base, capacity);
  if (buffer) {
    CHECK_STATUS_AT(bg_delta_apply(buffer, base->len, capacity, delta.bytes, delta.len, &new_len), BG_OK, "%s",
                    what);
    CHECK_EQ_U64(new_len, target->len);
    CHECK_MSG(new_len == target->len && memcmp(buffer, target->bytes, target->len) == 0, "%s: not the target",
              what);
    /* Replaying the delta on its own result names the wrong generation. */
    blob result = {buffer, new_len};
    expect_refused(&result, max_size(new_len, capacity), delta.bytes, delta.len, BG_E_DELTA_BASE, "replay");
    free(buffer);
  }
  blob_free(&delta);
}

/* ---- chains: every kind, four generations --------------------------------------------- */

static const char *META[4] = {
    "{}",
    "{\"source\":\"delta test\",\"description\":\"the second generation moves the payload\",\"items\":1}",
    NULL,
    "{\"source\":\"delta test\",\"description\":\"metadata only\",\"items\":4}",
};

static void chain(int kind, const char *name) {
  const long n = 3000;
  spec s = {kind, (uint64_t)n, kind == BG_KIND_FUSE16 ? 0.0001 : 0.01, 99, BG_KEY_UTF8, LIST_A, 1, 0,
            n,    META[0]};
  if (kind == BG_KIND_CUCKOO) s.capacity = 2 * (uint64_t)n; /* room for the drift below */
  if (kind == BG_KIND_SCALABLE) s.capacity = (uint64_t)n / 4;
  blob files[4];
  for (int g = 0; g < 4; g++) {
    s.generation = 10 + (uint64_t)g * 3; /* generations need not be consecutive */
    s.metadata = META[g];
    /* Drift by 5% a generation; the scalable kind also grows (appended layers); the last is metadata only. */
    long shift = g == 3 ? 2 : g;
    s.first = shift * n / 20;
    s.count = kind == BG_KIND_SCALABLE ? n << (g == 3 ? 2 : g) : n;
    if (kind == BG_KIND_SCALABLE && g == 3) s.first = 2 * n / 20;
    files[g] = build(&s);
    CHECK_MSG(files[g].bytes != NULL, "%s generation %d", name, g);
    if (!files[g].bytes) return;
  }
  char what[64];
  for (int g = 0; g + 1 < 4; g++) {
    snprintf(what, sizeof what, "%s %d->%d", name, g, g + 1);
    check_pair(&files[g], &files[g + 1], what);
  }
  snprintf(what, sizeof what, "%s 0->2", name);
  check_pair(&files[0], &files[2], what);

  /* One buffer, grown as peek says, carried through the whole chain. */
  size_t len = files[0].len, capacity = len;
  uint8_t *buffer = malloc(capacity);
  memcpy(buffer, files[0].bytes, len);
  for (int g = 0; g + 1 < 4 && buffer; g++) {
    blob delta = encode(&files[g], &files[g + 1]);
    bg_delta_info info;
    CHECK_STATUS(bg_delta_peek(delta.bytes, delta.len, &info), BG_OK);
    if (info.target_length > capacity) {
      capacity = (size_t)info.target_length;
      buffer = realloc(buffer, capacity);
    }
    if (buffer) CHECK_STATUS(bg_delta_apply(buffer, len, capacity, delta.bytes, delta.len, &len), BG_OK);
    blob_free(&delta);
  }
  CHECK_MSG(buffer && len == files[3].len && memcmp(buffer, files[3].bytes, len) == 0, "%s chain", name);
  free(buffer);
  for (int g = 0; g < 4; g++) blob_free(&files[g]);
}

/* The example in docs/FORMAT.md: body bits 3, 4 and 20 differ; r = 1 codes them in two bytes, E5 2F. */
static void documented_example(void) {
  spec s = {BG_KIND_CLASSIC, 100, 0.01, 1, BG_KEY_UTF8, LIST_A, 1, 0, 0, NULL};
  blob base = build(&s);
  REQUIRE(base.bytes && base.len > 128 + 3);
  blob target = {malloc(base.len), base.len};
  REQUIRE(target.bytes);
  memcpy(target.bytes, base.bytes, base.len);
  put_u64(target.bytes + 72, 2);
  target.bytes[128] ^= 0x18; /* bits 3 and 4 */
  target.bytes[130] ^= 0x10; /* bit 20 */
  reseal(target.bytes, target.len);
  blob delta = encode(&base, &target);
  REQUIRE(delta.bytes);
  CHECK_EQ_U64(delta.len, BG_DELTA_HEADER_SIZE + (128 - 16) + 2);
  CHECK_EQ_U64(delta.bytes[20], 1);
  CHECK_EQ_U64(get_u64(delta.bytes + 24), 3);
  CHECK_EQ_U64(get_u64(delta.bytes + 112), 2);
  CHECK_EQ_U64(delta.bytes[delta.len - 2], 0xe5);
  CHECK_EQ_U64(delta.bytes[delta.len - 1], 0x2f);
  check_pair(&base, &target, "documented example");
  blob_free(&delta);
  blob_free(&base);
  blob_free(&target);
}

/* ---- refusals ------------------------------------------------------------------------- */

static void wrong_bases(void) {
  spec s = {BG_KIND_CLASSIC, 2000, 0.01, 7, BG_KEY_UTF8, LIST_A, 1, 0, 2000, "{\"a\":1}"};
  blob base = build(&s);
  s.generation = 2;
  s.first = 100;
  blob target = build(&s);
  s.generation = 1;
  s.first = 0;
  s.list_id = LIST_B;
  blob other_list = build(&s);
  s.list_id = LIST_A;
  s.generation = 7;
  blob other_generation = build(&s);
  s.generation = 1;
  s.count = 2001;
  blob other_bytes = build(&s);
  REQUIRE(base.bytes && target.bytes && other_list.bytes && other_generation.bytes && other_bytes.bytes);
  CHECK_EQ_U64(other_list.len, base.len);
  CHECK_EQ_U64(other_bytes.len, base.len);
  blob delta = encode(&base, &target);
  REQUIRE(delta.bytes);
  size_t cap = base.len;
  expect_refused(&other_list, cap, delta.bytes, delta.len, BG_E_DELTA_BASE, "other list");
  expect_refused(&other_generation, cap, delta.bytes, delta.len, BG_E_DELTA_BASE, "other generation");
  expect_refused(&other_bytes, cap, delta.bytes, delta.len, BG_E_DELTA_BASE, "same generation, other bytes");
  expect_refused(&target, cap, delta.bytes, delta.len, BG_E_DELTA_BASE, "replay on the target");

  /* The header names the base, but a payload byte changed after it was sealed. */
  blob tampered = {malloc(base.len), base.len};
  memcpy(tampered.bytes, base.bytes, base.len);
  tampered.bytes[base.len - 5] ^= 0x10;
  expect_refused(&tampered, cap, delta.bytes, delta.len, BG_E_DELTA_BASE,
                 "base bytes not matching its checksum");
  /* Not a filter at all, and a base one byte short. */
  memset(tampered.bytes, 0x5a, base.len);
  expect_refused(&tampered, cap, delta.bytes, delta.len, BG_E_DELTA_BASE, "not a filter");
  blob shorter = {base.bytes, base.len - 1};
  expect_refused(&shorter, cap, delta.bytes, delta.len, BG_E_DELTA_BASE, "base truncated");
  blob_free(&tampered);

  /* Arguments. */
  size_t new_len;
  uint8_t *buffer = buffer_with(&base, cap);
  CHECK_STATUS(bg_delta_apply(buffer, base.len, cap, delta.bytes, delta.len, NULL), BG_E_ARG);
  CHECK_STATUS(bg_delta_apply(NULL, base.len, cap, delta.bytes, delta.len, &new_len), BG_E_ARG);
  CHECK_STATUS(bg_delta_apply(buffer, base.len, base.len - 1, delta.bytes, delta.len, &new_len), BG_E_ARG);
  CHECK_STATUS(bg_delta_apply(buffer, base.len, cap, NULL, delta.len, &new_len), BG_E_ARG);
  CHECK_STATUS(bg_delta_apply(buffer, base.len, cap, NULL, 0, &new_len), BG_E_TRUNCATED);
  CHECK(memcmp(buffer, base.bytes, base.len) == 0);
  free(buffer);
  bg_delta_info info;
  CHECK_STATUS(bg_delta_peek(delta.bytes, delta.len, NULL), BG_E_ARG);
  CHECK_STATUS(bg_delta_peek(base.bytes, base.len, &info), BG_E_MAGIC); /* a .bgf is not a .bgd */

  blob_free(&delta);
  blob_free(&base);
  blob_free(&target);
  blob_free(&other_list);
  blob_free(&other_generation);
  blob_free(&other_bytes);
}

/* Every truncation, and single-byte corruptions as they are and with the delta's checksum re-stamped. */
static void damaged_deltas(int kind, const char *name) {
  spec s = {kind, 1500, 0.01, 5, BG_KEY_UTF8, LIST_A, 1, 0, 1500, "{\"g\":1}"};
  if (kind == BG_KIND_SCALABLE) s.capacity = 500;
  if (kind == BG_KIND_CUCKOO) s.capacity = 3000;
  blob base = build(&s);
  s.generation = 2;
  s.first = 60;
  s.count = kind == BG_KIND_SCALABLE ? 2400 : 1500; /* scalable: one layer more */
  s.metadata = "{\"generation\":2,\"padding\":\"enough to move the payload by 64\"}";
  blob target = build(&s);
  REQUIRE(base.bytes && target.bytes);
  blob delta = encode(&base, &target);
  REQUIRE(delta.bytes);
  size_t cap = max_size(base.len, target.len);
  char what[96];

  long truncations = 0, corruptions = 0;
  for (size_t len = 0; len < delta.len; len++, truncations++) {
    snprintf(what, sizeof what, "%s truncated to %zu", name, len);
    expect_refused(&base, cap, delta.bytes, len, BG_E_TRUNCATED, what);
    bg_delta_info info;
    CHECK_STATUS_AT(bg_delta_peek(delta.bytes, len, &info), BG_E_TRUNCATED, "%s", what);
  }
  uint8_t *bad = malloc(delta.len);
  REQUIRE(bad);
  static const uint8_t FLIPS[3] = {0x01, 0x80, 0xff};
  size_t stride = delta.len > 6000 ? delta.len / 3000 : 1;
  for (size_t i = 0; i < delta.len; i += (i < BG_DELTA_HEADER_SIZE + 256 ? 1 : stride)) {
    for (int f = 0; f < 3; f++) {
      memcpy(bad, delta.bytes, delta.len);
      bad[i] ^= FLIPS[f];
      snprintf(what, sizeof what, "%s byte %zu ^ 0x%02x", name, i, FLIPS[f]);
      expect_refused(&base, cap, bad, delta.len, 0, what);
      corruptions++;
      if (i < 8 || i >= 16) { /* re-stamping the checksum field itself would undo the change */
        reseal(bad, delta.len);
        snprintf(what, sizeof what, "%s byte %zu ^ 0x%02x, resealed", name, i, FLIPS[f]);
        expect_refused(&base, cap, bad, delta.len, 0, what);
        corruptions++;
      }
    }
  }
  /* A byte past the end. */
  uint8_t *longer = malloc(delta.len + 1);
  memcpy(longer, delta.bytes, delta.len);
  longer[delta.len] = 0;
  expect_refused(&base, cap, longer, delta.len + 1, BG_E_DELTA, "trailing byte");
  free(longer);

  /* Too small a buffer for the target (the scalable and metadata growth make it longer). */
  if (target.len > base.len)
    expect_refused(&base, target.len - 1, delta.bytes, delta.len, BG_E_BUFFER, "capacity");

  printf("%s: %zu-byte delta: %ld truncations, %ld corruptions refused, buffer unchanged\n", name, delta.len,
         truncations, corruptions);
  free(bad);
  blob_free(&delta);
  blob_free(&base);
  blob_free(&target);
}

/*
 * Deltas that pass their own checksum but lie: a target checksum that matches a result that is
 * not a valid filter, a result of another geometry, a Rice stream with a stray padding bit.
 * Each is refused with E_DELTA after the buffer was patched, so the undo path runs.
 */
static void lying_deltas(void) {
  spec s = {BG_KIND_CLASSIC, 1000, 0.01, 3, BG_KEY_UTF8, LIST_A, 4, 0, 1000, NULL};
  blob base = build(&s);
  s.generation = 5;
  s.first = 30;
  blob target = build(&s);
  REQUIRE(base.bytes && target.bytes);
  blob delta = encode(&base, &target);
  REQUIRE(delta.bytes);
  uint8_t *bad = malloc(delta.len);
  uint8_t *result = malloc(target.len);
  REQUIRE(bad && result);
  /* The head is target bytes [16, payload_offset): it starts at delta offset 128. */
  const size_t head = BG_DELTA_HEADER_SIZE;
  struct {
    size_t field; /* offset in the target file */
    uint8_t value;
    const char *what;
  } edits[] = {
      {24, 0, "k = 0 (invalid header)"},
      {64, 0x77, "another seed (valid, other geometry)"},
      {20, 2, "another kind"},
      {72, 9, "another generation in the result"},
  };
  for (size_t e = 0; e < sizeof edits / sizeof edits[0]; e++) {
    memcpy(bad, delta.bytes, delta.len);
    memcpy(result, target.bytes, target.len);
    bad[head + edits[e].field - 16] = edits[e].value;
    result[edits[e].field] = edits[e].value;
    put_u64(bad + 88, bg_file_checksum(result, target.len)); /* the delta's target checksum matches */
    reseal(bad, delta.len);
    expect_refused(&base, target.len, bad, delta.len, BG_E_DELTA, edits[e].what);
  }
  /* A set bit after the last Rice code. */
  memcpy(bad, delta.bytes, delta.len);
  uint64_t rice_offset = BG_DELTA_HEADER_SIZE + get_u64(bad + 104) - 16, rice_length = get_u64(bad + 112);
  REQUIRE(rice_length > 0);
  uint8_t last = bad[rice_offset + rice_length - 1];
  if (last != 0xff && (last & 0x80) == 0) {
    bad[rice_offset + rice_length - 1] |= 0x80;
    reseal(bad, delta.len);
    expect_refused(&base, target.len, bad, delta.len, BG_E_DELTA, "stray padding bit");
  }
  /* One code fewer than the stream holds, and one more. */
  memcpy(bad, delta.bytes, delta.len);
  put_u64(bad + 24, get_u64(delta.bytes + 24) - 1);
  reseal(bad, delta.len);
  expect_refused(&base, target.len, bad, delta.len, BG_E_DELTA, "changed_bits - 1");
  put_u64(bad + 24, get_u64(delta.bytes + 24) + 1);
  reseal(bad, delta.len);
  expect_refused(&base, target.len, bad, delta.len, BG_E_DELTA, "changed_bits + 1");
  free(bad);
  free(result);
  blob_free(&delta);
  blob_free(&base);
  blob_free(&target);
}

static void incompatible_pairs(void) {
  spec s = {BG_KIND_CLASSIC, 1000, 0.01, 3, BG_KEY_UTF8, LIST_A, 1, 0, 1000, NULL};
  blob base = build(&s);
  spec t = s;
  t.generation = 2;
  blob good = build(&t);
  REQUIRE(base.bytes && good.bytes);
  size_t written = 0;
  CHECK_STATUS(bg_delta_encode(base.bytes, base.len, good.bytes, good.len, NULL, 0, &written), BG_E_BUFFER);
  CHECK(written > BG_DELTA_HEADER_SIZE);
  CHECK_STATUS(bg_delta_encode(base.bytes, base.len, good.bytes, good.len, NULL, 0, NULL), BG_E_ARG);
  CHECK_STATUS(bg_delta_encode(base.bytes, base.len, good.bytes, good.len, NULL, 10, &written), BG_E_ARG);

  struct {
    spec change;
    const char *what;
  } cases[8];
  size_t n = 0;
  cases[n].change = t, cases[n].change.list_id = LIST_B, cases[n++].what = "other list";
  cases[n].change = t, cases[n].change.kind = BG_KIND_BLOCKED, cases[n++].what = "other kind";
  cases[n].change = t, cases[n].change.capacity = 2000, cases[n++].what = "other m";
  cases[n].change = t, cases[n].change.error_rate = 0.001, cases[n++].what = "other m and k";
  cases[n].change = t, cases[n].change.seed = 4, cases[n++].what = "other seed";
  cases[n].change = t, cases[n].change.key_encoding = BG_KEY_SHA1, cases[n++].what = "other key encoding";
  cases[n].change = t, cases[n].change.generation = 1, cases[n++].what = "same generation";
  cases[n].change = t, cases[n].change.generation = 0, cases[n++].what = "older generation";
  for (size_t i = 0; i < n; i++) {
    blob other = build(&cases[i].change);
    CHECK_MSG(other.bytes != NULL, "%s", cases[i].what);
    if (!other.bytes) continue;
    CHECK_STATUS_AT(bg_delta_encode(base.bytes, base.len, other.bytes, other.len, NULL, 0, &written),
                    BG_E_INCOMPATIBLE, "%s", cases[i].what);
    blob_free(&other);
  }
  /* Invalid files keep their own status. */
  good.bytes[good.len - 1] ^= 1;
  CHECK_STATUS(bg_delta_encode(base.bytes, base.len, good.bytes, good.len, NULL, 0, &written), BG_E_CHECKSUM);
  CHECK_STATUS(bg_delta_encode(good.bytes, good.len, base.bytes, base.len, NULL, 0, &written), BG_E_CHECKSUM);

  /* Fuse: another key count is another m. */
  spec f = {BG_KIND_FUSE8, 1000, 0.01, 3, BG_KEY_UTF8, LIST_A, 1, 0, 1000, NULL};
  blob fa = build(&f);
  f.generation = 2;
  f.count = 1300;
  blob fb = build(&f);
  REQUIRE(fa.bytes && fb.bytes);
  CHECK_STATUS(bg_delta_encode(fa.bytes, fa.len, fb.bytes, fb.len, NULL, 0, &written), BG_E_INCOMPATIBLE);
  /* Scalable: fewer layers in the later generation is a shorter payload. */
  spec g = {BG_KIND_SCALABLE, 200, 0.01, 3, BG_KEY_UTF8, LIST_A, 1, 0, 1000, NULL};
  blob ga = build(&g);
  g.generation = 2;
  g.count = 300;
  blob gb = build(&g);
  REQUIRE(ga.bytes && gb.bytes);
  CHECK_STATUS(bg_delta_encode(ga.bytes, ga.len, gb.bytes, gb.len, NULL, 0, &written), BG_E_INCOMPATIBLE);
  blob_free(&fa);
  blob_free(&fb);
  blob_free(&ga);
  blob_free(&gb);
  blob_free(&base);
  blob_free(&good);
}

/* ---- sizes ---------------------------------------------------------------------------- */

/* log2 C(m, c) / 8: the bytes any code needs to say which c of m bits changed. */
static double information_bytes(uint64_t m, uint64_t c) {
  double md = (double)m, cd = (double)c;
  return (lgamma(md + 1) - lgamma(cd + 1) - lgamma(md - cd + 1)) / log(2.0) / 8.0;
}

/* Encode base -> target, apply, and print a line about the delta's size. */
static void measure_files(const char *name, blob base, blob target) {
  if (!base.bytes || !target.bytes) {
    CHECK_MSG(0, "%s: build", name);
    blob_free(&base);
    blob_free(&target);
    return;
  }
  blob delta = encode(&base, &target);
  size_t size = delta.len;
  if (delta.bytes) {
    bg_delta_info info;
    CHECK_STATUS(bg_delta_peek(delta.bytes, delta.len, &info), BG_OK);
    size_t capacity = max_size(base.len, target.len), new_len = 0;
    uint8_t *buffer = buffer_with(&base, capacity);
    CHECK_STATUS(bg_delta_apply(buffer, base.len, capacity, delta.bytes, delta.len, &new_len), BG_OK);
    CHECK_MSG(new_len == target.len && memcmp(buffer, target.bytes, new_len) == 0, "%s: result", name);
    free(buffer);
    /* The coded part: everything but the fixed header and the raw head; the ideal codes both streams. */
    uint64_t target_body = get_u64(delta.bytes + 104), fixed = BG_DELTA_HEADER_SIZE + target_body - 16;
    uint64_t body_bits = (target.len - target_body - info.appended_bytes) * 8,
             appended_set = get_u64(delta.bytes + 128);
    double ideal = information_bytes(body_bits, info.changed_bits) +
                   information_bytes(info.appended_bytes * 8, appended_set);
    double coded = (double)(size - fixed);
    printf("%-27s file %8zu B  delta %8zu B (%6.2f%% of file)  changed %8" PRIu64 " of %8" PRIu64
           " bits (r=%u)  appended %7" PRIu64 " B, %6" PRIu64 " bits set (r=%u)  coded/ideal %.4f\n",
           name, target.len, size, 100.0 * (double)size / (double)target.len, info.changed_bits, body_bits,
           delta.bytes[20], info.appended_bytes, appended_set, delta.bytes[21],
           ideal > 0 ? coded / ideal : 0.0);
  } else {
    CHECK_MSG(0, "%s: encode", name);
  }
  blob_free(&delta);
  blob_free(&base);
  blob_free(&target);
}

/* Two generations rebuilt from their key sets: the next drops `removed` keys from the front, adds `added`. */
static void measure(const char *name, spec s, long removed, long added) {
  blob base = build(&s);
  s.generation++;
  s.first += removed;
  s.count += added - removed;
  measure_files(name, base, build(&s));
}

/* The next generation made from the previous one's file: removals and adds on the loaded filter. */
static void measure_updated(const char *name, spec s, long removed, long added) {
  blob base = build(&s), target = {NULL, 0};
  bg_filter *f = NULL;
  if (base.bytes && bg_filter_deserialize(base.bytes, base.len, &f) == BG_OK) {
    char key[48];
    int ok = 1;
    for (long i = s.first; i < s.first + removed; i++)
      ok &= bg_filter_remove(f, key, (size_t)snprintf(key, sizeof key, "key-%ld", i)) == BG_OK;
    for (long i = s.first + s.count; i < s.first + s.count + added; i++)
      ok &= bg_filter_add(f, key, (size_t)snprintf(key, sizeof key, "key-%ld", i)) == BG_OK;
    bg_filter_set_identity(f, s.list_id, s.generation + 1);
    size_t size = bg_filter_serialized_size(f), written = 0;
    target.bytes = ok ? malloc(size) : NULL;
    if (target.bytes && bg_filter_serialize(f, target.bytes, size, &written) == BG_OK) target.len = written;
  }
  bg_filter_free(f);
  measure_files(name, base, target);
}

static void size_target(void) {
  const long n = 1000000;
  spec s = {BG_KIND_CLASSIC, (uint64_t)n, 0.01, 2024, BG_KEY_UTF8, LIST_A, 1, 0, n, NULL};
  blob base = build(&s);
  s.generation = 2;
  s.first = n / 100; /* 1% of the keys removed, 1% added */
  blob target = build(&s);
  REQUIRE(base.bytes && target.bytes);
  blob delta = encode(&base, &target);
  REQUIRE(delta.bytes);
  bg_delta_info info;
  bg_header h;
  CHECK_STATUS(bg_delta_peek(delta.bytes, delta.len, &info), BG_OK);
  CHECK_STATUS(bg_file_validate(target.bytes, target.len, &h), BG_OK);
  double ideal = information_bytes(h.m, info.changed_bits);
  double fixed = BG_DELTA_HEADER_SIZE + (double)(h.payload_offset - 16);
  double ratio = ((double)delta.len - fixed) / ideal;
  CHECK_MSG((double)delta.len <= 1.1 * ideal + fixed, "delta %zu B, bound %.0f B", delta.len,
            1.1 * ideal + fixed);
  printf("size target: 1M-key classic, p = 0.01, m = %" PRIu64 ", 1%% removed + 1%% added: %" PRIu64
         " changed bits, log2 C(m, c) / 8 = %.0f B, delta %zu B = %.0f B fixed + %.4fx the ideal "
         "(bound 1.1x); %.2f%% of the %zu-byte file\n",
         h.m, info.changed_bits, ideal, delta.len, fixed, ratio, 100.0 * (double)delta.len / (double)target.len,
         target.len);
  size_t capacity = target.len, new_len = 0;
  uint8_t *buffer = buffer_with(&base, capacity);
  CHECK_STATUS(bg_delta_apply(buffer, base.len, capacity, delta.bytes, delta.len, &new_len), BG_OK);
  CHECK(new_len == target.len && memcmp(buffer, target.bytes, new_len) == 0);
  free(buffer);
  blob_free(&delta);
  blob_free(&base);
  blob_free(&target);
}

/* The other kinds at the same 1M keys, 1% out and 1% in: printed for the report, not asserted. */
static void other_sizes(void) {
  const long n = 1000000;
  spec s = {BG_KIND_BLOCKED, (uint64_t)n, 0.01, 2024, BG_KEY_UTF8, LIST_A, 1, 0, n, NULL};
  measure("classic", (s.kind = BG_KIND_CLASSIC, s), n / 100, n / 100);
  measure("blocked", (s.kind = BG_KIND_BLOCKED, s), n / 100, n / 100);
  measure("counting", (s.kind = BG_KIND_COUNTING, s), n / 100, n / 100);
  measure("cuckoo rebuilt", (s.kind = BG_KIND_CUCKOO, s), n / 100, n / 100);
  measure_updated("cuckoo updated in place", (s.kind = BG_KIND_CUCKOO, s), n / 100, n / 100);
  spec half = s;
  half.capacity = 2 * (uint64_t)n; /* at half its design load, adds rarely evict */
  measure_updated("cuckoo updated, half load", half, n / 100, n / 100);
  measure("fuse8", (s.kind = BG_KIND_FUSE8, s), n / 100, n / 100);
  spec sc = s;
  sc.kind = BG_KIND_SCALABLE;
  sc.capacity = (uint64_t)n / 8; /* 1M keys fill layers of n/8, n/4, n/2 and part of n */
  measure("scalable 1% out, 1% in", sc, n / 100, n / 100);
  measure("scalable +1% (append only)", sc, 0, n / 100);
  sc.count = (long)(15 * sc.capacity) - n / 200; /* 0.5% short of filling layer 3: the next adds open layer 4 */
  measure("scalable +1%, new layer", sc, 0, n / 100);
}

/* ---- the fuzzer's seed corpus --------------------------------------------------------- */

/* One fuzz input: u32 base length, the base, the delta (tests/fuzz/fuzz_delta.c). */
static int write_input(const char *dir, const char *name, const blob *base, const uint8_t *delta,
                       size_t delta_len) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *fp = fopen(path, "wb");
  if (!fp) return 0;
  uint8_t len[4];
  for (int i = 0; i < 4; i++) len[i] = (uint8_t)(base->len >> (8 * i));
  int ok = fwrite(len, 1, 4, fp) == 4 && fwrite(base->bytes, 1, base->len, fp) == base->len &&
           fwrite(delta, 1, delta_len, fp) == delta_len;
  return fclose(fp) == 0 && ok;
}

static int write_corpus(const char *dir) {
  static const struct {
    int kind;
    const char *name;
  } kinds[] = {{BG_KIND_CLASSIC, "classic"}, {BG_KIND_BLOCKED, "blocked"},   {BG_KIND_FUSE8, "fuse8"},
               {BG_KIND_FUSE16, "fuse16"},   {BG_KIND_COUNTING, "counting"}, {BG_KIND_SCALABLE, "scalable"},
               {BG_KIND_CUCKOO, "cuckoo"}};
  int ok = 1;
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
    int kind = kinds[i].kind;
    spec s = {kind, 64, kind == BG_KIND_FUSE16 ? 0.001 : 0.05, 1, BG_KEY_UTF8, LIST_A, 1, 0, 64, NULL};
    if (kind == BG_KIND_SCALABLE) s.capacity = 16;
    if (kind == BG_KIND_CUCKOO) s.capacity = 128;
    blob base = build(&s);
    s.generation = 2;
    s.first = 3;
    if (kind == BG_KIND_SCALABLE) s.count = 120; /* a fourth layer */
    s.metadata = kind == BG_KIND_CLASSIC ? "{\"moves\":\"the payload by one alignment step, 64 bytes on\"}"
                                         : NULL;
    blob target = build(&s);
    blob delta = base.bytes && target.bytes ? encode(&base, &target) : (blob){NULL, 0};
    char name[64];
    snprintf(name, sizeof name, "%s.bin", kinds[i].name);
    ok = ok && delta.bytes && write_input(dir, name, &base, delta.bytes, delta.len);
    if (kind == BG_KIND_CLASSIC && delta.bytes) {
      /* A replay (the target as base), a truncation, a wrong checksum. */
      ok = ok && write_input(dir, "classic_replay.bin", &target, delta.bytes, delta.len);
      ok = ok && write_input(dir, "classic_truncated.bin", &base, delta.bytes, delta.len - 3);
      delta.bytes[delta.len / 2] ^= 4;
      ok = ok && write_input(dir, "classic_bad_checksum.bin", &base, delta.bytes, delta.len);
    }
    blob_free(&delta);
    blob_free(&base);
    blob_free(&target);
  }
  if (!ok) fprintf(stderr, "test_delta: cannot write the corpus into %s\n", dir);
  return ok ? 0 : 1;
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "--write-corpus") == 0) return write_corpus(argv[2]);
  chain(BG_KIND_CLASSIC, "classic");
  chain(BG_KIND_BLOCKED, "blocked");
  chain(BG_KIND_FUSE8, "fuse8");
  chain(BG_KIND_FUSE16, "fuse16");
  chain(BG_KIND_COUNTING, "counting");
  chain(BG_KIND_SCALABLE, "scalable");
  chain(BG_KIND_CUCKOO, "cuckoo");
  documented_example();
  wrong_bases();
  damaged_deltas(BG_KIND_CLASSIC, "classic");
  damaged_deltas(BG_KIND_SCALABLE, "scalable");
  damaged_deltas(BG_KIND_COUNTING, "counting");
  lying_deltas();
  incompatible_pairs();
  size_target();
  const char *sizes = getenv("BG_DELTA_SIZES");
  if (sizes && strcmp(sizes, "1") == 0) other_sizes();
  return test_report("test_delta");
}
