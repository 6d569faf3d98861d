/*
 * bloomgate_wasm.c — the WebAssembly boundary.
 *
 * The core's API uses uint64_t, which would cross into JavaScript as BigInt.
 * These shims keep every exported signature to i32 and f64: 64-bit values are
 * split into (lo, hi) u32 pairs, or passed as doubles where they are counts
 * bounded by 2^53. Everything else is exported from the core unchanged (see
 * wasm/exports.txt). Only js/wasm.js calls these.
 */
#include <stdlib.h>
#include <string.h>

#include "bloomgate.h"

#define JOIN64(lo, hi) (((uint64_t)(hi) << 32) | (uint64_t)(lo))

/*
 * malloc, realloc and calloc, guarded. Emscripten 3.1.6's emmalloc mishandles
 * a request whose block would end at or past 4 GiB: the end address wraps
 * around 2^32, the request seems to fit a free region, and malloc returns a
 * block that runs off the end of memory (the first write traps: "memory
 * access out of bounds"); realloc traps inside. That was the wasm trap of a
 * 200M-key fuse build. Every free region lies below the memory's current
 * size, so a request no larger than the room between that size and 4 GiB
 * (less a margin for emmalloc's headers and page rounding) cannot wrap;
 * anything larger is refused here with NULL (BG_E_NOMEM to callers) before
 * emmalloc sees it. That also refuses the rare request that freed space below
 * could have met. emmalloc's own definitions are weak; free() is not wrapped.
 */
void *emmalloc_malloc(size_t size);
void *emmalloc_realloc(void *ptr, size_t size);
#define BGW_HEAP_MARGIN ((uint64_t)1 << 20)

static int bgw_too_large(size_t size) {
  uint64_t used = (uint64_t)__builtin_wasm_memory_size(0) << 16;
  return (uint64_t)size + used + BGW_HEAP_MARGIN > ((uint64_t)1 << 32);
}

void *malloc(size_t size) { return bgw_too_large(size) ? NULL : emmalloc_malloc(size); }
void *realloc(void *ptr, size_t size) { return bgw_too_large(size) ? NULL : emmalloc_realloc(ptr, size); }
void *calloc(size_t count, size_t size) {
  if (size && count > SIZE_MAX / size) return NULL;
  void *p = malloc(count * size);
  if (p) memset(p, 0, count * size);
  return p;
}

/* capacity arrives as a double: JavaScript numbers are exact to 2^53. */
int bgw_filter_create(int kind, double capacity, double error_rate, uint32_t seed_lo, uint32_t seed_hi,
                      int key_encoding, bg_filter **out) {
  if (!(capacity >= 1.0) || capacity > (double)BG_MAX_CAPACITY || capacity != (double)(uint64_t)capacity)
    return BG_E_RANGE;
  return bg_filter_create(kind, (uint64_t)capacity, error_rate, JOIN64(seed_lo, seed_hi), key_encoding, out);
}

/* out[0] = m, out[1] = k (both exact in a double). */
int bgw_size_for(double capacity, double error_rate, double *out) {
  if (!(capacity >= 1.0) || capacity > (double)BG_MAX_CAPACITY || capacity != (double)(uint64_t)capacity)
    return BG_E_RANGE;
  uint64_t m;
  uint32_t k;
  bg_status rc = bg_size_for((uint64_t)capacity, error_rate, &m, &k);
  if (rc == BG_OK) {
    out[0] = (double)m;
    out[1] = (double)k;
  }
  return rc;
}

/*
 * Flattens bg_info into doubles so JavaScript needs no struct layout:
 *  0 kind  1 k  2 key_encoding  3 hash_algorithm  4 m  5 capacity  6 count
 *  7 seed_lo  8 seed_hi  9 generation  10 bits_set  11 payload_bytes
 *  12 serialized_bytes  13 error_rate  14 fill_ratio  15 estimated_items
 *  16 estimated_error_rate  17 theoretical_error_rate
 * and list_id (16 bytes) into list_id_out.
 */
#define BGW_INFO_FIELDS 18
void bgw_filter_info(const bg_filter *filter, double *out, uint8_t *list_id_out) {
  bg_info info;
  bg_filter_info(filter, &info);
  out[0] = info.kind;
  out[1] = info.k;
  out[2] = info.key_encoding;
  out[3] = info.hash_algorithm;
  out[4] = (double)info.m;
  out[5] = (double)info.capacity;
  out[6] = (double)info.count;
  out[7] = (double)(uint32_t)info.seed;
  out[8] = (double)(uint32_t)(info.seed >> 32);
  out[9] = (double)info.generation;
  out[10] = (double)info.bits_set;
  out[11] = (double)info.payload_bytes;
  out[12] = (double)info.serialized_bytes;
  out[13] = info.error_rate;
  out[14] = info.fill_ratio;
  out[15] = info.estimated_items;
  out[16] = info.estimated_error_rate;
  out[17] = info.theoretical_error_rate;
  memcpy(list_id_out, info.list_id, 16);
}

