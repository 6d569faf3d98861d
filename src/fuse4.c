/*
 * fuse4.c — the kind fuse4: a 4-wise binary fuse filter (Graf & Lemire,
 * "Binary Fuse Filters: Fast and Smaller Than Xor Filters", 2022, the 4-wise
 * geometry) with any fingerprint width w from 1 to 32 bits and an optional
 * value of r = 0..8 bits per key. docs/kinds/fuse4.md describes it and
 * docs/FORMAT.md specifies its payload.
 *
 * Every cell holds W = w + r bits, packed back to back (cell i is bits
 * [i W, (i + 1) W) of the cell area, little-endian). For every key the XOR of
 * its four cells is (fingerprint << r) | value, so a member reads back its
 * exact value; a non-member matches the fingerprint with probability 2^-w and
 * then reads an arbitrary value. w = ceil(log2(1/p)) for the per-key rate p.
 *
 * Geometry. The A cells form segment_count + 3 segments of L cells (L a power
 * of two, 1..2^18). With x = mix(h1 ^ fuse_seed) (fuse_shared.h) and
 * y = (x ^ (x >> 31)) * 0x94d049bb133111eb:
 *   p0 = ((x >> 32) * (segment_count * L)) >> 32
 *   p1 = (p0 + L)  ^ (x & (L - 1))
 *   p2 = (p0 + 2L) ^ ((x >> 18) & (L - 1))
 *   p3 = (p0 + 3L) ^ ((y >> 46) & (L - 1))
 *   fingerprint = (y >> 8) & (2^w - 1)
 * Building peels the keys as fuse.c does; what peeling leaves (below 2^17
 * keys, where the array is sized past the peeling threshold, that is most
 * of them) is solved as a banded linear system (f4_solve_core). The array is
 * sized tight (f4_geometry) and grows by a small step when F4_TRIES_PER_SIZE
 * seeds in a row fail, so construction never fails; the attempts are stored
 * in the payload and reported by bg_info.
 *
 * Sharded payloads work as fuse8/16's (docs/kinds/fuse.md): shard_bits b > 0
 * means 2^b unsharded payloads behind a table of offsets, the shard of a key
 * named by the top b bits of its h2.
 */
#include <stdlib.h>

#include "fuse_shared.h"
#include "hash_inline.h"
#include "kind.h"

#define F4_HEADER_BYTES 40u
#define F4_PAD_BYTES 7u /* after the cells: any cell is one unaligned 8-byte read */
#define F4_MAX_W 32u
#define F4_MAX_R 8u
/* Keeps A (at most ~2.1 n after growth) and every cell index below 2^32. */
#define F4_MAX_KEYS UINT64_C(1800000000)
/* Seeds tried at one size before the array grows by one step (f4_geometry). */
#define F4_TRIES_PER_SIZE 4u
/* 4 * 64 attempts: the array has grown by 64 steps (to about twice its start) long before. */
#define F4_MAX_ATTEMPTS 256u
#define F4_MAX_RESERVE ((size_t)1 << 24)

typedef struct {
  unsigned w, r; /* fingerprint and value bits */
  int sealed;

  /* Collecting: every added key's h1 and (r > 0) its value, duplicates included. */
  uint64_t *hashes;
  uint8_t *values; /* NULL when r == 0 */
  size_t hash_count, hash_capacity;
  uint64_t capacity_hint;

  /* Built (after seal or load); sharded: cells is the whole payload. */
  fuse_fields g;
  uint32_t attempts;
  uint8_t *cells;
  void *owned;
  unsigned shard_bits;
  uint64_t payload_length, total_cells;
} fuse4;

/* ---- cells ----------------------------------------------------------------- */

static inline uint64_t f4_load64(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  return v;
}

static inline void f4_store64(uint8_t *p, uint64_t v) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  memcpy(p, &v, 8);
}

/* Cell i of W bits (W <= 40: its 8-byte window from byte (i W) / 8 holds it whole). */
static inline uint64_t f4_get(const uint8_t *cells, uint32_t i, unsigned bits) {
  uint64_t at = (uint64_t)i * bits;
  return (f4_load64(cells + (size_t)(at >> 3)) >> (at & 7)) & (((uint64_t)1 << bits) - 1);
}

static inline void f4_put(uint8_t *cells, uint32_t i, unsigned bits, uint64_t v) {
  uint64_t at = (uint64_t)i * bits, mask = (((uint64_t)1 << bits) - 1) << (at & 7);
  uint8_t *p = cells + (size_t)(at >> 3);
  f4_store64(p, (f4_load64(p) & ~mask) | (v << (at & 7)));
}

/* Bytes of the cell area for A cells of W bits: the packed bits, then the padding. */
static inline uint64_t f4_cell_bytes(uint64_t array_length, unsigned bits) {
  return array_length ? (array_length * bits + 7) / 8 + F4_PAD_BYTES : 0;
}

