/*
 * filter.c — the one handle behind every kind: key encoding, hashing, item
 * counts, metadata, identity and the .bgf container. Kinds (kind.h) see only
 * hash pairs and their payload.
 */
#include <math.h>
#include <stdlib.h>

#include "hash_inline.h"
#include "kind.h"

struct bg_filter {
  const bg_kind_ops *ops;
  void *state;   /* the kind's */
  void *storage; /* a whole file buffer the state uses in place, or NULL */
  uint64_t capacity, count, seed, generation;
  double error_rate;
  uint32_t key_encoding;
  uint8_t list_id[16];
  uint8_t *metadata; /* malloc'd copy, or NULL */
  size_t metadata_length;
};

BG_COLD bg_status bg_filter_create(int kind, uint64_t capacity, double error_rate, uint64_t seed,
                                   int key_encoding, bg_filter **out) {
  return bg_filter_create_with_values(kind, capacity, error_rate, seed, key_encoding, 0, out);
}

BG_COLD bg_status bg_filter_create_with_values(int kind, uint64_t capacity, double error_rate, uint64_t seed,
                                               int key_encoding, unsigned value_bits, bg_filter **out) {
  BG_RETURN_IF(!out, BG_E_ARG);
  *out = NULL;
  const bg_kind_ops *ops = kind < 0 ? NULL : bg__kind_ops((uint32_t)kind);
  BG_RETURN_IF(!ops, BG_E_KIND);
  BG_RETURN_IF(value_bits > BG_MAX_VALUE_BITS, BG_E_RANGE);
  BG_RETURN_IF(value_bits && !ops->add_value, BG_E_UNSUPPORTED);
  BG_RETURN_IF(key_encoding < BG_KEY_UTF8 || key_encoding > BG_KEY_URL, BG_E_KEY_ENCODING);
  /* NaN fails both comparisons, so it is rejected here too. */
  BG_RETURN_IF(capacity < 1 || capacity > BG_MAX_CAPACITY || !(error_rate > 0.0 && error_rate < 1.0),
               BG_E_RANGE);
  bg_filter *f = (bg_filter *)calloc(1, sizeof *f);
  BG_RETURN_IF(!f, BG_E_NOMEM);
  bg_kind_params params = {capacity, bg_key_error_rate(key_encoding, error_rate), value_bits};
  bg_status rc = ops->create(&params, &f->state);
  if (rc != BG_OK) {
    free(f);
    return rc;
  }
  f->ops = ops;
  f->capacity = capacity;
  f->error_rate = error_rate;
  f->seed = seed;
  f->key_encoding = (uint32_t)key_encoding;
  *out = f;
  return BG_OK;
}

void bg_filter_free(bg_filter *f) {
  if (!f) return;
  f->ops->destroy(f->state);
  free(f->storage);
  free(f->metadata);
  free(f);
}

void bg_filter_clear(bg_filter *f) {
  if (!f) return;
  f->ops->clear(f->state);
  f->count = 0;
}

/* ---- items to hash pairs (the rules themselves are in keys.c) ----------- */

bg_status bg_filter_add_key(bg_filter *f, const void *key, size_t len) {
  BG_RETURN_IF(!f || (!key && len), BG_E_ARG);
  bg_status rc = f->ops->add(f->state, bg__hash(key, len, f->seed));
  if (rc == BG_OK) f->count++;
  return rc;
}

/* One hashed key with a value: kinds without values take only 0 (their r is 0). */
static bg_status add_hash_value(bg_filter *f, bg_hash_pair hash, uint32_t value) {
  if (f->ops->add_value) return f->ops->add_value(f->state, hash, value);
  BG_RETURN_IF(value, BG_E_RANGE);
  return f->ops->add(f->state, hash);
}

bg_status bg_filter_add_key_value(bg_filter *f, const void *key, size_t len, uint32_t value) {
  BG_RETURN_IF(!f || (!key && len), BG_E_ARG);
  bg_status rc = add_hash_value(f, bg__hash(key, len, f->seed), value);
  if (rc == BG_OK) f->count++;
  return rc;
}

/*
 * Fuse kinds key on h1 alone, so a builder that has hashed and partitioned
 * the keys (a sharded build, docs/kinds/fuse.md) hands each shard's filter
 * just the h1 values (and fuse4 their values): h2 picked the shard and is not
 * needed again.
 */
