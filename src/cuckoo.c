/*
 * cuckoo.c — the cuckoo filter (Fan, Andersen, Kaminsky, Mitzenmacher 2014):
 * a table of B buckets of 4 slots holding f-bit fingerprints. A key may live
 * in one of two buckets; a full pair of buckets makes room by relocating
 * ("kicking") fingerprints to their other bucket, which is computed from the
 * bucket and the fingerprint alone (partial-key cuckoo hashing), so items
 * can be removed without the keys.
 *
 * Choices (docs/kinds/cuckoo.md has the reasons and the payload layout):
 *  - f = the smallest width in 4..32 with 2*4 / 2^f <= p: a query compares
 *    against at most 8 stored fingerprints, each matching with probability
 *    about 2^-f. Rates below 8 / 2^32 cannot be met and are refused. Very
 *    large tables need at least ceil(log2(B) / 4) bits to fill.
 *  - B = ceil(5n / 19): the load at capacity is n / 4B <= 95%. B is not a
 *    power of two, so the other bucket is j = (H(fp) - i) mod B, which is an
 *    involution for any B (applied twice it gives i back), where the usual
 *    i XOR H(fp) would need B a power of two and could waste half the table.
 *  - fingerprint value 0 marks an empty slot; fingerprints are
 *    1 + reduce(h2, 2^f - 1), uniform over 1 .. 2^f - 1.
 *  - at most 2000 relocations per insert, victims chosen by a generator
 *    seeded from the key's own hash (deterministic, no stored state); an
 *    insert that cannot be placed undoes its relocations and returns
 *    BG_E_FULL with the table exactly as before.
 *  - buckets are semi-sorted (the paper's section 5.2): a bucket's four
 *    fingerprints are kept in ascending order, so the four high nibbles form
 *    a sorted tuple, one of C(19, 4) = 3876, stored as a 12-bit index instead
 *    of 16 bits; the four (f - 4)-bit low parts follow. 4f - 4 bits a bucket:
 *    one bit a fingerprint less than plain slots.
 */
#include <math.h>
#include <stdlib.h>

#include "hash_inline.h"
#include "kind.h"

#define SLOTS 4u /* fingerprints per bucket */
/*
 * Relocations one insert may make before it gives up. The paper's 500 reach
 * about 96% load, too close to the 95% at capacity for large tables (10M
 * narrow-fingerprint keys failed just below capacity); 2000 reach about 97%.
 */
#define MAX_KICKS 2000u
#define PREAMBLE 16u /* payload bytes before the table: bucket count, f, slots */
#define MIN_BITS 4u
#define MAX_BITS 32u

typedef struct {
  uint8_t *table;       /* table_bytes bytes of packed fingerprints */
  void *owned;          /* table's allocation when the state owns it; NULL when it lies in a file buffer */
  uint64_t buckets;     /* B */
  uint64_t table_bytes; /* ceil(4 * B * f / 8) */
  uint64_t occupied;    /* non-empty slots */
  uint32_t bits;        /* f */
  uint32_t fp_range;    /* 2^f - 1: fingerprints are 1 .. fp_range */
  /* index -> its four nibbles, n0 | n1 << 4 | n2 << 8 | n3 << 12; the 220 indexes past the last
   * tuple (readers reject them) map to 0 so that no value read from a table is out of bounds. */
  uint16_t tuples[1u << 12];
} cuckoo;

/* ---- sizing ------------------------------------------------------------- */

/* ceil(n / (4 * 0.95)) = ceil(5n / 19), in integers (n <= 2^53, so 5n cannot overflow). */
static uint64_t buckets_for(uint64_t capacity) { return (5 * capacity + 18) / 19; }

/*
 * f: the smallest width with 8 / 2^f <= p, i.e. p * 2^f >= 8 (ldexp is exact,
 * so native and wasm agree), and at least ceil(log2(B) / 4). The floor is
 * there because a fingerprint of f bits has only 2^f - 1 other buckets to go
 * to: measured here, 4-bit fingerprints still fill 2^21 buckets past capacity
 * but fail below capacity at 2^23, while 5 and 6 bits fill 2^23 buckets
 * easily. B <= 2^(4f) keeps every width well inside what was measured. It
 * only matters for rates above 3% (f <= 7) with more than 2^28 buckets, or
 * above 50% with more than 65,536.
 */
