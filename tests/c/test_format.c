/*
 * test_format.c — the .bgf container (docs/FORMAT.md).
 *
 * The header's fields as written and read; every corruption is rejected with
 * the code the spec's validation table names, by bg_file_validate,
 * bg_filter_deserialize and bg_filter_deserialize_owned alike. Round trips
 * through every reader, every truncation and sampled byte flips of every
 * kind's files are test_conformance.c's; here the sample classic file gets
 * every bit flipped, each to its exact code. Under ASan this binary refuses any
 * allocation above 64 MiB (see __asan_default_options below), so a reader
 * that allocated what an absurd header claims before checking it would abort
 * the test instead of passing it.
 */
#include <math.h>
#include <stdlib.h>

#include "test_util.h"

const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "max_allocation_size_mb=64:allocator_may_return_null=0"; }

/* Header offsets from docs/FORMAT.md's table. */
enum {
  OFF_MAGIC = 0,
  OFF_CHECKSUM = 8,
  OFF_VERSION = 16,
  OFF_HEADER_SIZE = 18,
  OFF_KIND = 20,
  OFF_KEY_ENCODING = 21,
  OFF_HASH = 22,
  OFF_FLAGS = 23,
  OFF_K = 24,
  OFF_METADATA_LENGTH = 28,
  OFF_M = 32,
  OFF_CAPACITY = 40,
  OFF_ERROR_RATE = 48,
  OFF_COUNT = 56,
  OFF_SEED = 64,
  OFF_GENERATION = 72,
  OFF_LIST_ID = 80,
  OFF_PAYLOAD_OFFSET = 96,
  OFF_PAYLOAD_LENGTH = 104,
  OFF_RESERVED = 112,
  HEADER = 128
};

static const uint8_t MAGIC[8] = {0x89, 0x42, 0x47, 0x46, 0x0D, 0x0A, 0x1A, 0x0A};

/* The sample: 1000 / 1% (m = 9586, so the last payload byte uses 2 of its 8 bits), seed 42,
 * 57 bytes of metadata (7 bytes of padding before the payload at 192), 300 keys. */
static const char SAMPLE_METADATA[] = "{\"source\":\"test_format\",\"description\":\"sample filter\"}";
#define SAMPLE_METADATA_LENGTH (sizeof SAMPLE_METADATA - 1)
#define SAMPLE_M 9586u
#define SAMPLE_PAYLOAD_OFFSET 192u
#define SAMPLE_PAYLOAD_LENGTH 1199u
#define SAMPLE_SIZE (SAMPLE_PAYLOAD_OFFSET + SAMPLE_PAYLOAD_LENGTH)
#define SAMPLE_KEYS 300
static const uint8_t SAMPLE_LIST_ID[16] = {0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};

static void put_u16(uint8_t *p, uint16_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
}
static void put_u32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static void put_u64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static uint64_t get_u64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}
/* Re-stamp the checksum, so a check after step 9 is what rejects an edit. */
static void reseal(uint8_t *file, size_t size) { put_u64(file + OFF_CHECKSUM, bg_file_checksum(file, size)); }

static bg_filter *sample_filter(void) {
  bg_filter *f = NULL;
  if (bg_filter_create(BG_KIND_CLASSIC, 1000, 0.01, 42, BG_KEY_UTF8, &f) != BG_OK) return NULL;
  char key[32];
  for (int i = 0; i < SAMPLE_KEYS; i++) {
    int len = snprintf(key, sizeof key, "member-%d", i);
    bg_filter_add(f, key, (size_t)len);
  }
  bg_filter_set_metadata(f, SAMPLE_METADATA, SAMPLE_METADATA_LENGTH);
  bg_filter_set_identity(f, SAMPLE_LIST_ID, 7);
  return f;
}

static uint8_t *serialize_copy(const bg_filter *f, size_t *size) {
  *size = bg_filter_serialized_size(f);
  uint8_t *buf = malloc(*size ? *size : 1);
  size_t written = 0;
  if (!buf || bg_filter_serialize(f, buf, *size, &written) != BG_OK || written != *size) {
    free(buf);
    return NULL;
  }
  return buf;
}

/* A fresh copy of the sample file with extra bytes of room. */
static uint8_t *sample_file(size_t *size, size_t room) {
  bg_filter *f = sample_filter();
  uint8_t *file = f ? serialize_copy(f, size) : NULL;
  bg_filter_free(f);
  if (!file) return NULL;
  uint8_t *bigger = calloc(1, *size + room + 1);
  if (bigger) memcpy(bigger, file, *size);
  free(file);
  return bigger;
}