BG_COLD bg_status bg_filter_add_h1_values(bg_filter *f, const uint64_t *h1, const uint8_t *values,
                                          size_t count) {
  BG_RETURN_IF(!f || (!h1 && count), BG_E_ARG);
  uint32_t kind = f->ops->kind;
  BG_RETURN_IF(kind != BG_KIND_FUSE8 && kind != BG_KIND_FUSE16 && kind != BG_KIND_FUSE4, BG_E_UNSUPPORTED);
  for (size_t i = 0; i < count; i++) {
    bg_hash_pair hash = {h1[i], 0};
    bg_status rc = values ? add_hash_value(f, hash, values[i]) : f->ops->add(f->state, hash);
    if (rc != BG_OK) return rc;
    f->count++;
  }
  return BG_OK;
}

BG_COLD bg_status bg_filter_add_h1(bg_filter *f, const uint64_t *h1, size_t count) {
  return bg_filter_add_h1_values(f, h1, NULL, count);
}

/* A hashed key's answer and value (0 for kinds without values). */
static int hash_value(const bg_filter *f, bg_hash_pair hash, uint32_t *value) {
  if (f->ops->value) return f->ops->value(f->state, hash, value);
  int answer = f->ops->contains(f->state, hash);
  if (answer > 0) *value = 0;
  return answer;
}

int bg_filter_value_key(const bg_filter *f, const void *key, size_t len, uint32_t *value) {
  BG_RETURN_IF(!f || !value || (!key && len), BG_E_ARG);
  return hash_value(f, bg__hash(key, len, f->seed), value);
}

int bg_filter_contains_key(const bg_filter *f, const void *key, size_t len) {
  BG_RETURN_IF(!f || (!key && len), BG_E_ARG);
  return f->ops->contains(f->state, bg__hash(key, len, f->seed));
}

bg_status bg_filter_remove_key(bg_filter *f, const void *key, size_t len) {
  BG_RETURN_IF(!f || (!key && len), BG_E_ARG);
  BG_RETURN_IF(!f->ops->remove, BG_E_UNSUPPORTED);
  bg_status rc = f->ops->remove(f->state, bg__hash(key, len, f->seed));
  if (rc == BG_OK && f->count) f->count--;
  return rc;
}

/* bloom.c: a utf8 item (the key itself) hashed and probed in one call. */
bg_status bg__classic_add_item(void *state, const void *key, size_t len, uint64_t seed);
int bg__classic_contains_item(const void *state, const void *key, size_t len, uint64_t seed);

bg_status bg_filter_add(bg_filter *f, const void *item, size_t len) {
  BG_RETURN_IF(!f || (!item && len), BG_E_ARG);
  /* The common case without the item-key step or dispatch: a utf8 item is its key. */
  if (f->key_encoding == BG_KEY_UTF8) {
    bg_status rc = f->ops == &bg_kind_classic ? bg__classic_add_item(f->state, item, len, f->seed)
                                              : f->ops->add(f->state, bg__hash_short(item, len, f->seed));
    if (rc == BG_OK) f->count++;
    return rc;
  }
  uint8_t scratch[32];
  const uint8_t *key;
  size_t key_len;
  bg_status rc = bg__item_key(f->key_encoding, item, len, scratch, &key, &key_len);
  return rc != BG_OK ? rc : bg_filter_add_key(f, key, key_len);
}

bg_status bg_filter_add_value(bg_filter *f, const void *item, size_t len, uint32_t value) {
  BG_RETURN_IF(!f || (!item && len), BG_E_ARG);
  uint8_t scratch[32];
  const uint8_t *key;
  size_t key_len;
  bg_status rc = bg__item_key(f->key_encoding, item, len, scratch, &key, &key_len);
  return rc != BG_OK ? rc : bg_filter_add_key_value(f, key, key_len, value);
}

bg_status bg_filter_remove(bg_filter *f, const void *item, size_t len) {
  BG_RETURN_IF(!f || (!item && len), BG_E_ARG);
  uint8_t scratch[32];
  const uint8_t *key;
  size_t key_len;
  bg_status rc = bg__item_key(f->key_encoding, item, len, scratch, &key, &key_len);
  return rc != BG_OK ? rc : bg_filter_remove_key(f, key, key_len);
}