static bg_status fingerprint_bits_for(double error_rate, uint64_t buckets, uint32_t *bits) {
  uint32_t f = MIN_BITS;
  while (f <= MAX_BITS && ldexp(error_rate, (int)f) < 2.0 * SLOTS) f++;
  BG_RETURN_IF(f > MAX_BITS, BG_E_RANGE);
  uint32_t log2_buckets = 0; /* ceil(log2(B)) */
  while (log2_buckets < 64 && ((uint64_t)1 << log2_buckets) < buckets) log2_buckets++;
  uint32_t floor_bits = (log2_buckets + 3) / 4;
  *bits = f > floor_bits ? f : floor_bits;
  return BG_OK;
}

#define NIBBLE_BITS 4u    /* high bits of a fingerprint folded into the bucket's index */
#define INDEX_BITS 12u    /* a sorted tuple of four nibbles: 3876 values */
#define INDEX_COUNT 3876u /* C(16 + 4 - 1, 4) */

/* Bits of one bucket: the 12-bit index and four (f - 4)-bit low parts. */
static uint64_t bucket_bits_for(uint32_t bits) { return INDEX_BITS + SLOTS * (bits - NIBBLE_BITS); }

static uint64_t table_bytes_for(uint64_t buckets, uint32_t bits) {
  return (buckets * bucket_bits_for(bits) + 7) / 8;
}

/* ---- packed slots ---------------------------------------------------------- */

static inline uint64_t load_le64(const uint8_t *p) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
#else
  return bg__get_u64(p);
#endif
}

static inline void store_le64(uint8_t *p, uint64_t v) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  memcpy(p, &v, 8);
#else
  bg__put_u64(p, v);
#endif
}

/*
 * The 64 table bits starting at byte `byte`; past the end of the table they
 * read as zero. The table may lie at the very end of a file buffer (in-place
 * load), so the last bytes are read one at a time instead of over-reading.
 */
static inline uint64_t window_at(const cuckoo *c, uint64_t byte) {
  if (byte + 8 <= c->table_bytes) return load_le64(c->table + byte);
  uint64_t w = 0;
  for (uint64_t i = 0; i < 8 && byte + i < c->table_bytes; i++) w |= (uint64_t)c->table[byte + i] << (8 * i);
  return w;
}

/* The width-bit field at table bit `bit` (width <= 32: with the shift, at most 39 bits of a window). */
static inline uint32_t field_get(const cuckoo *c, uint64_t bit, uint32_t width) {
  if (width == 0) return 0;
  return (uint32_t)((window_at(c, bit >> 3) >> (bit & 7)) & (((uint64_t)1 << width) - 1));
}

static inline void field_set(cuckoo *c, uint64_t bit, uint32_t width, uint32_t value) {
  if (width == 0) return;
  uint64_t byte = bit >> 3;
  unsigned shift = (unsigned)(bit & 7);
  uint64_t mask = (((uint64_t)1 << width) - 1) << shift;
  if (byte + 8 <= c->table_bytes) {
    uint64_t w = load_le64(c->table + byte);
    store_le64(c->table + byte, (w & ~mask) | ((uint64_t)value << shift));
    return;
  }
  /* shift + width <= 39 bits: the field lies in the bytes that exist. */
  for (uint64_t i = 0; byte + i < c->table_bytes && i < 8; i++) {
    uint8_t m8 = (uint8_t)(mask >> (8 * i)), v8 = (uint8_t)(((uint64_t)value << shift) >> (8 * i));
    c->table[byte + i] = (uint8_t)((c->table[byte + i] & ~m8) | v8);
  }
}

/* ---- the semi-sorted bucket code ------------------------------------------ */

/*
 * A sorted tuple a <= b <= c <= d of nibbles is the 4-subset {a, b+1, c+2,
 * d+3} of 0..18, numbered by the combinatorial number system:
 * C(a,1) + C(b+1,2) + C(c+2,3) + C(d+3,4), which runs over 0 .. 3875.
 */
static inline uint32_t choose2(uint32_t x) { return x * (x - 1) / 2; }
static inline uint32_t choose3(uint32_t x) { return x * (x - 1) * (x - 2) / 6; }
static inline uint32_t choose4(uint32_t x) { return x * (x - 1) * (x - 2) * (x - 3) / 24; }

static inline uint32_t nibbles_to_index(const uint32_t n[SLOTS]) {
  return n[0] + choose2(n[1] + 1) + choose3(n[2] + 2) + choose4(n[3] + 3);
}