/* The four cells and the key word's fingerprint of mixed hash x. */
static inline uint32_t f4_cells(uint64_t x, uint32_t segment_length, uint32_t segment_count, uint32_t p[4]) {
  uint32_t mask = segment_length - 1;
  uint64_t y = (x ^ (x >> 31)) * UINT64_C(0x94d049bb133111eb);
  uint32_t p0 = (uint32_t)(((x >> 32) * ((uint64_t)segment_count * segment_length)) >> 32);
  p[0] = p0;
  p[1] = (p0 + segment_length) ^ ((uint32_t)x & mask);
  p[2] = (p0 + 2 * segment_length) ^ ((uint32_t)(x >> 18) & mask);
  p[3] = (p0 + 3 * segment_length) ^ ((uint32_t)(y >> 46) & mask);
  return (uint32_t)(y >> 8);
}

/* ---- geometry -------------------------------------------------------------- */

/*
 * The segment length for n keys: 2^e for the largest e <= 18 with
 * n >= 2.91^(e + 0.5) (Graf & Lemire's 4-wise rule, floor(ln n / ln 2.91 - 0.5)),
 * as a table of integer thresholds so it is the same on every host.
 */
static uint32_t f4_segment_length(uint64_t n) {
  static const uint32_t START[] = {5,       15,      43,       123,      356,       1036,
                                   3015,    8772,    25527,    74281,    216158,    629017,
                                   1830440, 5326579, 15500344, 45106001, 131258461, 381962121};
  uint32_t exponent = 0;
  for (size_t i = 0; i < sizeof START / sizeof START[0]; i++)
    if (n >= START[i]) exponent = (uint32_t)(1 + i);
  return (uint32_t)1 << exponent;
}

/*
 * The geometry by floor(log2 n): the segment length's exponent (0xff: the
 * rule above) and the cells per key, per mille. Measured (docs/kinds/fuse4.md):
 * below 2^17 keys short segments and about 1.075 cells per key, where peeling
 * stops early and the core solver (f4_solve_core) does the rest; from 2^17
 * on, Graf & Lemire's segments and factor max(1.075, 0.77 + 0.305 ln(600000) / ln n)
 * taken at 2n, down to 1.068 from 2^20, which plain peeling reaches.
 */
static const struct {
  uint8_t exponent;
  uint16_t per_mille;
} F4_SIZES[] = {
    {0, 2000}, {0, 2000}, {1, 1600}, {1, 1600},    {2, 1400},    {2, 1400},    {3, 1300},
    {3, 1300}, {4, 1200}, {5, 1100}, {5, 1100},    {5, 1100},    {7, 1075},    {7, 1075},
    {7, 1075}, {7, 1075}, {7, 1075}, {0xff, 1096}, {0xff, 1079}, {0xff, 1070}, {0xff, 1068},
};

/*
 * The geometry for n keys at growth step g: n * (factor + 1.5% per step)
 * cells and one more, rounded up to whole segments of which 3 are the tail.
 * Integer arithmetic only, so the bytes are the same on every host.
 */
static void f4_geometry(uint64_t n, uint32_t growth, uint32_t *segment_length, uint32_t *segment_count,
                        uint32_t *array_length) {
  if (n == 0) {
    *segment_length = *segment_count = *array_length = 0;
    return;
  }
  size_t row = 0, rows = sizeof F4_SIZES / sizeof F4_SIZES[0];
  while (row + 1 < rows && (n >> (row + 1))) row++;
  uint32_t exponent = F4_SIZES[row].exponent;
  uint32_t length = exponent == 0xff ? f4_segment_length(n) : (uint32_t)1 << exponent;
  uint64_t per_mille = F4_SIZES[row].per_mille + 15 * (uint64_t)growth;
  uint64_t wanted = (n * per_mille + 999) / 1000 + 1;
  uint64_t count = (wanted + length - 1) / length;
  count = count > 3 ? count - 3 : 1;
  *segment_length = length;
  *segment_count = (uint32_t)count;
  *array_length = (uint32_t)((count + 3) * length);
}

/* ---- create / destroy / clear --------------------------------------------- */

/* The smallest w with 2^-w <= p (exact: powers of two are exact doubles). */
static unsigned f4_width_for(double p) {
  unsigned w = 1;
  double rate = 0.5;
  while (w < F4_MAX_W && rate > p) {
    w++;
    rate *= 0.5;
  }
  return w;
}

static bg_status f4_create(const bg_kind_params *params, void **state) {
  /* Below 2^-32 a 32-bit fingerprint cannot serve the rate. */
  BG_RETURN_IF(params->error_rate < 1.0 / 4294967296.0, BG_E_RANGE);
  BG_RETURN_IF(params->value_bits > F4_MAX_R, BG_E_RANGE);
  fuse4 *f = (fuse4 *)calloc(1, sizeof *f);
  BG_RETURN_IF(!f, BG_E_NOMEM);
  f->w = f4_width_for(params->error_rate);
  f->r = params->value_bits;
  f->capacity_hint = params->capacity;
  *state = f;
  return BG_OK;
}

