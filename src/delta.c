/*
 * delta.c — .bgd delta files between generations of one filter (docs/FORMAT.md,
 * "Delta files (.bgd)"). The specification and this file change together.
 *
 * A delta splits both files at their "body": the base's bytes from
 * base_body on become the target's bytes from target_body on, with some bits
 * flipped, followed by bytes the target appends. Everything before the body
 * (header, metadata, padding; for scalable filters also the layer table,
 * which grows in the middle of the payload) is the "head", stored raw. The
 * flipped bits, and the set bits of the appended bytes, are two Rice-coded
 * streams of positions, each with the parameter that makes it shortest.
 *
 * The apply path ships in the browser's wasm module: it is kept small and
 * plain (one bit-at-a-time Rice walk used three ways: check, flip, unflip).
 * It validates the whole delta before touching the buffer, and undoes its
 * work when the result fails its checks, so the caller keeps a good filter.
 */
#include <stdlib.h>

#include "bloomgate.h"
#include "internal.h"

static const uint8_t BGD_MAGIC[8] = {0x89, 'B', 'G', 'D', '\r', '\n', 0x1a, '\n'};

/* Field offsets in the fixed delta header (all little-endian). */
enum {
  D_CHECKSUM = 8,
  D_VERSION = 16,
  D_HEADER_SIZE = 18,
  D_CHANGED_PARAMETER = 20,
  D_APPENDED_PARAMETER = 21,
  D_RESERVED = 22, /* 2 bytes, zero */
  D_CHANGED_BITS = 24,
  D_LIST_ID = 32,
  D_BASE_GENERATION = 48,
  D_BASE_LENGTH = 56,
  D_BASE_CHECKSUM = 64,
  D_TARGET_GENERATION = 72,
  D_TARGET_LENGTH = 80,
  D_TARGET_CHECKSUM = 88,
  D_BASE_BODY = 96,
  D_TARGET_BODY = 104,
  D_CHANGED_LENGTH = 112,
  D_APPENDED_BYTES = 120,
  D_APPENDED_BITS = 128,
  D_APPENDED_LENGTH = 136
};

/* Every length field is below this (any valid .bgf is far smaller), so sums of a few never overflow. */
#define MAX_LENGTH ((uint64_t)1 << 48)
#define MAX_RICE_PARAMETER 63u

/* One Rice stream: `count` positions in a region of `bits` bits, coded in `length` bytes. */
typedef struct {
  const uint8_t *bytes;
  uint64_t length, count, bits;
  unsigned parameter;
} rice_stream;

/* A delta's header, parsed and checked. */
typedef struct {
  bg_delta_info info;
  uint64_t base_body, target_body, body; /* body = the bytes both files share, from base_body / target_body */
  rice_stream changed, appended;         /* flips in the shared body; set bits in the appended bytes */
} parsed_delta;

static bg_status read_stream(const uint8_t *d, unsigned parameter_at, unsigned count_at, unsigned length_at,
                             uint64_t region_bytes, rice_stream *s) {
  s->parameter = d[parameter_at];
  s->count = bg__get_u64(d + count_at);
  s->length = bg__get_u64(d + length_at);
  s->bits = region_bytes * 8;
  BG_RETURN_IF(s->parameter > MAX_RICE_PARAMETER || s->length >= MAX_LENGTH, BG_E_DELTA);
  /* Each position is a code of at least one bit, inside its region; no positions: no bytes, parameter 0. */
  BG_RETURN_IF(s->count > s->bits || s->count > s->length * 8, BG_E_DELTA);
  BG_RETURN_IF(s->count == 0 && (s->length != 0 || s->parameter != 0), BG_E_DELTA);
  return BG_OK;
}

