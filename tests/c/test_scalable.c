/*
 * test_scalable.c — the scalable kind keeps its error rate far past its first capacity; its
 * layer records are checked; a chain past the limits refuses items. Round trips of grown
 * chains (copied and in place, growing further after loading) are test_conformance.c's.
 */
#include <math.h>
#include <stdlib.h>

#include "test_util.h"

static size_t key(char *buf, const char *prefix, long i) { return (size_t)sprintf(buf, "%s%ld", prefix, i); }

/* Grow to 10x the initial capacity: zero false negatives, aggregate rate within target + 4 sigma. */
static void grows_within_target(uint64_t n0, double p) {
  bg_filter *f;
  CHECK_EQ_U64(bg_filter_create(BG_KIND_SCALABLE, n0, p, 11, BG_KEY_UTF8, &f), BG_OK);
  if (!f) return;
  long n = (long)n0 * 10, probes = 200000, false_negatives = 0, hits = 0;
  char buf[64];
  for (long i = 0; i < n; i++) CHECK_EQ_U64(bg_filter_add(f, buf, key(buf, "key_", i)), BG_OK);
  for (long i = 0; i < n; i++) false_negatives += bg_filter_contains(f, buf, key(buf, "key_", i)) != 1;
  for (long i = 0; i < probes; i++) hits += bg_filter_contains(f, buf, key(buf, "absent_", i)) == 1;
  CHECK_EQ_U64(false_negatives, 0);
  double measured = (double)hits / (double)probes, sigma = sqrt(p * (1 - p) / (double)probes);
  CHECK_MSG(measured <= p + 4 * sigma, "p=%g measured %.5f", p, measured);
  bg_info info;
  bg_filter_info(f, &info);
  CHECK_EQ_U64(info.kind, BG_KIND_SCALABLE);
  CHECK_EQ_U64(info.count, (uint64_t)n);
  CHECK(info.theoretical_error_rate <= p);
  CHECK(info.estimated_error_rate <= p * 1.2);
  printf("scalable n0=%llu p=%g: 10x items, measured %.5f, theoretical %.5f, %.2f bits/key\n",
         (unsigned long long)n0, p, measured, info.theoretical_error_rate, (double)info.m / (double)n);

  bg_filter_free(f);
}

static void corrupt_payloads(void) {
  bg_filter *f;
  CHECK_EQ_U64(bg_filter_create(BG_KIND_SCALABLE, 100, 0.01, 1, BG_KEY_UTF8, &f), BG_OK);
  char buf[32];
  for (long i = 0; i < 450; i++) bg_filter_add(f, buf, key(buf, "k", i)); /* three layers */
  size_t size = bg_filter_serialized_size(f), written;
  uint8_t *file = malloc(size);
  bg_filter_serialize(f, file, size, &written);
  bg_header h;
  CHECK_EQ_U64(bg_file_validate(file, size, &h), BG_OK);
  uint8_t *payload = file + h.payload_offset;
  struct {
    size_t offset;
    uint8_t value;
    int expected;
  } cases[] = {
      {0, 0, BG_E_PAYLOAD},           /* zero layers */
      {0, 49, BG_E_PAYLOAD},          /* more layers than the limit */
      {0, 4, BG_E_PAYLOAD},           /* more layer records than the payload holds */
      {5, 1, BG_E_PAYLOAD},           /* reserved prefix bytes */
      {16 + 8, 0, BG_E_PAYLOAD},      /* layer 0: k = 0 */
      {16 + 8, 65, BG_E_PAYLOAD},     /* layer 0: k > BG_MAX_K */
      {16 + 12, 1, BG_E_PAYLOAD},     /* layer 0: reserved */
      {16 + 24, 255, BG_E_PAYLOAD},   /* layer 0: count > capacity */
      {16, 1, BG_E_PAYLOAD},          /* layer 0: m no longer matches the bytes that follow */
      {16 + 16, 101, BG_E_PAYLOAD},   /* layer 0: capacity other than the header's n0 */
      {16 + 24, 99, BG_E_PAYLOAD},    /* layer 0: room left below a newer layer */
      {16 + 32 + 8, 1, BG_E_PAYLOAD}, /* layer 1: k other than its geometry's */
  };
  uint8_t *copy = malloc(size);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    memcpy(copy, file, size);
    copy[h.payload_offset + cases[i].offset] = cases[i].value;
    uint64_t sum = bg_file_checksum(copy, size);
    for (int b = 0; b < 8; b++) copy[8 + b] = (uint8_t)(sum >> (8 * b));
    bg_filter *g = NULL;
    int rc = bg_filter_deserialize(copy, size, &g);
    CHECK_MSG(rc == cases[i].expected, "case %zu: got %s", i, bg_status_name(rc));
    CHECK(g == NULL);
  }
  (void)payload;
  /* A header whose n0 no longer matches its layers: once the newest layer filled, the next add
   * would open a layer sized from the header (the fuzzer's 59 GB allocation). */
  memcpy(copy, file, size);
  copy[40 + 5] = 1; /* header capacity (offset 40, u64 LE) += 2^40 */
  uint64_t sum = bg_file_checksum(copy, size);
  for (int b = 0; b < 8; b++) copy[8 + b] = (uint8_t)(sum >> (8 * b));
  bg_filter *g = NULL;
  CHECK_EQ_U64(bg_filter_deserialize(copy, size, &g), BG_E_PAYLOAD);
  CHECK(g == NULL);
  free(copy);
  free(file);
  bg_filter_free(f);
}

/* A chain that would need a layer past the limits refuses the item and stays usable. */
static void refuses_past_the_limit(void) {
  bg_filter *f;
  /*
   * Layers tighten p by half each, so a chain that starts near BG_MAX_K runs out
   * of representable layers after a few (the same path a layer past BG_MAX_BITS
   * or past available memory takes, which no test can allocate its way to).
   */
  CHECK_EQ_U64(bg_filter_create(BG_KIND_SCALABLE, 1, 1e-18, 1, BG_KEY_UTF8, &f), BG_OK);
  char buf[32];
  int rc = BG_OK;
  long added = 0;
  while (rc == BG_OK && added < 200) {
    rc = bg_filter_add(f, buf, key(buf, "x", added));
    if (rc == BG_OK) added++;
  }
  CHECK_MSG(rc == BG_E_TOO_LARGE, "got %s after %ld items", bg_status_name(rc), added);
  long lost = 0;
  for (long i = 0; i < added; i++) lost += bg_filter_contains(f, buf, key(buf, "x", i)) != 1;
  CHECK_EQ_U64(lost, 0);
  bg_info info;
  bg_filter_info(f, &info);
  CHECK_EQ_U64(info.count, (uint64_t)added);
  bg_filter_free(f);
  /* A first layer past the limits is refused at creation. */
  CHECK_EQ_U64(bg_filter_create(BG_KIND_SCALABLE, (uint64_t)1 << 53, 0.01, 1, BG_KEY_UTF8, &f), BG_E_TOO_LARGE);
  CHECK(f == NULL);
}

int main(void) {
  grows_within_target(20000, 0.01);
  grows_within_target(20000, 0.001);
  corrupt_payloads();
  refuses_past_the_limit();
  return test_report("test_scalable");
}