static void f4_drop_built(fuse4 *f) {
  free(f->owned);
  f->owned = NULL;
  f->cells = NULL;
  f->g = (fuse_fields){0};
  f->attempts = 0;
  f->shard_bits = 0;
  f->payload_length = f->total_cells = 0;
  f->sealed = 0;
}

static void f4_destroy(void *state) {
  fuse4 *f = (fuse4 *)state;
  if (!f) return;
  free(f->hashes);
  free(f->values);
  free(f->owned);
  free(f);
}

static void f4_clear(void *state) {
  fuse4 *f = (fuse4 *)state;
  f4_drop_built(f);
  free(f->hashes);
  free(f->values);
  f->hashes = NULL;
  f->values = NULL;
  f->hash_count = f->hash_capacity = 0;
}

/* ---- collecting ------------------------------------------------------------ */

static bg_status f4_add_value(void *state, bg_hash_pair hash, uint32_t value) {
  fuse4 *f = (fuse4 *)state;
  BG_RETURN_IF(f->sealed, BG_E_STATIC);
  BG_RETURN_IF(value >> f->r, BG_E_RANGE);
  if (f->hash_count == f->hash_capacity) {
    BG_RETURN_IF(f->hash_count >= F4_MAX_KEYS, BG_E_TOO_LARGE);
    size_t grown;
    if (f->hash_capacity == 0) {
      uint64_t hint = f->capacity_hint < 16 ? 16 : f->capacity_hint;
      grown = hint > F4_MAX_RESERVE ? F4_MAX_RESERVE : (size_t)hint;
    } else {
      grown = f->hash_capacity + f->hash_capacity / 2;
      if (grown > F4_MAX_KEYS) grown = (size_t)F4_MAX_KEYS;
    }
    BG_RETURN_IF(grown > SIZE_MAX / sizeof(uint64_t), BG_E_TOO_LARGE);
    uint64_t *bigger = (uint64_t *)realloc(f->hashes, grown * sizeof(uint64_t));
    BG_RETURN_IF(!bigger, BG_E_NOMEM);
    f->hashes = bigger;
    if (f->r) {
      uint8_t *more = (uint8_t *)realloc(f->values, grown);
      BG_RETURN_IF(!more, BG_E_NOMEM); /* hashes grew: harmless, hash_capacity still says the old size */
      f->values = more;
    }
    f->hash_capacity = grown;
  }
  if (f->r) f->values[f->hash_count] = (uint8_t)value;
  f->hashes[f->hash_count++] = hash.h1;
  return BG_OK;
}

/* A plain add: only a filter without values takes a key without one. */
static bg_status f4_add(void *state, bg_hash_pair hash) {
  BG_RETURN_IF(((fuse4 *)state)->sealed, BG_E_STATIC);
  BG_RETURN_IF(((fuse4 *)state)->r, BG_E_ARG);
  return f4_add_value(state, hash, 0);
}

/* ---- querying -------------------------------------------------------------- */

static const fuse4 *f4_shard_of(const fuse4 *f, uint64_t h2, fuse4 *out) {
  if (!f->shard_bits) return f;
  const uint8_t *shard = fuse_shard(f->cells, F4_HEADER_BYTES, f->shard_bits, h2);
  out->w = f->w;
  out->r = f->r;
  out->g = fuse_read_fields(shard);
  out->cells = (uint8_t *)(uintptr_t)(shard + F4_HEADER_BYTES);
  return out;
}

/* 1 and *value (the low r bits of the key word) when the fingerprint matches, else 0. */
static inline int f4_query(const fuse4 *f, uint64_t h1, uint64_t h2, uint32_t *value) {
  fuse4 shard;
  f = f4_shard_of(f, h2, &shard);
  if (!f->g.array_length) return 0;
  uint64_t x = fuse_mix(h1 ^ f->g.fuse_seed);
  uint32_t p[4];
  uint32_t fp = f4_cells(x, f->g.segment_length, f->g.segment_count, p);
  unsigned bits = f->w + f->r;
  uint64_t v = f4_get(f->cells, p[0], bits) ^ f4_get(f->cells, p[1], bits) ^ f4_get(f->cells, p[2], bits) ^
               f4_get(f->cells, p[3], bits);
  uint64_t fmask = ((uint64_t)1 << f->w) - 1;
  if ((v >> f->r) != (fp & fmask)) return 0;
  *value = (uint32_t)v & ((1u << f->r) - 1);
  return 1;
}

static int f4_value(const void *state, bg_hash_pair hash, uint32_t *value) {
  const fuse4 *f = (const fuse4 *)state;
  if (!f->sealed) return BG_E_UNSUPPORTED;
  return f4_query(f, hash.h1, hash.h2, value);
}

static int f4_contains(const void *state, bg_hash_pair hash) {
  uint32_t value;
  return f4_value(state, hash, &value);
}

