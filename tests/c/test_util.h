/*
 * test_util.h — the few assertions the C tests need, without a framework.
 *
 * Each CHECK* prints file:line and what it saw when it fails, counts the
 * failure and carries on, so one run reports every broken expectation.
 * A test's main() ends with `return test_report("name");`, which is non-zero
 * when anything failed.
 */
#ifndef BG_TEST_UTIL_H
#define BG_TEST_UTIL_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "bloomgate.h"

static int test_failures;
static long test_checks;

#define CHECK(cond)                                                            \
  do {                                                                         \
    test_checks++;                                                             \
    if (!(cond)) {                                                             \
      test_failures++;                                                         \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                          \
  } while (0)

#define CHECK_MSG(cond, ...)                                                   \
  do {                                                                         \
    test_checks++;                                                             \
    if (!(cond)) {                                                             \
      test_failures++;                                                         \
      fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                            \
      fputc('\n', stderr);                                                     \
    }                                                                          \
  } while (0)

#define CHECK_EQ_U64(actual, expected)                                                                    \
  do {                                                                                                    \
    uint64_t check_a_ = (uint64_t)(actual), check_e_ = (uint64_t)(expected);                              \
    test_checks++;                                                                                        \
    if (check_a_ != check_e_) {                                                                           \
      test_failures++;                                                                                    \
      fprintf(stderr,                                                                                     \
              "%s:%d: %s == %s failed: got %" PRIu64 " (0x%" PRIx64 "), expected %" PRIu64 " (0x%" PRIx64 \
              ")\n",                                                                                      \
              __FILE__, __LINE__, #actual, #expected, check_a_, check_a_, check_e_, check_e_);            \
    }                                                                                                     \
  } while (0)

/* Doubles compared with a relative tolerance (formulas, not bit patterns). */
#define CHECK_NEAR(actual, expected, rel_tol)                                                             \
  do {                                                                                                    \
    double check_a_ = (double)(actual), check_e_ = (double)(expected);                                    \
    double check_d_ = check_a_ - check_e_;                                                                \
    if (check_d_ < 0) check_d_ = -check_d_;                                                               \
    double check_s_ = check_e_ < 0 ? -check_e_ : check_e_;                                                \
    test_checks++;                                                                                        \
    if (!(check_d_ <= (rel_tol) * (check_s_ > 1e-300 ? check_s_ : 1.0))) {                                \
      test_failures++;                                                                                    \
      fprintf(stderr, "%s:%d: %s ~= %s failed: got %.17g, expected %.17g\n", __FILE__, __LINE__, #actual, \
              #expected, check_a_, check_e_);                                                             \
    }                                                                                                     \
  } while (0)

/* A status-returning call must return exactly `code` (a bg_status). */
#define CHECK_STATUS(expr, code)                                                                 \
  do {                                                                                           \
    int check_got_ = (int)(expr), check_want_ = (int)(code);                                     \
    test_checks++;                                                                               \
    if (check_got_ != check_want_) {                                                             \
      test_failures++;                                                                           \
      fprintf(stderr, "%s:%d: %s: got %s (%d), expected %s (%d)\n", __FILE__, __LINE__, #expr,   \
              bg_status_name(check_got_), check_got_, bg_status_name(check_want_), check_want_); \
    }                                                                                            \
  } while (0)

/* Like CHECK_STATUS, with a printf-style label for checks made in loops. */
#define CHECK_STATUS_AT(expr, code, ...)                                                         \
  do {                                                                                           \
    int check_got_ = (int)(expr), check_want_ = (int)(code);                                     \
    test_checks++;                                                                               \
    if (check_got_ != check_want_) {                                                             \
      test_failures++;                                                                           \
      fprintf(stderr, "%s:%d: %s: got %s (%d), expected %s (%d) at ", __FILE__, __LINE__, #expr, \
              bg_status_name(check_got_), check_got_, bg_status_name(check_want_), check_want_); \
      fprintf(stderr, __VA_ARGS__);                                                              \
      fputc('\n', stderr);                                                                       \
    }                                                                                            \
  } while (0)

/* Stop the current test function when a precondition for the rest fails. */
#define REQUIRE(cond)                                         \
  do {                                                        \
    int require_ok_ = !!(cond);                               \
    CHECK_MSG(require_ok_, "%s (stopping this test)", #cond); \
    if (!require_ok_) return;                                 \
  } while (0)

static inline int test_report(const char *name) {
  if (test_failures) {
    fprintf(stderr, "%s: %d of %ld checks FAILED\n", name, test_failures, test_checks);
    return 1;
  }
  printf("%s: all %ld checks passed\n", name, test_checks);
  return 0;
}

/* Lowercase hex of bytes into out (2*len+1 chars). */
static inline void test_hex(const uint8_t *bytes, size_t len, char *out) {
  static const char digits[] = "0123456789abcdef";
  for (size_t i = 0; i < len; i++) {
    out[2 * i] = digits[bytes[i] >> 4];
    out[2 * i + 1] = digits[bytes[i] & 15];
  }
  out[2 * len] = '\0';
}

#endif /* BG_TEST_UTIL_H */