static bg_status parse(const uint8_t *d, size_t len, parsed_delta *p) {
  BG_RETURN_IF(!d && len, BG_E_ARG);
  size_t magic_bytes = len < sizeof BGD_MAGIC ? len : sizeof BGD_MAGIC;
  BG_RETURN_IF(magic_bytes && memcmp(d, BGD_MAGIC, magic_bytes) != 0, BG_E_MAGIC);
  BG_RETURN_IF(len < D_VERSION + 2, BG_E_TRUNCATED);
  BG_RETURN_IF(bg__get_u16(d + D_VERSION) != BG_DELTA_VERSION, BG_E_VERSION);
  BG_RETURN_IF(len < BG_DELTA_HEADER_SIZE, BG_E_TRUNCATED);
  BG_RETURN_IF(bg__get_u16(d + D_HEADER_SIZE) != BG_DELTA_HEADER_SIZE || (d[D_RESERVED] | d[D_RESERVED + 1]),
               BG_E_DELTA);

  memset(p, 0, sizeof *p);
  bg_delta_info *info = &p->info;
  info->version = BG_DELTA_VERSION;
  memcpy(info->list_id, d + D_LIST_ID, 16);
  info->base_generation = bg__get_u64(d + D_BASE_GENERATION);
  info->base_length = bg__get_u64(d + D_BASE_LENGTH);
  info->base_checksum = bg__get_u64(d + D_BASE_CHECKSUM);
  info->target_generation = bg__get_u64(d + D_TARGET_GENERATION);
  info->target_length = bg__get_u64(d + D_TARGET_LENGTH);
  info->target_checksum = bg__get_u64(d + D_TARGET_CHECKSUM);
  info->appended_bytes = bg__get_u64(d + D_APPENDED_BYTES);
  p->base_body = bg__get_u64(d + D_BASE_BODY);
  p->target_body = bg__get_u64(d + D_TARGET_BODY);

  BG_RETURN_IF(info->base_length >= MAX_LENGTH || info->target_length >= MAX_LENGTH, BG_E_DELTA);
  BG_RETURN_IF(info->target_generation <= info->base_generation, BG_E_DELTA);
  BG_RETURN_IF(p->base_body < D_VERSION || p->base_body > info->base_length, BG_E_DELTA);
  BG_RETURN_IF(p->target_body < D_VERSION || p->target_body > info->target_length, BG_E_DELTA);
  p->body = info->base_length - p->base_body;
  /* The target is its head, the base's body, and the appended bytes: nothing else. */
  BG_RETURN_IF(info->target_length - p->target_body < p->body ||
                   info->appended_bytes != info->target_length - p->target_body - p->body,
               BG_E_DELTA);
  bg_status rc = read_stream(d, D_CHANGED_PARAMETER, D_CHANGED_BITS, D_CHANGED_LENGTH, p->body, &p->changed);
  if (rc == BG_OK)
    rc = read_stream(d, D_APPENDED_PARAMETER, D_APPENDED_BITS, D_APPENDED_LENGTH, info->appended_bytes,
                     &p->appended);
  if (rc != BG_OK) return rc;
  info->changed_bits = p->changed.count;

  uint64_t head = p->target_body - D_VERSION;
  info->delta_length = BG_DELTA_HEADER_SIZE + head + p->changed.length + p->appended.length;
  BG_RETURN_IF(len < info->delta_length, BG_E_TRUNCATED);
  BG_RETURN_IF(len > info->delta_length, BG_E_DELTA);
  /* The same sum as a .bgf's: XXH3-64 (seed 0) of everything after the checksum field. */
  BG_RETURN_IF(bg_file_checksum(d, len) != bg__get_u64(d + D_CHECKSUM), BG_E_CHECKSUM);
  p->changed.bytes = d + BG_DELTA_HEADER_SIZE + head;
  p->appended.bytes = p->changed.bytes + p->changed.length;
  return BG_OK;
}

bg_status bg_delta_peek(const uint8_t *delta, size_t len, bg_delta_info *info) {
  BG_RETURN_IF(!info, BG_E_ARG);
  parsed_delta p;
  bg_status rc = parse(delta, len, &p);
  if (rc == BG_OK) *info = p.info;
  return rc;
}

/*
 * Walk a Rice stream: check it (region NULL) or flip each position's bit in
 * region. Bit i of the stream is bit i mod 8 of its byte i / 8; a code is q
 * one-bits, a zero bit, then the low r bits of the gap, least significant
 * first (gap = q * 2^r + low); a position is the previous position + 1 + gap
 * (the first: gap). After the last code the stream ends within its last
 * byte, the rest of that byte zero.
 */
