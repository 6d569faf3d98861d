/*
 * golden_gen.c — writes the golden files the C and JavaScript tests share:
 *   tests/golden/vectors.json  keys -> (h1, h2, positions), sizing, SHA-1/SHA-256, and the
 *                              description of classic.bgf
 *   tests/golden/classic.bgf   a small classic filter, byte for byte
 *
 *   golden_gen --write DIR     regenerate the files in DIR
 *   golden_gen --check DIR     regenerate in memory and compare with DIR's files (ctest runs this)
 *   golden_gen --corpus DIR    write seed inputs for the fuzzer (tests/fuzz/corpus)
 *
 * Everything is computed by the native core; the JavaScript side
 * (tests/js/golden.test.mjs) checks that the wasm build reproduces it exactly.
 * Change these files only together with a change of the hash or the format
 * (and then bump the hash algorithm id or the format version).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bloomgate.h"

/* ---- a growable text buffer -------------------------------------------- */

typedef struct {
  char *data;
  size_t length, capacity;
  int failed;
} text;

static void text_append(text *t, const char *s, size_t n) {
  if (t->failed) return;
  if (t->length + n + 1 > t->capacity) {
    size_t cap = t->capacity ? t->capacity : 4096;
    while (cap < t->length + n + 1) cap *= 2;
    char *grown = realloc(t->data, cap);
    if (!grown) {
      t->failed = 1;
      return;
    }
    t->data = grown;
    t->capacity = cap;
  }
  memcpy(t->data + t->length, s, n);
  t->length += n;
  t->data[t->length] = '\0';
}

static void text_puts(text *t, const char *s) { text_append(t, s, strlen(s)); }

static void text_printf(text *t, const char *format, ...) {
  char buf[512];
  va_list args;
  va_start(args, format);
  int n = vsnprintf(buf, sizeof buf, format, args);
  va_end(args);
  if (n < 0 || (size_t)n >= sizeof buf) {
    t->failed = 1;
    return;
  }
  text_append(t, buf, (size_t)n);
}

static void text_hex(text *t, const uint8_t *bytes, size_t n) {
  static const char digits[] = "0123456789abcdef";
  for (size_t i = 0; i < n; i++) {
    char pair[2] = {digits[bytes[i] >> 4], digits[bytes[i] & 15]};
    text_append(t, pair, 2);
  }
}

/* A JSON string; the bytes are UTF-8 and pass through, only '"', '\\' and controls are escaped. */
static void text_json_string(text *t, const char *s, size_t n) {
  text_puts(t, "\"");
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\') {
      char esc[2] = {'\\', (char)c};
      text_append(t, esc, 2);
    } else if (c == '\t') {
      text_puts(t, "\\t");
    } else if (c == '\n') {
      text_puts(t, "\\n");
    } else if (c < 0x20) {
      text_printf(t, "\\u%04x", c);
    } else {
      text_append(t, (const char *)&c, 1);
    }
  }
  text_puts(t, "\"");
}

/* ---- the inputs --------------------------------------------------------- */

typedef struct {
  const char *text; /* NULL: a binary key, only in key_hex */
  uint8_t bytes[256];
  size_t length;
} golden_key;

/* Text of exactly `length` bytes: XXH3 has branches at 0, 1-3, 4-8, 9-16, 17-128, 129-240, 241+. */
static void pattern(char *out, size_t length) {
  static const char cycle[] = "bloomgate-golden-vector/";
  for (size_t i = 0; i < length; i++) out[i] = cycle[i % (sizeof cycle - 1)];
  out[length] = '\0';
}

static char long_keys[4][256];
static const size_t long_lengths[4] = {128, 129, 240, 241};

static const char *const short_keys[] = {
    "",
    "a",
    "abc",
    "abcd",
    "key_0",
    "abcdefgh",
    "abcdefghi",
    "sixteen-bytes-16",
    "0123456789abcdefg",
    "h\xc3\xa9llo w\xc3\xb6rld",                                                /* héllo wörld */
    "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\xe3\x81\xae\xe3\x82\xad\xe3\x83\xbc", /* 日本語のキー */
    "\xf0\x9f\x99\x82 emoji",                                                   /* 🙂 emoji (4-byte UTF-8) */
    "password",
};

