/*
 * fuse.c — binary fuse filters (Graf & Lemire, "Binary Fuse Filters: Fast and
 * Smaller Than Xor Filters", 2022) with 8- and 16-bit fingerprints: the two
 * kinds fuse8 and fuse16, one implementation parameterised by the width.
 *
 * A static filter: add() only collects each key's h1 (the low half of its
 * XXH3-128); seal() deduplicates them, then builds an array of A fingerprint
 * cells such that for every key x the XOR of its three cells equals its
 * fingerprint. A query recomputes the three cells and compares; a non-member
 * matches with probability 2^-bits (the kind's natural error rate).
 *
 * Geometry (arity 3). The A cells form segment_count + 2 segments of L cells
 * (L a power of two). A key's mixed hash x picks a first cell p0 in the first
 * segment_count segments, and two more in the next two segments at offsets
 * taken from other bits of x:
 *   p0 = ((x >> 32) * (segment_count * L)) >> 32
 *   p1 = (p0 + L)  ^ ((x >> 18) & (L - 1))
 *   p2 = (p0 + 2L) ^ (x & (L - 1))
 *   fingerprint = low bits of (x ^ (x >> 32))
 * with x = mix(h1 ^ fuse_seed), mix the SplitMix64 finalizer (a bijection, so
 * distinct h1 stay distinct). The paper gives L = 2^floor(ln n / ln 3.33 + 2.25)
 * (at most 2^18) and A ~ n * max(1.125, 0.875 + 0.25 ln(10^6) / ln n).
 *
 * Building (seal) is peeling: every cell counts the keys that touch it and
 * XORs their hashes; a cell touched by exactly one key names that key, which
 * is removed from its other two cells, and so on. Keys are then assigned in
 * reverse peeling order, each to the cell it was peeled from. Peeling fails
 * with small probability; the build then retries with the next internal seed,
 * derived from the filter's seed and the attempt number, so the same keys and
 * seed always give the same bytes whatever the insertion order (the cell
 * arrays, and hence the peeling order, do not depend on the key order).
 *
 * Sharded files (docs/kinds/fuse.md): a payload with shard_bits b > 0 holds
 * 2^b shards, each the unsharded payload of the keys whose h2 starts with its
 * number (h2 is read nowhere else here), behind a table of offsets. This file
 * reads, validates and queries them; the shards are built elsewhere (the CLI,
 * js/cli/fuse-shards.js), each as an unsharded filter fed by bg_filter_add_h1.
 */
#include <math.h>
#include <stdlib.h>

#include "fuse_shared.h"
#include "hash_inline.h"
#include "kind.h"

#define FUSE_HEADER_BYTES 32u
#define FUSE_MIN_SEGMENT_LENGTH 4u
/* Keeps A, and every cell index, below 2^32: 3.8e9 * 1.125 + 3 * 2^18 < 2^32. */
#define FUSE_MAX_KEYS UINT64_C(3800000000)
/* Each attempt fails with small probability (well under 1/2 at any n), so this bound is never met in practice. */
#define FUSE_MAX_ATTEMPTS 100u
/* Reserve at most this many hashes up front however large the capacity hint (2^24 * 8 B = 128 MiB). */
#define FUSE_MAX_RESERVE ((size_t)1 << 24)

typedef struct {
  unsigned width; /* fingerprint bytes: 1 (fuse8) or 2 (fuse16) */
  int sealed;

  /* Collecting (before seal): every added key's h1, duplicates included. */
  uint64_t *hashes;
  size_t hash_count, hash_capacity;
  uint64_t capacity_hint;

  /* Built (after seal or load). */
  fuse_fields g;
  uint8_t *cells; /* array_length * width bytes, little-endian; sharded: the whole payload */
  void *owned;    /* cells' allocation, or NULL when they lie in a file buffer */

  /*
   * Sharded (loaded from a file only; docs/kinds/fuse.md): 2^shard_bits
   * shards, each an unsharded payload at cells + its table entry, read in
   * place at every query. 0 for an unsharded filter, which uses the fields above.
   */
  unsigned shard_bits;
  uint64_t payload_length, total_cells;
} fuse;

/* ---- hashing --------------------------------------------------------------- */

static inline uint32_t fuse_fingerprint(uint64_t x) { return (uint32_t)(x ^ (x >> 32)); }