/* A URL is "maybe" when any of its expressions is; its value is the first such expression's. */
static int url_value(const bg_filter *f, const void *item, size_t len, uint32_t *value) {
  uint8_t digests[BG_URL_MAX_EXPRESSIONS][32];
  size_t count = 0;
  bg_status rc = bg__url_digests(item, len, digests, &count);
  if (rc != BG_OK) return rc;
  for (size_t i = 0; i < count; i++) {
    int answer = hash_value(f, bg__hash(digests[i], 32, f->seed), value);
    if (answer != 0) return answer;
  }
  return 0;
}

static int contains_url(const bg_filter *f, const void *item, size_t len) {
  uint32_t value;
  return url_value(f, item, len, &value);
}

int bg_filter_value(const bg_filter *f, const void *item, size_t len, uint32_t *value) {
  BG_RETURN_IF(!f || !value || (!item && len), BG_E_ARG);
  if (f->key_encoding == BG_KEY_URL) return url_value(f, item, len, value);
  uint8_t scratch[32];
  const uint8_t *key;
  size_t key_len;
  bg_status rc = bg__item_key(f->key_encoding, item, len, scratch, &key, &key_len);
  return rc != BG_OK ? rc : hash_value(f, bg__hash(key, key_len, f->seed), value);
}

BG_COLD int bg_filter_match_url(const bg_filter *f, const char *url, size_t len, char *text,
                                size_t text_capacity, bg_url_match *out) {
  BG_RETURN_IF(!f || !out || (!url && len), BG_E_ARG);
  BG_RETURN_IF(f->key_encoding != BG_KEY_URL, BG_E_KEY_ENCODING);
  size_t count = 0;
  out->count = 0;
  out->maybe = 0;
  bg_status rc = bg__url_keys(url, len, text, text_capacity, out->offsets, &count, out->digests);
  out->count = (uint32_t)count;
  if (rc != BG_OK) return rc;
  for (size_t i = 0; i < count; i++) {
    int answer = f->ops->contains(f->state, bg__hash(out->digests[i], 32, f->seed));
    if (answer < 0) return answer;
    if (answer) out->maybe |= 1u << i;
  }
  return out->maybe != 0;
}

int bg_filter_contains(const bg_filter *f, const void *item, size_t len) {
  BG_RETURN_IF(!f || (!item && len), BG_E_ARG);
  if (f->key_encoding == BG_KEY_UTF8) {
    if (f->ops == &bg_kind_classic) return bg__classic_contains_item(f->state, item, len, f->seed);
    return f->ops->contains(f->state, bg__hash_short(item, len, f->seed));
  }
  if (f->key_encoding == BG_KEY_URL) return contains_url(f, item, len);
  uint8_t scratch[32];
  const uint8_t *key;
  size_t key_len;
  bg_status rc = bg__item_key(f->key_encoding, item, len, scratch, &key, &key_len);
  return rc != BG_OK ? rc : f->ops->contains(f->state, bg__hash(key, key_len, f->seed));
}

/*
 * Batches hash a group of keys before probing any of them: the probes of one
 * key no longer wait on the hashing of the next, and the kind may issue the
 * group's memory accesses together.
 */
/* Measured: 16 -> 128 took blocked at 9M keys from 23 to 13.5 ns natively, 38 to 27 in wasm. */
#define BG_BATCH_GROUP 128

static bg_status hash_group(const bg_filter *f, const uint8_t *items, const uint32_t *offsets, size_t first,
                            size_t n, bg_hash_pair *out) {
  if (f->key_encoding == BG_KEY_UTF8) {
    /* As the single-key path: a utf8 item is its key, hashed by bg__hash_short (no item-key step). */
    for (size_t j = 0; j < n; j++) {
      uint32_t start = offsets[first + j], end = offsets[first + j + 1];
      BG_RETURN_IF(end < start, BG_E_ARG);
      out[j] = bg__hash_short(items + start, end - start, f->seed);
    }
    return BG_OK;
  }
  for (size_t j = 0; j < n; j++) {
    uint32_t start = offsets[first + j], end = offsets[first + j + 1];
    BG_RETURN_IF(end < start, BG_E_ARG);
    uint8_t scratch[32];
    const uint8_t *key;
    size_t key_len;
    bg_status rc = bg__item_key(f->key_encoding, items + start, end - start, scratch, &key, &key_len);
    if (rc != BG_OK) return rc;
    out[j] = bg__hash(key, key_len, f->seed);
  }
  return BG_OK;
}