static const uint64_t golden_seeds[] = {0, 1, 4294967296ull, 9223372036854775813ull /* 2^63 + 5 */};
static const uint64_t golden_m[] = {1,
                                    2,
                                    1000,
                                    1917012,
                                    4294967295u,
                                    4294967296u,
                                    4294967297u,
                                    1099511627779ull /* 2^40 + 3 */,
                                    8796093022208ull /* 2^43 */};
static const uint32_t golden_k[] = {7, 1, 64, 3, 13, 30, 2};

static size_t collect_keys(golden_key *keys) {
  size_t n = 0;
  for (size_t i = 0; i < sizeof short_keys / sizeof short_keys[0]; i++, n++) {
    keys[n].text = short_keys[i];
    keys[n].length = strlen(short_keys[i]);
    memcpy(keys[n].bytes, short_keys[i], keys[n].length);
  }
  for (size_t i = 0; i < 4; i++, n++) {
    pattern(long_keys[i], long_lengths[i]);
    keys[n].text = long_keys[i];
    keys[n].length = long_lengths[i];
    memcpy(keys[n].bytes, long_keys[i], long_lengths[i]);
  }
  /* A binary key: the 20-byte SHA-1 of "password", as a breach-dump builder adds it. */
  keys[n].text = NULL;
  bg_sha1("password", 8, keys[n].bytes);
  keys[n].length = 20;
  n++;
  /* Bytes that are not UTF-8 at all. */
  static const uint8_t raw[] = {0x00, 0xff, 0xfe, 0x80, 0x00, 0x7f};
  keys[n].text = NULL;
  memcpy(keys[n].bytes, raw, sizeof raw);
  keys[n].length = sizeof raw;
  n++;
  return n;
}

typedef struct {
  uint64_t capacity;
  const char *error_rate; /* as written in JSON, and parsed with strtod */
} sizing_case;

static const sizing_case sizing_cases[] = {
    {200000, "0.01"},
    {1000000, "0.01"},
    {1000, "0.01"},
    {1000, "0.001"},
    {1000000, "1e-9"},
    {1, "0.01"},
    {1, "0.5"},
    {100, "0.5"},
    {10, "0.9"},
    {1, "0.999"},
    {10, "0.01"},
    {20, "0.1"},
    {12345, "0.0001"},
    {100000000, "0.001"},
    {3, "0.3333333333333333"},
    {1000000, "5e-20"},
    {900000000000ull, "0.01"},
    {9007199254740992ull, "0.9999999"},
    /* errors */
    {1000000, "2e-20"},
    {1000, "1e-25"},
    {1000000000000ull, "0.01"},
    {9007199254740992ull, "0.01"},
};

/* SHA inputs: the FIPS examples, padding edges, and a UTF-8 password. */
static size_t sha_input(size_t i, uint8_t *out) {
  static const char *const texts[] = {
      "",
      "abc",
      "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
      "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
      "password",
      "p\xc3\xa4ssw\xc3\xb6rd"};
  static const size_t lengths[] = {55, 56, 57, 63, 64, 65, 119, 120, 128};
  size_t n_texts = sizeof texts / sizeof texts[0];
  if (i < n_texts) {
    size_t len = strlen(texts[i]);
    memcpy(out, texts[i], len);
    return len;
  }
  i -= n_texts;
  if (i < sizeof lengths / sizeof lengths[0]) {
    for (size_t j = 0; j < lengths[i]; j++) out[j] = (uint8_t)(31 * j + 7);
    return lengths[i];
  }
  return (size_t)-1;
}

/* ---- the golden filter -------------------------------------------------- */

