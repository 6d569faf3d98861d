/*
 * test_bloom.c — the classic Bloom filter: the seeds' experiment (theory vs
 * measurement), its exact bits, creation errors, the merge rules of its
 * geometry, key encodings, metadata, and a filter beyond 2^32 bits. What every
 * kind must do (batches, round trips, clear, merge, corruption) is in
 * test_conformance.c.
 */
#include <math.h>
#include <stdlib.h>

#include "test_filters.h"

#define N_INSERT 200000
#define N_PROBE 50000

/* Set bits, as bg_filter_info reports them (NULL: 0). */
static uint64_t bits_set(const bg_filter *f) {
  if (!f) return 0;
  bg_info info;
  bg_filter_info(f, &info);
  return info.bits_set;
}

/* The seeds' experiment, through single calls and through batches. */
static void test_seed_experiment(void) {
  bg_filter *f = NULL;
  CHECK_STATUS(bg_filter_create(BG_KIND_CLASSIC, N_INSERT, 0.01, 0, BG_KEY_UTF8, &f), BG_OK);
  REQUIRE(f != NULL);
  char key[32];
  for (long i = 0; i < N_INSERT; i++) {
    size_t len = key_name(key, sizeof key, "key_", i);
    CHECK_STATUS_AT(bg_filter_add(f, key, (size_t)len), BG_OK, "%s", key);
  }

  long missing = 0;
  for (long i = 0; i < N_INSERT; i++) {
    size_t len = key_name(key, sizeof key, "key_", i);
    if (bg_filter_contains(f, key, (size_t)len) != 1) missing++;
  }
  CHECK_MSG(missing == 0, "%ld false negatives", missing);

  long hits = 0;
  for (long i = N_INSERT; i < N_INSERT + N_PROBE; i++) {
    size_t len = key_name(key, sizeof key, "key_", i);
    int r = bg_filter_contains(f, key, (size_t)len);
    CHECK(r == 0 || r == 1);
    hits += r == 1;
  }

  bg_info info;
  bg_filter_info(f, &info);
  CHECK_EQ_U64(info.m, 1917012);
  CHECK_EQ_U64(info.k, 7);
  CHECK_EQ_U64(info.count, N_INSERT);
  double theory = info.theoretical_error_rate;
  double empirical = (double)hits / N_PROBE;
  double sigma = sqrt(theory * (1 - theory) / N_PROBE);
  printf("seed experiment: m=%" PRIu64 " k=%u bits/key=%.2f false negatives=%ld\n", info.m, info.k,
         (double)info.m / N_INSERT, missing);
  printf("  empirical p=%.5f theoretical p=%.5f sigma=%.5f (%.2f sigma) estimated p=%.5f\n", empirical, theory,
         sigma, (empirical - theory) / sigma, info.estimated_error_rate);
  CHECK_NEAR(theory, 0.010039209581758123, 1e-9);
  CHECK_MSG(fabs(empirical - theory) <= 4 * sigma, "empirical %.5f vs theory %.5f (sigma %.5f)", empirical,
            theory, sigma);

  /* info: every field. */
  CHECK_EQ_U64(info.kind, BG_KIND_CLASSIC);
  CHECK_EQ_U64(info.key_encoding, BG_KEY_UTF8);
  CHECK_EQ_U64(info.hash_algorithm, BG_HASH_XXH3_128);
  CHECK_EQ_U64(info.capacity, N_INSERT);
  CHECK_EQ_U64(info.seed, 0);
  CHECK_EQ_U64(info.generation, 0);
  CHECK_EQ_U64(info.bits_set, bits_set(f));
  CHECK_EQ_U64(info.payload_bytes, 239627); /* ceil(1917012 / 8) */
  CHECK_EQ_U64(info.serialized_bytes, bg_filter_serialized_size(f));
  CHECK_EQ_U64(info.serialized_bytes, 128 + 239627); /* no metadata: payload right after the header */
  CHECK(info.error_rate == 0.01);
  CHECK_NEAR(info.fill_ratio, (double)info.bits_set / 1917012.0, 1e-15);
  /* The expected fill 1 - e^(-kn/m) = 0.518 (k = 7 is a little above the real-valued optimum 6.64). */
  CHECK_NEAR(info.fill_ratio, 1.0 - exp(-7.0 * N_INSERT / 1917012.0), 0.005);
  CHECK_NEAR(info.estimated_items, bg_estimated_items(info.m, info.k, info.bits_set), 1e-15);
  CHECK_NEAR(info.estimated_items, (double)N_INSERT, 0.01);
  CHECK_NEAR(info.estimated_error_rate, bg_estimated_error_rate(info.m, info.k, info.bits_set), 1e-15);
  CHECK_NEAR(info.estimated_error_rate, theory, 0.02);
  uint8_t zero_id[16] = {0};
  CHECK(memcmp(info.list_id, zero_id, 16) == 0);

  bg_filter_free(f);
}