/*
 * The three readers agree on a file's fate. On success each must also answer
 * like the sample and re-serialize to the same bytes.
 */
static void expect_code(const uint8_t *file, size_t size, bg_status want, const char *what) {
  bg_header h;
  CHECK_STATUS_AT(bg_file_validate(file, size, &h), want, "validate: %s", what);
  bg_filter *f = (bg_filter *)&h;
  CHECK_STATUS_AT(bg_filter_deserialize(file, size, &f), want, "deserialize: %s", what);
  CHECK_MSG(want == BG_OK || f == NULL, "deserialize left *out set on failure: %s", what);
  if (f != (bg_filter *)&h) bg_filter_free(f);
  /* deserialize_owned: on failure the buffer stays ours (ASan catches a double free). */
  uint8_t *copy = malloc(size ? size : 1);
  if (!copy) return;
  if (size) memcpy(copy, file, size);
  bg_filter *g = NULL;
  bg_status rc = bg_filter_deserialize_owned(copy, size, &g);
  CHECK_STATUS_AT(rc, want, "deserialize_owned: %s", what);
  if (rc == BG_OK)
    bg_filter_free(g);
  else
    free(copy);
}

static void test_round_trip(void) {
  bg_filter *f = sample_filter();
  REQUIRE(f != NULL);
  size_t size;
  uint8_t *file = serialize_copy(f, &size);
  REQUIRE(file != NULL);
  CHECK_EQ_U64(size, SAMPLE_SIZE);
  CHECK(memcmp(file, MAGIC, 8) == 0);
  CHECK_EQ_U64(get_u64(file + OFF_CHECKSUM), bg_file_checksum(file, size));

  /* The header as validate reads it. */
  bg_header h;
  CHECK_STATUS(bg_file_validate(file, size, &h), BG_OK);
  CHECK_EQ_U64(h.version, 1);
  CHECK_EQ_U64(h.kind, BG_KIND_CLASSIC);
  CHECK_EQ_U64(h.key_encoding, BG_KEY_UTF8);
  CHECK_EQ_U64(h.hash_algorithm, BG_HASH_XXH3_128);
  CHECK_EQ_U64(h.k, 7);
  CHECK_EQ_U64(h.metadata_length, SAMPLE_METADATA_LENGTH);
  CHECK_EQ_U64(h.m, SAMPLE_M);
  CHECK_EQ_U64(h.capacity, 1000);
  CHECK(h.error_rate == 0.01);
  CHECK_EQ_U64(h.count, SAMPLE_KEYS);
  CHECK_EQ_U64(h.seed, 42);
  CHECK_EQ_U64(h.generation, 7);
  CHECK(memcmp(h.list_id, SAMPLE_LIST_ID, 16) == 0);
  CHECK_EQ_U64(h.payload_offset, SAMPLE_PAYLOAD_OFFSET);
  CHECK_EQ_U64(h.payload_length, SAMPLE_PAYLOAD_LENGTH);
  CHECK_EQ_U64(h.file_length, SAMPLE_SIZE);
  CHECK_EQ_U64(h.checksum, get_u64(file + OFF_CHECKSUM));
  /* Metadata, then zero padding up to the payload. */
  CHECK(memcmp(file + HEADER, SAMPLE_METADATA, SAMPLE_METADATA_LENGTH) == 0);
  for (size_t i = HEADER + SAMPLE_METADATA_LENGTH; i < SAMPLE_PAYLOAD_OFFSET; i++) CHECK(file[i] == 0);

  /* A streaming reader learns everything from the first 128 bytes. */
  bg_header peeked;
  CHECK_STATUS(bg_header_peek(file, HEADER, &peeked), BG_OK);
  CHECK_EQ_U64(peeked.file_length, SAMPLE_SIZE);
  CHECK_EQ_U64(peeked.m, SAMPLE_M);
  CHECK_STATUS(bg_header_peek(file, HEADER - 1, &peeked), BG_E_TRUNCATED);
  CHECK_STATUS(bg_header_peek(file, size, &peeked), BG_OK);

  /* The readers' copies (bytes, info, metadata, answers, in place, any alignment): test_conformance.c. */

  /* serialize: exact capacity works, one byte less does not, and nothing is written past the end. */
  uint8_t *dst = malloc(size + 16);
  REQUIRE(dst != NULL);
  memset(dst, 0xEE, size + 16);
  size_t written = 12345;
  CHECK_STATUS(bg_filter_serialize(f, dst, size - 1, &written), BG_E_BUFFER);
  CHECK_STATUS(bg_filter_serialize(f, dst, 0, &written), BG_E_BUFFER);
  CHECK_STATUS(bg_filter_serialize(f, dst, HEADER, &written), BG_E_BUFFER);
  CHECK_STATUS(bg_filter_serialize(f, NULL, size, &written), BG_E_ARG);
  CHECK_STATUS(bg_filter_serialize(NULL, dst, size, &written), BG_E_ARG);
  CHECK_STATUS(bg_filter_serialize(f, dst, size, &written), BG_OK);
  CHECK_EQ_U64(written, size);
  CHECK(memcmp(dst, file, size) == 0);
  int untouched = 1;
  for (size_t i = size; i < size + 16; i++) untouched &= dst[i] == 0xEE;
  CHECK(untouched);
  CHECK_STATUS(bg_filter_serialize(f, dst, size + 16, NULL), BG_OK);
  free(dst);

  CHECK_STATUS(bg_filter_deserialize(file, size, NULL), BG_E_ARG);
  CHECK_STATUS(bg_header_peek(file, size, NULL), BG_E_ARG);

  free(file);
  bg_filter_free(f);
}