#define GOLDEN_CAPACITY 1000
#define GOLDEN_ERROR_RATE "0.01"
#define GOLDEN_SEED 11400714819323198485ull /* 0x9E3779B97F4A7C15: both 32-bit halves non-zero */
#define GOLDEN_GENERATION 7
#define GOLDEN_GENERATED_KEYS 200
#define GOLDEN_ABSENT 100
static const char GOLDEN_METADATA[] = "{\"source\":\"golden\",\"description\":\"bloomgate golden file\"}";
static const uint8_t GOLDEN_LIST_ID[16] = {0x5f, 0x3c, 0x2a, 0x9e, 0x1b, 0x7d, 0x4c, 0x80,
                                           0x96, 0xe2, 0xf1, 0xa3, 0xb5, 0xc7, 0xd9, 0xe0};
static const char *const golden_extra_keys[] = {"",
                                                "a",
                                                "h\xc3\xa9llo w\xc3\xb6rld",
                                                "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e",
                                                "\xf0\x9f\x99\x82",
                                                "password",
                                                "quotes \" and \\ backslash",
                                                "tab\there",
                                                "https://example.com/path?q=1"};
#define GOLDEN_EXTRA (sizeof golden_extra_keys / sizeof golden_extra_keys[0])

static void golden_key_text(size_t i, char *buf, size_t size) {
  if (i < GOLDEN_EXTRA)
    snprintf(buf, size, "%s", golden_extra_keys[i]);
  else
    snprintf(buf, size, "golden-%zu", i - GOLDEN_EXTRA);
}

static int build_golden(bg_filter **out) {
  if (bg_filter_create(BG_KIND_CLASSIC, GOLDEN_CAPACITY, strtod(GOLDEN_ERROR_RATE, NULL), GOLDEN_SEED,
                       BG_KEY_UTF8, out) != BG_OK)
    return 0;
  char key[64];
  for (size_t i = 0; i < GOLDEN_EXTRA + GOLDEN_GENERATED_KEYS; i++) {
    golden_key_text(i, key, sizeof key);
    if (bg_filter_add(*out, key, strlen(key)) != BG_OK) return 0;
  }
  return bg_filter_set_metadata(*out, GOLDEN_METADATA, sizeof GOLDEN_METADATA - 1) == BG_OK &&
         (bg_filter_set_identity(*out, GOLDEN_LIST_ID, GOLDEN_GENERATION), 1);
}

/* ---- generation ---------------------------------------------------------- */

static void emit_hash_vectors(text *t) {
  golden_key keys[32];
  size_t n_keys = collect_keys(keys), entry = 0;
  text_puts(t, "  \"hash\": [\n");
  for (size_t i = 0; i < n_keys; i++) {
    for (size_t s = 0; s < sizeof golden_seeds / sizeof golden_seeds[0]; s++) {
      bg_hash_pair h = bg_hash(keys[i].bytes, keys[i].length, golden_seeds[s]);
      /* Two (m, k) per key and seed, stepping through the lists so every m meets many keys. */
      for (int j = 0; j < 2; j++, entry++) {
        uint64_t m = golden_m[entry % (sizeof golden_m / sizeof golden_m[0])];
        uint32_t k = golden_k[entry % (sizeof golden_k / sizeof golden_k[0])];
        uint64_t positions[BG_MAX_K];
        bg_positions(h, m, k, positions);
        text_puts(t, entry ? ",\n    { \"key\": " : "    { \"key\": ");
        if (keys[i].text)
          text_json_string(t, keys[i].text, keys[i].length);
        else
          text_puts(t, "null");
        text_puts(t, ", \"key_hex\": \"");
        text_hex(t, keys[i].bytes, keys[i].length);
        text_printf(t,
                    "\", \"seed\": \"%" PRIu64 "\", \"h1\": \"%016" PRIx64 "\", \"h2\": \"%016" PRIx64
                    "\", \"m\": %" PRIu64 ", \"k\": %u, \"positions\": [",
                    golden_seeds[s], h.h1, h.h2, m, k);
        for (uint32_t p = 0; p < k; p++) text_printf(t, p ? ", %" PRIu64 : "%" PRIu64, positions[p]);
        text_puts(t, "] }");
      }
    }
  }
  text_puts(t, "\n  ],\n");
}

