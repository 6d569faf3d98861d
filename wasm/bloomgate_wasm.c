/*
 * bloomgate_wasm.c — the WebAssembly boundary.
 *
 * The core's API uses uint64_t, which would cross into JavaScript as BigInt.
 * These shims keep every exported signature to i32 and f64: 64-bit values are
 * split into (lo, hi) u32 pairs, or passed as doubles where they are counts
 * bounded by 2^53, and structs are flattened into doubles by the rule of
 * src/contract.h, field by field from the tables of bloomgate.h (so
 * js/wasm/contract.js, generated from the same tables, knows every slot).
 * Everything else is exported from the core unchanged (wasm/exports.txt).
 * Only js/wasm/ calls these.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "bloomgate.h"
#include "contract.h"

_Static_assert(sizeof(bg_sha256_ctx) == BG__SHA256_CTX_SIZE,
               "js/wasm/contract.js allocates BG__SHA256_CTX_SIZE bytes");

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

/* capacity arrives as a double: JavaScript numbers are exact to 2^53. value_bits: r (0 for most kinds). */
int bgw_filter_create(int kind, double capacity, double error_rate, uint32_t seed_lo, uint32_t seed_hi,
                      int key_encoding, bg_filter **out, uint32_t value_bits) {
  if (!(capacity >= 1.0) || capacity > (double)BG_MAX_CAPACITY || capacity != (double)(uint64_t)capacity)
    return BG_E_RANGE;
  return bg_filter_create_with_values(kind, (uint64_t)capacity, error_rate, JOIN64(seed_lo, seed_hi),
                                      key_encoding, value_bits, out);
}

/* bg_info flattened by BG_INFO_FIELDS: numbers into out, list_id into bytes. */
void bgw_filter_info(const bg_filter *filter, double *out, uint8_t *bytes) {
  bg_info info;
  bg_filter_info(filter, &info);
  size_t slot = 0, byte = 0;
#define FLAT_INFO(name, type) BG__FLAT_##type(info.name, out, slot, bytes, byte);
  BG_INFO_FIELDS(FLAT_INFO)
#undef FLAT_INFO
}

void bgw_filter_set_identity(bg_filter *filter, const uint8_t *list_id, double generation) {
  bg_filter_set_identity(filter, list_id, (uint64_t)generation);
}

/* bg_header flattened by the MEMBER rows of BG_HEADER_FIELDS. */
static void flatten_header(const bg_header *h, double *out, uint8_t *bytes) {
  size_t slot = 0, byte = 0;
#define FLAT_FIELD_MEMBER(name, type) BG__FLAT_##type(h->name, out, slot, bytes, byte);
#define FLAT_FIELD_FIXED(name, type)
#define FLAT_FIELD(name, offset, size, type, role) FLAT_FIELD_##role(name, type)
  BG_HEADER_FIELDS(FLAT_FIELD)
#undef FLAT_FIELD
#undef FLAT_FIELD_FIXED
#undef FLAT_FIELD_MEMBER
}

int bgw_header_peek(const uint8_t *src, size_t size, double *out, uint8_t *bytes) {
  bg_header h;
  bg_status rc = bg_header_peek(src, size, &h);
  if (rc == BG_OK) flatten_header(&h, out, bytes);
  return rc;
}

int bgw_file_validate(const uint8_t *src, size_t size, double *out, uint8_t *bytes) {
  bg_header h;
  bg_status rc = bg_file_validate(src, size, &h);
  if (rc == BG_OK) flatten_header(&h, out, bytes);
  return rc;
}

/* out[0..1] = h1 (lo, hi), out[2..3] = h2 (lo, hi): sharded builds partition keys by them. */
void bgw_hash(const void *key, size_t len, uint32_t seed_lo, uint32_t seed_hi, uint32_t *out) {
  bg_hash_pair h = bg_hash(key, len, JOIN64(seed_lo, seed_hi));
  out[0] = (uint32_t)h.h1;
  out[1] = (uint32_t)(h.h1 >> 32);
  out[2] = (uint32_t)h.h2;
  out[3] = (uint32_t)(h.h2 >> 32);
}

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

/* bg_delta_info flattened by BG_DELTA_INFO_FIELDS. */
int bgw_delta_peek(const uint8_t *delta, size_t len, double *out, uint8_t *bytes) {
  bg_delta_info info;
  bg_status rc = bg_delta_peek(delta, len, &info);
  if (rc != BG_OK) return rc;
  size_t slot = 0, byte = 0;
#define FLAT_DELTA(name, type) BG__FLAT_##type(info.name, out, slot, bytes, byte);
  BG_DELTA_INFO_FIELDS(FLAT_DELTA)
#undef FLAT_DELTA
  return rc;
}