bg_status bg_filter_add_many_values(bg_filter *f, const uint8_t *items, const uint32_t *offsets,
                                    const uint8_t *values, size_t count) {
  BG_RETURN_IF(!f || (count && (!items || !offsets)), BG_E_ARG);
  bg_hash_pair group[BG_BATCH_GROUP];
  for (size_t i = 0; i < count; i += BG_BATCH_GROUP) {
    size_t n = count - i < BG_BATCH_GROUP ? count - i : BG_BATCH_GROUP;
    bg_status rc = hash_group(f, items, offsets, i, n, group);
    if (rc != BG_OK) return rc;
    for (size_t j = 0; j < n; j++) {
      rc = values ? add_hash_value(f, group[j], values[i + j]) : f->ops->add(f->state, group[j]);
      if (rc != BG_OK) return rc;
      f->count++;
    }
  }
  return BG_OK;
}

bg_status bg_filter_add_many(bg_filter *f, const uint8_t *items, const uint32_t *offsets, size_t count) {
  return bg_filter_add_many_values(f, items, offsets, NULL, count);
}

bg_status bg_filter_contains_many(const bg_filter *f, const uint8_t *items, const uint32_t *offsets,
                                  size_t count, uint8_t *results) {
  BG_RETURN_IF(!f || (count && (!items || !offsets || !results)), BG_E_ARG);
  if (f->key_encoding == BG_KEY_URL) {
    for (size_t i = 0; i < count; i++) {
      BG_RETURN_IF(offsets[i + 1] < offsets[i], BG_E_ARG);
      int answer = contains_url(f, items + offsets[i], offsets[i + 1] - offsets[i]);
      if (answer < 0) return (bg_status)answer;
      results[i] = (uint8_t)answer;
    }
    return BG_OK;
  }
  bg_hash_pair group[BG_BATCH_GROUP];
  for (size_t i = 0; i < count; i += BG_BATCH_GROUP) {
    size_t n = count - i < BG_BATCH_GROUP ? count - i : BG_BATCH_GROUP;
    bg_status rc = hash_group(f, items, offsets, i, n, group);
    if (rc != BG_OK) return rc;
    if (f->ops->contains_many) {
      rc = f->ops->contains_many(f->state, group, n, results + i);
      if (rc != BG_OK) return rc;
    } else {
      for (size_t j = 0; j < n; j++) {
        int answer = f->ops->contains(f->state, group[j]);
        if (answer < 0) return (bg_status)answer;
        results[i + j] = (uint8_t)answer;
      }
    }
  }
  return BG_OK;
}

/* ---- whole-filter operations -------------------------------------------- */

bg_status bg_filter_seal(bg_filter *f) {
  BG_RETURN_IF(!f, BG_E_ARG);
  return f->ops->seal ? f->ops->seal(f->state, f->seed) : BG_OK;
}

BG_COLD bg_status bg_filter_to_classic(const bg_filter *f, bg_filter **out) {
  BG_RETURN_IF(!f || !out, BG_E_ARG);
  *out = NULL;
  BG_RETURN_IF(!f->ops->to_classic, BG_E_UNSUPPORTED);
  bg_filter *c = (bg_filter *)calloc(1, sizeof *c);
  BG_RETURN_IF(!c, BG_E_NOMEM);
  *c = *f;
  c->ops = &bg_kind_classic;
  c->state = NULL;
  c->storage = NULL;
  c->metadata = NULL;
  c->metadata_length = 0;
  bg_status rc = f->ops->to_classic(f->state, &c->state);
  if (rc == BG_OK) rc = bg_filter_set_metadata(c, f->metadata, f->metadata_length);
  if (rc != BG_OK) {
    if (c->state) bg_kind_classic.destroy(c->state);
    free(c);
    return rc;
  }
  *out = c;
  return BG_OK;
}