/* Files of other shapes: no metadata, metadata ending on the alignment, empty, sha1-keyed, tiny m. */
static void test_shapes(void) {
  static const struct {
    uint64_t capacity;
    double error_rate;
    int key_encoding;
    size_t metadata_length;
    int keys;
  } shapes[] = {
      {1000, 0.01, BG_KEY_UTF8, 0, 100}, {1000, 0.01, BG_KEY_UTF8, 64, 100},
      {1000, 0.01, BG_KEY_UTF8, 63, 0},  {50, 0.001, BG_KEY_SHA1, 1, 50},
      {1, 0.5, BG_KEY_UTF8, 0, 3},       {100000, 0.05, BG_KEY_SHA1, 200, 5000},
      {1, 0.999, BG_KEY_UTF8, 65, 1},
  };
  uint8_t metadata[256];
  memset(metadata, 'x', sizeof metadata);
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
    bg_filter *f = NULL;
    CHECK_STATUS(bg_filter_create(BG_KIND_CLASSIC, shapes[s].capacity, shapes[s].error_rate, s * 1000003u,
                                  shapes[s].key_encoding, &f),
                 BG_OK);
    if (!f) continue;
    CHECK_STATUS(bg_filter_set_metadata(f, metadata, shapes[s].metadata_length), BG_OK);
    char key[32];
    for (int i = 0; i < shapes[s].keys; i++) {
      int len = snprintf(key, sizeof key, "shape-%d", i);
      bg_filter_add(f, key, (size_t)len);
    }
    size_t size;
    uint8_t *file = serialize_copy(f, &size);
    bg_info info;
    bg_filter_info(f, &info);
    size_t offset = (HEADER + shapes[s].metadata_length + 63) / 64 * 64;
    CHECK_EQ_U64(size, offset + (info.m + 7) / 8);
    if (file) {
      expect_code(file, size, BG_OK, "shape");
      bg_filter *g = NULL;
      CHECK_STATUS(bg_filter_deserialize(file, size, &g), BG_OK);
      size_t size2;
      uint8_t *again = g ? serialize_copy(g, &size2) : NULL;
      CHECK_MSG(again && size2 == size && memcmp(again, file, size) == 0, "shape %zu re-serializes", s);
      long missing = 0;
      for (int i = 0; g && i < shapes[s].keys; i++) {
        int len = snprintf(key, sizeof key, "shape-%d", i);
        missing += bg_filter_contains(g, key, (size_t)len) != 1;
      }
      CHECK_EQ_U64(missing, 0);
      free(again);
      bg_filter_free(g);
    }
    free(file);
    bg_filter_free(f);
  }
}

