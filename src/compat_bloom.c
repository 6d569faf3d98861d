/* compat_bloom.c — transitional bg_bloom_* names for the classic kind; see bloomgate.h. */
#include "bloomgate.h"

bg_status bg_bloom_create(uint64_t capacity, double error_rate, uint64_t seed, int key_encoding,
                          bg_bloom **out) {
  return bg_filter_create(BG_KIND_CLASSIC, capacity, error_rate, seed, key_encoding, out);
}
void bg_bloom_free(bg_bloom *f) { bg_filter_free(f); }
void bg_bloom_clear(bg_bloom *f) { bg_filter_clear(f); }
bg_status bg_bloom_add(bg_bloom *f, const void *item, size_t len) { return bg_filter_add(f, item, len); }
int bg_bloom_contains(const bg_bloom *f, const void *item, size_t len) {
  return bg_filter_contains(f, item, len);
}
bg_status bg_bloom_add_key(bg_bloom *f, const void *key, size_t len) { return bg_filter_add_key(f, key, len); }
int bg_bloom_contains_key(const bg_bloom *f, const void *key, size_t len) {
  return bg_filter_contains_key(f, key, len);
}
bg_status bg_bloom_add_many(bg_bloom *f, const uint8_t *items, const uint32_t *offsets, size_t count) {
  return bg_filter_add_many(f, items, offsets, count);
}
bg_status bg_bloom_contains_many(const bg_bloom *f, const uint8_t *items, const uint32_t *offsets,
                                 size_t count, uint8_t *results) {
  return bg_filter_contains_many(f, items, offsets, count, results);
}
bg_status bg_bloom_merge(bg_bloom *dst, const bg_bloom *src) { return bg_filter_merge(dst, src); }
uint64_t bg_bloom_bit_count(const bg_bloom *f) {
  bg_info info;
  bg_filter_info(f, &info);
  return info.bits_set;
}
void bg_bloom_info(const bg_bloom *f, bg_info *info) { bg_filter_info(f, info); }
bg_status bg_bloom_set_metadata(bg_bloom *f, const void *data, size_t len) {
  return bg_filter_set_metadata(f, data, len);
}
const uint8_t *bg_bloom_metadata(const bg_bloom *f, size_t *len) { return bg_filter_metadata(f, len); }
void bg_bloom_set_identity(bg_bloom *f, const uint8_t list_id[16], uint64_t generation) {
  bg_filter_set_identity(f, list_id, generation);
}
size_t bg_bloom_serialized_size(const bg_bloom *f) { return bg_filter_serialized_size(f); }
bg_status bg_bloom_serialize(const bg_bloom *f, uint8_t *dst, size_t cap, size_t *written) {
  return bg_filter_serialize(f, dst, cap, written);
}
bg_status bg_bloom_deserialize(const uint8_t *src, size_t size, bg_bloom **out) {
  return bg_filter_deserialize(src, size, out);
}
bg_status bg_bloom_deserialize_owned(uint8_t *buffer, size_t size, bg_bloom **out) {
  return bg_filter_deserialize_owned(buffer, size, out);
}