BG_COLD bg_status bg_filter_merge(bg_filter *dst, const bg_filter *src) {
  BG_RETURN_IF(!dst || !src, BG_E_ARG);
  BG_RETURN_IF(dst->ops != src->ops || dst->seed != src->seed || dst->key_encoding != src->key_encoding,
               BG_E_INCOMPATIBLE);
  BG_RETURN_IF(!dst->ops->merge, BG_E_UNSUPPORTED);
  bg_status rc = dst->ops->merge(dst->state, src->state);
  if (rc != BG_OK) return rc;
  /* Saturating: the count only feeds estimates, and must never wrap to small. */
  dst->count = dst->count > UINT64_MAX - src->count ? UINT64_MAX : dst->count + src->count;
  return BG_OK;
}

BG_COLD static void filter_header(const bg_filter *f, const bg_kind_info *kind_info, bg_header *h) {
  memset(h, 0, sizeof *h);
  h->version = BG_FORMAT_VERSION;
  h->kind = f->ops->kind;
  h->key_encoding = f->key_encoding;
  h->hash_algorithm = BG_HASH_XXH3_128;
  h->k = kind_info->k;
  h->metadata_length = (uint32_t)f->metadata_length;
  h->m = kind_info->m;
  h->capacity = f->capacity;
  h->count = f->count;
  h->seed = f->seed;
  h->generation = f->generation;
  h->error_rate = f->error_rate;
  memcpy(h->list_id, f->list_id, 16);
  h->payload_offset = bg__payload_offset(f->metadata_length);
  h->payload_length = f->ops->payload_size(f->state);
  h->file_length = h->payload_offset + h->payload_length;
}

BG_COLD void bg_filter_info(const bg_filter *f, bg_info *info) {
  memset(info, 0, sizeof *info);
  if (!f) return;
  bg_kind_info kind_info;
  memset(&kind_info, 0, sizeof kind_info);
  f->ops->describe(f->state, f->count, &kind_info);
  info->kind = f->ops->kind;
  info->k = kind_info.k;
  info->key_encoding = f->key_encoding;
  info->hash_algorithm = BG_HASH_XXH3_128;
  info->m = kind_info.m;
  info->capacity = f->capacity;
  info->count = f->count;
  info->seed = f->seed;
  info->generation = f->generation;
  info->bits_set = kind_info.bits_set;
  info->payload_bytes = f->ops->payload_size(f->state);
  info->serialized_bytes = bg__payload_offset(f->metadata_length) + info->payload_bytes;
  info->error_rate = f->error_rate;
  info->fill_ratio = kind_info.fill_ratio;
  info->estimated_items = kind_info.estimated_items;
  info->estimated_error_rate = kind_info.estimated_error_rate;
  info->theoretical_error_rate = kind_info.theoretical_error_rate;
  info->value_bits = kind_info.value_bits;
  info->build_attempts = kind_info.build_attempts;
  memcpy(info->list_id, f->list_id, 16);
}