static void emit_sizing(text *t) {
  text_puts(t, "  \"sizing\": [\n");
  for (size_t i = 0; i < sizeof sizing_cases / sizeof sizing_cases[0]; i++) {
    uint64_t m = 0;
    uint32_t k = 0;
    bg_status rc = bg_size_for(sizing_cases[i].capacity, strtod(sizing_cases[i].error_rate, NULL), &m, &k);
    text_printf(t, "%s    { \"capacity\": %" PRIu64 ", \"errorRate\": %s, ", i ? ",\n" : "",
                sizing_cases[i].capacity, sizing_cases[i].error_rate);
    if (rc == BG_OK)
      text_printf(t, "\"m\": %" PRIu64 ", \"k\": %u }", m, k);
    else
      text_printf(t, "\"error\": \"%s\" }", bg_status_name(rc));
  }
  text_puts(t, "\n  ],\n");
}

static void emit_sha(text *t, int sha256) {
  text_puts(t, sha256 ? "  \"sha256\": [\n" : "  \"sha1\": [\n");
  uint8_t input[256], digest[32];
  for (size_t i = 0;; i++) {
    size_t len = sha_input(i, input);
    if (len == (size_t)-1) break;
    if (sha256)
      bg_sha256(input, len, digest);
    else
      bg_sha1(input, len, digest);
    text_puts(t, i ? ",\n    { \"input_hex\": \"" : "    { \"input_hex\": \"");
    text_hex(t, input, len);
    text_puts(t, "\", \"digest_hex\": \"");
    text_hex(t, digest, sha256 ? 32 : 20);
    text_puts(t, "\" }");
  }
  text_puts(t, "\n  ],\n");
}

static int emit_golden_file(text *t, uint8_t **file, size_t *file_size) {
  bg_filter *f = NULL;
  if (!build_golden(&f)) {
    bg_filter_free(f);
    return 0;
  }
  *file_size = bg_filter_serialized_size(f);
  *file = malloc(*file_size);
  size_t written = 0;
  if (!*file || bg_filter_serialize(f, *file, *file_size, &written) != BG_OK || written != *file_size) {
    bg_filter_free(f);
    return 0;
  }
  bg_info info;
  bg_filter_info(f, &info);
  uint8_t digest[32];
  bg_sha256(*file, *file_size, digest);
  char key[64];

  text_printf(t,
              "  \"golden_file\": {\n    \"path\": \"classic.bgf\",\n    \"capacity\": %d,\n"
              "    \"errorRate\": %s,\n    \"seed\": \"%" PRIu64 "\",\n    \"keyEncoding\": \"utf8\",\n"
              "    \"kind\": \"classic\",\n    \"keys\": [",
              GOLDEN_CAPACITY, GOLDEN_ERROR_RATE, (uint64_t)GOLDEN_SEED);
  for (size_t i = 0; i < GOLDEN_EXTRA + GOLDEN_GENERATED_KEYS; i++) {
    golden_key_text(i, key, sizeof key);
    text_puts(t, i ? (i % 8 ? ", " : ",\n      ") : "\n      ");
    text_json_string(t, key, strlen(key));
  }
  text_puts(t, "\n    ],\n    \"absent\": [");
  /* Keys never added that the filter answers "definitely not" for. */
  size_t found = 0;
  for (long i = 0; found < GOLDEN_ABSENT; i++) {
    int len = snprintf(key, sizeof key, "absent-%ld", i);
    if (bg_filter_contains(f, key, (size_t)len) != 0) continue;
    text_puts(t, found ? (found % 8 ? ", " : ",\n      ") : "\n      ");
    text_json_string(t, key, (size_t)len);
    found++;
  }
  text_puts(t, "\n    ],\n    \"metadata\": ");
  text_append(t, GOLDEN_METADATA, sizeof GOLDEN_METADATA - 1);
  text_puts(t, ",\n    \"metadataJson\": ");
  text_json_string(t, GOLDEN_METADATA, sizeof GOLDEN_METADATA - 1);
  text_puts(t, ",\n    \"listId\": \"");
  text_hex(t, GOLDEN_LIST_ID, 16);
  text_printf(t, "\",\n    \"generation\": %d,\n", GOLDEN_GENERATION);
  text_printf(t,
              "    \"stats\": { \"m\": %" PRIu64 ", \"k\": %u, \"n\": %" PRIu64 ", \"bitsSet\": %" PRIu64
              ", \"fillRatio\": %.17g, \"estimatedErrorRate\": %.17g, \"estimatedItems\": %.17g"
              ", \"payloadBytes\": %" PRIu64 ", \"fileBytes\": %" PRIu64 " },\n",
              info.m, info.k, info.count, info.bits_set, info.fill_ratio, info.estimated_error_rate,
              info.estimated_items, info.payload_bytes, info.serialized_bytes);
  bg_header h;
  bg_file_validate(*file, *file_size, &h);
  text_printf(t, "    \"checksum\": \"%016" PRIx64 "\",\n    \"sha256\": \"", h.checksum);
  text_hex(t, digest, 32);
  text_puts(t, "\"\n  }\n");
  bg_filter_free(f);
  return 1;
}