/* The three cells of mixed hash x. */
static inline void fuse_cells(uint64_t x, uint32_t segment_length, uint32_t segment_count, uint32_t out[3]) {
  uint32_t mask = segment_length - 1;
  uint32_t p0 = (uint32_t)(((x >> 32) * ((uint64_t)segment_count * segment_length)) >> 32);
  out[0] = p0;
  out[1] = (p0 + segment_length) ^ ((uint32_t)(x >> 18) & mask);
  out[2] = (p0 + 2 * segment_length) ^ ((uint32_t)x & mask);
}

static inline uint32_t cell_get(const uint8_t *cells, uint32_t i, unsigned width) {
  if (width == 1) return cells[i];
  return (uint32_t)cells[2 * (size_t)i] | ((uint32_t)cells[2 * (size_t)i + 1] << 8);
}

static inline void cell_put(uint8_t *cells, uint32_t i, unsigned width, uint32_t v) {
  if (width == 1) {
    cells[i] = (uint8_t)v;
  } else {
    cells[2 * (size_t)i] = (uint8_t)v;
    cells[2 * (size_t)i + 1] = (uint8_t)(v >> 8);
  }
}

/* ---- geometry -------------------------------------------------------------- */

/*
 * floor(ln n / ln 3.33 + 2.25) >= e  <=>  n >= 3.33^(e - 2.25): the smallest n
 * for each segment-length exponent e = 3..18, so the segment length is an
 * integer function of n, the same on every host.
 */
static const uint32_t SEGMENT_EXPONENT_START[] = {
    3,     9,      28,     92,      304,     1010,     3362,     11193,
    37273, 124118, 413310, 1376322, 4583150, 15261887, 50822082, 169237530,
};

static uint32_t fuse_segment_length(uint64_t n) {
  uint32_t exponent = 2;
  for (size_t i = 0; i < sizeof SEGMENT_EXPONENT_START / sizeof SEGMENT_EXPONENT_START[0]; i++)
    if (n >= SEGMENT_EXPONENT_START[i]) exponent = (uint32_t)(3 + i);
  return (uint32_t)1 << exponent; /* at most 2^18 */
}

/*
 * Cells wanted for n keys: n * max(1.125, 0.875 + 0.25 ln(10^6) / ln n). The
 * second term is below 1.125 exactly when n > 10^6, so large filters use the
 * exact integer 9n/8; only n <= 10^6 goes through floating point (the one
 * place a float decides bytes; a last-bit difference in log() between hosts
 * would change the size only if n * factor fell within 1e-16 of a rounding
 * boundary). n = 1 uses the factor of n = 2 (ln 1 = 0).
 */
static uint64_t fuse_cells_wanted(uint64_t n) {
  if (n > 1000000) return (9 * n + 4) / 8;
  double ln_n = log((double)(n < 2 ? 2 : n));
  double factor = 0.875 + 0.25 * log(1e6) / ln_n;
  return (uint64_t)((double)n * factor + 0.5);
}

/*
 * The whole geometry for n distinct keys: whole segments covering the cells
 * wanted, rounded up as in the paper. Rounding up adds up to L cells. From
 * n = 10^6 on, where 9n/8 cells are wanted, the segment length is halved
 * while that rounding would push A past 1.13n (it stops at L <= 4096 at the
 * latest), so large filters stay within 1.13 * bits per key. A shorter segment
 * costs a higher chance that one attempt fails (about 1 in 5 at n = 10^6 with
 * L = 4096 instead of 8192; measured in docs/kinds/fuse.md), which the retries absorb.
 */
static void fuse_geometry(uint64_t n, uint32_t *segment_length, uint32_t *segment_count,
                          uint32_t *array_length) {
  if (n == 0) {
    *segment_length = *segment_count = *array_length = 0;
    return;
  }
  uint64_t wanted = fuse_cells_wanted(n);
  uint32_t length = fuse_segment_length(n), count;
  for (;;) {
    uint64_t total = (wanted + length - 1) / length;
    count = total < 3 ? 1 : (uint32_t)(total - 2);
    uint64_t cells = ((uint64_t)count + 2) * length;
    if (n >= 1000000 && 100 * cells > 113 * n) {
      length /= 2;
      continue;
    }
    break;
  }
  *segment_length = length;
  *segment_count = count;
  *array_length = (count + 2) * length;
}

/* ---- create / destroy / clear --------------------------------------------- */

static bg_status fuse_create(unsigned width, const bg_kind_params *params, void **state) {
  /* The natural rate 2^-bits is fixed: a caller asking for less than it cannot be served. */
  double natural = width == 1 ? 1.0 / 256.0 : 1.0 / 65536.0;
  BG_RETURN_IF(params->error_rate < natural, BG_E_RANGE);
  fuse *f = (fuse *)calloc(1, sizeof *f);
  BG_RETURN_IF(!f, BG_E_NOMEM);
  f->width = width;
  f->capacity_hint = params->capacity;
  *state = f;
  return BG_OK;
}