/* Steps 1-3: magic, version, and the length of what is there. */
static void test_short_and_foreign(void) {
  size_t size;
  uint8_t *file = sample_file(&size, 0);
  REQUIRE(file != NULL);

  expect_code(NULL, 0, BG_E_TRUNCATED, "NULL, 0 bytes");
  expect_code(file, 0, BG_E_TRUNCATED, "empty");
  /* Every proper prefix of a valid file, from exact-size copies too: test_conformance.c. */

  static const uint8_t text[] = "hello, world";
  expect_code(text, 5, BG_E_MAGIC, "5 bytes of text");
  expect_code(text, sizeof text, BG_E_MAGIC, "text");
  static const uint8_t png[] = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13};
  expect_code(png, sizeof png, BG_E_MAGIC, "PNG signature");
  expect_code(file, 3, BG_E_TRUNCATED, "3 bytes of magic");
  static const uint8_t almost[] = {0x89, 0x42, 0x47, 0x46, 0x0D, 0x0A, 0x1A, 0x0B};
  expect_code(almost, 7, BG_E_TRUNCATED, "7 good magic bytes");
  expect_code(almost, 8, BG_E_MAGIC, "7 good magic bytes and a bad one");
  for (int i = 0; i < 8; i++) {
    uint8_t *bad = sample_file(&size, 0);
    REQUIRE(bad != NULL);
    bad[i] ^= 0x20;
    expect_code(bad, size, BG_E_MAGIC, "magic byte changed");
    expect_code(bad, i + 1, BG_E_MAGIC, "short file, magic byte changed");
    free(bad);
  }

  static const uint16_t versions[] = {0, 2, 3, 0x100, 0xFFFF};
  for (size_t v = 0; v < sizeof versions / sizeof versions[0]; v++) {
    uint8_t *bad = sample_file(&size, 0);
    REQUIRE(bad != NULL);
    put_u16(bad + OFF_VERSION, versions[v]);
    expect_code(bad, size, BG_E_VERSION, "version");
    reseal(bad, size);
    expect_code(bad, size, BG_E_VERSION, "version, resealed");
    /* The version is known after 18 bytes: a short file of an unknown version says so. */
    expect_code(bad, 18, BG_E_VERSION, "18 bytes, version");
    expect_code(bad, 17, BG_E_TRUNCATED, "17 bytes");
    free(bad);
  }
  free(file);
}

/* Steps 4-8: the fields that fix the file's length, checked before anything else is trusted. */
static void test_header_fields(void) {
  size_t size;
  uint8_t *bad;

#define WITH_SAMPLE(room, body)       \
  do {                                \
    bad = sample_file(&size, (room)); \
    REQUIRE(bad != NULL);             \
    body;                             \
    free(bad);                        \
  } while (0)

  static const uint16_t header_sizes[] = {0, 64, 127, 129, 256, 0xFFFF};
  for (size_t i = 0; i < sizeof header_sizes / sizeof header_sizes[0]; i++)
    WITH_SAMPLE(0, {
      put_u16(bad + OFF_HEADER_SIZE, header_sizes[i]);
      reseal(bad, size);
      expect_code(bad, size, BG_E_HEADER, "header_size");
    });
  static const uint8_t flags[] = {1, 2, 0x80, 0xFF};
  for (size_t i = 0; i < sizeof flags; i++)
    WITH_SAMPLE(0, {
      bad[OFF_FLAGS] = flags[i];
      reseal(bad, size);
      expect_code(bad, size, BG_E_HEADER, "flags");
    });
  for (int i = OFF_RESERVED; i < HEADER; i++)
    WITH_SAMPLE(0, {
      bad[i] = 1;
      reseal(bad, size);
      expect_code(bad, size, BG_E_HEADER, "reserved byte");
    });

  /* metadata_length: above 1 MiB is E_METADATA whatever else the file says. */
  static const uint32_t huge_metadata[] = {BG_MAX_METADATA + 1, 0x7FFFFFFF, 0xFFFFFFFF};
  for (size_t i = 0; i < sizeof huge_metadata / sizeof huge_metadata[0]; i++)
    WITH_SAMPLE(0, {
      put_u32(bad + OFF_METADATA_LENGTH, huge_metadata[i]);
      reseal(bad, size);
      expect_code(bad, size, BG_E_METADATA, "metadata_length absurd");
    });
  /* A metadata_length whose aligned end is not payload_offset. */
  static const uint32_t moved_metadata[] = {0, 65, 121, 129, 1000, BG_MAX_METADATA};
  for (size_t i = 0; i < sizeof moved_metadata / sizeof moved_metadata[0]; i++)
    WITH_SAMPLE(0, {
      put_u32(bad + OFF_METADATA_LENGTH, moved_metadata[i]);
      reseal(bad, size);
      expect_code(bad, size, BG_E_HEADER, "metadata_length vs payload_offset");
    });

  /* payload_offset: misaligned, or aligned but not where the metadata ends. */
  static const uint64_t offsets[] = {0, 128, 191, 193, 200, 256, 1ull << 40, 1ull << 63, UINT64_MAX};
  for (size_t i = 0; i < sizeof offsets / sizeof offsets[0]; i++)
    WITH_SAMPLE(0, {
      put_u64(bad + OFF_PAYLOAD_OFFSET, offsets[i]);
      reseal(bad, size);
      expect_code(bad, size, BG_E_HEADER, "payload_offset");
    });

  /* payload_length: absurd sizes are refused from the header alone. */
  static const uint64_t absurd[] = {(1ull << 40) + 4097, 1ull << 41, 1ull << 63, UINT64_MAX,
                                    UINT64_MAX - SAMPLE_PAYLOAD_OFFSET + 1};
  for (size_t i = 0; i < sizeof absurd / sizeof absurd[0]; i++)
    WITH_SAMPLE(0, {
      put_u64(bad + OFF_PAYLOAD_LENGTH, absurd[i]);
      reseal(bad, size);
      expect_code(bad, size, BG_E_TOO_LARGE, "payload_length absurd");
      bg_header h;
      CHECK_STATUS(bg_header_peek(bad, HEADER, &h), BG_E_TOO_LARGE);
    });
  /* The largest payload the format allows, claimed by a file that is only its header:
   * E_TRUNCATED, and (under ASan's 64 MiB cap) proof that nothing was allocated for it. */
  WITH_SAMPLE(0, {
    put_u64(bad + OFF_M, BG_MAX_BITS);
    put_u64(bad + OFF_PAYLOAD_LENGTH, (1ull << 40) + 4096);
    reseal(bad, size);
    bg_header h;
    CHECK_STATUS(bg_header_peek(bad, HEADER, &h), BG_OK);
    CHECK_EQ_U64(h.file_length, SAMPLE_PAYLOAD_OFFSET + (1ull << 40) + 4096);
    expect_code(bad, size, BG_E_TRUNCATED, "payload_length 2^40+4096");
    expect_code(bad, HEADER, BG_E_TRUNCATED, "header alone, payload_length 2^40+4096");
  });
  WITH_SAMPLE(0, {
    put_u64(bad + OFF_M, BG_MAX_BITS);
    put_u64(bad + OFF_PAYLOAD_LENGTH, BG_MAX_BITS / 8);
    reseal(bad, size);
    expect_code(bad, size, BG_E_TRUNCATED, "m = 2^43 with its payload missing");
  });
  /* One byte more or less than the file holds. */
  WITH_SAMPLE(0, {
    put_u64(bad + OFF_PAYLOAD_LENGTH, SAMPLE_PAYLOAD_LENGTH + 1);
    reseal(bad, size);
    expect_code(bad, size, BG_E_TRUNCATED, "payload_length + 1");
  });
  WITH_SAMPLE(0, {
    put_u64(bad + OFF_PAYLOAD_LENGTH, SAMPLE_PAYLOAD_LENGTH - 1);
    expect_code(bad, size, BG_E_TRAILING, "payload_length - 1");
  });
  WITH_SAMPLE(0, {
    put_u64(bad + OFF_PAYLOAD_LENGTH, 0);
    expect_code(bad, size, BG_E_TRAILING, "payload_length 0");
  });

  /* Trailing bytes after a valid file. */
  WITH_SAMPLE(64, {
    expect_code(bad, size + 1, BG_E_TRAILING, "one trailing zero byte");
    bad[size] = 0x55;
    expect_code(bad, size + 1, BG_E_TRAILING, "one trailing byte");
    expect_code(bad, size + 64, BG_E_TRAILING, "64 trailing bytes");
  });
#undef WITH_SAMPLE
}