/*
 * One file per kind, built by a fixed program that exercises what the kind does (kicks and
 * removals for cuckoo, removals and saturation-free counters for counting, three layers for
 * scalable, the static build for fuse; fuse4 at several rates and value widths), recorded by
 * length, checksum and SHA-256, and by the SHA-256 of its answers (program_answers).
 * tests/js/golden.test.mjs runs the same program in wasm and must get the same bytes and answers.
 *   create with value_bits r (bg_filter_create_with_values; r = 0: bg_filter_create);
 *   add "kind-<i>" for i < adds (r > 0: with value program_value(i, r)); if removes: remove
 *   "kind-<i>" for i < adds, i % 3 == 0; then add "kind-extra-<i>" for i < extra.
 */
static const struct {
  const char *name;
  uint64_t capacity;
  double error_rate;
  long adds, extra;
  int removes;
  unsigned value_bits;
} KIND_PROGRAMS[] = {
    {"classic", 3000, 0.01, 3000, 0, 0, 0},
    {"blocked", 3000, 0.01, 3000, 0, 0, 0},
    {"fuse8", 3000, 0.01, 3000, 0, 0, 0},
    {"fuse16", 3000, 0.0001, 3000, 0, 0, 0},
    {"counting", 3000, 0.01, 3000, 500, 1, 0},
    {"scalable", 1000, 0.01, 5000, 0, 0, 0},
    {"cuckoo", 3000, 0.01, 3000, 1000, 1, 0},
    {"fuse4", 3000, 0.01, 3000, 0, 0, 0},
    {"fuse4", 3000, 0.25, 3000, 0, 0, 1},
    {"fuse4", 3000, 1.0 / 256, 3000, 0, 0, 3},
    {"fuse4", 3000, 0.001, 3000, 0, 0, 8},
    {"fuse4", 3000, 1.0 / (1 << 20), 3000, 0, 0, 3},
    {"fuse4", 3000, 1.0 / 4294967296.0, 3000, 0, 0, 0},
};
#define KIND_SEED 7
/* Items whose answers are recorded: every "kind-<i>" for i < adds + extra... and these many others. */
#define ANSWER_PROBES 3000

/* Key i's value in a program of r value bits: the top r bits of i x the golden ratio (mod 2^32). */
static uint32_t program_value(long i, unsigned r) {
  return r ? (uint32_t)((uint32_t)i * 2654435769u) >> (32 - r) : 0;
}

/*
 * The SHA-256 of a filter's answers: for each item, in order, one byte (bg_filter_value's 1 or 0)
 * and its value as 4 bytes little-endian (0 for "no"): "kind-<i>" for i < adds, "kind-extra-<i>" for
 * i < extra, "kind-probe-<i>" for i < ANSWER_PROBES.
 */
