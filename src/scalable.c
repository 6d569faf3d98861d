/*
 * scalable.c — the scalable Bloom filter (Almeida, Baquero, Preguiça and
 * Hutchison, 2007): a chain of classic layers. Layer i holds up to
 * n0 * 2^i items at error rate p * (1 - r) * r^i with r = 1/2, so the
 * chain's aggregate false-positive rate, 1 - prod(1 - p_i), stays below p
 * however far the set grows past the first capacity. Items go to the newest
 * layer; a query asks every layer.
 *
 * Every layer hashes the same (h1, h2) pair with its own m and k: layers hold
 * disjoint sets of items, so their false positives are independent.
 */
#include <stdlib.h>

#include "hash_inline.h"
#include "kind.h"

#define MAX_LAYERS 48u     /* p_i halves per layer: by 48 the probe count would pass BG_MAX_K */
#define GROWTH 2u          /* capacity multiplier per layer */
#define TIGHTENING 0.5     /* error-rate ratio per layer: exact in binary, so layer rates are exact */
#define PAYLOAD_PREFIX 16u /* u32 layer_count, u32 zero, u64 zero */
#define LAYER_RECORD 32u   /* u64 m, u32 k, u32 zero, u64 capacity, u64 count */

typedef struct {
  uint8_t *bits;
  void *owned; /* NULL when bits lie in a file buffer */
  uint64_t m, capacity, count;
  uint32_t k;
} layer;

typedef struct {
  layer layers[MAX_LAYERS];
  uint32_t layer_count;
  uint64_t initial_capacity;
  double error_rate;
} scalable;

static uint64_t layer_bytes(uint64_t m) { return (m + 7) / 8; }
/* Each layer's bits start 8-byte aligned inside the payload. */
static uint64_t layer_stride(uint64_t m) { return (layer_bytes(m) + 7) & ~(uint64_t)7; }

/* Geometry of layer i for a chain sized (n0, p); E_TOO_LARGE/E_RANGE past the limits. */
static bg_status layer_geometry(uint64_t n0, double p, uint32_t i, layer *out) {
  BG_RETURN_IF(i >= MAX_LAYERS, BG_E_TOO_LARGE);
  uint64_t capacity = n0;
  double rate = p * (1.0 - TIGHTENING);
  for (uint32_t j = 0; j < i; j++) {
    BG_RETURN_IF(capacity > BG_MAX_CAPACITY / GROWTH, BG_E_TOO_LARGE);
    capacity *= GROWTH;
    rate *= TIGHTENING;
  }
  uint64_t m;
  uint32_t k;
  bg_status rc = bg_size_for(capacity, rate, &m, &k);
  /* A layer too precise for BG_MAX_K is as unreachable as one too large. */
  if (rc == BG_E_RANGE) rc = BG_E_TOO_LARGE;
  if (rc != BG_OK) return rc;
  out->m = m;
  out->k = k;
  out->capacity = capacity;
  out->count = 0;
  return BG_OK;
}

static bg_status add_layer(scalable *s) {
  layer next;
  bg_status rc = layer_geometry(s->initial_capacity, s->error_rate, s->layer_count, &next);
  if (rc != BG_OK) return rc;
  uint64_t total = 0;
  for (uint32_t i = 0; i < s->layer_count; i++) total += s->layers[i].m;
  BG_RETURN_IF(next.m > BG_MAX_BITS - total || layer_bytes(next.m) > SIZE_MAX, BG_E_TOO_LARGE);
  next.owned = calloc(1, (size_t)layer_bytes(next.m));
  BG_RETURN_IF(!next.owned, BG_E_NOMEM);
  next.bits = (uint8_t *)next.owned;
  s->layers[s->layer_count++] = next;
  return BG_OK;
}

static void scalable_destroy(void *state) {
  scalable *s = (scalable *)state;
  if (!s) return;
  for (uint32_t i = 0; i < s->layer_count; i++) free(s->layers[i].owned);
  free(s);
}

static bg_status scalable_create(const bg_kind_params *params, void **state) {
  scalable *s = (scalable *)calloc(1, sizeof *s);
  BG_RETURN_IF(!s, BG_E_NOMEM);
  s->initial_capacity = params->capacity;
  s->error_rate = params->error_rate;
  bg_status rc = add_layer(s);
  if (rc != BG_OK) {
    scalable_destroy(s);
    return rc;
  }
  *state = s;
  return BG_OK;
}

static void scalable_clear(void *state) {
  scalable *s = (scalable *)state;
  for (uint32_t i = 1; i < s->layer_count; i++) free(s->layers[i].owned);
  s->layer_count = 1;
  memset(s->layers[0].bits, 0, (size_t)layer_bytes(s->layers[0].m));
  s->layers[0].count = 0;
}

