/*
 * bloom.c — the classic Bloom filter: m bits, k probes per key (the seeds'
 * structure). Bit i of the filter is bit (i & 7) of payload byte (i >> 3), so
 * the payload means the same thing on every host and is used in place.
 */
#include <stdlib.h>

#include "hash_inline.h"
#include "internal.h"

struct bg_bloom {
  uint8_t *bits;    /* ceil(m/8) bytes; bits past m stay zero */
  void *storage;    /* the allocation that holds bits: its own, or a whole file buffer */
  uint64_t m, capacity, count, seed, generation;
  uint32_t k, key_encoding;
  double error_rate;
  uint8_t list_id[16];
  uint8_t *metadata; /* malloc'd copy, or NULL */
  size_t metadata_length;
};

static uint64_t payload_bytes(uint64_t m) { return (m + 7) / 8; }

static bg_bloom *bloom_alloc_struct(void) { return (bg_bloom *)calloc(1, sizeof(bg_bloom)); }

bg_status bg_bloom_create(uint64_t capacity, double error_rate, uint64_t seed, int key_encoding,
                          bg_bloom **out) {
  BG_RETURN_IF(!out, BG_E_ARG);
  *out = NULL;
  BG_RETURN_IF(key_encoding < BG_KEY_UTF8 || key_encoding > BG_KEY_URL, BG_E_KEY_ENCODING);
  uint64_t m;
  uint32_t k;
  bg_status rc = bg_size_for(capacity, error_rate, &m, &k);
  if (rc != BG_OK) return rc;
  BG_RETURN_IF(payload_bytes(m) > SIZE_MAX, BG_E_TOO_LARGE);
  bg_bloom *f = bloom_alloc_struct();
  BG_RETURN_IF(!f, BG_E_NOMEM);
  f->storage = calloc(1, (size_t)payload_bytes(m));
  if (!f->storage) {
    free(f);
    return BG_E_NOMEM;
  }
  f->bits = (uint8_t *)f->storage;
  f->m = m;
  f->k = k;
  f->capacity = capacity;
  f->error_rate = error_rate;
  f->seed = seed;
  f->key_encoding = (uint32_t)key_encoding;
  *out = f;
  return BG_OK;
}

void bg_bloom_free(bg_bloom *f) {
  if (!f) return;
  free(f->storage);
  free(f->metadata);
  free(f);
}

void bg_bloom_clear(bg_bloom *f) {
  if (!f) return;
  memset(f->bits, 0, (size_t)payload_bytes(f->m));
  f->count = 0;
}

/* ---- the hot path ------------------------------------------------------ */

static inline void set_bits(bg_bloom *f, bg_hash_pair h) {
  uint8_t *bits = f->bits;
  BG__FOR_EACH_POSITION(h, f->m, f->k, pos, bits[pos >> 3] |= (uint8_t)(1u << (pos & 7)));
}

static inline int test_bits(const bg_bloom *f, bg_hash_pair h) {
  const uint8_t *bits = f->bits;
  BG__FOR_EACH_POSITION(h, f->m, f->k, pos, if (!(bits[pos >> 3] & (1u << (pos & 7)))) return 0);
  return 1;
}

bg_status bg_bloom_add_key(bg_bloom *f, const void *key, size_t len) {
  BG_RETURN_IF(!f || (!key && len), BG_E_ARG);
  set_bits(f, bg__hash(key, len, f->seed));
  f->count++;
  return BG_OK;
}

int bg_bloom_contains_key(const bg_bloom *f, const void *key, size_t len) {
  BG_RETURN_IF(!f || (!key && len), BG_E_ARG);
  return test_bits(f, bg__hash(key, len, f->seed));
}

bg_status bg_bloom_add(bg_bloom *f, const void *item, size_t len) {
  BG_RETURN_IF(!f || (!item && len), BG_E_ARG);
  if (f->key_encoding == BG_KEY_UTF8) return bg_bloom_add_key(f, item, len);
  uint8_t scratch[32];
  const uint8_t *key;
  size_t key_len;
  bg_status rc = bg_encode_key((int)f->key_encoding, item, len, scratch, &key, &key_len);
  return rc != BG_OK ? rc : bg_bloom_add_key(f, key, key_len);
}

