/*
 * blocked.c — the split-block Bloom filter (kind 2): every key lives in one
 * small block, so a query reads one block and is a single vector test.
 *
 * Geometry (docs/kinds/blocked.md is the byte-level spec): a block is k/8
 * groups of eight 32-bit words (k = 8: 32 bytes; k = 16: 64 bytes, one cache
 * line). A key picks its block from h1 by multiply-shift reduction, and sets
 * one bit in each of the block's k words: in word i of group g the bit is the
 * top five bits of (x_g * SALTS[i]) mod 2^32, with x_g the g-th 32-bit half of
 * h2. Sizing picks k = 8 or 16, whichever needs fewer bytes for (n, p): k = 8
 * wins for p down to about 7.3e-4 (10.53 bits/key at 1%, 16.89 at 0.1%), k = 16
 * below it (23.01 at 0.01%, where k = 8 would need 26.3).
 *
 * The sizing decides bytes, so it must give identical answers natively and in
 * wasm: it uses only IEEE +, -, *, / (no libm, no fused multiply-add) and its
 * own exp/log below. The query paths (scalar, SSE2, SSE4.1, AVX2, wasm
 * SIMD128) compute the same masks and give identical answers; tests compare
 * them on random inputs.
 */
#include <math.h> /* INFINITY only: the sizing below calls no libm function */
#include <stdlib.h>

#include "hash_inline.h"
#include "kind.h"

/* Keep a*b+c as two roundings everywhere: the sizing must not depend on -ffp-contract. */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#if !defined(BG_BLOCKED_SCALAR) && defined(__wasm_simd128__)
#define BG_BLOCKED_WASM 1
#include <wasm_simd128.h>
#elif !defined(BG_BLOCKED_SCALAR) && defined(__AVX2__)
#define BG_BLOCKED_AVX2 1
#include <immintrin.h>
#elif !defined(BG_BLOCKED_SCALAR) && defined(__SSE2__)
#define BG_BLOCKED_SSE2 1
#include <immintrin.h>
#endif

#if defined(__clang__)
#define BG_NO_VECTORIZE _Pragma("clang loop vectorize(disable) interleave(disable)")
#else
#define BG_NO_VECTORIZE
#endif

#define GROUP_WORDS 8u /* words per group; a key sets one bit in each */
#define GROUP_BYTES 32u
/* clang-format 14 takes `(k) * 4u` for a cast and would write `(k)*4u`. */
/* clang-format off */
#define BLOCK_BYTES(k) ((size_t)(k) * 4u)
/* clang-format on */

/*
 * Odd multipliers, one per word: the high 32 bits of the first sixteen
 * outputs of splitmix64 seeded with the ASCII bytes "blocked!" read big-endian
 * (0x626c6f636b656421), with the low bit forced on. Part of the file format.
 */
static const _Alignas(32) uint32_t SALTS[16] = {
    0x21c0877bu, 0xd0d9e84du, 0x59d1def9u, 0xe4df1b2du, 0xabb25103u, 0x8979505du, 0xe6e49211u, 0xeb048ae1u,
    0xe9b04f6fu, 0x3cdad399u, 0x2575f3b1u, 0xb4d04931u, 0xb7e4c1f3u, 0x7f475d71u, 0xffeda733u, 0x14be79ddu};

typedef struct {
  uint8_t *blocks; /* nblocks * 4k bytes, the payload as stored */
  void *owned;     /* blocks' allocation when the state owns it; NULL when it lies in a file buffer */
  uint64_t nblocks;
  uint32_t k; /* 8 or 16 */
} blocked;

/* ---- one block: the scalar reference ------------------------------------- */

static inline uint32_t load_le32(const uint8_t *p) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
#else
  return bg__get_u32(p);
#endif
}

static inline void store_le32(uint8_t *p, uint32_t v) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  memcpy(p, &v, 4);
#else
  bg__put_u32(p, v);
#endif
}

/* The bit key half x sets in the word salted by salt. */
static inline uint32_t word_mask(uint32_t x, uint32_t salt) { return 1u << ((x * salt) >> 27); }