static int layer_contains(const layer *l, bg_hash_pair h) {
  const uint8_t *bits = l->bits;
  BG__FOR_EACH_POSITION(h, l->m, l->k, pos, if (!(bits[pos >> 3] & (1u << (pos & 7)))) return 0);
  return 1;
}

static bg_status scalable_add(void *state, bg_hash_pair h) {
  scalable *s = (scalable *)state;
  layer *l = &s->layers[s->layer_count - 1];
  if (l->count >= l->capacity) {
    /* On failure nothing changed: the item is refused, never half-added. */
    bg_status rc = add_layer(s);
    if (rc != BG_OK) return rc;
    l = &s->layers[s->layer_count - 1];
  }
  uint8_t *bits = l->bits;
  BG__FOR_EACH_POSITION(h, l->m, l->k, pos, bits[pos >> 3] |= (uint8_t)(1u << (pos & 7)));
  l->count++;
  return BG_OK;
}

static int scalable_contains(const void *state, bg_hash_pair h) {
  const scalable *s = (const scalable *)state;
  /* Newest first: the largest layer holds the most items. */
  for (uint32_t i = s->layer_count; i-- > 0;)
    if (layer_contains(&s->layers[i], h)) return 1;
  return 0;
}

static void scalable_describe(const void *state, uint64_t count, bg_kind_info *info) {
  (void)count; /* each layer keeps its own count */
  const scalable *s = (const scalable *)state;
  double pass_estimated = 1.0, pass_theoretical = 1.0;
  memset(info, 0, sizeof *info);
  for (uint32_t i = 0; i < s->layer_count; i++) {
    const layer *l = &s->layers[i];
    uint64_t set = bg__popcount_bytes(l->bits, layer_bytes(l->m));
    info->m += l->m;
    info->bits_set += set;
    info->estimated_items += bg_estimated_items(l->m, l->k, set);
    pass_estimated *= 1.0 - bg_estimated_error_rate(l->m, l->k, set);
    pass_theoretical *= 1.0 - bg_theoretical_error_rate(l->m, l->k, l->count);
  }
  info->k = s->layers[s->layer_count - 1].k;
  info->fill_ratio = (double)info->bits_set / (double)info->m;
  info->estimated_error_rate = 1.0 - pass_estimated;
  info->theoretical_error_rate = 1.0 - pass_theoretical;
}

/* ---- the payload: prefix, one record per layer, then each layer's bits ---- */

static uint64_t scalable_payload_size(const void *state) {
  const scalable *s = (const scalable *)state;
  uint64_t size = PAYLOAD_PREFIX + (uint64_t)LAYER_RECORD * s->layer_count;
  for (uint32_t i = 0; i < s->layer_count; i++) size += layer_stride(s->layers[i].m);
  return size;
}

static void scalable_write_payload(const void *state, uint8_t *dst) {
  const scalable *s = (const scalable *)state;
  memset(dst, 0, PAYLOAD_PREFIX);
  bg__put_u32(dst, s->layer_count);
  uint8_t *record = dst + PAYLOAD_PREFIX;
  uint8_t *bits = record + (uint64_t)LAYER_RECORD * s->layer_count;
  for (uint32_t i = 0; i < s->layer_count; i++, record += LAYER_RECORD) {
    const layer *l = &s->layers[i];
    memset(record, 0, LAYER_RECORD);
    bg__put_u64(record, l->m);
    bg__put_u32(record + 8, l->k);
    bg__put_u64(record + 16, l->capacity);
    bg__put_u64(record + 24, l->count);
    uint64_t stride = layer_stride(l->m);
    if (bits != l->bits) memcpy(bits, l->bits, (size_t)layer_bytes(l->m));
    memset(bits + layer_bytes(l->m), 0, (size_t)(stride - layer_bytes(l->m)));
    bits += stride;
  }
}