static void test_add_contains(void) {
  bg_filter *f = NULL;
  CHECK_STATUS(bg_filter_create(BG_KIND_CLASSIC, 1000, 0.01, 42, BG_KEY_UTF8, &f), BG_OK);
  REQUIRE(f != NULL);
  CHECK_EQ_U64(bits_set(f), 0);
  CHECK(bg_filter_contains(f, "alpha", 5) == 0);
  CHECK(bg_filter_contains(f, "", 0) == 0);

  /* One key sets exactly its distinct positions. */
  CHECK_STATUS(bg_filter_add(f, "alpha", 5), BG_OK);
  bg_info info;
  bg_filter_info(f, &info);
  uint64_t pos[BG_MAX_K];
  bg_positions(bg_hash("alpha", 5, 42), info.m, info.k, pos);
  uint64_t distinct = 0;
  for (uint32_t i = 0; i < info.k; i++) {
    int seen = 0;
    for (uint32_t j = 0; j < i; j++) seen |= pos[j] == pos[i];
    distinct += !seen;
  }
  CHECK_EQ_U64(bits_set(f), distinct);
  CHECK(bg_filter_contains(f, "alpha", 5) == 1);
  CHECK(bg_filter_contains(f, "alph", 4) == 0 || bg_filter_contains(f, "alph", 4) == 1);
  /* Adding the same key again changes no bit but counts an insert. */
  CHECK_STATUS(bg_filter_add(f, "alpha", 5), BG_OK);
  CHECK_EQ_U64(bits_set(f), distinct);
  bg_filter_info(f, &info);
  CHECK_EQ_U64(info.count, 2);

  /* Empty key and binary keys with NUL bytes are keys like any other. */
  CHECK_STATUS(bg_filter_add(f, NULL, 0), BG_OK);
  CHECK(bg_filter_contains(f, "", 0) == 1);
  static const uint8_t binary[] = {0, 1, 0, 255, 0};
  CHECK_STATUS(bg_filter_add(f, binary, sizeof binary), BG_OK);
  CHECK(bg_filter_contains(f, binary, sizeof binary) == 1);
  CHECK(bg_filter_contains_key(f, binary, sizeof binary) == 1);

  /* The bits are exactly those bg_positions names: every position of a member is set in the file. */
  size_t size;
  uint8_t *file = serialize_copy(f, &size);
  REQUIRE(file != NULL);
  const uint8_t *payload = file + 128;
  bg_positions(bg_hash("alpha", 5, 42), info.m, info.k, pos);
  for (uint32_t i = 0; i < info.k; i++) CHECK((payload[pos[i] >> 3] >> (pos[i] & 7)) & 1);
  free(file);

  /* Parameters as sized: 1000 at 1% is m = 9586, k = 7. */
  CHECK_EQ_U64(info.m, 9586);
  CHECK_EQ_U64(info.k, 7);
  CHECK_EQ_U64(info.seed, 42);

  /* Arguments. */
  CHECK_STATUS(bg_filter_add(NULL, "x", 1), BG_E_ARG);
  CHECK_STATUS(bg_filter_add(f, NULL, 3), BG_E_ARG);
  CHECK_STATUS(bg_filter_contains(NULL, "x", 1), BG_E_ARG);
  CHECK_STATUS(bg_filter_contains(f, NULL, 3), BG_E_ARG);
  CHECK_STATUS(bg_filter_add_key(NULL, "x", 1), BG_E_ARG);
  CHECK_STATUS(bg_filter_contains_key(f, NULL, 1), BG_E_ARG);
  bg_filter_free(NULL);
  bg_filter_free(f);
}

