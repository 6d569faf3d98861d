/*
 * test_sha.c — SHA-1 and SHA-256 against the FIPS 180 examples, padding
 * boundaries, streaming in odd chunk sizes, and the key encodings built on them.
 */
#include <stdlib.h>

#include "test_util.h"

typedef struct {
  const char *message; /* NULL: one million 'a' */
  const char *sha1_hex;
  const char *sha256_hex;
} fips_vector;

static const char million_tag[] = "one million 'a'";

static const fips_vector fips_vectors[] = {
    {"", "da39a3ee5e6b4b0d3255bfef95601890afd80709",
     "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
    {"abc", "a9993e364706816aba3e25717850c26c9cd0d89d",
     "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
    /* The 448-bit message: padding spills into a second block. */
    {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "84983e441c3bd26ebaae4aa1f95129e5e54670f1",
     "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
    /* The 896-bit message. */
    {"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
     "a49b2446a02c645bf419f995b67091253a04a259",
     "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
    {NULL, "34aa973cd4c4daa4f61eeb2bdbad27316534016f",
     "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"},
};

/* Messages of byte i = (31 i + 7) mod 256 around the 55/56/64-byte padding edges
 * (digests from Python's hashlib). */
typedef struct {
  size_t length;
  const char *sha1_hex;
  const char *sha256_hex;
} boundary_vector;

static const boundary_vector boundary_vectors[] = {
    {55, "749bbefb28edc4638b28b2b9a9e03ab9a4032b90",
     "8aa994584139d128848eeebc4e815639ba5ab6e6e39574195a63ac4f14f7c43b"},
    {56, "a5b6e9c29d201c774753ff8e7fb64931656f5e63",
     "ad574708f75c044c9b85de64cb568ee7711ff4f36448c6242f053ba8f6cc2b63"},
    {57, "eb0737bed5451790722b2df351829ce117e3d9dd",
     "5b46e502092be01b1100193e089fdda95638c12e19a1d24f308eb2c3d3ae849d"},
    {63, "d1a454409359fc372b4d22b3cea6488d6ba1be00",
     "280ed3e8ff1df845b2e7dfe6ac6cee817bef20e783cc65abc41b818b4d2fe076"},
    {64, "39a0d8b645ad85f1f976731ed112ac9455e28b78",
     "c6ab9724ade5b6a7a1edfffb12f3aa9181351355af8fd08c919952ad211339dd"},
    {65, "d0c96e18890114a14716e9686528d2e3fdba8d9e",
     "788367c73c7ddf4c53f65e68cc0d943e6227ab55b0e78ba63ace822b1c6301c0"},
    {119, "562ecf8a430f8e1056e3619bae33628e9a1d0a4e",
     "3d610547d68216dedf7435a4fb6260353911f6b3fd3f18805ddb8be285d726fe"},
    {120, "353f6d2bf0e91aa91b74a2e0b3f297510f7d825f",
     "1f80156a804cb7862ad113e8200e9d74499723e7c7854d5f48776d3148e09656"},
    {127, "bebc42d2d3d1e5fb8ad8895c2dcef2d68a6c279a",
     "192409cd280e14b743642ad1343fbd3e82d9305de72c078117745a679210cc3d"},
    {128, "0060f2a7e34b6e4d459f560197ef93243732a400",
     "cc548ca2dec1f6fe4f58b2e27aa9c7521607df1130d140b55a4dad0665302356"},
};

#define MILLION 1000000u

static void check_digest(const uint8_t *digest, size_t len, const char *want_hex, const char *what) {
  char hex[65];
  test_hex(digest, len, hex);
  CHECK_MSG(strcmp(hex, want_hex) == 0, "%s: got %s, expected %s", what, hex, want_hex);
}

static void test_fips(void) {
  uint8_t *million = malloc(MILLION);
  REQUIRE(million != NULL);
  memset(million, 'a', MILLION);
  for (size_t i = 0; i < sizeof fips_vectors / sizeof fips_vectors[0]; i++) {
    const fips_vector *v = &fips_vectors[i];
    const uint8_t *data = v->message ? (const uint8_t *)v->message : million;
    size_t len = v->message ? strlen(v->message) : MILLION;
    const char *label = v->message ? v->message : million_tag;
    uint8_t d1[20], d256[32];
    bg_sha1(data, len, d1);
    check_digest(d1, 20, v->sha1_hex, label);
    bg_sha256(data, len, d256);
    check_digest(d256, 32, v->sha256_hex, label);

    /* Streaming one byte at a time gives the same digest (the million in 1000-byte steps). */
    bg_sha256_ctx ctx;
    bg_sha256_init(&ctx);
    size_t step = v->message ? 1 : 1000;
    for (size_t at = 0; at < len; at += step) bg_sha256_update(&ctx, data + at, step);
    uint8_t streamed[32];
    bg_sha256_final(&ctx, streamed);
    check_digest(streamed, 32, v->sha256_hex, label);
  }
  free(million);
}

static void test_padding_boundaries(void) {
  uint8_t data[128];
  for (size_t i = 0; i < sizeof data; i++) data[i] = (uint8_t)(31 * i + 7);
  for (size_t i = 0; i < sizeof boundary_vectors / sizeof boundary_vectors[0]; i++) {
    const boundary_vector *v = &boundary_vectors[i];
    char label[32];
    snprintf(label, sizeof label, "length %zu", v->length);
    uint8_t d1[20], d256[32];
    bg_sha1(data, v->length, d1);
    check_digest(d1, 20, v->sha1_hex, label);
    bg_sha256(data, v->length, d256);
    check_digest(d256, 32, v->sha256_hex, label);
  }
}

/* Every split of a 1,000-byte message into chunks of a fixed odd size equals the one-shot
 * digest; so does a sequence of growing chunks that cross block edges at every offset. */
static void test_streaming(void) {
  enum { LEN = 1000 };
  uint8_t data[LEN];
  for (size_t i = 0; i < LEN; i++) data[i] = (uint8_t)(i * 131 + (i >> 3));
  for (size_t total = 0; total <= LEN; total += (total < 200 ? 1 : 97)) {
    uint8_t want[32];
    bg_sha256(data, total, want);
    static const size_t chunk_sizes[] = {1, 3, 7, 13, 55, 63, 64, 65, 127, 129, 333};
    for (size_t c = 0; c < sizeof chunk_sizes / sizeof chunk_sizes[0]; c++) {
      bg_sha256_ctx ctx;
      bg_sha256_init(&ctx);
      for (size_t at = 0; at < total; at += chunk_sizes[c]) {
        size_t n = total - at < chunk_sizes[c] ? total - at : chunk_sizes[c];
        bg_sha256_update(&ctx, data + at, n);
      }
      bg_sha256_update(&ctx, data, 0); /* empty updates change nothing */
      uint8_t got[32];
      bg_sha256_final(&ctx, got);
      CHECK_MSG(memcmp(got, want, 32) == 0, "length %zu in chunks of %zu", total, chunk_sizes[c]);
    }
    bg_sha256_ctx ctx;
    bg_sha256_init(&ctx);
    size_t at = 0, n = 1;
    while (at < total) {
      size_t take = total - at < n ? total - at : n;
      bg_sha256_update(&ctx, data + at, take);
      at += take;
      n += 2;
    }
    uint8_t got[32];
    bg_sha256_final(&ctx, got);
    CHECK_MSG(memcmp(got, want, 32) == 0, "length %zu in growing chunks", total);
  }
  /* A context is reusable after init. */
  bg_sha256_ctx ctx;
  bg_sha256_init(&ctx);
  bg_sha256_update(&ctx, "junk", 4);
  uint8_t junk[32], abc[32];
  bg_sha256_final(&ctx, junk);
  bg_sha256_init(&ctx);
  bg_sha256_update(&ctx, "abc", 3);
  bg_sha256_final(&ctx, abc);
  check_digest(abc, 32, fips_vectors[1].sha256_hex, "abc after reuse");
}

static void test_encode_key(void) {
  uint8_t scratch[32];
  const uint8_t *key = NULL;
  size_t key_len = 0;
  const char *item = "password";

  CHECK_STATUS(bg_encode_key(BG_KEY_UTF8, item, 8, scratch, &key, &key_len), BG_OK);
  CHECK(key == (const uint8_t *)item);
  CHECK_EQ_U64(key_len, 8);

  CHECK_STATUS(bg_encode_key(BG_KEY_SHA1, item, 8, scratch, &key, &key_len), BG_OK);
  CHECK(key == scratch);
  CHECK_EQ_U64(key_len, 20);
  check_digest(key, 20, "5baa61e4c9b93f3f0682250b6cf8331b7ee68fd8", "sha1 key of 'password'");

  CHECK_STATUS(bg_encode_key(BG_KEY_SHA1, "", 0, scratch, &key, &key_len), BG_OK);
  check_digest(key, 20, fips_vectors[0].sha1_hex, "sha1 key of ''");

  CHECK_STATUS(bg_encode_key(BG_KEY_URL, item, 8, scratch, &key, &key_len), BG_E_KEY_ENCODING);
  CHECK_STATUS(bg_encode_key(3, item, 8, scratch, &key, &key_len), BG_E_KEY_ENCODING);
  CHECK_STATUS(bg_encode_key(-1, item, 8, scratch, &key, &key_len), BG_E_KEY_ENCODING);
}

int main(void) {
  test_fips();
  test_padding_boundaries();
  test_streaming();
  test_encode_key();
  return test_report("test_sha");
}
