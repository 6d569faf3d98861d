/*
 * native_bench.c — the C core timed natively, on the same keys as bench/run.mjs.
 *
 * Keys: member i (0 <= i < n) and probe i (n <= i < 2n) are both
 *   "https://example.com/posts/%07u.html"  (38 bytes while i < 10^7)
 * exactly as bench/keys.mjs generates them, so the numbers compare key for key.
 *
 * Methodology mirrors the JavaScript side: every case is warmed up, then run for
 * several rounds with the cases interleaved; in a round a case repeats whole
 * passes over its keys until at least --min-ms have elapsed; the reported
 * figure is the median over rounds. Answers are summed into a checksum that is
 * printed, so the compiler cannot drop the work.
 *
 * Output: one JSON object on stdout (bench/native.mjs parses it). Errors go to
 * stderr with a non-zero exit status.
 *
 * usage: native_bench [--n N] [--batch B] [--rounds R] [--min-ms MS] [--error-rate P] [--kind NAME]
 * (--kind: classic, the default, or a kind that takes keys one at a time: blocked, counting,
 * scalable, cuckoo)
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bloomgate.h"

#define KEY_FORMAT "https://example.com/posts/%07u.html"
#define MAX_ROUNDS 32

typedef struct {
  uint8_t *bytes;
  uint32_t *offsets; /* count + 1 entries, as bg_filter_contains_many expects */
  size_t count;
} key_set;

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void die(const char *what, int status) {
  fprintf(stderr, "native_bench: %s: %s (%s)\n", what, bg_strerror(status), bg_status_name(status));
  exit(1);
}

static void *xmalloc(size_t size) {
  void *p = malloc(size ? size : 1);
  if (!p) {
    fprintf(stderr, "native_bench: out of memory (%zu bytes)\n", size);
    exit(1);
  }
  return p;
}

/* Keys first..first+count-1, packed back to back with offsets. */
static key_set make_keys(uint32_t first, size_t count) {
  key_set set;
  size_t capacity = count * 40 + 64;
  set.bytes = xmalloc(capacity);
  set.offsets = xmalloc((count + 1) * sizeof(uint32_t));
  set.count = count;
  size_t used = 0;
  for (size_t i = 0; i < count; i++) {
    char tmp[64];
    int len = snprintf(tmp, sizeof tmp, KEY_FORMAT, (unsigned)(first + i));
    if (used + (size_t)len > capacity) {
      capacity *= 2;
      uint8_t *grown = realloc(set.bytes, capacity);
      if (!grown) {
        fprintf(stderr, "native_bench: out of memory\n");
        exit(1);
      }
      set.bytes = grown;
    }
    set.offsets[i] = (uint32_t)used;
    memcpy(set.bytes + used, tmp, (size_t)len);
    used += (size_t)len;
  }
  set.offsets[count] = (uint32_t)used;
  return set;
}