/* Step 9: the checksum. Every single-bit flip anywhere in the file is caught, with the code of
 * the first check the flipped field fails. */
static void test_every_bit_flip(void) {
  size_t size;
  uint8_t *file = sample_file(&size, 0);
  REQUIRE(file != NULL);
  long wrong = 0;
  for (size_t i = 0; i < size; i++) {
    for (int bit = 0; bit < 8; bit++) {
      file[i] ^= (uint8_t)(1u << bit);
      bg_status want = BG_E_CHECKSUM;
      if (i < OFF_CHECKSUM) {
        want = BG_E_MAGIC;
      } else if (i >= OFF_VERSION && i < OFF_VERSION + 2) {
        want = BG_E_VERSION;
      } else if ((i >= OFF_HEADER_SIZE && i < OFF_HEADER_SIZE + 2) || i == OFF_FLAGS ||
                 (i >= OFF_RESERVED && i < HEADER) || (i >= OFF_PAYLOAD_OFFSET && i < OFF_PAYLOAD_OFFSET + 8)) {
        want = BG_E_HEADER;
      } else if (i >= OFF_METADATA_LENGTH && i < OFF_METADATA_LENGTH + 4) {
        uint64_t length = SAMPLE_METADATA_LENGTH ^ ((uint64_t)1 << (8 * (i - OFF_METADATA_LENGTH) + bit));
        if (length > BG_MAX_METADATA)
          want = BG_E_METADATA;
        else if ((HEADER + length + 63) / 64 * 64 != SAMPLE_PAYLOAD_OFFSET)
          want = BG_E_HEADER;
      } else if (i >= OFF_PAYLOAD_LENGTH && i < OFF_PAYLOAD_LENGTH + 8) {
        uint64_t length = SAMPLE_PAYLOAD_LENGTH ^ ((uint64_t)1 << (8 * (i - OFF_PAYLOAD_LENGTH) + bit));
        if (length < SAMPLE_PAYLOAD_LENGTH)
          want = BG_E_TRAILING;
        else if (length > (1ull << 40) + 4096)
          want = BG_E_TOO_LARGE;
        else
          want = BG_E_TRUNCATED;
      }
      bg_header h;
      int got = bg_file_validate(file, size, &h);
      if (got != (int)want) {
        wrong++;
        if (wrong <= 10)
          fprintf(stderr, "bit %d of byte %zu: got %s, expected %s\n", bit, i, bg_status_name(got),
                  bg_status_name(want));
      }
      bg_filter *f = NULL;
      if (bg_filter_deserialize(file, size, &f) != (int)want || f != NULL) wrong++;
      file[i] ^= (uint8_t)(1u << bit);
    }
  }
  CHECK_MSG(wrong == 0, "%ld single-bit flips mapped to the wrong code", wrong);
  /* Sanity: the unflipped file is still valid. */
  expect_code(file, size, BG_OK, "after the flips");
  free(file);
}