int bg_bloom_contains(const bg_bloom *f, const void *item, size_t len) {
  BG_RETURN_IF(!f || (!item && len), BG_E_ARG);
  if (f->key_encoding == BG_KEY_UTF8) return test_bits(f, bg__hash(item, len, f->seed));
  uint8_t scratch[32];
  const uint8_t *key;
  size_t key_len;
  bg_status rc = bg_encode_key((int)f->key_encoding, item, len, scratch, &key, &key_len);
  return rc != BG_OK ? rc : test_bits(f, bg__hash(key, key_len, f->seed));
}

/*
 * Batches hash a group of keys before probing any of them: the probes of one
 * key no longer wait on the hashing of the next, and (natively) the first
 * cache line of every key is requested before it is needed.
 */
#define BG_BATCH_GROUP 16

static bg_status hash_group(const bg_bloom *f, const uint8_t *items, const uint32_t *offsets,
                            size_t first, size_t n, bg_hash_pair *out) {
  for (size_t j = 0; j < n; j++) {
    uint32_t start = offsets[first + j], end = offsets[first + j + 1];
    BG_RETURN_IF(end < start, BG_E_ARG);
    const uint8_t *key = items + start;
    size_t key_len = end - start;
    uint8_t scratch[32];
    if (f->key_encoding != BG_KEY_UTF8) {
      bg_status rc = bg_encode_key((int)f->key_encoding, key, key_len, scratch, &key, &key_len);
      if (rc != BG_OK) return rc;
    }
    out[j] = bg__hash(key, key_len, f->seed);
#if defined(__GNUC__) && !defined(__wasm__)
    __builtin_prefetch(f->bits + (bg__reduce(out[j].h1, f->m) >> 3));
#endif
  }
  return BG_OK;
}

bg_status bg_bloom_add_many(bg_bloom *f, const uint8_t *items, const uint32_t *offsets, size_t count) {
  BG_RETURN_IF(!f || (count && (!items || !offsets)), BG_E_ARG);
  bg_hash_pair group[BG_BATCH_GROUP];
  for (size_t i = 0; i < count; i += BG_BATCH_GROUP) {
    size_t n = count - i < BG_BATCH_GROUP ? count - i : BG_BATCH_GROUP;
    bg_status rc = hash_group(f, items, offsets, i, n, group);
    if (rc != BG_OK) return rc;
    for (size_t j = 0; j < n; j++) set_bits(f, group[j]);
    f->count += n;
  }
  return BG_OK;
}

bg_status bg_bloom_contains_many(const bg_bloom *f, const uint8_t *items, const uint32_t *offsets,
                                 size_t count, uint8_t *results) {
  BG_RETURN_IF(!f || (count && (!items || !offsets || !results)), BG_E_ARG);
  bg_hash_pair group[BG_BATCH_GROUP];
  for (size_t i = 0; i < count; i += BG_BATCH_GROUP) {
    size_t n = count - i < BG_BATCH_GROUP ? count - i : BG_BATCH_GROUP;
    bg_status rc = hash_group(f, items, offsets, i, n, group);
    if (rc != BG_OK) return rc;
    for (size_t j = 0; j < n; j++) results[i + j] = (uint8_t)test_bits(f, group[j]);
  }
  return BG_OK;
}

/* ---- whole-filter operations ------------------------------------------- */

bg_status bg_bloom_merge(bg_bloom *dst, const bg_bloom *src) {
  BG_RETURN_IF(!dst || !src, BG_E_ARG);
  BG_RETURN_IF(dst->m != src->m || dst->k != src->k || dst->seed != src->seed ||
                   dst->key_encoding != src->key_encoding,
               BG_E_INCOMPATIBLE);
  size_t bytes = (size_t)payload_bytes(dst->m);
  for (size_t i = 0; i < bytes; i++) dst->bits[i] |= src->bits[i];
  /* Saturating: the count only feeds estimates, and must never wrap to small. */
  dst->count = dst->count > UINT64_MAX - src->count ? UINT64_MAX : dst->count + src->count;
  return BG_OK;
}

