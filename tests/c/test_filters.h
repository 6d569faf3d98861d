/*
 * test_filters.h — helpers shared by the kind tests that exercise filters
 * item by item (counting, cuckoo): key names, bulk add/count, whole-file
 * comparisons, and re-sealing an edited file's checksum.
 */
#ifndef BG_TEST_FILTERS_H
#define BG_TEST_FILTERS_H

#include <stdlib.h>

#include "test_util.h"

static inline size_t key_name(char *buf, size_t size, const char *prefix, long i) {
  return (size_t)snprintf(buf, size, "%s%ld", prefix, i);
}

static inline void add_range(bg_filter *f, const char *prefix, long first, long count) {
  char key[48];
  for (long i = first; i < first + count; i++) {
    size_t len = key_name(key, sizeof key, prefix, i);
    CHECK_STATUS_AT(bg_filter_add(f, key, len), BG_OK, "%s", key);
  }
}

static inline uint8_t *serialize_copy(const bg_filter *f, size_t *size) {
  *size = bg_filter_serialized_size(f);
  uint8_t *buf = malloc(*size);
  if (!buf) return NULL;
  size_t written = 0;
  if (bg_filter_serialize(f, buf, *size, &written) != BG_OK || written != *size) {
    free(buf);
    return NULL;
  }
  return buf;
}

static inline int same_file(const bg_filter *a, const bg_filter *b) {
  size_t sa, sb;
  uint8_t *fa = serialize_copy(a, &sa), *fb = serialize_copy(b, &sb);
  int same = fa && fb && sa == sb && memcmp(fa, fb, sa) == 0;
  free(fa);
  free(fb);
  return same;
}

static inline void put_u64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static inline void reseal(uint8_t *file, size_t size) { put_u64(file + 8, bg_file_checksum(file, size)); }

#endif /* BG_TEST_FILTERS_H */