#define F4_GROUP 16

/* Batches: every key's cells first (with a prefetch natively), then the tests. */
static bg_status f4_contains_many(const void *state, const bg_hash_pair *hashes, size_t count,
                                  uint8_t *results) {
  const fuse4 *f = (const fuse4 *)state;
  BG_RETURN_IF(!f->sealed, BG_E_UNSUPPORTED);
  unsigned bits = f->w + f->r;
  uint64_t fmask = ((uint64_t)1 << f->w) - 1;
  for (size_t start = 0; start < count; start += F4_GROUP) {
    size_t n = count - start < F4_GROUP ? count - start : F4_GROUP;
    uint32_t p[F4_GROUP][4], fp[F4_GROUP];
    const uint8_t *cells[F4_GROUP];
    for (size_t j = 0; j < n; j++) {
      fuse4 shard;
      const fuse4 *s = f4_shard_of(f, hashes[start + j].h2, &shard);
      cells[j] = s->g.array_length ? s->cells : NULL;
      uint64_t x = fuse_mix(hashes[start + j].h1 ^ s->g.fuse_seed);
      fp[j] = f4_cells(x, s->g.segment_length, s->g.segment_count, p[j]);
#if defined(__GNUC__) && !defined(__wasm__)
      if (cells[j])
        for (int t = 0; t < 4; t++) __builtin_prefetch(cells[j] + (((uint64_t)p[j][t] * bits) >> 3));
#endif
    }
    for (size_t j = 0; j < n; j++) {
      const uint8_t *c = cells[j];
      results[start + j] = c && ((f4_get(c, p[j][0], bits) ^ f4_get(c, p[j][1], bits) ^
                                  f4_get(c, p[j][2], bits) ^ f4_get(c, p[j][3], bits)) >>
                                 f->r) == (fp[j] & fmask);
    }
  }
  return BG_OK;
}

/* ---- building -------------------------------------------------------------- */

/* fuse_shared.h: both fuse files sort their hashes here. */
void bg__fuse_sort(uint64_t *keys, uint8_t *values, uint64_t *key_scratch, uint8_t *value_scratch, size_t n) {
  uint64_t *from = keys, *to = key_scratch;
  uint8_t *vfrom = values, *vto = value_scratch;
  for (unsigned shift = 32; shift < 64; shift += 8) {
    size_t offsets[256] = {0};
    for (size_t i = 0; i < n; i++) offsets[(from[i] >> shift) & 0xff]++;
    size_t sum = 0;
    for (unsigned b = 0; b < 256; b++) {
      size_t c = offsets[b];
      offsets[b] = sum;
      sum += c;
    }
    for (size_t i = 0; i < n; i++) {
      size_t at = offsets[(from[i] >> shift) & 0xff]++;
      to[at] = from[i];
      if (vfrom) vto[at] = vfrom[i];
    }
    uint64_t *swap = from;
    from = to;
    to = swap;
    uint8_t *vswap = vfrom;
    vfrom = vto;
    vto = vswap;
  }
  for (size_t i = 1; i < n; i++) {
    uint64_t k = keys[i];
    uint8_t v = values ? values[i] : 0;
    size_t j = i;
    while (j > 0 && keys[j - 1] > k) {
      keys[j] = keys[j - 1];
      if (values) values[j] = values[j - 1];
      j--;
    }
    keys[j] = k;
    if (values) values[j] = v;
  }
}

typedef struct {
  uint64_t *x;         /* [n] mixed hashes in bucket (cell) order */
  uint8_t *v;          /* [n] their values, or NULL */
  uint32_t *peeled;    /* [n] key indices in peeling order */
  uint8_t *slot;       /* [n] which of its cells each was peeled from */
  uint8_t *cell_count; /* [A] (keys << 2) | XOR of their slot numbers */
  uint32_t *cell_keys; /* [A] XOR of the indices of the keys touching the cell */
  uint32_t *stack;     /* [A] cells left with one key */
  uint32_t *bucket;    /* [buckets + 1] */
} f4_scratch;

static void f4_scratch_free(f4_scratch *s) {
  free(s->x);
  free(s->v);
  free(s->peeled);
  free(s->slot);
  free(s->cell_count);
  free(s->cell_keys);
  free(s->stack);
  free(s->bucket);
  memset(s, 0, sizeof *s);
}

/*
 * What peeling leaves (the core: keys whose cells all have two keys or more)
 * is solved as a linear system over GF(2), one row per key (its four cells)
 * with its key word on the right. A row's cells lie in a window of 4L columns
 * from the start of its first segment, so rows are kept as bit windows of 4L
 * bits from their lowest column, and reducing a row by the pivot row of its
 * lowest column keeps it in such a window (banded elimination, as in Ribbon
 * filters). The pivots are then solved from the last column down, writing
 * their cells; every other cell of the core stays 0. The peeled keys' own
 * cells are never in the core, so they are assigned afterwards as usual.
 * 1 when solved, 0 when the system has no solution or the core is too
 * large, -1 when out of memory.
 */