/* Fill the decoding table: every sorted tuple, at its index. */
static void fill_tuples(cuckoo *c) {
  uint32_t n[SLOTS];
  for (n[3] = 0; n[3] < 16; n[3]++)
    for (n[2] = 0; n[2] <= n[3]; n[2]++)
      for (n[1] = 0; n[1] <= n[2]; n[1]++)
        for (n[0] = 0; n[0] <= n[1]; n[0]++)
          c->tuples[nibbles_to_index(n)] = (uint16_t)(n[0] | n[1] << 4 | n[2] << 8 | n[3] << 12);
}

static inline void index_to_nibbles(const cuckoo *c, uint32_t index, uint32_t n[SLOTS]) {
  uint32_t packed = c->tuples[index & 0xFFFu];
  for (unsigned s = 0; s < SLOTS; s++) n[s] = (packed >> (4 * s)) & 15u;
}

/* A bucket's four fingerprints, ascending (empty slots, 0, first). */
static inline void bucket_read(const cuckoo *c, uint64_t bucket, uint32_t fp[SLOTS]) {
  uint32_t low_bits = c->bits - NIBBLE_BITS;
  uint64_t bit = bucket * bucket_bits_for(c->bits);
  index_to_nibbles(c, field_get(c, bit, INDEX_BITS), fp);
  bit += INDEX_BITS;
  for (unsigned s = 0; s < SLOTS; s++, bit += low_bits) fp[s] = fp[s] << low_bits | field_get(c, bit, low_bits);
}

/* Store four fingerprints (any order) as a bucket: sorted, so equal sets give equal bytes. */
static inline void bucket_write(cuckoo *c, uint64_t bucket, const uint32_t in[SLOTS]) {
  uint32_t fp[SLOTS] = {in[0], in[1], in[2], in[3]};
  for (unsigned i = 1; i < SLOTS; i++)
    for (unsigned j = i; j > 0 && fp[j - 1] > fp[j]; j--) {
      uint32_t t = fp[j];
      fp[j] = fp[j - 1];
      fp[j - 1] = t;
    }
  uint32_t low_bits = c->bits - NIBBLE_BITS, nibbles[SLOTS];
  for (unsigned s = 0; s < SLOTS; s++) nibbles[s] = fp[s] >> low_bits;
  uint64_t bit = bucket * bucket_bits_for(c->bits);
  field_set(c, bit, INDEX_BITS, nibbles_to_index(nibbles));
  bit += INDEX_BITS;
  uint32_t low_mask = (uint32_t)(((uint64_t)1 << low_bits) - 1);
  for (unsigned s = 0; s < SLOTS; s++, bit += low_bits) field_set(c, bit, low_bits, fp[s] & low_mask);
}

/* ---- hashing ------------------------------------------------------------- */

static inline uint32_t fingerprint_of(const cuckoo *c, bg_hash_pair h) {
  return 1u + (uint32_t)bg__reduce(h.h2, c->fp_range);
}

static inline uint64_t first_bucket(const cuckoo *c, bg_hash_pair h) { return bg__reduce(h.h1, c->buckets); }

/* The other bucket of fingerprint fp in bucket i: (H(fp) - i) mod B. */
static inline uint64_t other_bucket(const cuckoo *c, uint64_t i, uint32_t fp) {
  uint64_t x = (uint64_t)fp * 0x9E3779B97F4A7C15ull;
  x ^= x >> 29;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 32;
  uint64_t target = bg__reduce(x, c->buckets);
  return target >= i ? target - i : target + c->buckets - i;
}

/* ---- buckets --------------------------------------------------------------- */

/* Whether a bucket holds fp (never 0): only slots whose nibble matches have their low part read. */
static inline int bucket_has(const cuckoo *c, uint64_t bucket, uint32_t fp) {
  uint32_t low_bits = c->bits - NIBBLE_BITS;
  uint64_t bit = bucket * bucket_bits_for(c->bits);
  uint32_t packed = c->tuples[field_get(c, bit, INDEX_BITS)];
  uint32_t nibble = fp >> low_bits, low = fp & (uint32_t)(((uint64_t)1 << low_bits) - 1);
  int found = 0;
  for (unsigned s = 0; s < SLOTS; s++)
    if (((packed >> (4 * s)) & 15u) == nibble)
      found |= field_get(c, bit + INDEX_BITS + s * low_bits, low_bits) == low;
  return found;
}