static bg_status fuse8_create(const bg_kind_params *params, void **state) {
  return fuse_create(1, params, state);
}
static bg_status fuse16_create(const bg_kind_params *params, void **state) {
  return fuse_create(2, params, state);
}

static void fuse_drop_built(fuse *f) {
  free(f->owned);
  f->owned = NULL;
  f->cells = NULL;
  f->g = (fuse_fields){0};
  f->shard_bits = 0;
  f->payload_length = f->total_cells = 0;
  f->sealed = 0;
}

static void fuse_destroy(void *state) {
  fuse *f = (fuse *)state;
  if (!f) return;
  free(f->hashes);
  free(f->owned);
  free(f);
}

/* Back to empty and unsealed: a cleared filter collects keys again. */
static void fuse_clear(void *state) {
  fuse *f = (fuse *)state;
  fuse_drop_built(f);
  free(f->hashes);
  f->hashes = NULL;
  f->hash_count = f->hash_capacity = 0;
}

/* ---- collecting ------------------------------------------------------------ */

static bg_status fuse_add(void *state, bg_hash_pair hash) {
  fuse *f = (fuse *)state;
  BG_RETURN_IF(f->sealed, BG_E_STATIC);
  if (f->hash_count == f->hash_capacity) {
    BG_RETURN_IF(f->hash_count >= FUSE_MAX_KEYS, BG_E_TOO_LARGE);
    size_t grown;
    if (f->hash_capacity == 0) {
      uint64_t hint = f->capacity_hint < 16 ? 16 : f->capacity_hint;
      grown = hint > FUSE_MAX_RESERVE ? FUSE_MAX_RESERVE : (size_t)hint;
    } else {
      grown = f->hash_capacity + f->hash_capacity / 2;
      if (grown > FUSE_MAX_KEYS) grown = (size_t)FUSE_MAX_KEYS;
    }
    BG_RETURN_IF(grown > SIZE_MAX / sizeof(uint64_t), BG_E_TOO_LARGE);
    uint64_t *bigger = (uint64_t *)realloc(f->hashes, grown * sizeof(uint64_t));
    BG_RETURN_IF(!bigger, BG_E_NOMEM);
    f->hashes = bigger;
    f->hash_capacity = grown;
  }
  f->hashes[f->hash_count++] = hash.h1;
  return BG_OK;
}

/* ---- querying -------------------------------------------------------------- */

/*
 * In a sharded filter a key is asked in the shard named by the top shard_bits
 * bits of h2 (which nothing else in a fuse filter reads): *out gets that
 * shard's geometry, seed and cells, read from its payload header in place.
 */
static void fuse_shard_of(const fuse *f, uint64_t h2, fuse *out) {
  const uint8_t *shard = fuse_shard(f->cells, FUSE_HEADER_BYTES, f->shard_bits, h2);
  out->g = fuse_read_fields(shard);
  out->cells = (uint8_t *)(uintptr_t)(shard + FUSE_HEADER_BYTES);
}

/* h1 and h2 apart, not a bg_hash_pair: a struct argument is copied through the wasm stack at every call. */
static inline int fuse_query(const fuse *f, uint64_t h1, uint64_t h2, unsigned width) {
  fuse shard;
  if (f->shard_bits) {
    fuse_shard_of(f, h2, &shard);
    f = &shard;
  }
  if (!f->g.array_length) return 0; /* sealed with no keys (in this shard): nothing is a member */
  uint64_t x = fuse_mix(h1 ^ f->g.fuse_seed);
  uint32_t p[3];
  fuse_cells(x, f->g.segment_length, f->g.segment_count, p);
  uint32_t mask = width == 1 ? 0xffu : 0xffffu;
  uint32_t v = cell_get(f->cells, p[0], width) ^ cell_get(f->cells, p[1], width) ^
               cell_get(f->cells, p[2], width);
  return v == (fuse_fingerprint(x) & mask);
}

static int fuse8_contains(const void *state, bg_hash_pair hash) {
  const fuse *f = (const fuse *)state;
  if (!f->sealed) return BG_E_UNSUPPORTED;
  return fuse_query(f, hash.h1, hash.h2, 1);
}

