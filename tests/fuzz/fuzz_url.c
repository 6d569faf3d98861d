/*
 * fuzz_url.c — libFuzzer target for the Safe Browsing URL canonicalizer.
 *
 * Arbitrary bytes go to bg_url_canonicalize and, when they canonicalize, to
 * bg_url_expressions. Output buffers are allocated to their exact capacity so
 * ASan sees any write past them. Besides "no crash, no over-read, no UB", it
 * checks the contract and aborts when broken:
 *   - canonical form is a fixed point: canonicalizing it again gives it back
 *     (builders and browsers may meet a URL at either stage);
 *   - a buffer one byte short is BG_E_BUFFER, never a truncated success;
 *   - a canonical URL has 1..BG_URL_MAX_EXPRESSIONS expressions, each
 *     non-empty, offsets increasing, the first the URL itself without its
 *     scheme (the most specific expression is host + path + query).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bloomgate.h"

#define REQUIRE(cond)                                                                 \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      fprintf(stderr, "fuzz_url: invariant broken: %s (line %d)\n", #cond, __LINE__); \
      abort();                                                                        \
    }                                                                                 \
  } while (0)

/* Canonicalize into a buffer of exactly `capacity` bytes (malloc'd, so ASan guards its end). */
static bg_status canonicalize(const char *url, size_t len, size_t capacity, char **out, size_t *out_len) {
  *out = malloc(capacity ? capacity : 1);
  REQUIRE(*out != NULL);
  *out_len = 0;
  return bg_url_canonicalize(url, len, *out, capacity, out_len);
}

static void check_expressions(const char *canonical, size_t len) {
  size_t capacity = BG_URL_MAX_EXPRESSIONS * (len + 1);
  char *out = malloc(capacity);
  uint32_t offsets[BG_URL_MAX_EXPRESSIONS + 1];
  size_t count = 0;
  REQUIRE(out != NULL);
  bg_status rc = bg_url_expressions(canonical, len, out, capacity, offsets, &count);
  REQUIRE(rc == BG_OK);
  REQUIRE(count >= 1 && count <= BG_URL_MAX_EXPRESSIONS);
  REQUIRE(offsets[0] == 0);
  for (size_t i = 0; i < count; i++) REQUIRE(offsets[i + 1] > offsets[i] && offsets[i + 1] <= capacity);
  const char *scheme_end = memchr(canonical, ':', len);
  REQUIRE(scheme_end != NULL && (size_t)(scheme_end - canonical) + 3 <= len &&
          memcmp(scheme_end, "://", 3) == 0);
  size_t rest = len - (size_t)(scheme_end + 3 - canonical);
  REQUIRE(offsets[1] == rest && memcmp(out, scheme_end + 3, rest) == 0);
  free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > BG_URL_MAX_LENGTH + 16) return 0;
  const char *url = (const char *)data;
  /* Percent-escaping can triple every byte; a little more for the scheme and the slash. */
  size_t capacity = 3 * size + 16;
  char *canonical;
  size_t len;
  bg_status rc = canonicalize(url, size, capacity, &canonical, &len);
  REQUIRE(rc == BG_OK || rc == BG_E_URL);
  if (rc == BG_OK) {
    REQUIRE(len > 0 && len <= capacity);
    if (len <= BG_URL_MAX_LENGTH) {
      char *again;
      size_t again_len;
      REQUIRE(canonicalize(canonical, len, 3 * len + 16, &again, &again_len) == BG_OK);
      REQUIRE(again_len == len && memcmp(again, canonical, len) == 0);
      free(again);
    }
    char *short_buffer;
    size_t short_len;
    REQUIRE(canonicalize(url, size, len - 1, &short_buffer, &short_len) == BG_E_BUFFER);
    free(short_buffer);
    check_expressions(canonical, len);
  }
  free(canonical);
  return 0;
}