static int block_contains_scalar(const uint8_t *block, uint32_t k, uint64_t h2) {
  uint32_t missing = 0;
  for (uint32_t i = 0; i < k; i++) {
    uint32_t x = (uint32_t)(h2 >> (32 * (i / GROUP_WORDS)));
    missing |= word_mask(x, SALTS[i]) & ~load_le32(block + 4 * i);
  }
  return missing == 0;
}

static void block_add_scalar(uint8_t *block, uint32_t k, uint64_t h2) {
  for (uint32_t i = 0; i < k; i++) {
    uint32_t x = (uint32_t)(h2 >> (32 * (i / GROUP_WORDS)));
    store_le32(block + 4 * i, load_le32(block + 4 * i) | word_mask(x, SALTS[i]));
  }
}

/* ---- one block: vector forms --------------------------------------------- */
/*
 * Without a per-lane shift (wasm SIMD128, SSE2), 1 << e is built as the float
 * 2^e: put e in the exponent field ((y >> 27) << 23 == (y >> 4) & 0x0F800000),
 * add the bias 127 << 23, and convert to an integer. 2^31 is out of range for
 * a signed conversion; SSE2's cvttps then yields 0x80000000, which is 1 << 31,
 * and wasm's unsigned saturating conversion is exact. (A byte-shuffle table
 * lookup, i8x16.swizzle of {1, 2, 4, ..., 128}, measured no faster in wasm:
 * 4.2 against 3.9 ns per block test; SSE2 emulated on wasm SIMD: 2.4x slower.)
 */
#if BG_BLOCKED_WASM
static inline v128_t group_masks(uint32_t x, const uint32_t *salts) {
  v128_t y = wasm_i32x4_mul(wasm_i32x4_splat((int32_t)x), wasm_v128_load(salts));
  v128_t e = wasm_v128_and(wasm_u32x4_shr(y, 4), wasm_i32x4_const_splat(0x0F800000));
  return wasm_u32x4_trunc_sat_f32x4(wasm_i32x4_add(e, wasm_i32x4_const_splat(0x3F800000)));
}

static inline int block_contains_vector(const uint8_t *block, uint32_t k, uint64_t h2) {
  uint32_t x = (uint32_t)h2;
  v128_t missing = wasm_v128_or(wasm_v128_andnot(group_masks(x, SALTS), wasm_v128_load(block)),
                                wasm_v128_andnot(group_masks(x, SALTS + 4), wasm_v128_load(block + 16)));
  if (k > GROUP_WORDS) {
    x = (uint32_t)(h2 >> 32);
    missing = wasm_v128_or(missing, wasm_v128_andnot(group_masks(x, SALTS + 8), wasm_v128_load(block + 32)));
    missing = wasm_v128_or(missing, wasm_v128_andnot(group_masks(x, SALTS + 12), wasm_v128_load(block + 48)));
  }
  return !wasm_v128_any_true(missing);
}

static inline void block_add_vector(uint8_t *block, uint32_t k, uint64_t h2) {
  for (uint32_t q = 0; q < k / 4; q++) {
    uint32_t x = (uint32_t)(h2 >> (32 * (q / 2)));
    uint8_t *p = block + 16 * q;
    wasm_v128_store(p, wasm_v128_or(wasm_v128_load(p), group_masks(x, SALTS + 4 * q)));
  }
}

#elif BG_BLOCKED_AVX2
static inline __m256i group_masks(uint32_t x, const uint32_t *salts) {
  __m256i y = _mm256_mullo_epi32(_mm256_set1_epi32((int)x), _mm256_load_si256((const __m256i *)salts));
  return _mm256_sllv_epi32(_mm256_set1_epi32(1), _mm256_srli_epi32(y, 27));
}

static inline int block_contains_vector(const uint8_t *block, uint32_t k, uint64_t h2) {
  /* testc: carry set when (~block & mask) == 0, every bit present. */
  int present =
      _mm256_testc_si256(_mm256_loadu_si256((const __m256i *)block), group_masks((uint32_t)h2, SALTS));
  if (k > GROUP_WORDS)
    present &= _mm256_testc_si256(_mm256_loadu_si256((const __m256i *)(block + 32)),
                                  group_masks((uint32_t)(h2 >> 32), SALTS + 8));
  return present;
}