/* Replace one copy of `from` in bucket by `to` (0 empties a slot); 0 when the bucket has no `from`. */
static inline int bucket_replace(cuckoo *c, uint64_t bucket, uint32_t from, uint32_t to) {
  uint32_t stored[SLOTS];
  bucket_read(c, bucket, stored);
  for (unsigned s = 0; s < SLOTS; s++) {
    if (stored[s] == from) {
      stored[s] = to;
      bucket_write(c, bucket, stored);
      return 1;
    }
  }
  return 0;
}

/* Put fp in an empty slot of bucket; 0 when the bucket is full. */
static inline int bucket_put(cuckoo *c, uint64_t bucket, uint32_t fp) {
  /* Any empty slot: written buckets have theirs first, but a reader accepts low parts of equal
   * nibbles in any order, and a kick must never carry an empty slot's 0 onward. */
  return bucket_replace(c, bucket, 0, fp);
}

/* ---- the kind -------------------------------------------------------------- */

static bg_status cuckoo_alloc(uint64_t buckets, uint32_t bits, cuckoo **out) {
  uint64_t bytes = table_bytes_for(buckets, bits);
  BG_RETURN_IF(bytes > SIZE_MAX, BG_E_TOO_LARGE);
  cuckoo *c = (cuckoo *)calloc(1, sizeof *c);
  BG_RETURN_IF(!c, BG_E_NOMEM);
  c->owned = calloc(1, (size_t)bytes);
  if (!c->owned) {
    free(c);
    return BG_E_NOMEM;
  }
  c->table = (uint8_t *)c->owned;
  fill_tuples(c);
  c->buckets = buckets;
  c->table_bytes = bytes;
  c->bits = bits;
  c->fp_range = (uint32_t)((1ull << bits) - 1);
  *out = c;
  return BG_OK;
}

static bg_status cuckoo_create(const bg_kind_params *params, void **state) {
  uint64_t buckets = buckets_for(params->capacity);
  uint32_t bits;
  bg_status rc = fingerprint_bits_for(params->error_rate, buckets, &bits);
  if (rc != BG_OK) return rc;
  /* buckets <= 2^51 and bits <= 32: the product fits 64 bits. */
  BG_RETURN_IF(buckets * bucket_bits_for(bits) > BG_MAX_BITS, BG_E_TOO_LARGE);
  cuckoo *c = NULL;
  rc = cuckoo_alloc(buckets, bits, &c);
  if (rc == BG_OK) *state = c;
  return rc;
}

static void cuckoo_destroy(void *state) {
  cuckoo *c = (cuckoo *)state;
  if (!c) return;
  free(c->owned);
  free(c);
}

static void cuckoo_clear(void *state) {
  cuckoo *c = (cuckoo *)state;
  memset(c->table, 0, (size_t)c->table_bytes);
  c->occupied = 0;
}