/* Steps 10-15: edits that keep a correct checksum reach the semantic checks. */
static void edit_and_expect(void (*edit)(uint8_t *file, uint64_t value), uint64_t value, bg_status want,
                            const char *what) {
  size_t size;
  uint8_t *file = sample_file(&size, 0);
  if (!file) return;
  edit(file, value);
  reseal(file, size);
  char label[96];
  snprintf(label, sizeof label, "%s = %" PRIu64 " (0x%" PRIx64 ")", what, value, value);
  expect_code(file, size, want, label);
  /* Without the reseal the checksum catches the same edit first (when it changed anything). */
  uint8_t *original = sample_file(&size, 0);
  if (original && memcmp(original + OFF_VERSION, file + OFF_VERSION, size - OFF_VERSION) != 0) {
    memcpy(file + OFF_CHECKSUM, original + OFF_CHECKSUM, 8);
    CHECK_STATUS_AT(bg_file_validate(file, size, NULL), BG_E_CHECKSUM, "unsealed %s", label);
  }
  free(original);
  free(file);
}

static void set_kind(uint8_t *f, uint64_t v) { f[OFF_KIND] = (uint8_t)v; }
static void set_key_encoding(uint8_t *f, uint64_t v) { f[OFF_KEY_ENCODING] = (uint8_t)v; }
static void set_hash(uint8_t *f, uint64_t v) { f[OFF_HASH] = (uint8_t)v; }
static void set_k(uint8_t *f, uint64_t v) { put_u32(f + OFF_K, (uint32_t)v); }
static void set_m(uint8_t *f, uint64_t v) { put_u64(f + OFF_M, v); }
static void set_capacity(uint8_t *f, uint64_t v) { put_u64(f + OFF_CAPACITY, v); }
static void set_error_rate_bits(uint8_t *f, uint64_t v) { put_u64(f + OFF_ERROR_RATE, v); }
static void set_count(uint8_t *f, uint64_t v) { put_u64(f + OFF_COUNT, v); }
static void set_padding(uint8_t *f, uint64_t v) { f[HEADER + SAMPLE_METADATA_LENGTH + v] = 1; }
static void set_tail_bit(uint8_t *f, uint64_t v) {
  f[SAMPLE_PAYLOAD_OFFSET + SAMPLE_PAYLOAD_LENGTH - 1] |= (uint8_t)(1u << v);
}
/* Kind and hash both wrong: the kind is reported (step 10 before 12). */
static void set_kind_and_hash(uint8_t *f, uint64_t v) {
  f[OFF_KIND] = (uint8_t)v;
  f[OFF_HASH] = 9;
}
static void set_key_encoding_and_k(uint8_t *f, uint64_t v) {
  f[OFF_KEY_ENCODING] = (uint8_t)v;
  put_u32(f + OFF_K, 0);
}

static uint64_t double_bits(double d) {
  uint64_t v;
  memcpy(&v, &d, 8);
  return v;
}

