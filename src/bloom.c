/*
 * bloom.c — the classic Bloom filter: m bits, k probes per key (the seeds'
 * structure). Bit i of the filter is bit (i & 7) of payload byte (i >> 3), so
 * the payload means the same thing on every host and is used in place.
 */
#include <stdlib.h>

#include "hash_inline.h"
#include "kind.h"

typedef struct {
  uint8_t *bits; /* ceil(m/8) bytes; bits past m stay zero */
  void *owned;   /* bits' allocation when the state owns it; NULL when it lies in a file buffer */
  uint64_t m;
  uint32_t k;
} classic;

static uint64_t payload_bytes(uint64_t m) { return (m + 7) / 8; }

bg_status bg__classic_alloc(uint64_t m, uint32_t k, void **state) {
  BG_RETURN_IF(payload_bytes(m) > SIZE_MAX, BG_E_TOO_LARGE);
  classic *c = (classic *)calloc(1, sizeof *c);
  BG_RETURN_IF(!c, BG_E_NOMEM);
  c->owned = calloc(1, (size_t)payload_bytes(m));
  if (!c->owned) {
    free(c);
    return BG_E_NOMEM;
  }
  c->bits = (uint8_t *)c->owned;
  c->m = m;
  c->k = k;
  *state = c;
  return BG_OK;
}

BG_COLD static bg_status classic_create(const bg_kind_params *params, void **state) {
  uint64_t m;
  uint32_t k;
  bg_status rc = bg_size_for(params->capacity, params->error_rate, &m, &k);
  return rc != BG_OK ? rc : bg__classic_alloc(m, k, state);
}

uint8_t *bg__classic_bits(void *state) { return ((classic *)state)->bits; }

static void classic_destroy(void *state) {
  classic *c = (classic *)state;
  if (!c) return;
  free(c->owned);
  free(c);
}

static void classic_clear(void *state) {
  classic *c = (classic *)state;
  memset(c->bits, 0, (size_t)payload_bytes(c->m));
}

/* ---- the hot path -------------------------------------------------------- */

static bg_status classic_add(void *state, bg_hash_pair h) {
  classic *c = (classic *)state;
  uint8_t *bits = c->bits;
  BG__FOR_EACH_POSITION(h, c->m, c->k, pos, bits[pos >> 3] |= (uint8_t)(1u << (pos & 7)));
  return BG_OK;
}

static int classic_contains(const void *state, bg_hash_pair h) {
  const classic *c = (const classic *)state;
  const uint8_t *bits = c->bits;
  /* Every probe, no early exit: the k loads are independent, so their misses overlap, and no
   * branch mispredicts. Measured at 1M keys, 1 %: non-member queries 23 ns against 30 with early
   * exit natively, 55 against 67 in wasm; members 5-10 % slower natively. Most queries a front
   * gate sees are non-members. */
  unsigned all = 1;
  BG__FOR_EACH_POSITION(h, c->m, c->k, pos, all &= bits[pos >> 3] >> (pos & 7));
  return (int)(all & 1);
}

/*
 * filter.c's single-key path for the common case (a utf8 key, so the item is
 * the key): hash and probe in one call, no dispatch through the kind's table.
 */
bg_status bg__classic_add_item(void *state, const void *key, size_t len, uint64_t seed) {
  return classic_add(state, bg__hash_short(key, len, seed));
}

int bg__classic_contains_item(const void *state, const void *key, size_t len, uint64_t seed) {
  return classic_contains(state, bg__hash_short(key, len, seed));
}

static bg_status classic_contains_many(const void *state, const bg_hash_pair *hashes, size_t count,
                                       uint8_t *results) {
#if defined(__GNUC__) && !defined(__wasm__)
  /* Ask for every key's first cache line before testing any: the misses overlap. */
  const classic *c = (const classic *)state;
  for (size_t i = 0; i < count; i++) __builtin_prefetch(c->bits + (bg__reduce(hashes[i].h1, c->m) >> 3));
#endif
  for (size_t i = 0; i < count; i++) results[i] = (uint8_t)classic_contains(state, hashes[i]);
  return BG_OK;
}

