/*
 * floor_build.c — the native side of bench/floor-speed.mjs: one static filter (fuse4, or
 * fuse8 / fuse16 for reference) built natively from the benchmark's keys, timed by phase.
 *
 * Keys: member i (0 <= i < n) is "https://example.com/posts/%07u.html", exactly as
 * bench/keys.mjs makes it; with --value-bits R member i's value is value_of(i) below, as
 * bench/floor-speed.mjs gives it. Keys go in 4,096 at a time (bg_filter_add_many, with values
 * bg_filter_add_many_values), the way BloomFilter#addAll(keys[, values]) gives packed keys to
 * the wasm build.
 *
 * usage: floor_build --kind NAME --n N --error-rate P [--value-bits R] [--seed S] [--out FILE]
 * Prints one JSON object: n, bytes, seconds of the add and seal phases, and the file's
 * SHA-256 (the wasm build must write the same bytes). --out writes the file.
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bloomgate.h"

#define KEY_FORMAT "https://example.com/posts/%07u.html"
#define BATCH 4096

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what, bg_status rc) {
  fprintf(stderr, "floor_build: %s: %s (%s)\n", what, bg_strerror(rc), bg_status_name(rc));
  exit(1);
}

static void *xmalloc(size_t size) {
  void *p = malloc(size ? size : 1);
  if (!p) {
    fprintf(stderr, "floor_build: out of memory (%zu bytes)\n", size);
    exit(1);
  }
  return p;
}

/* Member i's value (bench/floor-speed.mjs valueOf): the top bits of i x the golden ratio. */
static unsigned value_of(uint32_t i, unsigned bits) {
  return bits == 0 ? 0 : (unsigned)(((uint32_t)(i * 2654435769u)) >> (32 - bits));
}

int main(int argc, char **argv) {
  const char *kind_name = "fuse4", *out = NULL;
  uint64_t n = 1000000, seed = 0;
  double error_rate = 1.0 / 256;
  unsigned value_bits = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--kind")) kind_name = argv[i + 1];
    else if (!strcmp(argv[i], "--n")) n = strtoull(argv[i + 1], NULL, 10);
    else if (!strcmp(argv[i], "--error-rate")) error_rate = strtod(argv[i + 1], NULL);
    else if (!strcmp(argv[i], "--value-bits")) value_bits = (unsigned)strtoul(argv[i + 1], NULL, 10);
    else if (!strcmp(argv[i], "--seed")) seed = strtoull(argv[i + 1], NULL, 10);
    else if (!strcmp(argv[i], "--out")) out = argv[i + 1];
    else {
      fprintf(stderr, "floor_build: unknown option %s\n", argv[i]);
      return 64;
    }
  }
  if (argc % 2 == 0 || n == 0 || n > 10000000) {
    fprintf(stderr, "usage: floor_build --kind NAME --n N (1..10^7) --error-rate P [--value-bits R] [--seed S] [--out FILE]\n");
    return 64;
  }
  int kind = 0;
  for (int id = 1; id < 256 && !kind; id++)
    if (bg_kind_name(id) && !strcmp(bg_kind_name(id), kind_name)) kind = id;
  if (!kind) {
    fprintf(stderr, "floor_build: unknown kind '%s'\n", kind_name);
    return 64;
  }

  /* The keys, packed, before the clock starts (the JS side packs them beforehand too). */
  const size_t key_bytes = 38;
  uint8_t *keys = xmalloc(n * key_bytes + 1);
  for (uint64_t i = 0; i < n; i++) {
    char tmp[64];
    snprintf(tmp, sizeof tmp, KEY_FORMAT, (unsigned)i);
    memcpy(keys + i * key_bytes, tmp, key_bytes);
  }
  uint32_t offsets[BATCH + 1];
  for (uint32_t i = 0; i <= BATCH; i++) offsets[i] = (uint32_t)(i * key_bytes);
  uint8_t *values = value_bits > 0 ? xmalloc(n) : NULL;
  for (uint64_t i = 0; values && i < n; i++) values[i] = (uint8_t)value_of((uint32_t)i, value_bits);

  double t0 = now_s();
  bg_filter *filter = NULL;
  bg_status rc = bg_filter_create_with_values(kind, n, error_rate, seed, BG_KEY_UTF8, value_bits, &filter);
  if (rc != BG_OK) die("bg_filter_create_with_values", rc);
  for (uint64_t i = 0; i < n; i += BATCH) {
    size_t count = n - i < BATCH ? (size_t)(n - i) : BATCH;
    if ((rc = bg_filter_add_many_values(filter, keys + i * key_bytes, offsets, values ? values + i : NULL, count)) != BG_OK)
      die("bg_filter_add_many_values", rc);
  }
  double t1 = now_s();
  if ((rc = bg_filter_seal(filter)) != BG_OK) die("bg_filter_seal", rc);
  double t2 = now_s();
  size_t size = bg_filter_serialized_size(filter);
  uint8_t *file = xmalloc(size);
  if ((rc = bg_filter_serialize(filter, file, size, NULL)) != BG_OK) die("bg_filter_serialize", rc);
  double t3 = now_s();
  uint8_t digest[32];
  bg_sha256(file, size, digest);
  if (out) {
    FILE *f = fopen(out, "wb");
    if (!f || fwrite(file, 1, size, f) != size || fclose(f) != 0) {
      fprintf(stderr, "floor_build: cannot write %s\n", out);
      return 73;
    }
  }
  printf("{\"kind\":\"%s\",\"n\":%" PRIu64 ",\"errorRate\":%.17g,\"valueBits\":%u,\"bytes\":%zu,"
         "\"seconds\":{\"add\":%.6f,\"seal\":%.6f,\"serialize\":%.6f,\"total\":%.6f},\"sha256\":\"",
         kind_name, n, error_rate, value_bits, size, t1 - t0, t2 - t1, t3 - t2, t3 - t0);
  for (int i = 0; i < 32; i++) printf("%02x", digest[i]);
  printf("\"}\n");
  free(file);
  free(keys);
  free(values);
  bg_filter_free(filter);
  return 0;
}