static inline void block_add_vector(uint8_t *block, uint32_t k, uint64_t h2) {
  for (uint32_t g = 0; g < k / GROUP_WORDS; g++) {
    __m256i *p = (__m256i *)(block + GROUP_BYTES * g);
    _mm256_storeu_si256(
        p, _mm256_or_si256(_mm256_loadu_si256(p), group_masks((uint32_t)(h2 >> (32 * g)), SALTS + 8 * g)));
  }
}

#elif BG_BLOCKED_SSE2
/* Four lanes of x * salt mod 2^32; SSE2 has no 32-bit lane multiply before SSE4.1. */
static inline __m128i mul_lanes(__m128i x, const uint32_t *salts) {
  __m128i s = _mm_load_si128((const __m128i *)salts);
#if defined(__SSE4_1__)
  return _mm_mullo_epi32(x, s);
#else
  __m128i even = _mm_mul_epu32(x, s);                    /* lanes 0, 2 as 64-bit products */
  __m128i odd = _mm_mul_epu32(x, _mm_srli_epi64(s, 32)); /* lanes 1, 3 */
  return _mm_unpacklo_epi32(_mm_shuffle_epi32(even, _MM_SHUFFLE(0, 0, 2, 0)),
                            _mm_shuffle_epi32(odd, _MM_SHUFFLE(0, 0, 2, 0)));
#endif
}

static inline __m128i group_masks(__m128i x, const uint32_t *salts) {
  __m128i e = _mm_and_si128(_mm_srli_epi32(mul_lanes(x, salts), 4), _mm_set1_epi32(0x0F800000));
  return _mm_cvttps_epi32(_mm_castsi128_ps(_mm_add_epi32(e, _mm_set1_epi32(0x3F800000))));
}

static inline int block_contains_vector(const uint8_t *block, uint32_t k, uint64_t h2) {
  __m128i x = _mm_set1_epi32((int)(uint32_t)h2);
  __m128i missing =
      _mm_or_si128(_mm_andnot_si128(_mm_loadu_si128((const __m128i *)block), group_masks(x, SALTS)),
                   _mm_andnot_si128(_mm_loadu_si128((const __m128i *)(block + 16)), group_masks(x, SALTS + 4)));
  if (k > GROUP_WORDS) {
    x = _mm_set1_epi32((int)(uint32_t)(h2 >> 32));
    missing = _mm_or_si128(
        missing, _mm_andnot_si128(_mm_loadu_si128((const __m128i *)(block + 32)), group_masks(x, SALTS + 8)));
    missing = _mm_or_si128(
        missing, _mm_andnot_si128(_mm_loadu_si128((const __m128i *)(block + 48)), group_masks(x, SALTS + 12)));
  }
#if defined(__SSE4_1__)
  return _mm_testz_si128(missing, missing);
#else
  return _mm_movemask_epi8(_mm_cmpeq_epi32(missing, _mm_setzero_si128())) == 0xFFFF;
#endif
}

static inline void block_add_vector(uint8_t *block, uint32_t k, uint64_t h2) {
  for (uint32_t q = 0; q < k / 4; q++) {
    __m128i x = _mm_set1_epi32((int)(uint32_t)(h2 >> (32 * (q / 2))));
    __m128i *p = (__m128i *)(block + 16 * q);
    _mm_storeu_si128(p, _mm_or_si128(_mm_loadu_si128(p), group_masks(x, SALTS + 4 * q)));
  }
}

#else
#define block_contains_vector block_contains_scalar
#define block_add_vector block_add_scalar
#endif

/* For the tests: both paths on one block (vector = 0: scalar), and which vector path this build has. */
int bg__blocked_block_contains(const uint8_t *block, uint32_t k, uint64_t h2, int vector) {
  return vector ? block_contains_vector(block, k, h2) : block_contains_scalar(block, k, h2);
}
void bg__blocked_block_add(uint8_t *block, uint32_t k, uint64_t h2, int vector) {
  if (vector)
    block_add_vector(block, k, h2);
  else
    block_add_scalar(block, k, h2);
}
const char *bg__blocked_simd_path(void) {
#if BG_BLOCKED_WASM
  return "wasm-simd128";
#elif BG_BLOCKED_AVX2
  return "avx2";
#elif BG_BLOCKED_SSE2 && defined(__SSE4_1__)
  return "sse4.1";
#elif BG_BLOCKED_SSE2
  return "sse2";
#else
  return "scalar";
#endif
}

