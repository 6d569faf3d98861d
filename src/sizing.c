/* sizing.c — (n, p) -> (m, k), and what a filter's fill ratio says about it. */
#include <math.h>

#include "bloomgate.h"

/* (ln 2)^2 and ln 2 as literals, so native and wasm builds start from the same bits. */
#define BG_LN2 0.69314718055994530942
#define BG_LN2_SQUARED 0.48045301391820142467

bg_status bg_size_for(uint64_t capacity, double error_rate, uint64_t *m, uint32_t *k) {
  if (!m || !k) return BG_E_ARG;
  /* NaN fails both comparisons, so it lands here too. */
  if (capacity < 1 || capacity > BG_MAX_CAPACITY || !(error_rate > 0.0 && error_rate < 1.0)) return BG_E_RANGE;
  double n = (double)capacity;
  double bits = ceil(-n * log(error_rate) / BG_LN2_SQUARED);
  if (!(bits <= (double)BG_MAX_BITS)) return BG_E_TOO_LARGE;
  uint64_t m_bits = bits < 1.0 ? 1 : (uint64_t)bits;
  double k_real = round(((double)m_bits / n) * BG_LN2);
  if (k_real > (double)BG_MAX_K) return BG_E_RANGE;
  *m = m_bits;
  *k = k_real < 1.0 ? 1u : (uint32_t)k_real;
  return BG_OK;
}

double bg_theoretical_error_rate(uint64_t m, uint32_t k, uint64_t n) {
  if (m == 0 || k == 0) return 1.0;
  return pow(1.0 - exp(-(double)k * (double)n / (double)m), (double)k);
}

double bg_estimated_items(uint64_t m, uint32_t k, uint64_t bits_set) {
  if (m == 0 || k == 0) return 0.0;
  if (bits_set >= m) return INFINITY;
  return -((double)m / (double)k) * log1p(-(double)bits_set / (double)m);
}

double bg_estimated_error_rate(uint64_t m, uint32_t k, uint64_t bits_set) {
  if (m == 0 || k == 0) return 1.0;
  return pow((double)bits_set / (double)m, (double)k);
}
