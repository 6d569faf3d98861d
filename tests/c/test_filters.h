/*
 * test_filters.h — helpers shared by the kind tests that exercise filters
 * item by item (counting, cuckoo, fuse): key names, bulk adds, batches,
 * whole-file comparisons, and re-sealing an edited file's checksum.
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
  uint8_t *buf = malloc(*size ? *size : 1);
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

static inline void put_u32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static inline void put_u64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static inline void reseal(uint8_t *file, size_t size) { put_u64(file + 8, bg_file_checksum(file, size)); }

/* Items prefix<first> .. prefix<first+count-1> in the batch layout (offsets has count+1 entries). */
typedef struct {
  uint8_t *items;
  uint32_t *offsets;
  size_t count;
} batch;

static inline int batch_make(batch *b, const char *prefix, long first, size_t count) {
  size_t cap = count * (strlen(prefix) + 12) + 1;
  b->items = malloc(cap);
  b->offsets = malloc((count + 1) * sizeof(uint32_t));
  b->count = count;
  if (!b->items || !b->offsets) return 0;
  size_t at = 0;
  b->offsets[0] = 0;
  for (size_t i = 0; i < count; i++) {
    at += key_name((char *)b->items + at, cap - at, prefix, first + (long)i);
    b->offsets[i + 1] = (uint32_t)at;
  }
  return 1;
}

static inline void batch_free(batch *b) {
  free(b->items);
  free(b->offsets);
}

#endif /* BG_TEST_FILTERS_H */