#define F4_MAX_CORE_WORDS ((size_t)1 << 21) /* 16 MiB of rows */
static int f4_solve_core(f4_scratch *s, const uint8_t *values, size_t n, size_t peeled, uint32_t segment_length,
                         uint32_t segment_count, uint32_t array_length, unsigned w, unsigned r,
                         uint8_t *cells) {
  size_t core = n - peeled, width = ((size_t)4 * segment_length + 63) / 64, stride = width + 1;
  if (core > F4_MAX_CORE_WORDS / stride) return 0;
  uint8_t *done = (uint8_t *)calloc(n, 1);
  uint64_t *rows = (uint64_t *)malloc(core * stride * sizeof(uint64_t));
  uint64_t *row = (uint64_t *)malloc(stride * sizeof(uint64_t));
  int ok = done && rows && row ? 1 : -1;
  uint32_t *pivot = s->stack; /* free once peeling is over: column -> pivot row, or UINT32_MAX */
  for (size_t i = 0; ok > 0 && i < peeled; i++) done[s->peeled[i]] = 1;
  if (ok > 0) memset(pivot, 0xff, (size_t)array_length * sizeof(uint32_t));
  uint64_t fmask = ((uint64_t)1 << w) - 1;
  size_t used = 0;
  for (size_t key = 0; ok > 0 && key < n; key++) {
    if (done[key]) continue;
    uint32_t p[4], fp = f4_cells(s->x[key], segment_length, segment_count, p);
    uint64_t column = (uint64_t)(p[0] / segment_length) * segment_length;
    memset(row, 0, width * sizeof(uint64_t));
    for (int u = 0; u < 4; u++) row[(p[u] - column) >> 6] ^= (uint64_t)1 << ((p[u] - column) & 63);
    row[width] = ((fp & fmask) << r) | (values ? s->v[key] : 0u);
    for (;;) {
      size_t k = 0;
      while (k < width && !row[k]) k++;
      if (k == width) {
        if (row[width]) ok = 0; /* 0 = a non-zero word: no solution */
        break;
      }
      /* Shift the window so that its lowest set bit is bit 0. */
      unsigned bit = (unsigned)__builtin_ctzll(row[k]);
      column += 64 * k + bit;
      for (size_t j = 0; j < width; j++) {
        uint64_t lo = j + k < width ? row[j + k] : 0, hi = j + k + 1 < width ? row[j + k + 1] : 0;
        row[j] = bit ? (lo >> bit) | (hi << (64 - bit)) : lo;
      }
      uint32_t at = pivot[column];
      if (at == UINT32_MAX) {
        pivot[column] = (uint32_t)used;
        memcpy(rows + used++ * stride, row, stride * sizeof(uint64_t));
        break;
      }
      const uint64_t *other = rows + (size_t)at * stride;
      for (size_t j = 0; j <= width; j++) row[j] ^= other[j];
    }
  }
  unsigned bits = w + r;
  for (uint32_t column = array_length; ok > 0 && column-- > 0;) {
    if (pivot[column] == UINT32_MAX) continue;
    const uint64_t *pr = rows + (size_t)pivot[column] * stride;
    uint64_t v = pr[width];
    for (size_t j = 0; j < width; j++) {
      uint64_t word = j ? pr[j] : pr[j] & ~(uint64_t)1;
      for (; word; word &= word - 1)
        v ^= f4_get(cells, column + (uint32_t)(64 * j) + (uint32_t)__builtin_ctzll(word), bits);
    }
    f4_put(cells, column, bits, v);
  }
  free(done);
  free(rows);
  free(row);
  return ok;
}