/* ---- sizing: exact expected false-positive rate, deterministic ------------ */

#define LN2 0.69314718055994530942
#define LN2_HI 0.693145751953125 /* 22713 / 2^15: k * LN2_HI is exact for |k| < 2^38 */
#define LN2_LO 1.4286068203094172321e-06
#define WORD_MISS 0.96875 /* 31/32: a key leaves a given bit of its block's word clear */

/* 2^e for integer e, exactly (subnormal results round the same way on every IEEE host). */
static double pow2i(int64_t e) {
  double scale = 1.0;
  for (; e > 1000; e -= 1000) scale *= 0x1p1000;
  for (; e < -1000; e += 1000) scale *= 0x1p-1000;
  uint64_t bits = (uint64_t)(e + 1023) << 52;
  double p;
  memcpy(&p, &bits, sizeof p);
  return scale * p;
}

/* e^x for x <= 710: reduce by multiples of ln 2, then a Taylor polynomial on |r| <= ln(2)/2. */
static double det_exp(double x) {
  if (x < -7.5e4) return 0.0;
  double t = x * (1.0 / LN2);
  int64_t k = (int64_t)(t < 0 ? t - 0.5 : t + 0.5);
  double r = (x - (double)k * LN2_HI) - (double)k * LN2_LO;
  double sum = 1.0;
  for (int i = 20; i >= 1; i--) sum = 1.0 + (r / i) * sum;
  return sum * pow2i(k);
}

/* 2 atanh(z) = ln((1+z)/(1-z)) for |z| <= 1/3, by its odd power series. */
static double det_2atanh(double z) {
  double z2 = z * z, power = z, sum = z, size = z < 0 ? -z : z;
  for (int i = 3; i < 200; i += 2) {
    power *= z2;
    double term = power / i;
    if ((term < 0 ? -term : term) < size * 0x1p-60) break;
    sum += term;
  }
  return 2.0 * sum;
}

/* ln(x) for x > 0 (finite). */
static double det_log(double x) {
  uint64_t bits;
  memcpy(&bits, &x, sizeof bits);
  int64_t e = (int64_t)((bits >> 52) & 0x7FF);
  if (e == 0) return det_log(x * 0x1p60) - 60.0 * LN2; /* subnormal */
  e -= 1022;
  bits = (bits & ~((uint64_t)0x7FF << 52)) | ((uint64_t)1022 << 52); /* mantissa in [0.5, 1) */
  double m;
  memcpy(&m, &bits, sizeof m);
  if (m < 0.70710678118654752440) {
    m *= 2.0;
    e -= 1;
  }
  return det_2atanh((m - 1.0) / (m + 1.0)) + ((double)e * LN2_HI + (double)e * LN2_LO);
}

/* ln(1 - u) for 0 <= u < 1: 1 - u = (1 - z) / (1 + z) with z = u / (2 - u), accurate for small u. */
static double det_log1m(double u) {
  if (u > 0.5) return det_log(1.0 - u); /* 1 - u is exact here */
  return -det_2atanh(u / (2.0 - u));
}

/* P(fp | the block holds j keys) = (1 - c^j)^k with c^j passed in. */
static double block_fp(double c_j, uint32_t k) {
  double g = 1.0 - c_j;
  g *= g;
  g *= g;
  g *= g; /* (1 - c^j)^8 */
  return k == 16 ? g * g : g;
}

/*
 * The expected false-positive rate of nblocks blocks of k words holding n keys:
 * block loads are Binomial(n, 1/nblocks), so
 *   FPR = sum_j C(n, j) b^-j (1 - 1/b)^(n-j) (1 - (31/32)^j)^k.
 * The terms are summed from j = 0 by their ratio, rescaled by powers of two so
 * that e^-lambda never underflows, until past the mean they stop mattering.
 */
