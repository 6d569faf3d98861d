/* test_sizing.c — (n, p) -> (m, k) exactly as the seeds size it, and the fill formulas. */
#include <math.h>

#include "test_util.h"

static void expect_size(uint64_t capacity, double error_rate, uint64_t want_m, uint32_t want_k) {
  uint64_t m = 0;
  uint32_t k = 0;
  CHECK_STATUS_AT(bg_size_for(capacity, error_rate, &m, &k), BG_OK, "n=%" PRIu64 " p=%g", capacity, error_rate);
  CHECK_MSG(m == want_m, "n=%" PRIu64 " p=%g: m=%" PRIu64 ", expected %" PRIu64, capacity, error_rate, m,
            want_m);
  CHECK_MSG(k == want_k, "n=%" PRIu64 " p=%g: k=%u, expected %u", capacity, error_rate, k, want_k);
}

static void expect_size_error(uint64_t capacity, double error_rate, bg_status want) {
  uint64_t m = 12345;
  uint32_t k = 678;
  CHECK_STATUS_AT(bg_size_for(capacity, error_rate, &m, &k), want, "n=%" PRIu64 " p=%g", capacity, error_rate);
  /* A failed call leaves the outputs alone: callers never see half an answer. */
  CHECK_EQ_U64(m, 12345);
  CHECK_EQ_U64(k, 678);
}

static void test_seed_values(void) {
  /* -n ln p / (ln 2)^2 = 1917011.675..., rounded up (the seed's print truncates it). */
  expect_size(200000, 0.01, 1917012, 7);
  expect_size(1000000, 0.01, 9585059, 7);
  expect_size(1000, 0.01, 9586, 7);
  expect_size(1000, 0.001, 14378, 10);
  expect_size(1000000, 1e-9, 43132763, 30);
  /* Small n: ceil matters, and (m/n) ln 2 = 6.93 rounds to 7. */
  expect_size(1, 0.01, 10, 7);
}

static void test_k_is_at_least_one(void) {
  /* (m/n) ln 2 = 1.386 -> 1; 1.005 -> 1; 0.208 -> max(1, 0) = 1; 0.693 -> 1. */
  expect_size(1, 0.5, 2, 1);
  expect_size(100, 0.5, 145, 1);
  expect_size(10, 0.9, 3, 1);
  expect_size(1, 0.999, 1, 1);
  /* The largest capacity with a rate close to 1: m fits, k rounds to 0 and is lifted to 1. */
  expect_size(BG_MAX_CAPACITY, 0.9999999, 1874730607, 1);
}

static void test_ranges(void) {
  expect_size_error(0, 0.01, BG_E_RANGE);
  expect_size_error(BG_MAX_CAPACITY + 1, 0.01, BG_E_RANGE);
  expect_size_error(UINT64_MAX, 0.01, BG_E_RANGE);
  expect_size_error(1000, 0.0, BG_E_RANGE);
  expect_size_error(1000, -0.0, BG_E_RANGE);
  expect_size_error(1000, -0.5, BG_E_RANGE);
  expect_size_error(1000, 1.0, BG_E_RANGE);
  expect_size_error(1000, 1.5, BG_E_RANGE);
  expect_size_error(1000, NAN, BG_E_RANGE);
  expect_size_error(1000, INFINITY, BG_E_RANGE);
  expect_size_error(1000, -INFINITY, BG_E_RANGE);
  /* A denormal rate would need k ~ 1075 probes: above BG_MAX_K. */
  expect_size_error(1000, 4.9e-324, BG_E_RANGE);

  uint64_t m;
  uint32_t k;
  CHECK_STATUS(bg_size_for(1000, 0.01, NULL, &k), BG_E_ARG);
  CHECK_STATUS(bg_size_for(1000, 0.01, &m, NULL), BG_E_ARG);
}

static void test_k_limit(void) {
  /* -ln p / ln 2 = 64.1 -> k = 64 is the largest allowed; 65.4 -> 65 is not. */
  expect_size(1000000, 5e-20, 92500750, 64);
  expect_size_error(1000000, 2e-20, BG_E_RANGE);
  expect_size_error(1000, 1e-25, BG_E_RANGE);
}

static void test_m_limit(void) {
  /* 9e11 items at 1% need 8.63e12 bits (< 2^43); 1e12 need 9.59e12 (> 2^43). */
  expect_size(900000000000ull, 0.01, 8626552539631ull, 7);
  expect_size_error(1000000000000ull, 0.01, BG_E_TOO_LARGE);
  expect_size_error(BG_MAX_CAPACITY, 0.01, BG_E_TOO_LARGE);
  expect_size_error(BG_MAX_CAPACITY, 0.5, BG_E_TOO_LARGE);
}

static void test_formulas(void) {
  /* Hand-computed with Python's math module (IEEE doubles, the same formulas). */
  CHECK_NEAR(bg_theoretical_error_rate(1917012, 7, 200000), 0.010039209581758123, 1e-12);
  CHECK_NEAR(bg_theoretical_error_rate(9585059, 7, 1000000), 0.010039214559253868, 1e-12);
  /* k n / m = 1, k = 1: 1 - e^-1. */
  CHECK_NEAR(bg_theoretical_error_rate(1000, 1, 1000), 0.6321205588285577, 1e-14);
  CHECK(bg_theoretical_error_rate(1000, 3, 0) == 0.0);

  CHECK_NEAR(bg_estimated_items(1000, 3, 500), 231.0490601866484, 1e-12);
  CHECK_NEAR(bg_estimated_items(1917012, 7, 600000), 102807.21458207637, 1e-12);
  CHECK(bg_estimated_items(1000, 3, 0) == 0.0);
  /* Every bit set: the fill no longer bounds n. */
  CHECK(isinf(bg_estimated_items(1000, 3, 1000)) && bg_estimated_items(1000, 3, 1000) > 0);

  CHECK_NEAR(bg_estimated_error_rate(1000, 3, 500), 0.125, 1e-15);
  CHECK_NEAR(bg_estimated_error_rate(1917012, 7, 600000), 0.00029422863195489814, 1e-12);
  CHECK(bg_estimated_error_rate(1000, 3, 0) == 0.0);
  CHECK(bg_estimated_error_rate(1000, 3, 1000) == 1.0);

  /* Consistency: a filter filled to its expected fill reports back its n and p. */
  uint64_t m;
  uint32_t k;
  CHECK_STATUS(bg_size_for(200000, 0.01, &m, &k), BG_OK);
  double expected_fill = 1.0 - exp(-(double)k * 200000.0 / (double)m);
  uint64_t bits = (uint64_t)llround(expected_fill * (double)m);
  CHECK_NEAR(bg_estimated_items(m, k, bits), 200000.0, 1e-5);
  CHECK_NEAR(bg_estimated_error_rate(m, k, bits), bg_theoretical_error_rate(m, k, 200000), 1e-5);
}

int main(void) {
  test_seed_values();
  test_k_is_at_least_one();
  test_ranges();
  test_k_limit();
  test_m_limit();
  test_formulas();
  return test_report("test_sizing");
}