/* One attempt: 1 with cells[] (zeroed by the caller) filled, 0 when it fails, -1 when out of memory. */
static int f4_try_build(const uint64_t *keys, const uint8_t *values, size_t n, uint32_t segment_length,
                        uint32_t segment_count, uint32_t array_length, uint64_t seed, unsigned w, unsigned r,
                        unsigned bucket_bits, f4_scratch *s, uint8_t *cells) {
  size_t buckets = (size_t)1 << bucket_bits;
  unsigned shift = 64 - bucket_bits;
  memset(s->bucket, 0, (buckets + 1) * sizeof(uint32_t));
  for (size_t i = 0; i < n; i++) s->bucket[(fuse_mix(keys[i] ^ seed) >> shift) + 1]++;
  for (size_t b = 0; b < buckets; b++) s->bucket[b + 1] += s->bucket[b];
  for (size_t i = 0; i < n; i++) {
    uint64_t x = fuse_mix(keys[i] ^ seed);
    uint32_t at = s->bucket[x >> shift]++;
    s->x[at] = x;
    if (values) s->v[at] = values[i];
  }

  memset(s->cell_count, 0, array_length);
  memset(s->cell_keys, 0, (size_t)array_length * sizeof(uint32_t));
  int overflow = 0;
  for (size_t i = 0; i < n; i++) {
    uint32_t p[4];
    f4_cells(s->x[i], segment_length, segment_count, p);
    for (uint32_t t = 0; t < 4; t++) {
      uint8_t c = s->cell_count[p[t]];
      overflow |= c >= 0xfc;
      s->cell_count[p[t]] = (uint8_t)((c + 4) ^ t);
      s->cell_keys[p[t]] ^= (uint32_t)i;
    }
  }
  if (overflow) return 0;

  /* Peel depth-first from each cell with one key, in cell order (fuse.c does the same with three). */
  uint8_t *cell_count = s->cell_count;
  uint32_t *cell_keys = s->cell_keys, *stack = s->stack;
  size_t peeled = 0;
  for (uint32_t start = 0; start < array_length; start++) {
    if ((cell_count[start] >> 2) != 1) continue;
    size_t depth = 0;
    stack[depth++] = start;
    while (depth) {
      uint32_t cell = stack[--depth];
      uint8_t c = cell_count[cell];
      if ((c >> 2) != 1) continue;
      uint32_t t = c & 3u, key = cell_keys[cell], p[4];
      if (key >= n) return 0; /* impossible for a count of one; refuse rather than misassign */
      f4_cells(s->x[key], segment_length, segment_count, p);
      if (p[t] != cell) return 0;
      s->peeled[peeled] = key;
      s->slot[peeled] = (uint8_t)t;
      peeled++;
      cell_count[cell] = 0;
      cell_keys[cell] = 0;
      for (uint32_t u = 0; u < 4; u++) {
        if (u == t) continue;
        uint32_t other = p[u];
        uint8_t left = (uint8_t)((cell_count[other] - 4) ^ u);
        cell_count[other] = left;
        cell_keys[other] ^= key;
        if ((left >> 2) == 1) stack[depth++] = other;
      }
    }
  }
  if (peeled != n) {
    int solved = f4_solve_core(s, values, n, peeled, segment_length, segment_count, array_length, w, r, cells);
    if (solved <= 0) return solved;
  }

  unsigned bits = w + r;
  uint64_t fmask = ((uint64_t)1 << w) - 1;
  for (size_t i = peeled; i-- > 0;) {
    uint32_t key = s->peeled[i], t = s->slot[i], p[4];
    uint32_t fp = f4_cells(s->x[key], segment_length, segment_count, p);
    uint64_t word = ((fp & fmask) << r) | (values ? s->v[key] : 0u);
    for (uint32_t u = 0; u < 4; u++)
      if (u != t) word ^= f4_get(cells, p[u], bits);
    f4_put(cells, p[t], bits, word);
  }
  return 1;
}

/*
 * Sort, drop duplicate hashes (a key added twice keeps the LARGER of its
 * values: deterministic whatever the order, and never a failure), then try
 * seeds, growing the array by one step every F4_TRIES_PER_SIZE failures.
 */