BG_COLD static double blocked_fpr(double n, uint64_t nblocks, uint32_t k) {
  if (n < 1.0) return 0.0;
  double b = (double)nblocks, lambda = n / b;
  if (nblocks == 1) return block_fp(det_exp(n * det_log1m(1.0 / 32.0)), k);
  /* Beyond ~2000 keys per block every word is full to within 1e-27: the rate is 1. */
  if (lambda > 4096.0) return 1.0;
  double log_scale = n * det_log1m(1.0 / b); /* ln P(load = 0) */
  double term = 1.0, sum = 0.0, c_j = 1.0;
  for (double j = 0.0;; j += 1.0) {
    sum += term * block_fp(c_j, k);
    if (j >= n) break;
    term *= (n - j) / ((j + 1.0) * (b - 1.0));
    c_j *= WORD_MISS;
    if (term > 0x1p200) {
      term *= 0x1p-200;
      sum *= 0x1p-200;
      log_scale += 200.0 * LN2;
    }
    if (j > lambda && term < sum * 0x1p-64) break;
  }
  return sum * det_exp(log_scale);
}

/* The fewest blocks of k words whose expected rate at n keys is at most p (BG_E_TOO_LARGE: none fits). */
static bg_status blocks_for(uint64_t capacity, double p, uint32_t k, uint64_t *out) {
  const uint64_t max_blocks = BG_MAX_BITS / (32u * k);
  double n = (double)capacity;
  /* Start at the classic filter's size; the answer is within a few doublings of it. */
  double guess = n * -det_log(p) / (LN2 * LN2) / (32.0 * k);
  uint64_t start = guess < 1.0 ? 1 : guess >= (double)max_blocks ? max_blocks : (uint64_t)guess;
  uint64_t lo, hi; /* fpr(lo) > p (lo = 0: no blocks), fpr(hi) <= p */
  if (blocked_fpr(n, start, k) <= p) {
    hi = start;
    lo = start / 2;
    while (lo > 0 && blocked_fpr(n, lo, k) <= p) {
      hi = lo;
      lo /= 2;
    }
  } else {
    lo = start;
    for (;;) {
      if (lo >= max_blocks) return BG_E_TOO_LARGE;
      hi = lo > max_blocks / 2 ? max_blocks : 2 * lo;
      if (blocked_fpr(n, hi, k) <= p) break;
      lo = hi;
    }
  }
  while (hi - lo > 1) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (blocked_fpr(n, mid, k) <= p)
      hi = mid;
    else
      lo = mid;
  }
  *out = hi;
  return BG_OK;
}

/* k = 8 or 16, whichever takes fewer bytes (8 on a tie: half the block to read). */
static bg_status blocked_size(uint64_t capacity, double p, uint32_t *k, uint64_t *nblocks) {
  uint64_t b8 = 0, b16 = 0;
  bg_status rc8 = blocks_for(capacity, p, 8, &b8);
  bg_status rc16 = blocks_for(capacity, p, 16, &b16);
  if (rc8 != BG_OK && rc16 != BG_OK) return rc8;
  if (rc8 == BG_OK && (rc16 != BG_OK || b8 <= 2 * b16)) {
    *k = 8;
    *nblocks = b8;
  } else {
    *k = 16;
    *nblocks = b16;
  }
  return BG_OK;
}

/* ---- state ---------------------------------------------------------------- */

static bg_status blocked_alloc(uint64_t nblocks, uint32_t k, void **state) {
  uint64_t bytes = nblocks * BLOCK_BYTES(k);
  BG_RETURN_IF(bytes > SIZE_MAX - 64, BG_E_TOO_LARGE);
  blocked *b = (blocked *)calloc(1, sizeof *b);
  BG_RETURN_IF(!b, BG_E_NOMEM);
  /* calloc keeps untouched pages lazy; 63 spare bytes let the blocks start on a cache line. */
  b->owned = calloc(1, (size_t)bytes + 63);
  if (!b->owned) {
    free(b);
    return BG_E_NOMEM;
  }
  b->blocks = (uint8_t *)b->owned + ((64 - (uintptr_t)b->owned % 64) % 64);
  b->nblocks = nblocks;
  b->k = k;
  *state = b;
  return BG_OK;
}