static bg_status rice_walk(const rice_stream *s, uint8_t *region) {
  const uint8_t *bytes = s->bytes;
  unsigned r = s->parameter;
  uint64_t bit = 0, end = s->length * 8, next = 0;
  for (uint64_t i = 0; i < s->count; i++) {
    uint64_t q = 0, room = s->bits - next;
    for (;;) {
      BG_RETURN_IF(bit >= end, BG_E_DELTA);
      unsigned one = (bytes[bit >> 3] >> (bit & 7)) & 1u;
      bit++;
      if (!one) break;
      /* q * 2^r must stay below room: checked before the shift could overflow. */
      BG_RETURN_IF(++q > (room >> r), BG_E_DELTA);
    }
    BG_RETURN_IF(end - bit < r, BG_E_DELTA);
    uint64_t gap = q << r;
    for (unsigned j = 0; j < r; j++, bit++) gap |= (uint64_t)((bytes[bit >> 3] >> (bit & 7)) & 1u) << j;
    BG_RETURN_IF(gap >= room, BG_E_DELTA);
    uint64_t pos = next + gap;
    if (region) region[pos >> 3] ^= (uint8_t)(1u << (pos & 7));
    next = pos + 1;
  }
  BG_RETURN_IF((bit + 7) / 8 != s->length, BG_E_DELTA);
  BG_RETURN_IF((bit & 7) && (bytes[bit >> 3] >> (bit & 7)) != 0, BG_E_DELTA);
  return BG_OK;
}

/* Both streams: the shared body's flips, then the appended bytes' set bits (body NULL: check only). */
static bg_status walk_both(const parsed_delta *d, uint8_t *body) {
  bg_status rc = rice_walk(&d->changed, body);
  return rc != BG_OK ? rc : rice_walk(&d->appended, body ? body + d->body : NULL);
}

/* Two files of one list with one geometry (scalable: one layer sizing, since m and k grow with layers). */
static int same_list(const bg_header *a, const bg_header *b) {
  if (a->kind != b->kind || a->key_encoding != b->key_encoding || a->hash_algorithm != b->hash_algorithm ||
      a->seed != b->seed || memcmp(a->list_id, b->list_id, 16) != 0)
    return 0;
  if (a->kind == BG_KIND_SCALABLE) return a->capacity == b->capacity && a->error_rate == b->error_rate;
  return a->m == b->m && a->k == b->k;
}

/* After the patch: the target the delta claims, valid, and of the base's list and geometry. */
static bg_status check_result(const uint8_t *file, size_t len, const parsed_delta *d, const bg_header *base) {
  uint64_t sum = bg_file_checksum(file, len);
  BG_RETURN_IF(sum != d->info.target_checksum, BG_E_DELTA);
  bg_header target;
  BG_RETURN_IF(bg_file_validate_checked(file, len, sum, &target) != BG_OK, BG_E_DELTA);
  BG_RETURN_IF(target.generation != d->info.target_generation || !same_list(base, &target), BG_E_DELTA);
  return BG_OK;
}