static bg_status f4_seal(void *state, uint64_t seed) {
  fuse4 *f = (fuse4 *)state;
  if (f->sealed) return BG_OK;
  size_t n = f->hash_count;
  f4_scratch s = {0};
  if (n) {
    s.x = (uint64_t *)malloc(n * sizeof(uint64_t));
    s.v = f->r ? (uint8_t *)malloc(n) : NULL;
    if (!s.x || (f->r && !s.v)) {
      f4_scratch_free(&s);
      return BG_E_NOMEM;
    }
    bg__fuse_sort(f->hashes, f->r ? f->values : NULL, s.x, s.v, n);
    size_t unique = 1;
    for (size_t i = 1; i < n; i++) {
      if (f->hashes[i] != f->hashes[unique - 1]) {
        if (f->r) f->values[unique] = f->values[i];
        f->hashes[unique++] = f->hashes[i];
      } else if (f->r && f->values[i] > f->values[unique - 1]) {
        f->values[unique - 1] = f->values[i];
      }
    }
    n = f->hash_count = unique;
  }

  unsigned bits = f->w + f->r;
  uint32_t segment_length = 0, segment_count = 0, array_length = 0, attempt = 0;
  uint8_t *cells = NULL;
  uint64_t used_seed = 0;
  if (n) {
    int built = 0;
    uint32_t allocated = 0;        /* cells the scratch is sized for */
    unsigned bucket_allocated = 0; /* bucket bits the offsets are sized for */
    for (attempt = 0; attempt < F4_MAX_ATTEMPTS && !built; attempt++) {
      f4_geometry(n, attempt / F4_TRIES_PER_SIZE, &segment_length, &segment_count, &array_length);
      uint64_t cell_bytes = f4_cell_bytes(array_length, bits);
      if (array_length > allocated) {
        free(s.cell_count);
        free(s.cell_keys);
        free(s.stack);
        free(cells);
        size_t a = array_length;
        int fits = a <= SIZE_MAX / sizeof(uint32_t) && cell_bytes <= SIZE_MAX;
        s.cell_count = (uint8_t *)malloc(a);
        s.cell_keys = fits ? (uint32_t *)malloc(a * sizeof(uint32_t)) : NULL;
        s.stack = fits ? (uint32_t *)malloc(a * sizeof(uint32_t)) : NULL;
        cells = fits ? (uint8_t *)malloc((size_t)cell_bytes) : NULL;
        if (!s.peeled) s.peeled = (uint32_t *)malloc(n * sizeof(uint32_t));
        if (!s.slot) s.slot = (uint8_t *)malloc(n);
        if (!s.cell_count || !s.cell_keys || !s.stack || !cells || !s.peeled || !s.slot) {
          f4_scratch_free(&s);
          free(cells);
          return BG_E_NOMEM;
        }
        allocated = array_length;
      }
      unsigned bucket_bits = 1;
      while (bucket_bits < 16 && ((uint32_t)1 << (bucket_bits + 1)) <= segment_count) bucket_bits++;
      if (bucket_bits > bucket_allocated) {
        free(s.bucket);
        s.bucket = (uint32_t *)malloc((((size_t)1 << bucket_bits) + 1) * sizeof(uint32_t));
        if (!s.bucket) {
          f4_scratch_free(&s);
          free(cells);
          return BG_E_NOMEM;
        }
        bucket_allocated = bucket_bits;
      }
      used_seed = fuse_attempt_seed(seed, attempt);
      memset(cells, 0, (size_t)cell_bytes);
      built = f4_try_build(f->hashes, f->r ? f->values : NULL, n, segment_length, segment_count, array_length,
                           used_seed, f->w, f->r, bucket_bits, &s, cells);
      if (built < 0) {
        f4_scratch_free(&s);
        free(cells);
        return BG_E_NOMEM;
      }
    }
    f4_scratch_free(&s);
    if (!built) {
      free(cells);
      return BG_E_FULL;
    }
  }
  free(f->hashes);
  free(f->values);
  f->hashes = NULL;
  f->values = NULL;
  f->hash_capacity = f->hash_count = 0;
  f->g.key_count = n;
  f->g.fuse_seed = used_seed;
  f->g.segment_length = segment_length;
  f->g.segment_count = segment_count;
  f->g.array_length = array_length;
  f->attempts = attempt;
  f->total_cells = array_length;
  f->cells = cells;
  f->owned = cells;
  f->sealed = 1;
  return BG_OK;
}

/* ---- describe -------------------------------------------------------------- */

/* As fuse.c's, with k = 4, m = cells * (w + r) and the rate 2^-w. */
static void f4_describe(const void *state, uint64_t count, bg_kind_info *info) {
  (void)count;
  const fuse4 *f = (const fuse4 *)state;
  double natural = 1.0;
  for (unsigned i = 0; i < f->w; i++) natural *= 0.5;
  info->m = f->total_cells * (f->w + f->r);
  info->k = 4;
  info->value_bits = f->r;
  info->build_attempts = f->attempts;
  if (f->sealed) {
    info->bits_set = f->g.key_count;
    info->fill_ratio = f->total_cells ? (double)f->g.key_count / (double)f->total_cells : 0.0;
    info->estimated_items = (double)f->g.key_count;
    info->estimated_error_rate = f->g.key_count ? natural : 0.0;
  } else {
    double ratio = f->capacity_hint ? (double)f->hash_count / (double)f->capacity_hint : 0.0;
    info->bits_set = 0;
    info->fill_ratio = ratio > 1.0 ? 1.0 : ratio;
    info->estimated_items = (double)f->hash_count;
    info->estimated_error_rate = natural;
  }
  info->theoretical_error_rate = info->estimated_error_rate;
}

/* ---- the payload ----------------------------------------------------------- */

static uint64_t f4_payload_size(const void *state) {
  const fuse4 *f = (const fuse4 *)state;
  if (!f->sealed) return 0;
  return f->shard_bits ? f->payload_length : F4_HEADER_BYTES + f4_cell_bytes(f->g.array_length, f->w + f->r);
}

static void f4_write_payload(const void *state, uint8_t *dst) {
  const fuse4 *f = (const fuse4 *)state;
  if (!f->sealed) return;
  if (f->shard_bits) {
    if (dst != f->cells) memmove(dst, f->cells, (size_t)f->payload_length);
    return;
  }
  memset(dst, 0, F4_HEADER_BYTES);
  dst[0] = (uint8_t)f->w;
  dst[2] = (uint8_t)f->r;
  fuse_write_fields(dst, &f->g);
  bg__put_u32(dst + 32, f->attempts);
  size_t bytes = (size_t)f4_cell_bytes(f->g.array_length, f->w + f->r);
  if (bytes && dst + F4_HEADER_BYTES != f->cells) memmove(dst + F4_HEADER_BYTES, f->cells, bytes);
}