/* ---- whole-filter operations --------------------------------------------- */

BG_COLD static bg_status classic_merge(void *dst_state, const void *src_state) {
  classic *dst = (classic *)dst_state;
  const classic *src = (const classic *)src_state;
  BG_RETURN_IF(dst->m != src->m || dst->k != src->k, BG_E_INCOMPATIBLE);
  size_t bytes = (size_t)payload_bytes(dst->m);
  for (size_t i = 0; i < bytes; i++) dst->bits[i] |= src->bits[i];
  return BG_OK;
}

static uint64_t bit_count(const classic *c) { return bg__popcount_bytes(c->bits, payload_bytes(c->m)); }

BG_COLD static void classic_describe(const void *state, uint64_t count, bg_kind_info *info) {
  const classic *c = (const classic *)state;
  info->m = c->m;
  info->k = c->k;
  info->bits_set = bit_count(c);
  info->fill_ratio = (double)info->bits_set / (double)c->m;
  info->estimated_items = bg_estimated_items(c->m, c->k, info->bits_set);
  info->estimated_error_rate = bg_estimated_error_rate(c->m, c->k, info->bits_set);
  info->theoretical_error_rate = bg_theoretical_error_rate(c->m, c->k, count);
}

/* ---- the payload ----------------------------------------------------------- */

static uint64_t classic_payload_size(const void *state) { return payload_bytes(((const classic *)state)->m); }

static void classic_write_payload(const void *state, uint8_t *dst) {
  const classic *c = (const classic *)state;
  /* A filter loaded in place and serialized into its own buffer already has its bits there. */
  if (dst != c->bits) memcpy(dst, c->bits, (size_t)payload_bytes(c->m));
}

static const uint8_t *classic_payload_view(const void *state) { return ((const classic *)state)->bits; }

BG_COLD static bg_status classic_validate(const bg_header *h, const uint8_t *payload) {
  BG_RETURN_IF(h->k < 1 || h->k > BG_MAX_K, BG_E_HEADER);
  BG_RETURN_IF(h->m < 1 || h->m > BG_MAX_BITS, BG_E_HEADER);
  BG_RETURN_IF(h->capacity < 1 || h->capacity > BG_MAX_CAPACITY, BG_E_HEADER);
  BG_RETURN_IF(!(h->error_rate > 0.0 && h->error_rate < 1.0), BG_E_HEADER);
  BG_RETURN_IF(h->payload_length != payload_bytes(h->m), BG_E_PAYLOAD);
  /* Bits past m are never set by add(); a file with them set was not written by a conforming writer. */
  unsigned used_in_last = (unsigned)(h->m & 7);
  if (used_in_last) BG_RETURN_IF(payload[h->payload_length - 1] >> used_in_last, BG_E_PAYLOAD);
  return BG_OK;
}

static bg_status classic_load(const bg_header *h, uint8_t *payload, int in_place, void **state) {
  if (!in_place) {
    bg_status rc = bg__classic_alloc(h->m, h->k, state);
    if (rc == BG_OK) memcpy(((classic *)*state)->bits, payload, (size_t)h->payload_length);
    return rc;
  }
  classic *c = (classic *)calloc(1, sizeof *c);
  BG_RETURN_IF(!c, BG_E_NOMEM);
  c->bits = payload;
  c->m = h->m;
  c->k = h->k;
  *state = c;
  return BG_OK;
}

const bg_kind_ops bg_kind_classic = {
    .kind = BG_KIND_CLASSIC,
    .create = classic_create,
    .destroy = classic_destroy,
    .clear = classic_clear,
    .add = classic_add,
    .contains = classic_contains,
    .contains_many = classic_contains_many,
    .merge = classic_merge,
    .describe = classic_describe,
    .payload_size = classic_payload_size,
    .write_payload = classic_write_payload,
    .payload_view = classic_payload_view,
    .validate = classic_validate,
    .load = classic_load,
};