static void test_create_errors(void) {
  bg_filter *f = (bg_filter *)&f; /* must be reset to NULL on failure */
  CHECK_STATUS(bg_filter_create(BG_KIND_CLASSIC, 0, 0.01, 0, BG_KEY_UTF8, &f), BG_E_RANGE);
  CHECK(f == NULL);
  CHECK_STATUS(bg_filter_create(BG_KIND_CLASSIC, 100, 0.0, 0, BG_KEY_UTF8, &f), BG_E_RANGE);
  CHECK_STATUS(bg_filter_create(BG_KIND_CLASSIC, 100, 1.0, 0, BG_KEY_UTF8, &f), BG_E_RANGE);
  CHECK_STATUS(bg_filter_create(BG_KIND_CLASSIC, 100, NAN, 0, BG_KEY_UTF8, &f), BG_E_RANGE);
  CHECK_STATUS(bg_filter_create(BG_KIND_CLASSIC, 100, 1e-30, 0, BG_KEY_UTF8, &f), BG_E_RANGE); /* k > 64 */
  CHECK_STATUS(bg_filter_create(BG_KIND_CLASSIC, BG_MAX_CAPACITY, 0.01, 0, BG_KEY_UTF8, &f), BG_E_TOO_LARGE);
  CHECK_STATUS(bg_filter_create(BG_KIND_CLASSIC, 100, 0.01, 0, 3, &f), BG_E_KEY_ENCODING);
  CHECK_STATUS(bg_filter_create(BG_KIND_CLASSIC, 100, 0.01, 0, -1, &f), BG_E_KEY_ENCODING);
  CHECK(f == NULL);
  CHECK_STATUS(bg_filter_create(BG_KIND_CLASSIC, 100, 0.01, 0, BG_KEY_UTF8, NULL), BG_E_ARG);
  /* Unknown kind ids: test_conformance.c. */
  CHECK(bg_kind_name(BG_KIND_CLASSIC) && strcmp(bg_kind_name(BG_KIND_CLASSIC), "classic") == 0);
  CHECK(bg_kind_name(1000) == NULL);
}

/*
 * What compatibility means for the classic geometry (the union, seeds, encodings, other kinds
 * and other sizes are test_conformance.c's): m and k both, however they were sized.
 */
static void test_merge(void) {
  /* (10, 1%) and (20, 10%) both need m = 96 bits, with k = 7 and k = 3. */
  bg_filter *k7 = NULL, *other_k = NULL, *same_m_k = NULL;
  CHECK_STATUS(bg_filter_create(BG_KIND_CLASSIC, 10, 0.01, 7, BG_KEY_UTF8, &k7), BG_OK);
  CHECK_STATUS(bg_filter_create(BG_KIND_CLASSIC, 20, 0.1, 7, BG_KEY_UTF8, &other_k), BG_OK);
  /* Same m, k, seed and encoding but sized from different (n, p): compatible. */
  CHECK_STATUS(bg_filter_create(BG_KIND_CLASSIC, 10, 0.0100001, 7, BG_KEY_UTF8, &same_m_k), BG_OK);
  REQUIRE(k7 && other_k && same_m_k);
  bg_info a, b, c;
  bg_filter_info(k7, &a);
  bg_filter_info(other_k, &b);
  bg_filter_info(same_m_k, &c);
  CHECK(a.m == 96 && b.m == 96 && a.k == 7 && b.k == 3);
  CHECK(c.m == 96 && c.k == 7);
  CHECK_STATUS(bg_filter_merge(k7, other_k), BG_E_INCOMPATIBLE);
  CHECK_STATUS(bg_filter_merge(other_k, k7), BG_E_INCOMPATIBLE);
  CHECK_STATUS(bg_filter_add(k7, "x", 1), BG_OK);
  CHECK_STATUS(bg_filter_merge(same_m_k, k7), BG_OK);
  CHECK(bg_filter_contains(same_m_k, "x", 1) == 1);

  /* A filter merged into itself keeps its bits; the count, an estimate's input, doubles. */
  bg_filter *all = NULL;
  CHECK_STATUS(bg_filter_create(BG_KIND_CLASSIC, 5000, 0.01, 7, BG_KEY_UTF8, &all), BG_OK);
  REQUIRE(all != NULL);
  add_range(all, "merge-", 0, 4000);
  uint64_t bits = bits_set(all);
  CHECK_STATUS(bg_filter_merge(all, all), BG_OK);
  CHECK_EQ_U64(bits_set(all), bits);
  bg_info after;
  bg_filter_info(all, &after);
  CHECK_EQ_U64(after.count, 8000);

  bg_filter_free(all);
  bg_filter_free(k7);
  bg_filter_free(other_k);
  bg_filter_free(same_m_k);
}