uint64_t bg_bloom_bit_count(const bg_bloom *f) {
  if (!f) return 0;
  size_t bytes = (size_t)payload_bytes(f->m), i = 0;
  uint64_t total = 0;
  for (; i + 8 <= bytes; i += 8) {
    uint64_t word;
    memcpy(&word, f->bits + i, 8);
    total += (uint64_t)__builtin_popcountll(word);
  }
  for (; i < bytes; i++) total += (uint64_t)__builtin_popcount(f->bits[i]);
  return total;
}

void bg_bloom_info(const bg_bloom *f, bg_info *info) {
  memset(info, 0, sizeof *info);
  if (!f) return;
  info->kind = BG_KIND_CLASSIC;
  info->k = f->k;
  info->key_encoding = f->key_encoding;
  info->hash_algorithm = BG_HASH_XXH3_128;
  info->m = f->m;
  info->capacity = f->capacity;
  info->count = f->count;
  info->seed = f->seed;
  info->generation = f->generation;
  info->bits_set = bg_bloom_bit_count(f);
  info->payload_bytes = payload_bytes(f->m);
  info->serialized_bytes = bg_bloom_serialized_size(f);
  info->error_rate = f->error_rate;
  info->fill_ratio = (double)info->bits_set / (double)f->m;
  info->estimated_items = bg_estimated_items(f->m, f->k, info->bits_set);
  info->estimated_error_rate = bg_estimated_error_rate(f->m, f->k, info->bits_set);
  info->theoretical_error_rate = bg_theoretical_error_rate(f->m, f->k, f->count);
  memcpy(info->list_id, f->list_id, 16);
}

bg_status bg_bloom_set_metadata(bg_bloom *f, const void *data, size_t len) {
  BG_RETURN_IF(!f || (!data && len), BG_E_ARG);
  BG_RETURN_IF(len > BG_MAX_METADATA, BG_E_METADATA);
  uint8_t *copy = NULL;
  if (len) {
    copy = (uint8_t *)malloc(len);
    BG_RETURN_IF(!copy, BG_E_NOMEM);
    memcpy(copy, data, len);
  }
  free(f->metadata);
  f->metadata = copy;
  f->metadata_length = len;
  return BG_OK;
}

const uint8_t *bg_bloom_metadata(const bg_bloom *f, size_t *len) {
  if (len) *len = f ? f->metadata_length : 0;
  return f ? f->metadata : NULL;
}

void bg_bloom_set_identity(bg_bloom *f, const uint8_t list_id[16], uint64_t generation) {
  if (!f) return;
  if (list_id) memcpy(f->list_id, list_id, 16);
  f->generation = generation;
}

/* ---- the file ---------------------------------------------------------- */

static void bloom_header(const bg_bloom *f, bg_header *h) {
  memset(h, 0, sizeof *h);
  h->version = BG_FORMAT_VERSION;
  h->kind = BG_KIND_CLASSIC;
  h->key_encoding = f->key_encoding;
  h->hash_algorithm = BG_HASH_XXH3_128;
  h->k = f->k;
  h->metadata_length = (uint32_t)f->metadata_length;
  h->m = f->m;
  h->capacity = f->capacity;
  h->count = f->count;
  h->seed = f->seed;
  h->generation = f->generation;
  h->error_rate = f->error_rate;
  memcpy(h->list_id, f->list_id, 16);
  h->payload_offset = bg__payload_offset(f->metadata_length);
  h->payload_length = payload_bytes(f->m);
  h->file_length = h->payload_offset + h->payload_length;
}

size_t bg_bloom_serialized_size(const bg_bloom *f) {
  if (!f) return 0;
  return (size_t)(bg__payload_offset(f->metadata_length) + payload_bytes(f->m));
}