static void test_semantic_checks(void) {
  /* Every id this build has no kind for is E_KIND (0 and 255 never name one); a classic payload
   * relabelled as another known kind must be judged by that kind without crashing. */
  CHECK(bg_kind_name(0) == NULL && bg_kind_name(255) == NULL);
  for (uint64_t kind = 0; kind < 256; kind++) {
    if (bg_kind_name((int)kind) == NULL) {
      edit_and_expect(set_kind, kind, BG_E_KIND, "kind");
      edit_and_expect(set_kind_and_hash, kind, BG_E_KIND, "kind (and hash)");
    } else if (kind != BG_KIND_CLASSIC) {
      size_t size;
      uint8_t *file = sample_file(&size, 0);
      REQUIRE(file != NULL);
      file[OFF_KIND] = (uint8_t)kind;
      reseal(file, size);
      bg_filter *f = NULL;
      int rc = bg_filter_deserialize(file, size, &f);
      CHECK_MSG(rc <= 0 && (rc == BG_OK) == (f != NULL), "classic payload as kind %" PRIu64, kind);
      CHECK_STATUS_AT(bg_file_validate(file, size, NULL), rc, "classic payload as kind %" PRIu64, kind);
      bg_filter_free(f);
      free(file);
    }
  }
  edit_and_expect(set_key_encoding, 3, BG_E_KEY_ENCODING, "key_encoding");
  edit_and_expect(set_key_encoding, 200, BG_E_KEY_ENCODING, "key_encoding");
  edit_and_expect(set_key_encoding, 255, BG_E_KEY_ENCODING, "key_encoding");
  edit_and_expect(set_key_encoding_and_k, 3, BG_E_KEY_ENCODING, "key_encoding (and k = 0)");
  edit_and_expect(set_hash, 0, BG_E_HASH, "hash_algorithm");
  edit_and_expect(set_hash, 2, BG_E_HASH, "hash_algorithm");
  edit_and_expect(set_hash, 255, BG_E_HASH, "hash_algorithm");
  for (uint64_t i = 0; i < SAMPLE_PAYLOAD_OFFSET - HEADER - SAMPLE_METADATA_LENGTH; i++)
    edit_and_expect(set_padding, i, BG_E_HEADER, "padding byte");

  edit_and_expect(set_k, 0, BG_E_HEADER, "k");
  edit_and_expect(set_k, 65, BG_E_HEADER, "k");
  edit_and_expect(set_k, 0xFFFFFFFF, BG_E_HEADER, "k");
  edit_and_expect(set_m, 0, BG_E_HEADER, "m");
  edit_and_expect(set_m, BG_MAX_BITS + 1, BG_E_HEADER, "m");
  edit_and_expect(set_m, 1ull << 63, BG_E_HEADER, "m");
  edit_and_expect(set_m, UINT64_MAX, BG_E_HEADER, "m");
  edit_and_expect(set_capacity, 0, BG_E_HEADER, "capacity");
  edit_and_expect(set_capacity, BG_MAX_CAPACITY + 1, BG_E_HEADER, "capacity");
  edit_and_expect(set_capacity, UINT64_MAX, BG_E_HEADER, "capacity");
  static const double bad_rates[] = {0.0, -0.0, 1.0, -0.5, 1.5, INFINITY, -INFINITY, 5e-324};
  for (size_t i = 0; i < sizeof bad_rates / sizeof bad_rates[0]; i++) {
    /* 5e-324 is in (0, 1): allowed; the others are not. */
    bg_status want = bad_rates[i] > 0.0 && bad_rates[i] < 1.0 ? BG_OK : BG_E_HEADER;
    edit_and_expect(set_error_rate_bits, double_bits(bad_rates[i]), want, "error_rate bits");
  }
  edit_and_expect(set_error_rate_bits, 0x7FF8000000000000ull, BG_E_HEADER, "error_rate NaN");
  edit_and_expect(set_error_rate_bits, 0xFFF8000000000001ull, BG_E_HEADER, "error_rate -NaN");

  /* m that disagrees with payload_length = ceil(m / 8) = 1199. */
  edit_and_expect(set_m, SAMPLE_M - 8, BG_E_PAYLOAD, "m");
  edit_and_expect(set_m, SAMPLE_M + 8, BG_E_PAYLOAD, "m");
  edit_and_expect(set_m, 9584, BG_E_PAYLOAD, "m");
  edit_and_expect(set_m, 1, BG_E_PAYLOAD, "m");
  edit_and_expect(set_m, BG_MAX_BITS, BG_E_PAYLOAD, "m");
  /* Bits past m in the last payload byte: m = 9586 uses bits 0-1 of byte 1198. */
  for (uint64_t bit = 2; bit < 8; bit++) edit_and_expect(set_tail_bit, bit, BG_E_PAYLOAD, "bit past m");

  /* Values a valid file may carry. */
  edit_and_expect(set_k, 1, BG_OK, "k");
  edit_and_expect(set_k, 64, BG_OK, "k");
  edit_and_expect(set_m, 9592, BG_OK, "m"); /* same payload length, every tail bit now in range */
  edit_and_expect(set_capacity, BG_MAX_CAPACITY, BG_OK, "capacity");
  edit_and_expect(set_count, UINT64_MAX, BG_OK, "count");
  edit_and_expect(set_key_encoding, BG_KEY_SHA1, BG_OK, "key_encoding");
  for (uint64_t bit = 0; bit < 2; bit++) edit_and_expect(set_tail_bit, bit, BG_OK, "bit below m");
}

