/*
 * fuzz_delta.c — libFuzzer target for the .bgd delta reader (bg_delta_peek, bg_delta_apply).
 *
 * An input is a base and a delta: a u32 little-endian base length, the base
 * (.bgf) bytes, then the delta bytes (tests/c/test_delta.c --write-corpus
 * writes the seeds in tests/fuzz/delta_corpus). Shorter inputs, or a length
 * past the end, are a delta alone against an empty base. Besides "no crash,
 * no over-read, no UB" (ASan/UBSan), it aborts when the contract breaks:
 *   - apply refuses exactly as peek does when the delta itself is bad;
 *   - a failed apply leaves the buffer's first base-length bytes as they were;
 *   - a successful apply gives a valid file of the length and generation the
 *     delta names, that replaying the delta on refuses (E_DELTA_BASE), and
 *     that the encoder (given a valid base) reaches from the base again, byte
 *     for byte.
 * Each input is tried as it is, and again with the base's checksum re-stamped,
 * the delta's base identity copied from that base and the delta's checksum
 * re-stamped: mutations almost never keep them, and without this pass the
 * fuzzer would stop at the first check and never reach the Rice streams.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bloomgate.h"

#define REQUIRE(cond)                                                                   \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      fprintf(stderr, "fuzz_delta: invariant broken: %s (line %d)\n", #cond, __LINE__); \
      abort();                                                                          \
    }                                                                                   \
  } while (0)

#define MAX_TARGET ((uint64_t)1 << 24) /* larger claimed targets get a base-sized buffer (E_BUFFER) */

static void put_u64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static void check(const uint8_t *base, size_t base_len, const uint8_t *delta, size_t delta_len) {
  bg_delta_info info;
  bg_status peek_rc = bg_delta_peek(delta, delta_len, &info);
  size_t capacity = base_len;
  if (peek_rc == BG_OK && info.target_length <= MAX_TARGET && info.target_length > capacity)
    capacity = (size_t)info.target_length;
  uint8_t *buffer = malloc(capacity ? capacity : 1);
  if (!buffer) return;
  if (base_len) memcpy(buffer, base, base_len);
  size_t new_len = 0;
  bg_status rc = bg_delta_apply(buffer, base_len, capacity, delta, delta_len, &new_len);
  if (peek_rc != BG_OK) REQUIRE(rc == peek_rc);
  REQUIRE(rc <= 0);
  if (rc != BG_OK) {
    REQUIRE(base_len == 0 || memcmp(buffer, base, base_len) == 0);
    free(buffer);
    return;
  }
  REQUIRE(peek_rc == BG_OK && new_len == info.target_length && new_len <= capacity);
  bg_header h;
  REQUIRE(bg_file_validate(buffer, new_len, &h) == BG_OK);
  REQUIRE(h.generation == info.target_generation && h.checksum == info.target_checksum);
  REQUIRE(memcmp(h.list_id, info.list_id, 16) == 0);

  /* Replaying the delta on its own result. */
  uint8_t *again = malloc(capacity);
  if (again) {
    memcpy(again, buffer, new_len);
    size_t ignored = 0;
    REQUIRE(bg_delta_apply(again, new_len, capacity, delta, delta_len, &ignored) == BG_E_DELTA_BASE);
    REQUIRE(memcmp(again, buffer, new_len) == 0);
    free(again);
  }

  /* The encoder reaches the same file (with a delta of its own making) unless the pair is one it
   * would not encode: a delta may move bytes between head and body that the encoder would not. */
  size_t need = 0;
  bg_status encode_rc = BG_E_INCOMPATIBLE;
  if (bg_file_validate(base, base_len, NULL) == BG_OK) { /* apply needs only the base's checksum to hold */
    encode_rc = bg_delta_encode(base, base_len, buffer, new_len, NULL, 0, &need);
    REQUIRE(encode_rc == BG_E_BUFFER || encode_rc == BG_E_INCOMPATIBLE);
  }
  if (encode_rc == BG_E_BUFFER) {
    uint8_t *ours = malloc(need), *copy = malloc(capacity);
    if (ours && copy) {
      size_t written = 0, len = 0;
      REQUIRE(bg_delta_encode(base, base_len, buffer, new_len, ours, need, &written) == BG_OK &&
              written == need);
      memcpy(copy, base, base_len);
      REQUIRE(bg_delta_apply(copy, base_len, capacity, ours, written, &len) == BG_OK);
      REQUIRE(len == new_len && memcmp(copy, buffer, len) == 0);
    }
    free(ours);
    free(copy);
  }
  free(buffer);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  size_t base_len = 0;
  const uint8_t *base = data, *delta = data;
  if (size >= 4) {
    uint32_t claimed = (uint32_t)data[0] | ((uint32_t)data[1] << 8) | ((uint32_t)data[2] << 16) |
                       ((uint32_t)data[3] << 24);
    if (claimed <= size - 4) {
      base_len = claimed;
      base = data + 4;
      delta = data + 4 + base_len;
    }
  }
  size_t delta_len = size - (size_t)(delta - data);
  check(base, base_len, delta, delta_len);

  /* Repaired: a sealed base, and a sealed delta that names it. */
  uint8_t *b = malloc(base_len ? base_len : 1), *d = malloc(delta_len ? delta_len : 1);
  if (b && d) {
    if (base_len) memcpy(b, base, base_len);
    if (delta_len) memcpy(d, delta, delta_len);
    if (base_len >= 16) put_u64(b + 8, bg_file_checksum(b, base_len));
    bg_header h;
    if (delta_len >= BG_DELTA_HEADER_SIZE && bg_header_peek(b, base_len, &h) == BG_OK) {
      memcpy(d + 32, h.list_id, 16);
      put_u64(d + 48, h.generation);
      put_u64(d + 56, base_len);
      put_u64(d + 64, h.checksum);
    }
    if (delta_len >= 16) put_u64(d + 8, bg_file_checksum(d, delta_len));
    if ((base_len && memcmp(b, base, base_len) != 0) || (delta_len && memcmp(d, delta, delta_len) != 0))
      check(b, base_len, d, delta_len);
  }
  free(b);
  free(d);
  return 0;
}
