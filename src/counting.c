/*
 * counting.c — the counting Bloom filter: m 4-bit saturating counters in place
 * of m bits, so items can be removed. Sizing (bg_size_for) and positions
 * (BG__FOR_EACH_POSITION) are the classic kind's, so counter i stands exactly
 * where classic bit i stands: the classic filter with bit i set iff counter
 * i > 0 answers every query the same way (to_classic), and a server can keep
 * a deletable master and publish the plain filter.
 *
 * Counter i is nibble (i & 1) of payload byte (i >> 1): the low nibble for
 * even i, the high nibble for odd i. A counter that reaches 15 saturates: it
 * no longer counts, and it is never decremented, because it may stand for
 * more inserts than it can remember; decrementing it could reach 0 while an
 * item still depends on it (a false negative). docs/kinds/counting.md.
 */
#include <stdlib.h>

#include "hash_inline.h"
#include "kind.h"

#define COUNTER_MAX 15u

/*
 * Four bits per counter: the payload of m counters is ceil(m/2) bytes, and
 * it must fit the container's payload limit (every bit of BG_MAX_BITS).
 */
#define COUNTING_MAX_M (BG_MAX_BITS / 4)

typedef struct {
  uint8_t *nibbles; /* ceil(m/2) bytes; the unused high nibble of an odd m stays zero */
  void *owned;      /* nibbles' allocation when the state owns it; NULL when it lies in a file buffer */
  uint64_t m;
  uint32_t k;
} counting;

static uint64_t payload_bytes(uint64_t m) { return (m + 1) / 2; }

static inline unsigned counter_get(const uint8_t *nibbles, uint64_t i) {
  return (nibbles[i >> 1] >> ((i & 1) << 2)) & 0xFu;
}

/* Set counter i to v (0..15), leaving its neighbour in the same byte alone. */
static inline void counter_set(uint8_t *nibbles, uint64_t i, unsigned v) {
  unsigned shift = (unsigned)((i & 1) << 2);
  uint8_t *byte = nibbles + (i >> 1);
  *byte = (uint8_t)((*byte & ~(0xFu << shift)) | (v << shift));
}

static bg_status counting_alloc(uint64_t m, uint32_t k, counting **out) {
  BG_RETURN_IF(m > COUNTING_MAX_M || payload_bytes(m) > SIZE_MAX, BG_E_TOO_LARGE);
  counting *c = (counting *)calloc(1, sizeof *c);
  BG_RETURN_IF(!c, BG_E_NOMEM);
  c->owned = calloc(1, (size_t)payload_bytes(m));
  if (!c->owned) {
    free(c);
    return BG_E_NOMEM;
  }
  c->nibbles = (uint8_t *)c->owned;
  c->m = m;
  c->k = k;
  *out = c;
  return BG_OK;
}

static bg_status counting_create(const bg_kind_params *params, void **state) {
  uint64_t m;
  uint32_t k;
  bg_status rc = bg_size_for(params->capacity, params->error_rate, &m, &k);
  if (rc != BG_OK) return rc;
  counting *c = NULL;
  rc = counting_alloc(m, k, &c);
  if (rc == BG_OK) *state = c;
  return rc;
}

static void counting_destroy(void *state) {
  counting *c = (counting *)state;
  if (!c) return;
  free(c->owned);
  free(c);
}

static void counting_clear(void *state) {
  counting *c = (counting *)state;
  memset(c->nibbles, 0, (size_t)payload_bytes(c->m));
}

/* ---- the hot path -------------------------------------------------------- */

static bg_status counting_add(void *state, bg_hash_pair h) {
  counting *c = (counting *)state;
  uint8_t *nibbles = c->nibbles;
  /* Byte arithmetic: adding 1 << shift to a nibble below 15 cannot carry into its neighbour. */
  BG__FOR_EACH_POSITION(h, c->m, c->k, pos, {
    unsigned shift = (unsigned)((pos & 1) << 2);
    uint8_t *byte = nibbles + (pos >> 1);
    if (((*byte >> shift) & 0xFu) != COUNTER_MAX) *byte = (uint8_t)(*byte + (1u << shift));
  });
  return BG_OK;
}