static int fuse16_contains(const void *state, bg_hash_pair hash) {
  const fuse *f = (const fuse *)state;
  if (!f->sealed) return BG_E_UNSUPPORTED;
  return fuse_query(f, hash.h1, hash.h2, 2);
}

/* Batches: compute every key's cells first and ask for their cache lines, then test. */
#define FUSE_GROUP 16

static inline bg_status fuse_contains_many(const fuse *f, const bg_hash_pair *hashes, size_t count,
                                           uint8_t *results, unsigned width) {
  BG_RETURN_IF(!f->sealed, BG_E_UNSUPPORTED);
  uint32_t mask = width == 1 ? 0xffu : 0xffffu;
  for (size_t start = 0; start < count; start += FUSE_GROUP) {
    size_t n = count - start < FUSE_GROUP ? count - start : FUSE_GROUP;
    uint32_t p[FUSE_GROUP][3], fp[FUSE_GROUP];
    const uint8_t *cells[FUSE_GROUP]; /* the key's filter or shard; NULL when it holds no keys */
    for (size_t j = 0; j < n; j++) {
      const fuse *s = f;
      fuse shard;
      if (f->shard_bits) {
        fuse_shard_of(f, hashes[start + j].h2, &shard);
        s = &shard;
      }
      cells[j] = s->g.array_length ? s->cells : NULL;
      uint64_t x = fuse_mix(hashes[start + j].h1 ^ s->g.fuse_seed);
      fuse_cells(x, s->g.segment_length, s->g.segment_count, p[j]);
      fp[j] = fuse_fingerprint(x) & mask;
#if defined(__GNUC__) && !defined(__wasm__)
      if (cells[j])
        for (int t = 0; t < 3; t++) __builtin_prefetch(cells[j] + (size_t)p[j][t] * width);
#endif
    }
    for (size_t j = 0; j < n; j++) {
      const uint8_t *c = cells[j];
      results[start + j] = c && (cell_get(c, p[j][0], width) ^ cell_get(c, p[j][1], width) ^
                                 cell_get(c, p[j][2], width)) == fp[j];
    }
  }
  return BG_OK;
}

static bg_status fuse8_contains_many(const void *state, const bg_hash_pair *hashes, size_t count,
                                     uint8_t *results) {
  return fuse_contains_many((const fuse *)state, hashes, count, results, 1);
}
static bg_status fuse16_contains_many(const void *state, const bg_hash_pair *hashes, size_t count,
                                      uint8_t *results) {
  return fuse_contains_many((const fuse *)state, hashes, count, results, 2);
}

/* ---- building -------------------------------------------------------------- */

/* Scratch for the build, allocated once per seal and reused by every attempt. */
typedef struct {
  uint64_t *order;     /* [n]: mixed hashes in cell order, then the peeled keys */
  uint8_t *slot;       /* [n]: which of its three cells each peeled key was peeled from */
  uint8_t *cell_count; /* [A]: (keys touching the cell << 2) | XOR of their slot numbers */
  uint64_t *cell_xor;  /* [A]: XOR of the mixed hashes of the keys touching the cell */
  uint32_t *queue;     /* [A]: stack of cells left with exactly one key */
  uint32_t *bucket;    /* [buckets + 1]: counting-sort offsets */
} fuse_scratch;

static void scratch_free(fuse_scratch *s) {
  free(s->order);
  free(s->slot);
  free(s->cell_count);
  free(s->cell_xor);
  free(s->queue);
  free(s->bucket);
}

/*
 * One attempt with internal seed `seed`: on success cells[] (zeroed by the
 * caller) holds the fingerprints and 1 is returned; 0 when peeling stalls.
 */