/* sha1: real passwords become their digests (that add_key of the digest builds the same filter,
 * batches included, is test_conformance.c's for every kind). */
static void test_sha1_encoding(void) {
  bg_filter *by_item = NULL;
  CHECK_STATUS(bg_filter_create(BG_KIND_CLASSIC, 1000, 0.001, 5, BG_KEY_SHA1, &by_item), BG_OK);
  REQUIRE(by_item);
  static const char *passwords[] = {"password", "123456", "correct horse battery staple", "", "pässwörd"};
  uint8_t digest[20];
  for (size_t i = 0; i < sizeof passwords / sizeof passwords[0]; i++)
    CHECK_STATUS(bg_filter_add(by_item, passwords[i], strlen(passwords[i])), BG_OK);
  for (size_t i = 0; i < sizeof passwords / sizeof passwords[0]; i++) {
    size_t len = strlen(passwords[i]);
    bg_sha1(passwords[i], len, digest);
    CHECK(bg_filter_contains(by_item, passwords[i], len) == 1);
    CHECK(bg_filter_contains_key(by_item, digest, 20) == 1);
  }
  /* The stored key is the digest: the raw password is not what was hashed. */
  CHECK(bg_filter_contains_key(by_item, "password", 8) == 0);
  bg_info info;
  bg_filter_info(by_item, &info);
  CHECK_EQ_U64(info.key_encoding, BG_KEY_SHA1);
  bg_filter_free(by_item);
}

/* url: an item is a URL; adding lists its most specific Safe Browsing expression, a query asks
 * for all of them. The keys are SHA-256 digests of the expressions. */
static void test_url_encoding(void) {
  bg_filter *f = NULL;
  CHECK_STATUS(bg_filter_create(BG_KIND_CLASSIC, 1000, 0.001, 0, BG_KEY_URL, &f), BG_OK);
  REQUIRE(f != NULL);
  static const char url[] = "http://Evil.Example.COM/malware/../page.html?x=1#fragment";
  CHECK_STATUS(bg_filter_add(f, url, sizeof url - 1), BG_OK);
  CHECK(bg_filter_contains(f, url, sizeof url - 1) == 1);
  bg_info info;
  bg_filter_info(f, &info);
  CHECK_EQ_U64(info.count, 1);
  CHECK_EQ_U64(info.key_encoding, BG_KEY_URL);

  /* The stored key is the SHA-256 of the URL's first (most specific) expression. */
  char text[4096];
  uint32_t offsets[BG_URL_MAX_EXPRESSIONS + 1];
  size_t count = 0;
  CHECK_STATUS(bg_url_expressions(url, sizeof url - 1, text, sizeof text, offsets, &count), BG_OK);
  REQUIRE(count >= 1 && count <= BG_URL_MAX_EXPRESSIONS);
  uint8_t digest[32];
  bg_sha256(text + offsets[0], offsets[1] - offsets[0], digest);
  CHECK(bg_filter_contains_key(f, digest, 32) == 1);
  /* The item's bytes themselves are not a key of a url filter. */
  CHECK(bg_filter_contains_key(f, url, sizeof url - 1) == 0);

  /* Listing a whole host ("host/") catches every URL on it, through any of its expressions. */
  bg_filter *hosts = NULL;
  CHECK_STATUS(bg_filter_create(BG_KIND_CLASSIC, 1000, 0.001, 0, BG_KEY_URL, &hosts), BG_OK);
  REQUIRE(hosts != NULL);
  bg_sha256("evil.example.com/", 17, digest);
  CHECK_STATUS(bg_filter_add_key(hosts, digest, 32), BG_OK);
  static const char on_host[] = "https://evil.example.com/deep/path/file.php?q=2";
  static const char sub_host[] = "http://a.b.evil.example.com/";
  static const char elsewhere[] = "http://good.example.org/evil.example.com/";
  CHECK(bg_filter_contains(hosts, on_host, sizeof on_host - 1) == 1);
  CHECK(bg_filter_contains(hosts, sub_host, sizeof sub_host - 1) == 1);
  CHECK(bg_filter_contains(hosts, elsewhere, sizeof elsewhere - 1) == 0);

  /* Not a URL: refused with E_URL, and nothing is added. */
  uint64_t bits_before = bits_set(f);
  CHECK_STATUS(bg_filter_add(f, "", 0), BG_E_URL);
  CHECK_STATUS(bg_filter_contains(f, "", 0), BG_E_URL);
  CHECK_EQ_U64(bits_set(f), bits_before);
  /* The key-encoding helper cannot expand a URL into one key: filters do that. */
  uint8_t scratch[32];
  const uint8_t *key;
  size_t key_len;
  CHECK_STATUS(bg_encode_key(BG_KEY_URL, url, sizeof url - 1, scratch, &key, &key_len), BG_E_KEY_ENCODING);
  bg_filter_free(hosts);
  bg_filter_free(f);
}