static int counting_contains(const void *state, bg_hash_pair h) {
  const counting *c = (const counting *)state;
  const uint8_t *nibbles = c->nibbles;
  BG__FOR_EACH_POSITION(h, c->m, c->k, pos, if (!counter_get(nibbles, pos)) return 0);
  return 1;
}

static bg_status counting_contains_many(const void *state, const bg_hash_pair *hashes, size_t count,
                                        uint8_t *results) {
#if defined(__GNUC__) && !defined(__wasm__)
  /* Ask for every key's first cache line before testing any: the misses overlap. */
  const counting *c = (const counting *)state;
  for (size_t i = 0; i < count; i++) __builtin_prefetch(c->nibbles + (bg__reduce(hashes[i].h1, c->m) >> 1));
#endif
  for (size_t i = 0; i < count; i++) results[i] = (uint8_t)counting_contains(state, hashes[i]);
  return BG_OK;
}

/*
 * Two passes: the first proves every counter is non-zero (otherwise the key
 * was never added, and nothing may change); the second decrements. A
 * saturated counter is left alone, and a counter is never taken below zero:
 * when a key's probes repeat a position and the key was never added (the
 * deletion trap of docs/kinds/counting.md), the second decrement of a counter
 * the first one emptied is skipped instead of wrapping to 15.
 */
static bg_status counting_remove(void *state, bg_hash_pair h) {
  counting *c = (counting *)state;
  uint8_t *nibbles = c->nibbles;
  BG__FOR_EACH_POSITION(h, c->m, c->k, pos, if (!counter_get(nibbles, pos)) return BG_E_NOT_FOUND);
  BG__FOR_EACH_POSITION(h, c->m, c->k, pos, {
    unsigned v = counter_get(nibbles, pos);
    if (v != 0 && v != COUNTER_MAX) counter_set(nibbles, pos, v - 1);
  });
  return BG_OK;
}

/* ---- whole-filter operations --------------------------------------------- */

static bg_status counting_merge(void *dst_state, const void *src_state) {
  counting *dst = (counting *)dst_state;
  const counting *src = (const counting *)src_state;
  BG_RETURN_IF(dst->m != src->m || dst->k != src->k, BG_E_INCOMPATIBLE);
  size_t bytes = (size_t)payload_bytes(dst->m);
  for (size_t i = 0; i < bytes; i++) {
    unsigned a = dst->nibbles[i], b = src->nibbles[i];
    unsigned lo = (a & 0xFu) + (b & 0xFu), hi = (a >> 4) + (b >> 4);
    if (lo > COUNTER_MAX) lo = COUNTER_MAX;
    if (hi > COUNTER_MAX) hi = COUNTER_MAX;
    dst->nibbles[i] = (uint8_t)(lo | (hi << 4));
  }
  return BG_OK;
}

static bg_status counting_to_classic(const void *state, void **classic_state) {
  const counting *c = (const counting *)state;
  bg_status rc = bg__classic_alloc(c->m, c->k, classic_state);
  if (rc != BG_OK) return rc;
  uint8_t *bits = bg__classic_bits(*classic_state);
  /* Eight counters (four bytes) make one classic byte. */
  uint64_t full = c->m / 8;
  for (uint64_t j = 0; j < full; j++) {
    const uint8_t *src = c->nibbles + 4 * j;
    unsigned out = 0;
    for (unsigned b = 0; b < 4; b++) {
      out |= (unsigned)((src[b] & 0x0Fu) != 0) << (2 * b);
      out |= (unsigned)((src[b] & 0xF0u) != 0) << (2 * b + 1);
    }
    bits[j] = (uint8_t)out;
  }
  for (uint64_t i = full * 8; i < c->m; i++)
    if (counter_get(c->nibbles, i)) bits[i >> 3] |= (uint8_t)(1u << (i & 7));
  return BG_OK;
}