static int fuse_try_build(const uint64_t *keys, size_t n, uint32_t segment_length, uint32_t segment_count,
                          uint32_t array_length, uint64_t seed, unsigned width, unsigned bucket_bits,
                          fuse_scratch *s, uint8_t *cells) {
  /*
   * Counting-sort the mixed hashes by their top bits, which order p0: the keys
   * of one bucket touch a window of a few segments, so the cell arrays are
   * visited nearly in sequence instead of at random.
   */
  size_t buckets = (size_t)1 << bucket_bits;
  unsigned shift = 64 - bucket_bits; /* bucket_bits >= 1, so the shift is below 64 */
  memset(s->bucket, 0, (buckets + 1) * sizeof(uint32_t));
  for (size_t i = 0; i < n; i++) s->bucket[(fuse_mix(keys[i] ^ seed) >> shift) + 1]++;
  for (size_t b = 0; b < buckets; b++) s->bucket[b + 1] += s->bucket[b];
  for (size_t i = 0; i < n; i++) {
    uint64_t x = fuse_mix(keys[i] ^ seed);
    s->order[s->bucket[x >> shift]++] = x;
  }

  memset(s->cell_count, 0, array_length);
  memset(s->cell_xor, 0, (size_t)array_length * sizeof(uint64_t));
  int overflow = 0;
  for (size_t i = 0; i < n; i++) {
    uint64_t x = s->order[i];
    uint32_t p[3];
    fuse_cells(x, segment_length, segment_count, p);
    for (uint32_t t = 0; t < 3; t++) {
      uint8_t c = s->cell_count[p[t]];
      overflow |= c >= 0xfc; /* 63 keys in one cell: 6 bits of count would wrap */
      s->cell_count[p[t]] = (uint8_t)((c + 4) ^ t);
      s->cell_xor[p[t]] ^= x;
    }
  }
  if (overflow) return 0;

  /*
   * Peel depth-first: scan the cells in order and, from each cell with one
   * key, follow the cascade of cells it leaves with one key on a stack. The
   * cascade stays within a few segments, so the cells it touches are cached.
   */
  uint8_t *restrict cell_count = s->cell_count;
  uint64_t *restrict cell_xor = s->cell_xor;
  uint32_t *restrict stack = s->queue;
  size_t peeled = 0;
  for (uint32_t start = 0; start < array_length; start++) {
    if ((cell_count[start] >> 2) != 1) continue;
    size_t depth = 0;
    stack[depth++] = start;
    while (depth) {
      uint32_t cell = stack[--depth];
      uint8_t c = cell_count[cell];
      if ((c >> 2) != 1) continue; /* emptied since it was pushed */
      uint32_t t = c & 3u;
      if (t == 3) return 0; /* cannot happen for a count of one; refuse rather than misassign */
      uint64_t x = cell_xor[cell];
      uint32_t p[3];
      fuse_cells(x, segment_length, segment_count, p);
      if (p[t] != cell) return 0; /* likewise impossible; a safety net against false negatives */
      /* order[0..peeled) is already consumed by the counting above, so it holds the peeled keys. */
      s->order[peeled] = x;
      s->slot[peeled] = (uint8_t)t;
      peeled++;
      cell_count[cell] = 0;
      cell_xor[cell] = 0;
      for (uint32_t u = 0; u < 3; u++) {
        if (u == t) continue;
        uint32_t other = p[u];
        uint8_t left = (uint8_t)((cell_count[other] - 4) ^ u);
        cell_count[other] = left;
        cell_xor[other] ^= x;
        /* A cell reaches one key once (counts only fall), so the stack never exceeds A. */
        if ((left >> 2) == 1) stack[depth++] = other;
      }
    }
  }
  if (peeled != n) return 0;

  /* Last peeled first: each key's cell is the one still free among its three. */
  uint32_t mask = width == 1 ? 0xffu : 0xffffu;
  for (size_t i = n; i-- > 0;) {
    uint64_t x = s->order[i];
    uint32_t t = s->slot[i], p[3];
    fuse_cells(x, segment_length, segment_count, p);
    uint32_t v = fuse_fingerprint(x) ^ cell_get(cells, p[(t + 1) % 3], width) ^
                 cell_get(cells, p[(t + 2) % 3], width);
    cell_put(cells, p[t], width, v & mask);
  }
  return 1;
}

/*
 * Build the filter from the collected hashes. Duplicates (the same key added
 * twice, or two keys with equal h1) are removed first: a duplicate would put
 * the same hash into the same three cells twice, which never peels.
 * E_FULL when no attempt succeeds (the keys could not be arranged; never seen
 * with distinct hashes); E_NOMEM when the scratch cannot be allocated. Either
 * way the filter stays unsealed with its keys.
 */