static int program_answers(const bg_filter *f, long adds, long extra, uint8_t digest[32]) {
  size_t items = (size_t)(adds + extra + ANSWER_PROBES);
  uint8_t *answers = malloc(5 * items);
  if (!answers) return 0;
  size_t at = 0;
  char key[64];
  static const char *const PREFIXES[3] = {"kind-", "kind-extra-", "kind-probe-"};
  long counts[3] = {adds, extra, ANSWER_PROBES};
  int ok = 1;
  for (int l = 0; l < 3; l++)
    for (long i = 0; i < counts[l]; i++) {
      int len = snprintf(key, sizeof key, "%s%ld", PREFIXES[l], i);
      uint32_t value = 0;
      int answer = bg_filter_value(f, key, (size_t)len, &value);
      ok &= answer == 0 || answer == 1;
      if (answer != 1) value = 0;
      answers[at++] = (uint8_t)answer;
      for (int b = 0; b < 4; b++) answers[at++] = (uint8_t)(value >> (8 * b));
    }
  bg_sha256(answers, at, digest);
  free(answers);
  return ok;
}

static int kind_id(const char *name) {
  for (int id = 1; id < 256; id++)
    if (bg_kind_name(id) && strcmp(bg_kind_name(id), name) == 0) return id;
  return 0;
}

static int emit_kind_files(text *t) {
  text_puts(t, "  \"kinds\": [\n");
  size_t programs = sizeof KIND_PROGRAMS / sizeof KIND_PROGRAMS[0];
  for (size_t p = 0; p < programs; p++) {
    bg_filter *f = NULL;
    char key[64];
    unsigned r = KIND_PROGRAMS[p].value_bits;
    if (bg_filter_create_with_values(kind_id(KIND_PROGRAMS[p].name), KIND_PROGRAMS[p].capacity,
                                     KIND_PROGRAMS[p].error_rate, KIND_SEED, BG_KEY_UTF8, r, &f) != BG_OK)
      return 0;
    int ok = 1;
    for (long i = 0; i < KIND_PROGRAMS[p].adds; i++) {
      int len = snprintf(key, sizeof key, "kind-%ld", i);
      ok &= (r ? bg_filter_add_value(f, key, (size_t)len, program_value(i, r))
               : bg_filter_add(f, key, (size_t)len)) == BG_OK;
    }
    if (KIND_PROGRAMS[p].removes)
      for (long i = 0; i < KIND_PROGRAMS[p].adds; i += 3) {
        int len = snprintf(key, sizeof key, "kind-%ld", i);
        ok &= bg_filter_remove(f, key, (size_t)len) == BG_OK;
      }
    for (long i = 0; i < KIND_PROGRAMS[p].extra; i++) {
      int len = snprintf(key, sizeof key, "kind-extra-%ld", i);
      ok &= bg_filter_add(f, key, (size_t)len) == BG_OK;
    }
    ok &= bg_filter_seal(f) == BG_OK;
    size_t size = bg_filter_serialized_size(f);
    uint8_t *file = malloc(size ? size : 1);
    ok &= file && bg_filter_serialize(f, file, size, NULL) == BG_OK;
    uint8_t answers[32];
    ok &= program_answers(f, KIND_PROGRAMS[p].adds, KIND_PROGRAMS[p].extra, answers);
    bg_filter_free(f);
    if (!ok) {
      free(file);
      return 0;
    }
    uint8_t digest[32];
    bg_sha256(file, size, digest);
    bg_header h;
    bg_file_validate(file, size, &h);
    text_printf(t,
                "    { \"kind\": \"%s\", \"capacity\": %" PRIu64 ", \"errorRate\": %.17g, \"seed\": %d, "
                "\"valueBits\": %u, \"adds\": %ld, \"removes\": %s, \"extra\": %ld, \"fileBytes\": %zu, "
                "\"checksum\": \"%016" PRIx64 "\", \"sha256\": \"",
                KIND_PROGRAMS[p].name, KIND_PROGRAMS[p].capacity, KIND_PROGRAMS[p].error_rate, KIND_SEED, r,
                KIND_PROGRAMS[p].adds, KIND_PROGRAMS[p].removes ? "true" : "false", KIND_PROGRAMS[p].extra,
                size, h.checksum);
    text_hex(t, digest, 32);
    text_puts(t, "\", \"answers\": \"");
    text_hex(t, answers, 32);
    text_puts(t, p + 1 < programs ? "\" },\n" : "\" }\n");
    free(file);
  }
  text_puts(t, "  ],\n");
  return 1;
}