bg_status bg_delta_apply(uint8_t *file, size_t file_len, size_t capacity, const uint8_t *delta,
                         size_t delta_len, size_t *new_len) {
  BG_RETURN_IF(!file || !new_len || capacity < file_len, BG_E_ARG);
  parsed_delta d;
  bg_status rc = parse(delta, delta_len, &d);
  if (rc != BG_OK) return rc;
  const bg_delta_info *info = &d.info;

  bg_header base;
  BG_RETURN_IF(bg_header_peek(file, file_len, &base) != BG_OK || file_len != info->base_length ||
                   base.generation != info->base_generation || base.checksum != info->base_checksum ||
                   memcmp(base.list_id, info->list_id, 16) != 0,
               BG_E_DELTA_BASE);
  BG_RETURN_IF(capacity < info->target_length, BG_E_BUFFER);
  rc = walk_both(&d, NULL);
  if (rc != BG_OK) return rc;
  /* The checksum field names the base; its bytes must be the ones it was computed over. */
  BG_RETURN_IF(bg_file_checksum(file, file_len) != base.checksum, BG_E_DELTA_BASE);

  /* What the patch overwrites for good: the base's head (bounded by the file, not by the delta). */
  size_t saved_len = (size_t)(d.base_body - D_VERSION), body = (size_t)d.body;
  uint8_t *saved = (uint8_t *)malloc(saved_len ? saved_len : 1);
  BG_RETURN_IF(!saved, BG_E_NOMEM);
  memcpy(saved, file + D_VERSION, saved_len);

  uint8_t *target_body = file + d.target_body;
  memmove(target_body, file + d.base_body, body);
  memcpy(file + D_VERSION, delta + BG_DELTA_HEADER_SIZE, (size_t)(d.target_body - D_VERSION));
  memset(target_body + body, 0, (size_t)info->appended_bytes);
  bg__put_u64(file + D_CHECKSUM, info->target_checksum);
  (void)walk_both(&d, target_body); /* checked above: cannot fail */

  size_t target_len = (size_t)info->target_length;
  rc = check_result(file, target_len, &d, &base);
  if (rc != BG_OK) {
    /* Undo in reverse: flips are their own inverse, then the body goes back and the head is restored. */
    (void)walk_both(&d, target_body);
    memmove(file + d.base_body, target_body, body);
    memcpy(file + D_VERSION, saved, saved_len);
    bg__put_u64(file + D_CHECKSUM, base.checksum);
  } else {
    *new_len = target_len;
  }
  free(saved);
  return rc;
}

/* ---- encoding (publisher side: cold) -------------------------------------- */

/*
 * Where a file's body starts: after its payload's own table when the table
 * grows in place. A scalable payload is 16 bytes, one 32-byte record per
 * layer, then the layers' bits: a new layer inserts a record before all the
 * bits, so the records go in the head and the bits stay aligned.
 */
BG_COLD static uint64_t body_offset(const bg_header *h, const uint8_t *file) {
  uint64_t offset = h->payload_offset;
  if (h->kind == BG_KIND_SCALABLE) offset += 16u + 32u * (uint64_t)bg__get_u32(file + offset);
  return offset;
}

typedef struct {
  uint8_t *bytes; /* zeroed beforehand */
  uint64_t bit;
} bit_writer;

BG_COLD static void put_bit(bit_writer *w, unsigned one) {
  if (one) w->bytes[w->bit >> 3] |= (uint8_t)(1u << (w->bit & 7));
  w->bit++;
}

/*
 * Visit every bit where a and b differ (n bytes each; a NULL reads as zeros),
 * in order. With sums: add each gap's gap >> s to sums[s] for every s (the
 * cost table). With w: write each gap's code with parameter r. Returns the
 * number of differing bits.
 */
BG_COLD static uint64_t visit_changes(const uint8_t *a, const uint8_t *b, uint64_t n, uint64_t *sums,
                                      bit_writer *w, unsigned r) {
  uint64_t count = 0, next = 0;
  for (uint64_t i = 0; i < n; i++) {
    unsigned diff = (unsigned)((a ? a[i] : 0) ^ b[i]);
    while (diff) {
      uint64_t pos = i * 8 + (unsigned)__builtin_ctz(diff), gap = pos - next;
      diff &= diff - 1;
      next = pos + 1;
      count++;
      if (sums)
        for (unsigned s = 0; s <= MAX_RICE_PARAMETER && (gap >> s) != 0; s++) sums[s] += gap >> s;
      if (w) {
        for (uint64_t q = gap >> r; q > 0; q--) put_bit(w, 1);
        put_bit(w, 0);
        for (unsigned j = 0; j < r; j++) put_bit(w, (unsigned)(gap >> j) & 1u);
      }
    }
  }
  return count;
}

/* A stream's count, its shortest Rice parameter and its length: bits(r) = count * (1 + r) + sum(gap >> r). */
BG_COLD static void plan_stream(const uint8_t *a, const uint8_t *b, uint64_t n, rice_stream *s) {
  uint64_t sums[MAX_RICE_PARAMETER + 1] = {0};
  s->count = visit_changes(a, b, n, sums, NULL, 0);
  s->parameter = 0;
  s->length = 0;
  if (!s->count) return;
  for (unsigned r = 0; r <= MAX_RICE_PARAMETER; r++) {
    uint64_t bytes = (s->count * (1u + r) + sums[r] + 7) / 8;
    if (r == 0 || bytes < s->length) {
      s->length = bytes;
      s->parameter = r;
    }
  }
}