BG_COLD bg_status bg_filter_set_metadata(bg_filter *f, const void *data, size_t len) {
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

const uint8_t *bg_filter_metadata(const bg_filter *f, size_t *len) {
  if (len) *len = f ? f->metadata_length : 0;
  return f ? f->metadata : NULL;
}

void bg_filter_set_identity(bg_filter *f, const uint8_t list_id[16], uint64_t generation) {
  if (!f) return;
  if (list_id) memcpy(f->list_id, list_id, 16);
  f->generation = generation;
}

/* ---- the file ----------------------------------------------------------- */

size_t bg_filter_serialized_size(const bg_filter *f) {
  if (!f) return 0;
  return (size_t)(bg__payload_offset(f->metadata_length) + f->ops->payload_size(f->state));
}

/* The header a serialization writes; BG_E_UNSUPPORTED for a static kind (fuse) not sealed yet, which has no payload. */
BG_COLD static bg_status serialized_header(const bg_filter *f, bg_header *h) {
  bg_kind_info kind_info;
  memset(&kind_info, 0, sizeof kind_info);
  f->ops->describe(f->state, f->count, &kind_info);
  filter_header(f, &kind_info, h);
  return h->payload_length == 0 ? BG_E_UNSUPPORTED : BG_OK;
}

/* The file's head, [0, payload_offset): the header (checksum still zero), the metadata, zero padding. */
BG_COLD static void write_head(const bg_filter *f, const bg_header *h, uint8_t *dst) {
  bg__header_write(h, dst);
  if (f->metadata_length) memcpy(dst + BG_HEADER_SIZE, f->metadata, f->metadata_length);
  memset(dst + BG_HEADER_SIZE + f->metadata_length, 0,
         (size_t)(h->payload_offset - BG_HEADER_SIZE - f->metadata_length));
}

BG_COLD bg_status bg_filter_serialize(const bg_filter *f, uint8_t *dst, size_t dst_capacity, size_t *written) {
  BG_RETURN_IF(!f || !dst, BG_E_ARG);
  bg_header h;
  bg_status rc = serialized_header(f, &h);
  if (rc != BG_OK) return rc;
  BG_RETURN_IF(dst_capacity < h.file_length, BG_E_BUFFER);
  write_head(f, &h, dst);
  f->ops->write_payload(f->state, dst + h.payload_offset);
  bg__file_seal(dst, (size_t)h.file_length);
  if (written) *written = (size_t)h.file_length;
  return BG_OK;
}

BG_COLD bg_status bg_filter_serialize_parts(const bg_filter *f, uint8_t *head, size_t head_capacity,
                                            size_t *head_length, const uint8_t **payload,
                                            size_t *payload_length) {
  BG_RETURN_IF(!f || !head_length || !payload || !payload_length || (!head && head_capacity), BG_E_ARG);
  BG_RETURN_IF(!f->ops->payload_view, BG_E_UNSUPPORTED);
  bg_header h;
  bg_status rc = serialized_header(f, &h);
  if (rc != BG_OK) return rc;
  *head_length = (size_t)h.payload_offset;
  BG_RETURN_IF(head_capacity < h.payload_offset, BG_E_BUFFER);
  write_head(f, &h, head);
  *payload = f->ops->payload_view(f->state);
  *payload_length = (size_t)h.payload_length;
  bg__file_seal_parts(head, *head_length, *payload, *payload_length);
  return BG_OK;
}

/* Shared by both readers: validate, then let the kind build its state from the payload. */
BG_COLD static bg_status filter_from_file(uint8_t *src, size_t size, int in_place, const uint64_t *checksum,
                                          bg_filter **out) {
  BG_RETURN_IF(!out || (!src && size), BG_E_ARG);
  *out = NULL;
  bg_header h;
  bg_status rc = checksum ? bg_file_validate_checked(src, size, *checksum, &h)
                          : bg_file_validate(src, size, &h);
  if (rc != BG_OK) return rc;
  bg_filter *f = (bg_filter *)calloc(1, sizeof *f);
  BG_RETURN_IF(!f, BG_E_NOMEM);
  f->ops = bg__kind_ops(h.kind); /* validated above */
  f->capacity = h.capacity;
  f->count = h.count;
  f->seed = h.seed;
  f->generation = h.generation;
  f->error_rate = h.error_rate;
  f->key_encoding = h.key_encoding;
  memcpy(f->list_id, h.list_id, 16);
  rc = bg_filter_set_metadata(f, src + BG_HEADER_SIZE, h.metadata_length);
  if (rc == BG_OK) rc = f->ops->load(&h, src + h.payload_offset, in_place, &f->state);
  if (rc != BG_OK) {
    free(f->metadata);
    free(f);
    return rc;
  }
  *out = f;
  return BG_OK;
}

bg_status bg_filter_deserialize(const uint8_t *src, size_t src_size, bg_filter **out) {
  /* Not in place: the kind copies what it keeps, so casting away const is safe. */
  return filter_from_file((uint8_t *)(uintptr_t)src, src_size, 0, NULL, out);
}

bg_status bg_filter_deserialize_owned(uint8_t *buffer, size_t size, bg_filter **out) {
  bg_status rc = filter_from_file(buffer, size, 1, NULL, out);
  if (rc == BG_OK) (*out)->storage = buffer;
  return rc;
}

bg_status bg_filter_deserialize_owned_checked(uint8_t *buffer, size_t size, uint64_t checksum,
                                              bg_filter **out) {
  bg_status rc = filter_from_file(buffer, size, 1, &checksum, out);
  if (rc == BG_OK) (*out)->storage = buffer;
  return rc;
}