static void free_keys(key_set *set) {
  free(set->bytes);
  free(set->offsets);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double minimum(const double *values, int count) {
  double best = values[0];
  for (int i = 1; i < count; i++)
    if (values[i] < best) best = values[i];
  return best;
}

static double median(double *values, int count) {
  double sorted[MAX_ROUNDS];
  memcpy(sorted, values, (size_t)count * sizeof(double));
  qsort(sorted, (size_t)count, sizeof(double), cmp_double);
  return count % 2 ? sorted[count / 2] : (sorted[count / 2 - 1] + sorted[count / 2]) / 2;
}

/* ---- the cases: each does one pass and returns the number of operations ---- */

typedef struct {
  bg_filter *filter;
  key_set *members, *probes;
  size_t batch;
  uint8_t *results;
  uint64_t checksum;
  double untimed_ns; /* per-pass set-up excluded from the measurement */
  uint64_t m;
  uint32_t k;
} context;

static size_t pass_add(context *c) {
  double t0 = now_ns();
  bg_filter_clear(c->filter);
  c->untimed_ns += now_ns() - t0;
  const key_set *k = c->members;
  for (size_t i = 0; i < k->count; i++) {
    bg_status rc = bg_filter_add(c->filter, k->bytes + k->offsets[i], k->offsets[i + 1] - k->offsets[i]);
    if (rc != BG_OK) die("bg_filter_add", rc);
  }
  return k->count;
}

static size_t pass_add_many(context *c) {
  double t0 = now_ns();
  bg_filter_clear(c->filter);
  c->untimed_ns += now_ns() - t0;
  const key_set *k = c->members;
  for (size_t i = 0; i < k->count; i += c->batch) {
    size_t count = k->count - i < c->batch ? k->count - i : c->batch;
    /* offsets are absolute into k->bytes, so the batch starts at bytes + 0 */
    bg_status rc = bg_filter_add_many(c->filter, k->bytes, k->offsets + i, count);
    if (rc != BG_OK) die("bg_filter_add_many", rc);
  }
  return k->count;
}

static size_t contains_pass(context *c, const key_set *k) {
  uint64_t hits = 0;
  for (size_t i = 0; i < k->count; i++) {
    int r = bg_filter_contains(c->filter, k->bytes + k->offsets[i], k->offsets[i + 1] - k->offsets[i]);
    if (r < 0) die("bg_filter_contains", r);
    hits += (uint64_t)r;
  }
  c->checksum += hits;
  return k->count;
}

static size_t contains_many_pass(context *c, const key_set *k) {
  uint64_t hits = 0;
  for (size_t i = 0; i < k->count; i += c->batch) {
    size_t count = k->count - i < c->batch ? k->count - i : c->batch;
    bg_status rc = bg_filter_contains_many(c->filter, k->bytes, k->offsets + i, count, c->results);
    if (rc != BG_OK) die("bg_filter_contains_many", rc);
    for (size_t j = 0; j < count; j++) hits += c->results[j];
  }
  c->checksum += hits;
  return k->count;
}

/* Where a key becomes bits, without touching the filter: the hash alone, then with positions. */
static size_t pass_hash(context *c) {
  const key_set *k = c->probes;
  uint64_t acc = 0;
  for (size_t i = 0; i < k->count; i++) {
    bg_hash_pair h = bg_hash(k->bytes + k->offsets[i], k->offsets[i + 1] - k->offsets[i], 0);
    acc += h.h1 ^ h.h2;
  }
  c->checksum += acc;
  return k->count;
}

static size_t pass_hash_positions(context *c) {
  const key_set *k = c->probes;
  uint64_t acc = 0, positions[BG_MAX_K];
  for (size_t i = 0; i < k->count; i++) {
    bg_positions(bg_hash(k->bytes + k->offsets[i], k->offsets[i + 1] - k->offsets[i], 0), c->m, c->k, positions);
    acc += positions[c->k - 1];
  }
  c->checksum += acc;
  return k->count;
}

static size_t pass_contains_member(context *c) { return contains_pass(c, c->members); }
static size_t pass_contains_probe(context *c) { return contains_pass(c, c->probes); }
static size_t pass_many_member(context *c) { return contains_many_pass(c, c->members); }
static size_t pass_many_probe(context *c) { return contains_many_pass(c, c->probes); }

typedef struct {
  const char *name;
  size_t (*pass)(context *);
  double rounds[MAX_ROUNDS];
} bench_case;

/* Repeat passes until min_ns has elapsed; ns per operation, set-up excluded. */
static double measure(bench_case *bc, context *c, double min_ns) {
  size_t ops = 0;
  c->untimed_ns = 0;
  double start = now_ns(), elapsed;
  do {
    ops += bc->pass(c);
    elapsed = now_ns() - start - c->untimed_ns;
  } while (elapsed < min_ns);
  return elapsed / (double)ops;
}

static void run_cases(bench_case *cases, int count, context *c, int rounds, double min_ns) {
  for (int i = 0; i < count; i++) measure(&cases[i], c, min_ns / 4); /* warm-up */
  for (int r = 0; r < rounds; r++)
    for (int j = 0; j < count; j++) {
      int i = (j + r) % count; /* rotate the order so no case always runs first */
      cases[i].rounds[r] = measure(&cases[i], c, min_ns);
    }
}

static long parse_long(const char *s, const char *flag) {
  char *end;
  long v = strtol(s, &end, 10);
  if (*s == '\0' || *end != '\0' || v <= 0) {
    fprintf(stderr, "native_bench: %s needs a positive integer, got '%s'\n", flag, s);
    exit(2);
  }
  return v;
}

int main(int argc, char **argv) {
  size_t n = 1000000, batch = 1000;
  int rounds = 5;
  double min_ms = 200, error_rate = 0.01;
  int kind = BG_KIND_CLASSIC;
  for (int i = 1; i < argc; i++) {
    if (i + 1 >= argc) {
      fprintf(stderr, "native_bench: %s needs a value\n", argv[i]);
      return 2;
    }
    if (!strcmp(argv[i], "--n")) n = (size_t)parse_long(argv[++i], "--n");
    else if (!strcmp(argv[i], "--batch")) batch = (size_t)parse_long(argv[++i], "--batch");
    else if (!strcmp(argv[i], "--rounds")) rounds = (int)parse_long(argv[++i], "--rounds");
    else if (!strcmp(argv[i], "--min-ms")) min_ms = (double)parse_long(argv[++i], "--min-ms");
    else if (!strcmp(argv[i], "--error-rate")) error_rate = strtod(argv[++i], NULL);
    else if (!strcmp(argv[i], "--kind")) {
      const char *name = argv[++i];
      kind = 0;
      for (int id = 1; id < 256 && !kind; id++)
        if (bg_kind_name(id) && !strcmp(bg_kind_name(id), name)) kind = id;
      if (!kind) {
        fprintf(stderr, "native_bench: unknown kind '%s'\n", name);
        return 2;
      }
    }
    else {
      fprintf(stderr, "native_bench: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  if (rounds > MAX_ROUNDS) rounds = MAX_ROUNDS;
  if (n > 4000000000u / 2) {
    fprintf(stderr, "native_bench: --n too large\n");
    return 2;
  }

  key_set members = make_keys(0, n), probes = make_keys((uint32_t)n, n);
  bg_filter *filter;
  bg_status rc = bg_filter_create(kind, n, error_rate, 0, BG_KEY_UTF8, &filter);
  if (rc != BG_OK) die("bg_filter_create", rc);

  bg_info info;
  bg_filter_info(filter, &info);
  context c = {filter, &members, &probes, batch, xmalloc(batch), 0, 0, info.m, info.k};
  double min_ns = min_ms * 1e6;

  bench_case inserts[] = {{"add", pass_add, {0}}, {"add_many", pass_add_many, {0}}};
  run_cases(inserts, 2, &c, rounds, min_ns);

  /* Queries run against exactly the n members, added once. */
  bg_filter_clear(filter);
  for (size_t i = 0; i < n; i++) {
    rc = bg_filter_add(filter, members.bytes + members.offsets[i], members.offsets[i + 1] - members.offsets[i]);
    if (rc != BG_OK) die("bg_filter_add", rc);
  }
  uint64_t false_negatives = 0, false_positives = 0;
  for (size_t i = 0; i < n; i++) {
    false_negatives += bg_filter_contains(filter, members.bytes + members.offsets[i],
                                         members.offsets[i + 1] - members.offsets[i]) != 1;
    false_positives += bg_filter_contains(filter, probes.bytes + probes.offsets[i],
                                         probes.offsets[i + 1] - probes.offsets[i]) == 1;
  }

  bench_case queries[] = {{"contains_member", pass_contains_member, {0}},
                          {"contains_nonmember", pass_contains_probe, {0}},
                          {"contains_many_member", pass_many_member, {0}},
                          {"contains_many_nonmember", pass_many_probe, {0}},
                          {"hash", pass_hash, {0}},
                          {"hash_positions", pass_hash_positions, {0}}};
  run_cases(queries, 6, &c, rounds, min_ns);

  /* Load: validate (checksum included) and copy the payload, against a plain memcpy. */
  size_t size = bg_filter_serialized_size(filter), written = 0;
  uint8_t *file = xmalloc(size), *copy = xmalloc(size);
  rc = bg_filter_serialize(filter, file, size, &written);
  if (rc != BG_OK) die("bg_filter_serialize", rc);
  double load_rounds[MAX_ROUNDS], copy_rounds[MAX_ROUNDS];
  for (int r = -1; r < rounds; r++) { /* r = -1 is the warm-up */
    size_t loads = 0, copies = 0;
    double start = now_ns(), load_ns, copy_ns;
    do {
      bg_filter *loaded;
      rc = bg_filter_deserialize(file, written, &loaded);
      if (rc != BG_OK) die("bg_filter_deserialize", rc);
      c.checksum += loaded != NULL;
      bg_filter_free(loaded);
      loads++;
    } while ((load_ns = now_ns() - start) < min_ns);
    start = now_ns();
    do {
      memcpy(copy, file, written);
      c.checksum += copy[copies % written];
      copies++;
    } while ((copy_ns = now_ns() - start) < min_ns);
    if (r >= 0) {
      load_rounds[r] = load_ns / (double)loads;
      copy_rounds[r] = copy_ns / (double)copies;
    }
  }

  printf("{\n");
  printf("  \"kind\": \"%s\",\n", bg_kind_name(kind));
  printf("  \"n\": %zu,\n  \"batch\": %zu,\n  \"rounds\": %d,\n  \"min_ms\": %g,\n", n, batch, rounds, min_ms);
  printf("  \"m\": %llu,\n  \"k\": %u,\n", (unsigned long long)info.m, info.k);
  printf("  \"serialized_bytes\": %zu,\n", written);
  printf("  \"false_negatives\": %llu,\n  \"false_positives\": %llu,\n  \"fp_rate\": %.6f,\n",
         (unsigned long long)false_negatives, (unsigned long long)false_positives,
         (double)false_positives / (double)n);
  bench_case *all[] = {&inserts[0], &inserts[1], &queries[0], &queries[1], &queries[2], &queries[3],
                       &queries[4], &queries[5]};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++)
    printf("  \"%s_ns\": %.3f,\n  \"%s_min_ns\": %.3f,\n", all[i]->name, median(all[i]->rounds, rounds),
           all[i]->name, minimum(all[i]->rounds, rounds));
  printf("  \"deserialize_ms\": %.4f,\n  \"memcpy_ms\": %.4f,\n", median(load_rounds, rounds) / 1e6,
         median(copy_rounds, rounds) / 1e6);
  printf("  \"deserialize_min_ms\": %.4f,\n  \"memcpy_min_ms\": %.4f,\n", minimum(load_rounds, rounds) / 1e6,
         minimum(copy_rounds, rounds) / 1e6);
  printf("  \"checksum\": %llu\n}\n", (unsigned long long)c.checksum);

  free(file);
  free(copy);
  free(c.results);
  bg_filter_free(filter);
  free_keys(&members);
  free_keys(&probes);
  return 0;
}