static int generate(text *json, uint8_t **file, size_t *file_size) {
  text_puts(json, "{\n");
  text_puts(
      json,
      "  \"about\": \"Written by tests/c/golden_gen.c from the native core; see tests/golden/README.md\",\n");
  emit_hash_vectors(json);
  emit_sizing(json);
  emit_sha(json, 0);
  emit_sha(json, 1);
  if (!emit_kind_files(json)) return 0;
  if (!emit_golden_file(json, file, file_size)) return 0;
  text_puts(json, "}\n");
  return !json->failed;
}

/* ---- files ---------------------------------------------------------------- */

static uint8_t *read_all(const char *path, size_t *size) {
  FILE *fp = fopen(path, "rb");
  if (!fp) return NULL;
  size_t cap = 1 << 16, n = 0;
  uint8_t *buf = malloc(cap);
  while (buf) {
    n += fread(buf + n, 1, cap - n, fp);
    if (n < cap) break;
    uint8_t *grown = realloc(buf, cap * 2);
    if (!grown) {
      free(buf);
      buf = NULL;
      break;
    }
    buf = grown;
    cap *= 2;
  }
  int error = ferror(fp);
  fclose(fp);
  if (error) {
    free(buf);
    return NULL;
  }
  *size = n;
  return buf;
}

static int write_all(const char *path, const void *data, size_t size) {
  FILE *fp = fopen(path, "wb");
  if (!fp) return 0;
  int ok = fwrite(data, 1, size, fp) == size;
  return fclose(fp) == 0 && ok;
}

static int compare_file(const char *path, const uint8_t *want, size_t want_size) {
  size_t size = 0;
  uint8_t *have = read_all(path, &size);
  if (!have) {
    fprintf(stderr, "golden_gen: cannot read %s (run golden_gen --write to create it)\n", path);
    return 0;
  }
  size_t common = size < want_size ? size : want_size, i = 0;
  while (i < common && have[i] == want[i]) i++;
  int same = size == want_size && i == size;
  if (!same)
    fprintf(stderr,
            "golden_gen: %s differs from what the core generates now: first difference at byte %zu "
            "(committed %zu bytes, generated %zu)\n",
            path, i, size, want_size);
  free(have);
  return same;
}

/* ---- fuzzer seeds: small valid files of each shape, and near misses ------------------ */

static int write_filter(const char *dir, const char *name, uint64_t capacity, double error_rate,
                        int key_encoding, int keys, const char *metadata) {
  bg_filter *f = NULL;
  if (bg_filter_create(BG_KIND_CLASSIC, capacity, error_rate, (uint64_t)keys * 977, key_encoding, &f) != BG_OK)
    return 0;
  char key[32], path[4096];
  for (int i = 0; i < keys; i++) {
    int len = snprintf(key, sizeof key, "seed-%d", i);
    if (key_encoding == BG_KEY_URL)
      bg_filter_add_key(f, key, (size_t)len);
    else
      bg_filter_add(f, key, (size_t)len);
  }
  if (metadata) bg_filter_set_metadata(f, metadata, strlen(metadata));
  size_t size = bg_filter_serialized_size(f);
  uint8_t *file = malloc(size);
  int ok = file && bg_filter_serialize(f, file, size, NULL) == BG_OK;
  snprintf(path, sizeof path, "%s/%s", dir, name);
  ok = ok && write_all(path, file, size);
  free(file);
  bg_filter_free(f);
  return ok;
}