/*
 * One unsharded payload of `length` bytes: the shared checks (fuse_shared.h:
 * fingerprint and value widths as (w, r), a consistent 4-wise geometry), then
 * fuse4's own: attempts (at least 1 unless empty), zero reserved bytes,
 * exactly its cells and padding, and zero bits past the last cell.
 * *cells = its array_length.
 */
static bg_status f4_check_one(unsigned w, unsigned r, const uint8_t *payload, uint64_t length,
                              uint32_t *cells) {
  fuse_fields g;
  bg_status rc = bg__fuse_check_one(payload, length, F4_HEADER_BYTES, w, r, 4, 1, &g);
  if (rc != BG_OK) return rc;
  uint32_t attempts = bg__get_u32(payload + 32);
  BG_RETURN_IF(g.key_count ? attempts < 1 : attempts != 0, BG_E_PAYLOAD);
  BG_RETURN_IF(bg__get_u32(payload + 36) != 0, BG_E_PAYLOAD);
  uint64_t bits = (uint64_t)g.array_length * (w + r), bytes = f4_cell_bytes(g.array_length, w + r);
  BG_RETURN_IF(length != F4_HEADER_BYTES + bytes, BG_E_PAYLOAD);
  if (bytes) {
    const uint8_t *tail = payload + F4_HEADER_BYTES + bits / 8;
    BG_RETURN_IF(bits % 8 && (tail[0] >> (bits % 8)), BG_E_PAYLOAD);
    for (unsigned i = bits % 8 ? 1 : 0; i < (bits % 8 ? 8u : 7u); i++) BG_RETURN_IF(tail[i], BG_E_PAYLOAD);
  }
  *cells = g.array_length;
  return BG_OK;
}

/* One shard of a sharded payload: of the (w, r) its header names. */
static bg_status f4_check_shard(const uint8_t *header, const uint8_t *shard, uint64_t length, uint32_t *cells) {
  return f4_check_one(header[0], header[2], shard, length, cells);
}

static bg_status f4_validate(const bg_header *h, const uint8_t *payload) {
  BG_RETURN_IF(h->k != 4, BG_E_HEADER);
  BG_RETURN_IF(h->capacity < 1 || h->capacity > BG_MAX_CAPACITY, BG_E_HEADER);
  BG_RETURN_IF(!(h->error_rate > 0.0 && h->error_rate < 1.0), BG_E_HEADER);
  BG_RETURN_IF(h->payload_length < F4_HEADER_BYTES, BG_E_PAYLOAD);
  unsigned w = payload[0], r = payload[2];
  BG_RETURN_IF(w < 1 || w > F4_MAX_W || r > F4_MAX_R, BG_E_PAYLOAD);
  uint64_t cells;
  if (payload[1]) {
    bg_status rc = bg__fuse_check_sharded(payload, h->payload_length, F4_HEADER_BYTES, f4_check_shard, &cells);
    if (rc != BG_OK) return rc;
  } else {
    uint32_t a;
    bg_status rc = f4_check_one(w, r, payload, h->payload_length, &a);
    if (rc != BG_OK) return rc;
    cells = a;
  }
  BG_RETURN_IF(h->m != cells * (w + r), BG_E_HEADER);
  return BG_OK;
}

static bg_status f4_load(const bg_header *h, uint8_t *payload, int in_place, void **state) {
  fuse4 *f = (fuse4 *)calloc(1, sizeof *f);
  BG_RETURN_IF(!f, BG_E_NOMEM);
  f->w = payload[0];
  f->r = payload[2];
  f->capacity_hint = h->capacity;
  f->g = fuse_read_fields(payload);
  f->attempts = bg__get_u32(payload + 32);
  f->total_cells = f->g.array_length;
  f->shard_bits = payload[1];
  f->payload_length = h->payload_length;
  uint8_t *src = payload + F4_HEADER_BYTES;
  size_t bytes = (size_t)f4_cell_bytes(f->g.array_length, f->w + f->r);
  if (f->shard_bits) {
    f->total_cells = h->m / (f->w + f->r);
    src = payload;
    bytes = (size_t)h->payload_length;
  }
  if (fuse_keep(src, bytes, in_place, &f->cells, &f->owned) != BG_OK) {
    free(f);
    return BG_E_NOMEM;
  }
  f->sealed = 1;
  *state = f;
  return BG_OK;
}

const bg_kind_ops bg_kind_fuse4 = {
    .kind = BG_KIND_FUSE4,
    .create = f4_create,
    .destroy = f4_destroy,
    .clear = f4_clear,
    .add = f4_add,
    .add_value = f4_add_value,
    .contains = f4_contains,
    .contains_many = f4_contains_many,
    .value = f4_value,
    .seal = f4_seal,
    .describe = f4_describe,
    .payload_size = f4_payload_size,
    .write_payload = f4_write_payload,
    .validate = f4_validate,
    .load = f4_load,
};