static void test_metadata_and_identity(void) {
  bg_filter *f = NULL;
  CHECK_STATUS(bg_filter_create(BG_KIND_CLASSIC, 100, 0.01, 0, BG_KEY_UTF8, &f), BG_OK);
  REQUIRE(f != NULL);
  size_t len = 99;
  (void)bg_filter_metadata(f, &len);
  CHECK_EQ_U64(len, 0);
  static const char json[] = "{\"source\":\"test\"}";
  CHECK_STATUS(bg_filter_set_metadata(f, json, sizeof json - 1), BG_OK);
  const uint8_t *meta = bg_filter_metadata(f, &len);
  CHECK(len == sizeof json - 1 && meta && memcmp(meta, json, len) == 0);
  CHECK(meta != (const uint8_t *)json); /* copied */
  CHECK_STATUS(bg_filter_set_metadata(f, NULL, 5), BG_E_ARG);
  /* One byte over the limit is refused and the old block stays. */
  uint8_t *big = calloc(1, BG_MAX_METADATA + 1);
  REQUIRE(big != NULL);
  CHECK_STATUS(bg_filter_set_metadata(f, big, BG_MAX_METADATA + 1), BG_E_METADATA);
  meta = bg_filter_metadata(f, &len);
  CHECK(len == sizeof json - 1 && memcmp(meta, json, len) == 0);
  CHECK_STATUS(bg_filter_set_metadata(f, big, BG_MAX_METADATA), BG_OK);
  (void)bg_filter_metadata(f, &len);
  CHECK_EQ_U64(len, BG_MAX_METADATA);
  /* 128 + 1 MiB is already 64-aligned: the payload (ceil(959 / 8) = 120 bytes) follows directly. */
  bg_info sized;
  bg_filter_info(f, &sized);
  CHECK_EQ_U64(sized.m, 959);
  CHECK_EQ_U64(bg_filter_serialized_size(f), 128 + BG_MAX_METADATA + 120);
  CHECK_EQ_U64(sized.serialized_bytes, 128 + BG_MAX_METADATA + 120);
  free(big);
  CHECK_STATUS(bg_filter_set_metadata(f, NULL, 0), BG_OK);
  (void)bg_filter_metadata(f, &len);
  CHECK_EQ_U64(len, 0);

  uint8_t id[16];
  for (int i = 0; i < 16; i++) id[i] = (uint8_t)(0xA0 + i);
  bg_filter_set_identity(f, id, 123456789012345ull);
  bg_info info;
  bg_filter_info(f, &info);
  CHECK(memcmp(info.list_id, id, 16) == 0);
  CHECK_EQ_U64(info.generation, 123456789012345ull);
  /* NULL list_id changes only the generation. */
  bg_filter_set_identity(f, NULL, 8);
  bg_filter_info(f, &info);
  CHECK(memcmp(info.list_id, id, 16) == 0);
  CHECK_EQ_U64(info.generation, 8);
  bg_filter_free(f);
}

static int compare_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/*
 * A filter of more than 2^32 bits (about 512 MiB). Positions above 2^32 must
 * land on their own bits: the file's payload is checked bit by bit against
 * bg_positions, and the file is read back in place.
 */