static int write_corpus(const char *dir, const uint8_t *golden, size_t golden_size) {
  char path[4096];
  int ok = 1;
  ok &= write_filter(dir, "small_no_metadata.bgf", 10, 0.1, BG_KEY_UTF8, 5, NULL);
  ok &= write_filter(dir, "sha1_keys.bgf", 20, 0.01, BG_KEY_SHA1, 20, "{\"format\":\"hibp\"}");
  ok &= write_filter(dir, "one_bit.bgf", 1, 0.999, BG_KEY_UTF8, 1, NULL);
  ok &= write_filter(dir, "url_keys.bgf", 16, 0.05, BG_KEY_URL, 4, "{}");
  ok &= write_filter(dir, "metadata_64.bgf", 8, 0.2, BG_KEY_UTF8, 8,
                     "{\"source\":\"fuzz seed\",\"description\":\"ends on the boundary..\"}");
  /* One small file of every other kind this build has (static kinds are sealed first). */
  for (int kind = 0; kind < 256; kind++) {
    const char *name = bg_kind_name(kind);
    bg_filter *f = NULL;
    if (!name || kind == BG_KIND_CLASSIC || bg_filter_create(kind, 32, 0.05, 99, BG_KEY_UTF8, &f) != BG_OK)
      continue;
    char key[32];
    for (int i = 0; i < 20; i++) {
      int len = snprintf(key, sizeof key, "kind-seed-%d", i);
      bg_filter_add(f, key, (size_t)len);
    }
    bg_filter_seal(f);
    size_t size = bg_filter_serialized_size(f);
    uint8_t *file = malloc(size ? size : 1);
    snprintf(path, sizeof path, "%s/kind_%s.bgf", dir, name);
    if (file && bg_filter_serialize(f, file, size, NULL) == BG_OK) ok &= write_all(path, file, size);
    free(file);
    bg_filter_free(f);
  }
  snprintf(path, sizeof path, "%s/classic.bgf", dir);
  ok &= write_all(path, golden, golden_size);
  snprintf(path, sizeof path, "%s/truncated_header.bin", dir);
  ok &= write_all(path, golden, 100);
  snprintf(path, sizeof path, "%s/truncated_payload.bin", dir);
  ok &= write_all(path, golden, golden_size - 1);
  uint8_t *edited = malloc(golden_size + 1);
  if (!edited) return 0;
  memcpy(edited, golden, golden_size);
  edited[golden_size] = 0;
  snprintf(path, sizeof path, "%s/trailing_byte.bin", dir);
  ok &= write_all(path, edited, golden_size + 1);
  edited[16] = 2; /* version 2 */
  snprintf(path, sizeof path, "%s/version_2.bin", dir);
  ok &= write_all(path, edited, golden_size);
  edited[16] = 1;
  edited[golden_size - 1] ^= 0x10; /* a payload bit: checksum mismatch */
  snprintf(path, sizeof path, "%s/bad_checksum.bin", dir);
  ok &= write_all(path, edited, golden_size);
  free(edited);
  return ok;
}

int main(int argc, char **argv) {
  if (argc != 3 || (strcmp(argv[1], "--write") != 0 && strcmp(argv[1], "--check") != 0 &&
                    strcmp(argv[1], "--corpus") != 0)) {
    fprintf(stderr, "usage: golden_gen --write|--check|--corpus DIR\n");
    return 2;
  }
  text json = {0};
  uint8_t *file = NULL;
  size_t file_size = 0;
  if (!generate(&json, &file, &file_size)) {
    fprintf(stderr, "golden_gen: generation failed\n");
    return 1;
  }
  char json_path[4096], bgf_path[4096];
  snprintf(json_path, sizeof json_path, "%s/vectors.json", argv[2]);
  snprintf(bgf_path, sizeof bgf_path, "%s/classic.bgf", argv[2]);
  int ok;
  if (strcmp(argv[1], "--corpus") == 0) {
    ok = write_corpus(argv[2], file, file_size);
    if (!ok) fprintf(stderr, "golden_gen: cannot write the corpus into %s\n", argv[2]);
  } else if (strcmp(argv[1], "--write") == 0) {
    ok = write_all(json_path, json.data, json.length) && write_all(bgf_path, file, file_size);
    if (!ok)
      fprintf(stderr, "golden_gen: cannot write into %s\n", argv[2]);
    else
      printf("wrote %s (%zu bytes) and %s (%zu bytes)\n", json_path, json.length, bgf_path, file_size);
  } else {
    int json_ok = compare_file(json_path, (const uint8_t *)json.data, json.length);
    int bgf_ok = compare_file(bgf_path, file, file_size);
    ok = json_ok && bgf_ok;
    if (ok) printf("golden files match: %s, %s\n", json_path, bgf_path);
  }
  free(json.data);
  free(file);
  return ok ? 0 : 1;
}