static bg_status fuse_seal(void *state, uint64_t seed) {
  fuse *f = (fuse *)state;
  if (f->sealed) return BG_OK;
  size_t n = f->hash_count;
  fuse_scratch s = {0};
  if (n) {
    s.order = (uint64_t *)malloc(n * sizeof(uint64_t));
    BG_RETURN_IF(!s.order, BG_E_NOMEM);
    bg__fuse_sort(f->hashes, NULL, s.order, NULL, n);
    size_t unique = 1;
    for (size_t i = 1; i < n; i++)
      if (f->hashes[i] != f->hashes[unique - 1]) f->hashes[unique++] = f->hashes[i];
    n = f->hash_count = unique;
    /* Give back the growth slack before the cell arrays are allocated. */
    if (f->hash_capacity > n + n / 8) {
      uint64_t *fitted = (uint64_t *)realloc(f->hashes, n * sizeof(uint64_t));
      if (fitted) {
        f->hashes = fitted;
        f->hash_capacity = n;
      }
    }
  }

  uint32_t segment_length, segment_count, array_length;
  fuse_geometry(n, &segment_length, &segment_count, &array_length);
  uint8_t *cells = NULL;
  uint64_t used_seed = 0;
  if (n) {
    unsigned bucket_bits = 1;
    while (bucket_bits < 16 && ((uint32_t)1 << (bucket_bits + 1)) <= segment_count) bucket_bits++;
    size_t a = array_length;
    /* In wasm32, a * 8 bytes overflows a size_t from 2^29 cells on: such a filter cannot be allocated anyway. */
    int fits = a <= SIZE_MAX / sizeof(uint64_t);
    s.slot = (uint8_t *)malloc(n);
    s.cell_count = (uint8_t *)malloc(a);
    s.cell_xor = fits ? (uint64_t *)malloc(a * sizeof(uint64_t)) : NULL;
    s.queue = (uint32_t *)malloc(a * sizeof(uint32_t));
    s.bucket = (uint32_t *)malloc((((size_t)1 << bucket_bits) + 1) * sizeof(uint32_t));
    cells = (uint8_t *)malloc(a * f->width);
    if (!s.slot || !s.cell_count || !s.cell_xor || !s.queue || !s.bucket || !cells) {
      scratch_free(&s);
      free(cells);
      return BG_E_NOMEM;
    }
    int built = 0;
    for (uint32_t attempt = 0; attempt < FUSE_MAX_ATTEMPTS && !built; attempt++) {
      used_seed = fuse_attempt_seed(seed, attempt);
      memset(cells, 0, a * f->width);
      built = fuse_try_build(f->hashes, n, segment_length, segment_count, array_length, used_seed, f->width,
                             bucket_bits, &s, cells);
    }
    scratch_free(&s);
    if (!built) {
      free(cells);
      return BG_E_FULL;
    }
  }
  free(f->hashes);
  f->hashes = NULL;
  f->hash_capacity = 0;
  f->hash_count = 0;
  f->g.key_count = n;
  f->g.fuse_seed = used_seed;
  f->g.segment_length = segment_length;
  f->g.segment_count = segment_count;
  f->g.array_length = array_length;
  f->total_cells = array_length;
  f->cells = cells;
  f->owned = cells;
  f->sealed = 1;
  return BG_OK;
}

/* ---- describe -------------------------------------------------------------- */

/*
 * m: bits of fingerprints (0 until sealed); k: 3 cells per query.
 * Sealed: bits_set = the cells assigned to a key (exactly one per distinct
 * key, so key_count), fill_ratio = key_count / array_length (about 0.89 for
 * large n), estimated_items = key_count.
 * Unsealed: bits_set = 0, fill_ratio = collected hashes / capacity (at most 1),
 * estimated_items = collected hashes (duplicates included).
 * Error rates: the natural 2^-bits, or 0 for a sealed filter with no keys
 * (it answers "no" to everything). A sharded filter reports its shards' sums.
 */