void bgw_filter_set_identity(bg_filter *filter, const uint8_t *list_id, double generation) {
  bg_filter_set_identity(filter, list_id, (uint64_t)generation);
}

/*
 * Header fields as doubles for a streaming loader / inspector:
 *  0 version 1 kind 2 key_encoding 3 hash_algorithm 4 k 5 metadata_length
 *  6 m 7 capacity 8 count 9 seed_lo 10 seed_hi 11 generation 12 payload_offset
 *  13 payload_length 14 file_length 15 error_rate 16 checksum_lo 17 checksum_hi
 * and list_id (16 bytes) into list_id_out.
 */
#define BGW_HEADER_FIELDS 18
static void flatten_header(const bg_header *h, double *out, uint8_t *list_id_out) {
  memcpy(list_id_out, h->list_id, 16);
  out[0] = h->version;
  out[1] = h->kind;
  out[2] = h->key_encoding;
  out[3] = h->hash_algorithm;
  out[4] = h->k;
  out[5] = h->metadata_length;
  out[6] = (double)h->m;
  out[7] = (double)h->capacity;
  out[8] = (double)h->count;
  out[9] = (double)(uint32_t)h->seed;
  out[10] = (double)(uint32_t)(h->seed >> 32);
  out[11] = (double)h->generation;
  out[12] = (double)h->payload_offset;
  out[13] = (double)h->payload_length;
  out[14] = (double)h->file_length;
  out[15] = h->error_rate;
  out[16] = (double)(uint32_t)h->checksum;
  out[17] = (double)(uint32_t)(h->checksum >> 32);
}

int bgw_header_peek(const uint8_t *src, size_t size, double *out, uint8_t *list_id_out) {
  bg_header h;
  bg_status rc = bg_header_peek(src, size, &h);
  if (rc == BG_OK) flatten_header(&h, out, list_id_out);
  return rc;
}

int bgw_file_validate(const uint8_t *src, size_t size, double *out, uint8_t *list_id_out) {
  bg_header h;
  bg_status rc = bg_file_validate(src, size, &h);
  if (rc == BG_OK) flatten_header(&h, out, list_id_out);
  return rc;
}

/* out[0..1] = h1 (lo, hi), out[2..3] = h2 (lo, hi): for the shared golden vectors. */
void bgw_hash(const void *key, size_t len, uint32_t seed_lo, uint32_t seed_hi, uint32_t *out) {
  bg_hash_pair h = bg_hash(key, len, JOIN64(seed_lo, seed_hi));
  out[0] = (uint32_t)h.h1;
  out[1] = (uint32_t)(h.h1 >> 32);
  out[2] = (uint32_t)h.h2;
  out[3] = (uint32_t)(h.h2 >> 32);
}

/* positions as doubles (m < 2^53 in wasm). */
void bgw_positions(const void *key, size_t len, uint32_t seed_lo, uint32_t seed_hi, double m,
                   uint32_t k, double *out) {
  uint64_t pos[BG_MAX_K];
  if (k > BG_MAX_K) k = BG_MAX_K;
  bg_positions(bg_hash(key, len, JOIN64(seed_lo, seed_hi)), (uint64_t)m, k, pos);
  for (uint32_t i = 0; i < k; i++) out[i] = (double)pos[i];
}

/* The wrapper allocates hashing contexts without knowing their layout. */
size_t bgw_sha256_ctx_size(void) { return sizeof(bg_sha256_ctx); }

/* bg_filter_deserialize_owned_checked with the checksum as (lo, hi) u32 halves. */
int bgw_filter_deserialize_owned_checked(uint8_t *buffer, size_t size, uint32_t sum_lo, uint32_t sum_hi,
                                         bg_filter **out) {
  return bg_filter_deserialize_owned_checked(buffer, size, JOIN64(sum_lo, sum_hi), out);
}

/* bg_file_hasher_digest as (lo, hi) u32 halves in out[0..1]. */
void bgw_file_hasher_digest(const bg_file_hasher *hasher, uint32_t *out) {
  uint64_t digest = bg_file_hasher_digest(hasher);
  out[0] = (uint32_t)digest;
  out[1] = (uint32_t)(digest >> 32);
}