static bg_status scalable_validate(const bg_header *h, const uint8_t *payload) {
  BG_RETURN_IF(h->capacity < 1 || h->capacity > BG_MAX_CAPACITY, BG_E_HEADER);
  BG_RETURN_IF(!(h->error_rate > 0.0 && h->error_rate < 1.0), BG_E_HEADER);
  BG_RETURN_IF(h->payload_length < PAYLOAD_PREFIX, BG_E_PAYLOAD);
  uint32_t layer_count = bg__get_u32(payload);
  BG_RETURN_IF(layer_count < 1 || layer_count > MAX_LAYERS, BG_E_PAYLOAD);
  for (unsigned i = 4; i < PAYLOAD_PREFIX; i++) BG_RETURN_IF(payload[i] != 0, BG_E_PAYLOAD);
  uint64_t offset = PAYLOAD_PREFIX + (uint64_t)LAYER_RECORD * layer_count;
  BG_RETURN_IF(h->payload_length < offset, BG_E_PAYLOAD);
  uint64_t total_m = 0;
  uint32_t last_k = 0;
  const uint8_t *record = payload + PAYLOAD_PREFIX;
  for (uint32_t i = 0; i < layer_count; i++, record += LAYER_RECORD) {
    uint64_t m = bg__get_u64(record), capacity = bg__get_u64(record + 16), count = bg__get_u64(record + 24);
    uint32_t k = bg__get_u32(record + 8);
    BG_RETURN_IF(m < 1 || m > BG_MAX_BITS || k < 1 || k > BG_MAX_K || bg__get_u32(record + 12) != 0,
                 BG_E_PAYLOAD);
    BG_RETURN_IF(capacity < 1 || capacity > BG_MAX_CAPACITY || count > capacity, BG_E_PAYLOAD);
    /* A layer's shape follows from the header (n0, p) and its index, so a file cannot claim a
     * small chain whose next layer is enormous; and only the newest layer has room left. */
    layer expected;
    /* The per-key rate, as bg_filter_create sized the chain (a url filter's keys get p/~30). */
    BG_RETURN_IF(layer_geometry(h->capacity, bg_key_error_rate((int)h->key_encoding, h->error_rate), i,
                                &expected) != BG_OK,
                 BG_E_PAYLOAD);
    BG_RETURN_IF(m != expected.m || k != expected.k || capacity != expected.capacity, BG_E_PAYLOAD);
    BG_RETURN_IF(i + 1 < layer_count && count != capacity, BG_E_PAYLOAD);
    total_m += m;
    last_k = k;
    BG_RETURN_IF(total_m > BG_MAX_BITS, BG_E_PAYLOAD);
    uint64_t stride = layer_stride(m);
    BG_RETURN_IF(h->payload_length - offset < stride, BG_E_PAYLOAD);
    const uint8_t *bits = payload + offset;
    unsigned used_in_last = (unsigned)(m & 7);
    if (used_in_last) BG_RETURN_IF(bits[layer_bytes(m) - 1] >> used_in_last, BG_E_PAYLOAD);
    for (uint64_t j = layer_bytes(m); j < stride; j++) BG_RETURN_IF(bits[j] != 0, BG_E_PAYLOAD);
    offset += stride;
  }
  BG_RETURN_IF(offset != h->payload_length, BG_E_PAYLOAD);
  /* The header's m and k are what describe() reports: the sum of layer sizes, the newest layer's k. */
  BG_RETURN_IF(total_m != h->m || last_k != h->k, BG_E_HEADER);
  return BG_OK;
}

static bg_status scalable_load(const bg_header *h, uint8_t *payload, int in_place, void **state) {
  scalable *s = (scalable *)calloc(1, sizeof *s);
  BG_RETURN_IF(!s, BG_E_NOMEM);
  s->initial_capacity = h->capacity;
  s->error_rate = bg_key_error_rate((int)h->key_encoding, h->error_rate);
  uint32_t layer_count = bg__get_u32(payload);
  const uint8_t *record = payload + PAYLOAD_PREFIX;
  uint8_t *bits = payload + PAYLOAD_PREFIX + (uint64_t)LAYER_RECORD * layer_count;
  for (uint32_t i = 0; i < layer_count; i++, record += LAYER_RECORD) {
    layer *l = &s->layers[i];
    l->m = bg__get_u64(record);
    l->k = bg__get_u32(record + 8);
    l->capacity = bg__get_u64(record + 16);
    l->count = bg__get_u64(record + 24);
    if (in_place) {
      l->bits = bits;
    } else {
      l->owned = malloc((size_t)layer_bytes(l->m));
      if (!l->owned) {
        s->layer_count = i;
        scalable_destroy(s);
        return BG_E_NOMEM;
      }
      l->bits = (uint8_t *)l->owned;
      memcpy(l->bits, bits, (size_t)layer_bytes(l->m));
    }
    bits += layer_stride(l->m);
  }
  s->layer_count = layer_count;
  *state = s;
  return BG_OK;
}

const bg_kind_ops bg_kind_scalable = {
    .kind = BG_KIND_SCALABLE,
    .create = scalable_create,
    .destroy = scalable_destroy,
    .clear = scalable_clear,
    .add = scalable_add,
    .contains = scalable_contains,
    .describe = scalable_describe,
    .payload_size = scalable_payload_size,
    .write_payload = scalable_write_payload,
    .validate = scalable_validate,
    .load = scalable_load,
};
