/*
 * fuzz_reader.c — libFuzzer target for the .bgf reader.
 *
 * Arbitrary bytes go to bg_header_peek, bg_file_validate, bg_filter_deserialize
 * and bg_filter_deserialize_owned. Besides "no crash, no over-read, no UB"
 * (ASan/UBSan), it checks the readers' contract and aborts when broken:
 *   - the three readers agree on the status;
 *   - a file that validates has exactly the length its header declares;
 *   - a filter that loads re-serializes to the very same bytes, answers the
 *     same from both readers (values too: the same, below 2^value_bits, only
 *     for a "maybe"), and stays a valid, writable filter.
 * Every input is also tried with a correct checksum (see the entry point).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bloomgate.h"

#define REQUIRE(cond)                                                                    \
  do {                                                                                   \
    if (!(cond)) {                                                                       \
      fprintf(stderr, "fuzz_reader: invariant broken: %s (line %d)\n", #cond, __LINE__); \
      abort();                                                                           \
    }                                                                                    \
  } while (0)

/* Queries derived from the input, so answers are exercised on real bits. */
static void query_both(const bg_filter *a, const bg_filter *b, const uint8_t *data, size_t size) {
  bg_info info;
  bg_filter_info(a, &info);
  REQUIRE(info.value_bits <= BG_MAX_VALUE_BITS);
  unsigned value_bits = info.value_bits;
  uint8_t items[64 * 8];
  uint32_t offsets[65];
  size_t n = 0, at = 0;
  offsets[0] = 0;
  for (size_t i = 0; i < 64; i++) {
    size_t len = (i * 7) % 9;
    size_t start = size ? (i * 131) % size : 0;
    for (size_t j = 0; j < len; j++) items[at + j] = size ? data[(start + j) % size] : (uint8_t)i;
    at += len;
    offsets[++n] = (uint32_t)at;
  }
  uint8_t results[64];
  bg_status rc = bg_filter_contains_many(a, items, offsets, n, results);
  for (size_t i = 0; i < n; i++) {
    const uint8_t *item = items + offsets[i];
    size_t len = offsets[i + 1] - offsets[i];
    int x = bg_filter_contains(a, item, len), y = bg_filter_contains(b, item, len);
    REQUIRE(x == y);
    REQUIRE(x <= 1);
    if (rc == BG_OK) REQUIRE(results[i] == x);
    REQUIRE(bg_filter_contains_key(a, item, len) == bg_filter_contains_key(b, item, len));
    /* Values (fuse4; 0 for other kinds): the same answer as contains, the same value from both, below 2^r. */
    uint32_t va = 0xdeadbeef, vb = 0xdeadbeef;
    int xa = bg_filter_value_key(a, item, len, &va), xb = bg_filter_value_key(b, item, len, &vb);
    REQUIRE(xa == xb && xa == bg_filter_contains_key(a, item, len));
    if (xa == 1) REQUIRE(va == vb && va < (1u << value_bits));
    if (xa == 0) REQUIRE(va == 0xdeadbeef && vb == 0xdeadbeef);
    REQUIRE(bg_filter_value(a, item, len, &va) == x);
  }
}

static void check_file(const uint8_t *data, size_t size) {
  bg_header peeked, validated;
  bg_status peek_rc = bg_header_peek(data, size, &peeked);
  bg_status rc = bg_file_validate(data, size, &validated);
  if (rc == BG_OK) {
    REQUIRE(peek_rc == BG_OK);
    REQUIRE(validated.file_length == size);
    REQUIRE(peeked.file_length == size);
    REQUIRE(validated.payload_offset % BG_PAYLOAD_ALIGN == 0);
  }

  bg_filter *f = NULL;
  bg_status copy_rc = bg_filter_deserialize(data, size, &f);
  REQUIRE(copy_rc == rc || copy_rc == BG_E_NOMEM);
  REQUIRE((copy_rc == BG_OK) == (f != NULL));

  uint8_t *buffer = malloc(size ? size : 1);
  if (!buffer) {
    bg_filter_free(f);
    return;
  }
  if (size) memcpy(buffer, data, size);
  bg_filter *g = NULL;
  bg_status owned_rc = bg_filter_deserialize_owned(buffer, size, &g);
  REQUIRE(owned_rc == rc || owned_rc == BG_E_NOMEM);
  if (owned_rc != BG_OK) free(buffer); /* still ours on failure */

  if (f && g) {
    /* Re-serialization is the identity, from either reader. */
    size_t out_size = bg_filter_serialized_size(f);
    REQUIRE(out_size == size);
    REQUIRE(bg_filter_serialized_size(g) == size);
    uint8_t *out = malloc(size);
    if (out) {
      size_t written = 0;
      REQUIRE(bg_filter_serialize(f, out, size - 1, &written) == BG_E_BUFFER);
      REQUIRE(bg_filter_serialize(f, out, size, &written) == BG_OK && written == size);
      REQUIRE(memcmp(out, data, size) == 0);
      memset(out, 0, size);
      REQUIRE(bg_filter_serialize(g, out, size, &written) == BG_OK && written == size);
      REQUIRE(memcmp(out, data, size) == 0);
      free(out);
    }
    bg_info a, b;
    bg_filter_info(f, &a);
    bg_filter_info(g, &b);
    REQUIRE(a.m == validated.m && a.k == validated.k && a.count == validated.count);
    REQUIRE(a.bits_set == b.bits_set);
    size_t meta_len = 0;
    const uint8_t *meta = bg_filter_metadata(f, &meta_len);
    REQUIRE(meta_len == validated.metadata_length);
    if (meta_len) REQUIRE(memcmp(meta, data + BG_HEADER_SIZE, meta_len) == 0);

    query_both(f, g, data, size);

    /* Still a working filter: add an encoded key (kinds may refuse: static, or full), and the
     * result is a valid file. */
    bg_status add_rc = bg_filter_add_key(g, data, size < 16 ? size : 16);
    REQUIRE(add_rc <= 0);
    REQUIRE(bg_filter_add_key_value(g, data, size < 16 ? size : 16, 1u << a.value_bits) < 0);
    if (add_rc == BG_OK) REQUIRE(bg_filter_contains_key(g, data, size < 16 ? size : 16) == 1);
    size_t changed_size = bg_filter_serialized_size(g);
    uint8_t *changed = malloc(changed_size);
    if (changed) {
      REQUIRE(bg_filter_serialize(g, changed, changed_size, NULL) == BG_OK);
      REQUIRE(bg_file_validate(changed, changed_size, NULL) == BG_OK);
      free(changed);
    }
    bg_status merge_rc = bg_filter_merge(f, g);
    REQUIRE(merge_rc <= 0 && merge_rc != BG_E_INCOMPATIBLE);
  }
  bg_filter_free(f);
  bg_filter_free(g); /* frees buffer when it was taken */
}

/*
 * Each input is tried as it is, and again with its checksum field re-stamped:
 * mutated bytes almost never keep a valid XXH3-64, so without the second pass
 * the fuzzer would stop at the checksum and never reach the kinds' own checks.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  check_file(data, size);
  if (size >= 16) {
    uint8_t *sealed = malloc(size);
    if (!sealed) return 0;
    memcpy(sealed, data, size);
    uint64_t sum = bg_file_checksum(sealed, size);
    for (int i = 0; i < 8; i++) sealed[8 + i] = (uint8_t)(sum >> (8 * i));
    if (memcmp(sealed, data, size) != 0) check_file(sealed, size);
    free(sealed);
  }
  return 0;
}