bg_status bg_bloom_serialize(const bg_bloom *f, uint8_t *dst, size_t dst_capacity, size_t *written) {
  BG_RETURN_IF(!f || !dst, BG_E_ARG);
  bg_header h;
  bloom_header(f, &h);
  BG_RETURN_IF(dst_capacity < h.file_length, BG_E_BUFFER);
  bg__header_write(&h, dst);
  if (f->metadata_length) memcpy(dst + BG_HEADER_SIZE, f->metadata, f->metadata_length);
  memset(dst + BG_HEADER_SIZE + f->metadata_length, 0,
         (size_t)(h.payload_offset - BG_HEADER_SIZE - f->metadata_length));
  /* A filter loaded in place may be serialized into its own buffer: then the payload is already there. */
  if (dst + h.payload_offset != f->bits) memcpy(dst + h.payload_offset, f->bits, (size_t)h.payload_length);
  bg__file_seal(dst, (size_t)h.file_length);
  if (written) *written = (size_t)h.file_length;
  return BG_OK;
}

bg_status bg__bloom_validate(const bg_header *h, const uint8_t *payload) {
  BG_RETURN_IF(h->k < 1 || h->k > BG_MAX_K, BG_E_HEADER);
  BG_RETURN_IF(h->m < 1 || h->m > BG_MAX_BITS, BG_E_HEADER);
  BG_RETURN_IF(h->capacity < 1 || h->capacity > BG_MAX_CAPACITY, BG_E_HEADER);
  BG_RETURN_IF(!(h->error_rate > 0.0 && h->error_rate < 1.0), BG_E_HEADER);
  BG_RETURN_IF(h->payload_length != payload_bytes(h->m), BG_E_PAYLOAD);
  /* Bits past m are never set by add(); a file with them set was not written by us. */
  unsigned used_in_last = (unsigned)(h->m & 7);
  if (used_in_last) BG_RETURN_IF(payload[h->payload_length - 1] >> used_in_last, BG_E_PAYLOAD);
  return BG_OK;
}

/* Shared by both readers: validate, then fill a filter struct around the given bits. */
static bg_status bloom_from_file(const uint8_t *src, size_t size, bg_header *h, bg_bloom **out) {
  BG_RETURN_IF(!out, BG_E_ARG);
  *out = NULL;
  bg_status rc = bg_file_validate(src, size, h);
  if (rc != BG_OK) return rc;
  bg_bloom *f = bloom_alloc_struct();
  BG_RETURN_IF(!f, BG_E_NOMEM);
  f->m = h->m;
  f->k = h->k;
  f->capacity = h->capacity;
  f->count = h->count;
  f->seed = h->seed;
  f->generation = h->generation;
  f->error_rate = h->error_rate;
  f->key_encoding = h->key_encoding;
  memcpy(f->list_id, h->list_id, 16);
  if (h->metadata_length) {
    rc = bg_bloom_set_metadata(f, src + BG_HEADER_SIZE, h->metadata_length);
    if (rc != BG_OK) {
      free(f);
      return rc;
    }
  }
  *out = f;
  return BG_OK;
}

bg_status bg_bloom_deserialize(const uint8_t *src, size_t src_size, bg_bloom **out) {
  bg_header h;
  bg_status rc = bloom_from_file(src, src_size, &h, out);
  if (rc != BG_OK) return rc;
  bg_bloom *f = *out;
  f->storage = malloc((size_t)h.payload_length);
  if (!f->storage) {
    bg_bloom_free(f);
    *out = NULL;
    return BG_E_NOMEM;
  }
  f->bits = (uint8_t *)f->storage;
  memcpy(f->bits, src + h.payload_offset, (size_t)h.payload_length);
  return BG_OK;
}

bg_status bg_bloom_deserialize_owned(uint8_t *buffer, size_t size, bg_bloom **out) {
  bg_header h;
  bg_status rc = bloom_from_file(buffer, size, &h, out);
  if (rc != BG_OK) return rc;
  (*out)->storage = buffer;
  (*out)->bits = buffer + h.payload_offset;
  return BG_OK;
}