static uint64_t payload_bytes(const blocked *b) { return b->nblocks * BLOCK_BYTES(b->k); }

BG_COLD static bg_status blocked_create(const bg_kind_params *params, void **state) {
  uint32_t k;
  uint64_t nblocks;
  bg_status rc = blocked_size(params->capacity, params->error_rate, &k, &nblocks);
  return rc != BG_OK ? rc : blocked_alloc(nblocks, k, state);
}

static void blocked_destroy(void *state) {
  blocked *b = (blocked *)state;
  if (!b) return;
  free(b->owned);
  free(b);
}

static void blocked_clear(void *state) {
  blocked *b = (blocked *)state;
  memset(b->blocks, 0, (size_t)payload_bytes(b));
}

/* ---- the hot path ----------------------------------------------------------- */

static inline uint8_t *block_of(const blocked *b, uint64_t h1) {
  return b->blocks + bg__reduce(h1, b->nblocks) * BLOCK_BYTES(b->k);
}

static bg_status blocked_add(void *state, bg_hash_pair h) {
  blocked *b = (blocked *)state;
  block_add_vector(block_of(b, h.h1), b->k, h.h2);
  return BG_OK;
}

static int blocked_contains(const void *state, bg_hash_pair h) {
  const blocked *b = (const blocked *)state;
  return block_contains_vector(block_of(b, h.h1), b->k, h.h2);
}

/*
 * Locate every key's block first and test second: the group's cache misses
 * are in flight together instead of one after another. wasm has no prefetch
 * instruction, so there a tight loop reads one byte of each block first (the
 * empty asm keeps the loads), after a loop that only computes the addresses:
 * back-to-back loads all issue before the first one returns, which they would
 * not if other work sat between them (a pending load holds up retirement and
 * the reorder buffer fills). The group is the generic layer's hash group
 * (BG_BATCH_GROUP, 128). Measured at 9M keys, 1 %, in wasm: 26.7 ns per
 * non-member query against 37.8 with groups of 16 and the touch in the address
 * loop; natively 13.5 against 23.
 */
#define PREFETCH_GROUP 128
static bg_status blocked_contains_many(const void *state, const bg_hash_pair *hashes, size_t count,
                                       uint8_t *results) {
  const blocked *b = (const blocked *)state;
  const uint8_t *where[PREFETCH_GROUP];
  for (size_t i = 0; i < count; i += PREFETCH_GROUP) {
    size_t n = count - i < PREFETCH_GROUP ? count - i : PREFETCH_GROUP;
    uint32_t touched = 0;
    /* Kept scalar: vectorised, clang emits i64x2.mul, which wasm engines emulate slowly. */
    BG_NO_VECTORIZE
    for (size_t j = 0; j < n; j++) {
      where[j] = block_of(b, hashes[i + j].h1);
#if !defined(__wasm__) && defined(__GNUC__)
      __builtin_prefetch(where[j]);
#endif
    }
#if defined(__wasm__)
    for (size_t j = 0; j < n; j++) touched |= where[j][0];
    __asm__ volatile("" : : "r"(touched));
#endif
    (void)touched;
    for (size_t j = 0; j < n; j++)
      results[i + j] = (uint8_t)block_contains_vector(where[j], b->k, hashes[i + j].h2);
  }
  return BG_OK;
}

/* ---- whole-filter operations ---------------------------------------------- */

BG_COLD static bg_status blocked_merge(void *dst_state, const void *src_state) {
  blocked *dst = (blocked *)dst_state;
  const blocked *src = (const blocked *)src_state;
  BG_RETURN_IF(dst->k != src->k || dst->nblocks != src->nblocks, BG_E_INCOMPATIBLE);
  size_t bytes = (size_t)payload_bytes(dst);
  for (size_t i = 0; i < bytes; i += 4)
    store_le32(dst->blocks + i, load_le32(dst->blocks + i) | load_le32(src->blocks + i));
  return BG_OK;
}