/* key_encoding 2 (url): the same payload relabelled loads as a url filter, whose item queries
 * go through URL expressions while encoded keys still answer. */
static void test_url_file(void) {
  size_t size;
  uint8_t *file = sample_file(&size, 0);
  REQUIRE(file != NULL);
  file[OFF_KEY_ENCODING] = BG_KEY_URL;
  reseal(file, size);
  bg_filter *f = NULL;
  CHECK_STATUS(bg_filter_deserialize(file, size, &f), BG_OK);
  if (f) {
    bg_info info;
    bg_filter_info(f, &info);
    CHECK_EQ_U64(info.key_encoding, BG_KEY_URL);
    int answer = bg_filter_contains(f, "http://example.com/", 19);
    CHECK(answer == 0 || answer == 1);
    CHECK(bg_filter_contains_key(f, "member-0", 8) == 1);
    size_t size2;
    uint8_t *again = serialize_copy(f, &size2);
    CHECK(again && size2 == size && memcmp(again, file, size) == 0);
    free(again);
  }
  bg_filter_free(f);
  free(file);
}

/* A payload edit that keeps the checksum correct yields a different but valid filter:
 * answers change only where the bits changed. This is what the checksum exists to stop. */
static void test_payload_edit_resealed(void) {
  size_t size;
  uint8_t *file = sample_file(&size, 0);
  REQUIRE(file != NULL);
  memset(file + SAMPLE_PAYLOAD_OFFSET, 0, SAMPLE_PAYLOAD_LENGTH);
  expect_code(file, size, BG_E_CHECKSUM, "zeroed payload");
  reseal(file, size);
  bg_filter *f = NULL;
  CHECK_STATUS(bg_filter_deserialize(file, size, &f), BG_OK);
  CHECK(f && bg_filter_contains(f, "member-0", 8) == 0);
  bg_filter_free(f);
  free(file);
}

/*
 * The checksum computed piece by piece (what the wasm loader does as bytes arrive) equals the
 * one-shot checksum for every way of cutting the file, and deserialize_owned_checked accepts the
 * file with it and refuses it with any other value, running every other check as usual.
 */
static void test_checksum_in_pieces(void) {
  size_t size;
  uint8_t *file = sample_file(&size, 0);
  REQUIRE(file != NULL);
  uint64_t expected = bg_file_checksum(file, size);
  static const size_t pieces[] = {1, 3, 7, 16, 63, 64, 65, 255, 256, 257, 1000, 4096};
  for (size_t p = 0; p < sizeof pieces / sizeof pieces[0]; p++) {
    bg_file_hasher *hasher = bg_file_hasher_new();
    REQUIRE(hasher != NULL);
    for (size_t at = 0; at < size; at += pieces[p])
      bg_file_hasher_update(hasher, file + at, size - at < pieces[p] ? size - at : pieces[p]);
    CHECK_EQ_U64(bg_file_hasher_digest(hasher), expected);
    bg_file_hasher_free(hasher);
  }
  bg_file_hasher_free(NULL); /* like free(NULL) */

  bg_header h;
  CHECK_STATUS(bg_file_validate_checked(file, size, expected, &h), BG_OK);
  CHECK_STATUS(bg_file_validate_checked(file, size, expected ^ 1, &h), BG_E_CHECKSUM);
  /* The other checks still run, and in their order: a truncated file is truncated, whatever the sum. */
  CHECK_STATUS(bg_file_validate_checked(file, size - 1, expected, &h), BG_E_TRUNCATED);

  /* deserialize_owned_checked with the right and a wrong sum: test_conformance.c. */
  free(file);
}

int main(void) {
  test_round_trip();
  test_checksum_in_pieces();
  test_shapes();
  test_short_and_foreign();
  test_header_fields();
  test_every_bit_flip();
  test_semantic_checks();
  test_url_file();
  test_payload_edit_resealed();
  return test_report("test_format");
}