static uint64_t nonzero_counters(const counting *c) {
  size_t bytes = (size_t)payload_bytes(c->m), i = 0;
  uint64_t total = 0;
  /* Per 64-bit word: fold each nibble's bits into its low bit, then count those. */
  const uint64_t low_bits = 0x1111111111111111ull;
  for (; i + 8 <= bytes; i += 8) {
    uint64_t w;
    memcpy(&w, c->nibbles + i, 8);
    w |= w >> 2;
    w |= w >> 1;
    total += (uint64_t)__builtin_popcountll(w & low_bits);
  }
  for (; i < bytes; i++) total += ((c->nibbles[i] & 0x0Fu) != 0) + ((c->nibbles[i] & 0xF0u) != 0);
  return total;
}

static void counting_describe(const void *state, uint64_t count, bg_kind_info *info) {
  const counting *c = (const counting *)state;
  info->m = c->m;
  info->k = c->k;
  info->bits_set = nonzero_counters(c);
  info->fill_ratio = (double)info->bits_set / (double)c->m;
  info->estimated_items = bg_estimated_items(c->m, c->k, info->bits_set);
  info->estimated_error_rate = bg_estimated_error_rate(c->m, c->k, info->bits_set);
  info->theoretical_error_rate = bg_theoretical_error_rate(c->m, c->k, count);
}

/* ---- the payload ----------------------------------------------------------- */

static uint64_t counting_payload_size(const void *state) { return payload_bytes(((const counting *)state)->m); }

static void counting_write_payload(const void *state, uint8_t *dst) {
  const counting *c = (const counting *)state;
  /* A filter loaded in place and serialized into its own buffer already has its counters there. */
  if (dst != c->nibbles) memcpy(dst, c->nibbles, (size_t)payload_bytes(c->m));
}

static bg_status counting_validate(const bg_header *h, const uint8_t *payload) {
  BG_RETURN_IF(h->k < 1 || h->k > BG_MAX_K, BG_E_HEADER);
  BG_RETURN_IF(h->m < 1 || h->m > COUNTING_MAX_M, BG_E_HEADER);
  BG_RETURN_IF(h->capacity < 1 || h->capacity > BG_MAX_CAPACITY, BG_E_HEADER);
  BG_RETURN_IF(!(h->error_rate > 0.0 && h->error_rate < 1.0), BG_E_HEADER);
  BG_RETURN_IF(h->payload_length != payload_bytes(h->m), BG_E_PAYLOAD);
  /* The nibble past an odd m is never written by add(); a file with it set was not written by us. */
  if (h->m & 1) BG_RETURN_IF(payload[h->payload_length - 1] >> 4, BG_E_PAYLOAD);
  return BG_OK;
}

static bg_status counting_load(const bg_header *h, uint8_t *payload, int in_place, void **state) {
  if (!in_place) {
    counting *c = NULL;
    bg_status rc = counting_alloc(h->m, h->k, &c);
    if (rc != BG_OK) return rc;
    memcpy(c->nibbles, payload, (size_t)h->payload_length);
    *state = c;
    return BG_OK;
  }
  counting *c = (counting *)calloc(1, sizeof *c);
  BG_RETURN_IF(!c, BG_E_NOMEM);
  c->nibbles = payload;
  c->m = h->m;
  c->k = h->k;
  *state = c;
  return BG_OK;
}

const bg_kind_ops bg_kind_counting = {
    .kind = BG_KIND_COUNTING,
    .create = counting_create,
    .destroy = counting_destroy,
    .clear = counting_clear,
    .add = counting_add,
    .contains = counting_contains,
    .contains_many = counting_contains_many,
    .remove = counting_remove,
    .merge = counting_merge,
    .to_classic = counting_to_classic,
    .describe = counting_describe,
    .payload_size = counting_payload_size,
    .write_payload = counting_write_payload,
    .validate = counting_validate,
    .load = counting_load,
};