BG_COLD static void blocked_describe(const void *state, uint64_t count, bg_kind_info *info) {
  const blocked *b = (const blocked *)state;
  double words_bits = 32.0 * (double)b->nblocks; /* bits per word position across all blocks */
  uint64_t set = 0;
  double fp_sum = 0.0;
  /*
   * The rate queries see now, exactly: a non-member's key lands in block B and
   * is reported present with probability prod_i popcount(word_i) / 32.
   */
  for (uint64_t i = 0; i < b->nblocks; i++) {
    const uint8_t *block = b->blocks + i * BLOCK_BYTES(b->k);
    double fp = 1.0;
    for (uint32_t w = 0; w < b->k; w++) {
      unsigned bits = (unsigned)__builtin_popcount(load_le32(block + 4 * w));
      set += bits;
      fp *= bits * (1.0 / 32.0);
    }
    fp_sum += fp;
  }
  info->m = b->nblocks * 32u * b->k;
  info->k = b->k;
  info->bits_set = set;
  info->fill_ratio = (double)set / (double)info->m;
  info->estimated_error_rate = fp_sum / (double)b->nblocks;
  /*
   * Each key sets a given bit with probability 1/(32 nblocks), so after n keys
   * a bit is clear with probability (1 - 1/(32 nblocks))^n: invert for n.
   */
  info->estimated_items = set >= info->m ? INFINITY : det_log1m(info->fill_ratio) / det_log1m(1.0 / words_bits);
  if (set == 0) info->estimated_items = 0.0;
  info->theoretical_error_rate = blocked_fpr((double)count, b->nblocks, b->k);
}

/* ---- the payload ------------------------------------------------------------ */

static uint64_t blocked_payload_size(const void *state) { return payload_bytes((const blocked *)state); }

static void blocked_write_payload(const void *state, uint8_t *dst) {
  const blocked *b = (const blocked *)state;
  if (dst != b->blocks) memcpy(dst, b->blocks, (size_t)payload_bytes(b));
}

static const uint8_t *blocked_payload_view(const void *state) { return ((const blocked *)state)->blocks; }

BG_COLD static bg_status blocked_validate(const bg_header *h, const uint8_t *payload) {
  (void)payload; /* every bit pattern is a valid filter */
  BG_RETURN_IF(h->k != 8 && h->k != 16, BG_E_HEADER);
  BG_RETURN_IF(h->m < 32u * h->k || h->m > BG_MAX_BITS || h->m % (32u * h->k) != 0, BG_E_HEADER);
  BG_RETURN_IF(h->capacity < 1 || h->capacity > BG_MAX_CAPACITY, BG_E_HEADER);
  BG_RETURN_IF(!(h->error_rate > 0.0 && h->error_rate < 1.0), BG_E_HEADER);
  BG_RETURN_IF(h->payload_length != h->m / 8, BG_E_PAYLOAD);
  return BG_OK;
}

static bg_status blocked_load(const bg_header *h, uint8_t *payload, int in_place, void **state) {
  uint64_t nblocks = h->m / (32u * h->k);
  if (!in_place) {
    bg_status rc = blocked_alloc(nblocks, h->k, state);
    if (rc == BG_OK) memcpy(((blocked *)*state)->blocks, payload, (size_t)h->payload_length);
    return rc;
  }
  /* In place, whatever the buffer's alignment: blocks are read with unaligned loads. */
  blocked *b = (blocked *)calloc(1, sizeof *b);
  BG_RETURN_IF(!b, BG_E_NOMEM);
  b->blocks = payload;
  b->nblocks = nblocks;
  b->k = h->k;
  *state = b;
  return BG_OK;
}

const bg_kind_ops bg_kind_blocked = {
    .kind = BG_KIND_BLOCKED,
    .create = blocked_create,
    .destroy = blocked_destroy,
    .clear = blocked_clear,
    .add = blocked_add,
    .contains = blocked_contains,
    .contains_many = blocked_contains_many,
    .merge = blocked_merge,
    .describe = blocked_describe,
    .payload_size = blocked_payload_size,
    .write_payload = blocked_write_payload,
    .payload_view = blocked_payload_view,
    .validate = blocked_validate,
    .load = blocked_load,
};
