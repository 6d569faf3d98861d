/*
 * hash_floor.c — how fast the key hash itself runs natively and in wasm, with
 * no filter around it. Built twice by bench/hash-floor.mjs from this one file:
 * natively (cc, the flags of build-native.sh) and as a standalone wasm module
 * (emcc, the flags of the shipped module's speed-built files). Each build hashes
 * the same n keys, "https://example.com/posts/%07u.html" (38 bytes), in a loop
 * inside one call, so neither side pays a JS/wasm boundary per key.
 *
 * Hashes timed: bg_hash (the filters' scheme: seeded XXH3-128, src/hash.c) and,
 * for comparison, XXH3-64 and XXH64 from the same xxhash.h.
 */
#define _POSIX_C_SOURCE 199309L /* clock_gettime under -std=c11 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bloomgate.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#define KEY_LEN 38
static uint8_t *keys;
static uint32_t key_count;

/* Returns 0, or -1 when the keys do not fit in memory. */
int floor_setup(uint32_t n) {
  free(keys);
  keys = (uint8_t *)malloc((size_t)n * KEY_LEN + 1);
  if (!keys) return -1;
  for (uint32_t i = 0; i < n; i++) {
    char key[KEY_LEN + 1];
    snprintf(key, sizeof key, "https://example.com/posts/%07u.html", (unsigned)(i % 10000000u));
    memcpy(keys + (size_t)i * KEY_LEN, key, KEY_LEN);
  }
  key_count = n;
  return 0;
}

/* Hash every key once with hash `which` (0 bg_hash, 1 XXH3-64, 2 XXH64); returns a checksum. */
uint32_t floor_run(int which) {
  uint64_t sum = 0;
  const uint8_t *key = keys;
  for (uint32_t i = 0; i < key_count; i++, key += KEY_LEN) {
    if (which == 0) {
      bg_hash_pair h = bg_hash(key, KEY_LEN, 42);
      sum += h.h1 ^ h.h2;
    } else if (which == 1) {
      sum += XXH3_64bits_withSeed(key, KEY_LEN, 42);
    } else {
      sum += XXH64(key, KEY_LEN, 42);
    }
  }
  return (uint32_t)(sum ^ (sum >> 32));
}

#if !defined(__wasm__)
#include <time.h>
/* Native driver: hash_floor N ROUNDS -> "check c0 c1 c2", then per round the ns per key of each hash. */
int main(int argc, char **argv) {
  uint32_t n = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 1000000u;
  int rounds = argc > 2 ? atoi(argv[2]) : 7;
  if (n == 0 || floor_setup(n) != 0) return 1;
  printf("check %u %u %u\n", floor_run(0), floor_run(1), floor_run(2)); /* also the warm-up */
  for (int r = 0; r < rounds; r++) {
    for (int which = 0; which < 3; which++) {
      struct timespec t0, t1;
      clock_gettime(CLOCK_MONOTONIC, &t0);
      volatile uint32_t sink = floor_run(which);
      (void)sink;
      clock_gettime(CLOCK_MONOTONIC, &t1);
      double ns = (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec);
      printf("%s%.2f", which ? " " : "", ns / n);
    }
    printf("\n");
  }
  return 0;
}
#endif