BG_COLD static uint8_t *write_stream(uint8_t *out, const uint8_t *a, const uint8_t *b, uint64_t n,
                                     const rice_stream *s) {
  memset(out, 0, (size_t)s->length);
  bit_writer w = {out, 0};
  (void)visit_changes(a, b, n, NULL, &w, s->parameter);
  return out + s->length;
}

BG_COLD bg_status bg_delta_encode(const uint8_t *base, size_t base_len, const uint8_t *target,
                                  size_t target_len, uint8_t *dst, size_t dst_capacity, size_t *written) {
  BG_RETURN_IF(!written || (!dst && dst_capacity), BG_E_ARG);
  *written = 0;
  bg_header b, t;
  bg_status rc = bg_file_validate(base, base_len, &b);
  if (rc != BG_OK) return rc;
  rc = bg_file_validate(target, target_len, &t);
  if (rc != BG_OK) return rc;
  BG_RETURN_IF(!same_list(&b, &t) || t.generation <= b.generation, BG_E_INCOMPATIBLE);

  uint64_t base_body = body_offset(&b, base), target_body = body_offset(&t, target);
  uint64_t body = base_len - base_body;
  BG_RETURN_IF(target_len - target_body < body, BG_E_INCOMPATIBLE);
  uint64_t appended = target_len - target_body - body, head = target_body - D_VERSION;
  const uint8_t *from = base + base_body, *to = target + target_body;
  rice_stream changed, added;
  plan_stream(from, to, body, &changed);
  plan_stream(NULL, to + body, appended, &added);

  uint64_t size = BG_DELTA_HEADER_SIZE + head + changed.length + added.length;
  BG_RETURN_IF(size > SIZE_MAX, BG_E_TOO_LARGE);
  if (dst_capacity < size) {
    *written = (size_t)size;
    return BG_E_BUFFER;
  }

  memset(dst, 0, BG_DELTA_HEADER_SIZE);
  memcpy(dst, BGD_MAGIC, sizeof BGD_MAGIC);
  bg__put_u16(dst + D_VERSION, BG_DELTA_VERSION);
  bg__put_u16(dst + D_HEADER_SIZE, BG_DELTA_HEADER_SIZE);
  dst[D_CHANGED_PARAMETER] = (uint8_t)changed.parameter;
  dst[D_APPENDED_PARAMETER] = (uint8_t)added.parameter;
  bg__put_u64(dst + D_CHANGED_BITS, changed.count);
  memcpy(dst + D_LIST_ID, b.list_id, 16);
  bg__put_u64(dst + D_BASE_GENERATION, b.generation);
  bg__put_u64(dst + D_BASE_LENGTH, base_len);
  bg__put_u64(dst + D_BASE_CHECKSUM, b.checksum);
  bg__put_u64(dst + D_TARGET_GENERATION, t.generation);
  bg__put_u64(dst + D_TARGET_LENGTH, target_len);
  bg__put_u64(dst + D_TARGET_CHECKSUM, t.checksum);
  bg__put_u64(dst + D_BASE_BODY, base_body);
  bg__put_u64(dst + D_TARGET_BODY, target_body);
  bg__put_u64(dst + D_CHANGED_LENGTH, changed.length);
  bg__put_u64(dst + D_APPENDED_BYTES, appended);
  bg__put_u64(dst + D_APPENDED_BITS, added.count);
  bg__put_u64(dst + D_APPENDED_LENGTH, added.length);

  uint8_t *out = dst + BG_DELTA_HEADER_SIZE;
  memcpy(out, target + D_VERSION, (size_t)head);
  out = write_stream(out + head, from, to, body, &changed);
  (void)write_stream(out, NULL, to + body, appended, &added);
  bg__file_seal(dst, (size_t)size);
  *written = (size_t)size;
  return BG_OK;
}