static void test_beyond_2_to_32_bits(void) {
  const uint64_t capacity = 448200000; /* m = 4,296,023,165 = 2^32 + 2^20 + 7,293 */
  bg_filter *f = NULL;
  bg_status rc = bg_filter_create(BG_KIND_CLASSIC, capacity, 0.01, 0x5eed, BG_KEY_UTF8, &f);
  if (rc == BG_E_NOMEM || (rc == BG_E_TOO_LARGE && SIZE_MAX <= UINT32_MAX)) {
    printf("note: skipped the 2^32-bit filter test (%s: could not get ~512 MiB)\n", bg_status_name(rc));
    return;
  }
  CHECK_STATUS(rc, BG_OK);
  REQUIRE(f != NULL);
  bg_info info;
  bg_filter_info(f, &info);
  CHECK_EQ_U64(info.m, 4296023165ull);
  CHECK_EQ_U64(info.k, 7);
  const uint64_t m = info.m, k = info.k;

  /* 4,000 ordinary keys plus 64 chosen because one of their probes lies above 2^32. */
  enum { ORDINARY = 4000, HIGH = 64, TOTAL = ORDINARY + HIGH };
  static char keys[TOTAL][24];
  long next = 0;
  int high_found = 0;
  for (int i = 0; i < ORDINARY; i++) key_name(keys[i], sizeof keys[i], "big_", next++);
  while (high_found < HIGH && next < 10000000) {
    char key[24];
    size_t len = key_name(key, sizeof key, "big_", next++);
    uint64_t pos[BG_MAX_K];
    bg_positions(bg_hash(key, (size_t)len, 0x5eed), m, (uint32_t)k, pos);
    int above = 0;
    for (uint64_t j = 0; j < k; j++) above |= pos[j] >= (1ull << 32);
    if (above && next > ORDINARY) memcpy(keys[ORDINARY + high_found++], key, sizeof key);
  }
  REQUIRE(high_found == HIGH);

  uint64_t *positions = malloc(sizeof(uint64_t) * TOTAL * k);
  REQUIRE(positions != NULL);
  uint64_t highest = 0;
  for (int i = 0; i < TOTAL; i++) {
    size_t len = strlen(keys[i]);
    CHECK_STATUS(bg_filter_add(f, keys[i], len), BG_OK);
    bg_positions(bg_hash(keys[i], len, 0x5eed), m, (uint32_t)k, positions + (size_t)i * k);
  }
  long missing = 0;
  for (int i = 0; i < TOTAL; i++) missing += bg_filter_contains(f, keys[i], strlen(keys[i])) != 1;
  CHECK_EQ_U64(missing, 0);
  qsort(positions, (size_t)(TOTAL * k), sizeof(uint64_t), compare_u64);
  uint64_t distinct = 0, above = 0;
  for (size_t i = 0; i < TOTAL * k; i++) {
    if (i == 0 || positions[i] != positions[i - 1]) distinct++, above += positions[i] >= (1ull << 32);
    if (positions[i] > highest) highest = positions[i];
  }
  CHECK(highest < m);
  CHECK(above >= HIGH);
  CHECK_EQ_U64(bits_set(f), distinct);
  printf("2^32+ filter: m=%" PRIu64 ", %d keys, %" PRIu64 " distinct bits, %" PRIu64
         " above 2^32, highest %" PRIu64 "\n",
         m, TOTAL, distinct, above, highest);

  size_t size;
  uint8_t *file = serialize_copy(f, &size);
  if (!file) {
    printf("note: skipped the 2^32-bit file round trip (no memory for a second copy)\n");
  } else {
    CHECK_EQ_U64(size, 128 + (m + 7) / 8);
    const uint8_t *payload = file + 128;
    uint64_t unset = 0;
    for (size_t i = 0; i < TOTAL * k; i++) unset += !((payload[positions[i] >> 3] >> (positions[i] & 7)) & 1);
    CHECK_EQ_U64(unset, 0);
    bg_filter *g = NULL;
    CHECK_STATUS(bg_filter_deserialize_owned(file, size, &g), BG_OK);
    if (g) {
      missing = 0;
      for (int i = 0; i < TOTAL; i++) missing += bg_filter_contains(g, keys[i], strlen(keys[i])) != 1;
      CHECK_EQ_U64(missing, 0);
      bg_filter_free(g); /* frees file */
    } else {
      free(file);
    }
  }
  free(positions);
  bg_filter_free(f);
}

int main(void) {
  test_seed_experiment();
  test_add_contains();
  test_create_errors();
  test_merge();
  test_sha1_encoding();
  test_url_encoding();
  test_metadata_and_identity();
  test_beyond_2_to_32_bits();
  return test_report("test_bloom");
}