static void fuse_describe(const void *state, uint64_t count, bg_kind_info *info) {
  (void)count;
  const fuse *f = (const fuse *)state;
  double natural = f->width == 1 ? 1.0 / 256.0 : 1.0 / 65536.0;
  info->m = f->total_cells * 8u * f->width;
  info->k = 3;
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

/*
 * 0 until sealed: an unsealed filter has no payload yet, and the generic layer
 * must seal (or refuse) before it writes a file.
 */
static uint64_t fuse_payload_size(const void *state) {
  const fuse *f = (const fuse *)state;
  if (!f->sealed) return 0;
  return f->shard_bits ? f->payload_length : FUSE_HEADER_BYTES + (uint64_t)f->g.array_length * f->width;
}

static void fuse_write_payload(const void *state, uint8_t *dst) {
  const fuse *f = (const fuse *)state;
  if (!f->sealed) return; /* payload_size() said 0 bytes */
  if (f->shard_bits) {
    /* Only loaded filters are sharded: their payload is kept whole (maybe in this very buffer). */
    if (dst != f->cells) memmove(dst, f->cells, (size_t)f->payload_length);
    return;
  }
  memset(dst, 0, FUSE_HEADER_BYTES);
  dst[0] = (uint8_t)(8 * f->width);
  fuse_write_fields(dst, &f->g);
  /* A filter loaded in place and written into its own buffer already has its cells there. */
  size_t bytes = (size_t)f->g.array_length * f->width;
  if (bytes && dst + FUSE_HEADER_BYTES != f->cells) memmove(dst + FUSE_HEADER_BYTES, f->cells, bytes);
}

/* ---- shared with fuse4.c (fuse_shared.h) ------------------------------------ */

bg_status bg__fuse_check_one(const uint8_t *payload, uint64_t length, unsigned header_bytes, unsigned byte0,
                             unsigned byte2, unsigned arity, uint32_t min_segment_length, fuse_fields *g) {
  BG_RETURN_IF(length < header_bytes, BG_E_PAYLOAD);
  BG_RETURN_IF(payload[0] != byte0 || payload[1] || payload[2] != byte2 || payload[3], BG_E_PAYLOAD);
  *g = fuse_read_fields(payload);
  if (g->key_count == 0) {
    /* The empty filter: no cells, nothing else to say. */
    BG_RETURN_IF(g->segment_length | g->segment_count | g->array_length, BG_E_PAYLOAD);
    BG_RETURN_IF(g->fuse_seed != 0, BG_E_PAYLOAD);
    return BG_OK;
  }
  uint32_t segment_length = g->segment_length, tail = arity - 1;
  BG_RETURN_IF(segment_length < min_segment_length || segment_length > FUSE_MAX_SEGMENT_LENGTH ||
                   (segment_length & (segment_length - 1)),
               BG_E_PAYLOAD);
  BG_RETURN_IF(g->segment_count < 1, BG_E_PAYLOAD);
  BG_RETURN_IF((uint64_t)g->segment_count + tail > UINT32_MAX / segment_length, BG_E_PAYLOAD);
  BG_RETURN_IF(g->array_length != (g->segment_count + tail) * segment_length, BG_E_PAYLOAD);
  /* Every key owns one cell. */
  BG_RETURN_IF(g->key_count > g->array_length, BG_E_PAYLOAD);
  return BG_OK;
}

bg_status bg__fuse_check_sharded(const uint8_t *payload, uint64_t length, unsigned header_bytes,
                                 fuse_shard_check check_shard, uint64_t *cells) {
  unsigned bits = payload[1];
  BG_RETURN_IF(bits > FUSE_MAX_SHARD_BITS || payload[3], BG_E_PAYLOAD);
  for (unsigned i = 4; i < header_bytes; i++) BG_RETURN_IF(payload[i] && (i < 16 || i >= 24), BG_E_PAYLOAD);
  uint64_t shards = (uint64_t)1 << bits, start = header_bytes + 8 * (shards + 1), keys = 0;
  BG_RETURN_IF(length < start || bg__get_u64(payload + header_bytes) != start, BG_E_PAYLOAD);
  *cells = 0;
  for (uint64_t i = 1; i <= shards; i++) {
    uint64_t end = bg__get_u64(payload + header_bytes + 8 * i);
    BG_RETURN_IF(end < start || end > length, BG_E_PAYLOAD);
    uint32_t a;
    bg_status rc = check_shard(payload, payload + start, end - start, &a);
    if (rc != BG_OK) return rc;
    keys += bg__get_u64(payload + start + 16);
    *cells += a;
    start = end;
  }
  BG_RETURN_IF(start != length, BG_E_PAYLOAD);
  BG_RETURN_IF(keys != bg__get_u64(payload + 16), BG_E_PAYLOAD);
  return BG_OK;
}

/* ---- validate / load -------------------------------------------------------- */

/*
 * One unsharded payload (the whole payload, or one shard): the shared checks
 * (fuse8/16: 32-byte header, width byte, zero bytes 1..3, segments of 4 cells
 * or more). *cells = its array_length. The caller checks the length against
 * the cells.
 */
static bg_status fuse_check_one(unsigned width, const uint8_t *payload, uint64_t length, uint32_t *cells) {
  fuse_fields g;
  bg_status rc =
      bg__fuse_check_one(payload, length, FUSE_HEADER_BYTES, 8 * width, 0, 3, FUSE_MIN_SEGMENT_LENGTH, &g);
  if (rc != BG_OK) return rc;
  *cells = g.array_length;
  return BG_OK;
}

/* One shard of a sharded payload whose header names the width: exactly its header and cells. */
static bg_status fuse_check_shard(const uint8_t *header, const uint8_t *shard, uint64_t length,
                                  uint32_t *cells) {
  unsigned width = header[0] / 8;
  bg_status rc = fuse_check_one(width, shard, length, cells);
  if (rc != BG_OK) return rc;
  BG_RETURN_IF(length != FUSE_HEADER_BYTES + (uint64_t)*cells * width, BG_E_PAYLOAD);
  return BG_OK;
}

static bg_status fuse_validate(unsigned width, const bg_header *h, const uint8_t *payload) {
  double natural = width == 1 ? 1.0 / 256.0 : 1.0 / 65536.0;
  BG_RETURN_IF(h->k != 3, BG_E_HEADER);
  BG_RETURN_IF(h->capacity < 1 || h->capacity > BG_MAX_CAPACITY, BG_E_HEADER);
  BG_RETURN_IF(!(h->error_rate >= natural && h->error_rate < 1.0), BG_E_HEADER);
  BG_RETURN_IF(h->payload_length < FUSE_HEADER_BYTES, BG_E_PAYLOAD);
  if (payload[0] == 8 * width && payload[1]) {
    uint64_t cells;
    BG_RETURN_IF(payload[2], BG_E_PAYLOAD); /* fuse8/16 have no byte 2 */
    bg_status rc =
        bg__fuse_check_sharded(payload, h->payload_length, FUSE_HEADER_BYTES, fuse_check_shard, &cells);
    if (rc != BG_OK) return rc;
    BG_RETURN_IF(h->m != cells * 8u * width, BG_E_HEADER);
    return BG_OK;
  }
  uint32_t array_length;
  bg_status rc = fuse_check_one(width, payload, h->payload_length, &array_length);
  if (rc != BG_OK) return rc;
  BG_RETURN_IF(h->m != (uint64_t)array_length * 8u * width, BG_E_HEADER);
  BG_RETURN_IF(h->payload_length != FUSE_HEADER_BYTES + (uint64_t)array_length * width, BG_E_PAYLOAD);
  return BG_OK;
}

static bg_status fuse8_validate(const bg_header *h, const uint8_t *payload) {
  return fuse_validate(1, h, payload);
}
static bg_status fuse16_validate(const bg_header *h, const uint8_t *payload) {
  return fuse_validate(2, h, payload);
}

/* A loaded filter is sealed: it answers queries and takes no more keys. */
static bg_status fuse_load(unsigned width, const bg_header *h, uint8_t *payload, int in_place, void **state) {
  fuse *f = (fuse *)calloc(1, sizeof *f);
  BG_RETURN_IF(!f, BG_E_NOMEM);
  f->width = width;
  f->capacity_hint = h->capacity;
  f->g = fuse_read_fields(payload);
  f->total_cells = f->g.array_length;
  /* Sharded: the whole payload is kept, and each query reads its shard's header in place. */
  f->shard_bits = payload[1];
  f->payload_length = h->payload_length;
  uint8_t *src = payload + FUSE_HEADER_BYTES;
  size_t bytes = (size_t)f->g.array_length * width;
  if (f->shard_bits) {
    f->total_cells = h->m / (8u * width);
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

static bg_status fuse8_load(const bg_header *h, uint8_t *payload, int in_place, void **state) {
  return fuse_load(1, h, payload, in_place, state);
}
static bg_status fuse16_load(const bg_header *h, uint8_t *payload, int in_place, void **state) {
  return fuse_load(2, h, payload, in_place, state);
}

/* No remove, merge or to_classic: a static filter is rebuilt from its key set instead. */
const bg_kind_ops bg_kind_fuse8 = {
    .kind = BG_KIND_FUSE8,
    .create = fuse8_create,
    .destroy = fuse_destroy,
    .clear = fuse_clear,
    .add = fuse_add,
    .contains = fuse8_contains,
    .contains_many = fuse8_contains_many,
    .seal = fuse_seal,
    .describe = fuse_describe,
    .payload_size = fuse_payload_size,
    .write_payload = fuse_write_payload,
    .validate = fuse8_validate,
    .load = fuse8_load,
};

const bg_kind_ops bg_kind_fuse16 = {
    .kind = BG_KIND_FUSE16,
    .create = fuse16_create,
    .destroy = fuse_destroy,
    .clear = fuse_clear,
    .add = fuse_add,
    .contains = fuse16_contains,
    .contains_many = fuse16_contains_many,
    .seal = fuse_seal,
    .describe = fuse_describe,
    .payload_size = fuse_payload_size,
    .write_payload = fuse_write_payload,
    .validate = fuse16_validate,
    .load = fuse16_load,
};