/* splitmix64: the victim generator, seeded by the key's hash. */
static inline uint64_t next_random(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static bg_status cuckoo_add(void *state, bg_hash_pair h) {
  cuckoo *c = (cuckoo *)state;
  uint32_t fp = fingerprint_of(c, h);
  uint64_t i1 = first_bucket(c, h), i2 = other_bucket(c, i1, fp);
  if (bucket_put(c, i1, fp) || bucket_put(c, i2, fp)) {
    c->occupied++;
    return BG_OK;
  }

  /*
   * Both buckets are full: swap the fingerprint in hand with one in a bucket,
   * carry the displaced one to its other bucket, and so on. Each kick is a
   * swap, so a failed insert undoes them by making the same swaps in reverse
   * order; the buckets retrace themselves (the other bucket of the other
   * bucket is the first), so only the fingerprint each kick placed is logged
   * (a bucket is a sorted set, so a slot number would not stay put).
   */
  uint32_t placed[MAX_KICKS];
  uint64_t random = h.h1 ^ (h.h2 << 1 | h.h2 >> 63);
  uint64_t bucket = (next_random(&random) & 1) ? i2 : i1;
  uint32_t carried = fp;
  for (unsigned kick = 0; kick < MAX_KICKS; kick++) {
    uint32_t stored[SLOTS];
    bucket_read(c, bucket, stored);
    unsigned slot = (unsigned)(next_random(&random) >> 62);
    uint32_t old = stored[slot];
    stored[slot] = carried;
    bucket_write(c, bucket, stored);
    placed[kick] = carried;
    carried = old;
    bucket = other_bucket(c, bucket, carried);
    if (bucket_put(c, bucket, carried)) {
      c->occupied++;
      return BG_OK;
    }
  }
  for (unsigned kick = MAX_KICKS; kick-- > 0;) {
    bucket = other_bucket(c, bucket, carried); /* the bucket of this kick */
    bucket_replace(c, bucket, placed[kick], carried);
    carried = placed[kick];
  }
  return BG_E_FULL;
}

static int cuckoo_contains(const void *state, bg_hash_pair h) {
  const cuckoo *c = (const cuckoo *)state;
  uint32_t fp = fingerprint_of(c, h);
  uint64_t i1 = first_bucket(c, h);
  if (bucket_has(c, i1, fp)) return 1;
  return bucket_has(c, other_bucket(c, i1, fp), fp);
}

static bg_status cuckoo_contains_many(const void *state, const bg_hash_pair *hashes, size_t count,
                                      uint8_t *results) {
#if defined(__GNUC__) && !defined(__wasm__)
  /* Ask for both buckets of every key before testing any: the misses overlap. */
  const cuckoo *c = (const cuckoo *)state;
  uint64_t bucket_bits = bucket_bits_for(c->bits);
  for (size_t i = 0; i < count; i++) {
    uint32_t fp = fingerprint_of(c, hashes[i]);
    uint64_t i1 = first_bucket(c, hashes[i]), i2 = other_bucket(c, i1, fp);
    __builtin_prefetch(c->table + ((i1 * bucket_bits) >> 3));
    __builtin_prefetch(c->table + ((i2 * bucket_bits) >> 3));
  }
#endif
  for (size_t i = 0; i < count; i++) results[i] = (uint8_t)cuckoo_contains(state, hashes[i]);
  return BG_OK;
}

static bg_status cuckoo_remove(void *state, bg_hash_pair h) {
  cuckoo *c = (cuckoo *)state;
  uint32_t fp = fingerprint_of(c, h);
  uint64_t i1 = first_bucket(c, h);
  if (bucket_replace(c, i1, fp, 0) || bucket_replace(c, other_bucket(c, i1, fp), fp, 0)) {
    c->occupied--;
    return BG_OK;
  }
  return BG_E_NOT_FOUND;
}

/*
 * What queries see: a non-member compares its fingerprint with the occupied
 * slots of its two buckets (8 * load of them on average), each equal with
 * probability 1 / (2^f - 1).
 */
static double false_positive_rate(const cuckoo *c, double load) {
  if (load > 1.0) load = 1.0;
  return -expm1(2.0 * SLOTS * load * log1p(-1.0 / (double)c->fp_range));
}

static void cuckoo_describe(const void *state, uint64_t count, bg_kind_info *info) {
  const cuckoo *c = (const cuckoo *)state;
  double slots = (double)c->buckets * SLOTS;
  info->m = c->buckets * bucket_bits_for(c->bits);
  info->k = 2;
  info->bits_set = c->occupied;
  info->fill_ratio = (double)c->occupied / slots;
  info->estimated_items = (double)c->occupied;
  info->estimated_error_rate = false_positive_rate(c, info->fill_ratio);
  info->theoretical_error_rate = false_positive_rate(c, (double)count / slots);
}

/* ---- the payload ----------------------------------------------------------- */

static uint64_t cuckoo_payload_size(const void *state) {
  return PREAMBLE + ((const cuckoo *)state)->table_bytes;
}

static void write_preamble(uint64_t buckets, uint32_t bits, uint8_t *dst) {
  memset(dst, 0, PREAMBLE);
  bg__put_u64(dst, buckets);
  dst[8] = (uint8_t)bits;
  dst[9] = (uint8_t)SLOTS;
  dst[10] = 1; /* bucket encoding: 1 = semi-sorted */
}

static void cuckoo_write_payload(const void *state, uint8_t *dst) {
  const cuckoo *c = (const cuckoo *)state;
  write_preamble(c->buckets, c->bits, dst);
  /* A filter loaded in place and serialized into its own buffer already has its table there. */
  if (dst + PREAMBLE != c->table) memcpy(dst + PREAMBLE, c->table, (size_t)c->table_bytes);
}

static bg_status cuckoo_validate(const bg_header *h, const uint8_t *payload) {
  BG_RETURN_IF(h->k != 2, BG_E_HEADER);
  BG_RETURN_IF(h->m < 1 || h->m > BG_MAX_BITS, BG_E_HEADER);
  BG_RETURN_IF(h->capacity < 1 || h->capacity > BG_MAX_CAPACITY, BG_E_HEADER);
  BG_RETURN_IF(!(h->error_rate > 0.0 && h->error_rate < 1.0), BG_E_HEADER);
  uint64_t buckets = buckets_for(h->capacity);
  uint32_t bits;
  /* Sized for the per-key rate, as bg_filter_create sized it (a url filter's keys get p/~30). */
  BG_RETURN_IF(
      fingerprint_bits_for(bg_key_error_rate((int)h->key_encoding, h->error_rate), buckets, &bits) != BG_OK,
      BG_E_HEADER);
  BG_RETURN_IF(h->m != buckets * bucket_bits_for(bits), BG_E_HEADER);

  BG_RETURN_IF(h->payload_length != PREAMBLE + table_bytes_for(buckets, bits), BG_E_PAYLOAD);
  uint8_t expected[PREAMBLE];
  write_preamble(buckets, bits, expected);
  BG_RETURN_IF(memcmp(payload, expected, PREAMBLE) != 0, BG_E_PAYLOAD);
  /* Bits past the last bucket are never written; a file with them set was not written by us. */
  unsigned used_in_last = (unsigned)(h->m & 7);
  if (used_in_last) BG_RETURN_IF(payload[h->payload_length - 1] >> used_in_last, BG_E_PAYLOAD);
  /* Every bucket's index names a tuple: 12 bits could say up to 4095. */
  cuckoo view = {.table = (uint8_t *)(uintptr_t)(payload + PREAMBLE),
                 .table_bytes = h->payload_length - PREAMBLE};
  uint64_t stride = bucket_bits_for(bits);
  for (uint64_t b = 0, bit = 0; b < buckets; b++, bit += stride)
    BG_RETURN_IF(field_get(&view, bit, INDEX_BITS) >= INDEX_COUNT, BG_E_PAYLOAD);
  return BG_OK;
}

/*
 * Occupied slots, counted once when a file is loaded. A slot is empty when
 * its fingerprint is 0: its nibble is 0 and so is its low part, so only the
 * slots with a zero nibble need their low part read.
 */
static uint64_t count_occupied(const cuckoo *c) {
  uint64_t total = 0, stride = bucket_bits_for(c->bits);
  uint32_t low_bits = c->bits - NIBBLE_BITS;
  for (uint64_t b = 0, bit = 0; b < c->buckets; b++, bit += stride) {
    uint32_t nibbles[SLOTS];
    index_to_nibbles(c, field_get(c, bit, INDEX_BITS), nibbles);
    for (unsigned s = 0; s < SLOTS; s++)
      total += nibbles[s] != 0 || field_get(c, bit + INDEX_BITS + s * low_bits, low_bits) != 0;
  }
  return total;
}

static bg_status cuckoo_load(const bg_header *h, uint8_t *payload, int in_place, void **state) {
  uint32_t bits = payload[8];
  uint64_t buckets = bg__get_u64(payload);
  cuckoo *c = NULL;
  if (!in_place) {
    bg_status rc = cuckoo_alloc(buckets, bits, &c);
    if (rc != BG_OK) return rc;
    memcpy(c->table, payload + PREAMBLE, (size_t)c->table_bytes);
  } else {
    c = (cuckoo *)calloc(1, sizeof *c);
    BG_RETURN_IF(!c, BG_E_NOMEM);
    c->table = payload + PREAMBLE;
    fill_tuples(c);
    c->buckets = buckets;
    c->table_bytes = h->payload_length - PREAMBLE;
    c->bits = bits;
    c->fp_range = (uint32_t)((1ull << bits) - 1);
  }
  c->occupied = count_occupied(c);
  *state = c;
  return BG_OK;
}

const bg_kind_ops bg_kind_cuckoo = {
    .kind = BG_KIND_CUCKOO,
    .create = cuckoo_create,
    .destroy = cuckoo_destroy,
    .clear = cuckoo_clear,
    .add = cuckoo_add,
    .contains = cuckoo_contains,
    .contains_many = cuckoo_contains_many,
    .remove = cuckoo_remove,
    .describe = cuckoo_describe,
    .payload_size = cuckoo_payload_size,
    .write_payload = cuckoo_write_payload,
    .validate = cuckoo_validate,
    .load = cuckoo_load,
};
