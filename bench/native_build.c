/*
 * native_build.c — the native floor under `bloomgate build --format hibp`.
 *
 * Reads a Have I Been Pwned dump in the combined-file layout (rows of 40 hex
 * digits, ':', a decimal COUNT, ending in LF or CRLF; a UTF-8 byte order mark
 * at the start of any row skipped) the way the CLI does: in 1 MiB chunks, a
 * counting pass first when --capacity is not given, then an adding pass that
 * decodes each row's 20 bytes and hands them to bg_filter_add_key, then
 * bg_filter_seal and the .bgf file. For the same input and options the file
 * is byte for byte the CLI's (tests/js/native-build.test.mjs checks it):
 * the same metadata JSON, capacity, seed and kind.
 *
 * Fuse filters of more than 2^24 keys are sharded as the CLI shards them
 * (js/cli/fuse-shards.js: the key's shard is the top bits of h2, each shard the
 * unsharded fuse filter of its keys' h1, one file with a shard table); here
 * all shards' h1 values are held in memory, as a floor may.
 *
 * usage: native_build INPUT -o OUT [--kind classic|blocked|fuse|fuse8|fuse16]
 *          [--error-rate P] [--min-count C] [--seed S] [--capacity N]
 *          [--shards S] [--skip-invalid] [--batch]
 * --batch: keys go in 4,096 at a time (bg_filter_add_many), the fastest the core
 * takes them; the file is the same.
 * Prints one JSON object on stdout: rows, items, skipped, bytes, and the
 * seconds of each phase. Exit status: 0 built, 64 usage, 65 bad input, 66
 * cannot read, 73 cannot write, 70 anything else.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bloomgate.h"

#define CHUNK_BYTES (1u << 20)
#define MAX_LINE_BYTES (64u * 1024u)
#define SHARD_KEYS (1u << 24)
#define MAX_SHARDS (1u << 24)
#define BATCH_KEYS 4096

enum { EXIT_USAGE = 64, EXIT_DATA = 65, EXIT_NOINPUT = 66, EXIT_SOFTWARE = 70, EXIT_CANTCREAT = 73 };

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void fail(int status, const char *format, const char *what) {
  fprintf(stderr, "native_build: ");
  fprintf(stderr, format, what);
  fputc('\n', stderr);
  exit(status);
}

static void fail_bg(const char *what, bg_status rc) {
  fprintf(stderr, "native_build: %s: %s (%s)\n", what, bg_strerror(rc), bg_status_name(rc));
  exit(rc == BG_E_NOMEM ? EXIT_SOFTWARE : EXIT_DATA);
}

static void *xmalloc(size_t size) {
  void *p = malloc(size ? size : 1);
  if (!p) fail(EXIT_SOFTWARE, "out of memory (%s)", "malloc");
  return p;
}

static signed char hex_value[256];

static void init_hex(void) {
  memset(hex_value, -1, sizeof hex_value);
  for (int i = 0; i < 10; i++) hex_value['0' + i] = (signed char)i;
  for (int i = 0; i < 6; i++) {
    hex_value['A' + i] = (signed char)(10 + i);
    hex_value['a' + i] = (signed char)(10 + i);
  }
}

/* ---- what one pass over the input produces ---- */

typedef struct {
  double min_count;
  int skip_invalid;
  /* counts, as records.js keeps them */
  uint64_t rows, items, empty, invalid, below;
  /* the adding pass */
  bg_filter *filter;        /* unsharded: keys go straight in */
  uint8_t *batch;           /* --batch: keys gathered for bg_filter_add_many */
  uint32_t *offsets;
  size_t batched;
  unsigned shard_bits;      /* sharded fuse: h1 values per shard */
  uint64_t seed;
  uint64_t **shard_h1;
  size_t *shard_used, *shard_cap;
} pass;

/* --batch: the gathered keys in one call (the filter's utf8 encoding takes them as they are). */
static void flush_batch(pass *p) {
  if (p->batched == 0) return;
  bg_status rc = bg_filter_add_many(p->filter, p->batch, p->offsets, p->batched);
  if (rc != BG_OK) fail_bg("bg_filter_add_many", rc);
  p->batched = 0;
}

/* One row: bytes[0, len) without its line ending; tooLong rows are invalid. */
static void row(pass *p, const uint8_t *b, size_t len, int too_long) {
  p->rows++;
  if (len >= 3 && b[0] == 0xef && b[1] == 0xbb && b[2] == 0xbf) {
    b += 3;
    len -= 3;
  }
  if (!too_long && len == 0) {
    p->empty++;
    return;
  }
  uint8_t key[20];
  double count = -1;
  if (!too_long && len >= 42 && b[40] == ':') {
    int bad = 0;
    for (int i = 0; i < 20; i++) {
      int hi = hex_value[b[2 * i]], lo = hex_value[b[2 * i + 1]];
      bad |= hi | lo;
      key[i] = (uint8_t)((hi << 4) | lo);
    }
    if (bad >= 0) {
      count = 0;
      for (size_t i = 41; i < len; i++) {
        unsigned digit = (unsigned)b[i] - '0';
        if (digit > 9) {
          count = -1;
          break;
        }
        count = count * 10 + digit;
      }
    }
  }
  if (count < 0) {
    size_t digits = 0;
    while (!too_long && digits < len && hex_value[b[digits]] >= 0) digits++;
    char where[32];
    snprintf(where, sizeof where, "%llu", (unsigned long long)p->rows);
    if (!too_long && digits == 32 && digits < len && b[digits] == ':') {
      fail(EXIT_DATA, "line %s: an NTLM dump (32-digit hashes)", where);
    }
    if (!p->skip_invalid) fail(EXIT_DATA, "line %s: expected SHA1HEX:COUNT", where);
    p->invalid++;
    return;
  }
  if (count < p->min_count) {
    p->below++;
    return;
  }
  p->items++;
  if (p->batch) {
    memcpy(p->batch + 20 * p->batched, key, 20);
    if (++p->batched == BATCH_KEYS) flush_batch(p);
  } else if (p->filter) {
    bg_status rc = bg_filter_add_key(p->filter, key, 20);
    if (rc != BG_OK) fail_bg("bg_filter_add_key", rc);
  } else if (p->shard_h1) {
    bg_hash_pair h = bg_hash(key, 20, p->seed);
    size_t s = p->shard_bits ? (size_t)(h.h2 >> (64 - p->shard_bits)) : 0;
    if (p->shard_used[s] == p->shard_cap[s]) {
      p->shard_cap[s] = p->shard_cap[s] ? 2 * p->shard_cap[s] : 4096;
      p->shard_h1[s] = realloc(p->shard_h1[s], p->shard_cap[s] * sizeof(uint64_t));
      if (!p->shard_h1[s]) fail(EXIT_SOFTWARE, "out of memory (%s)", "shards");
    }
    p->shard_h1[s][p->shard_used[s]++] = h.h1;
  }
}

/* Split the file into lines as js/cli/lines.js does, in 1 MiB reads. */
static void read_pass(const char *path, pass *p) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) fail(EXIT_NOINPUT, "cannot open '%s'", path);
  /* A line split across reads is moved to the front; room for the longest line. */
  size_t room = CHUNK_BYTES + MAX_LINE_BYTES + 2;
  uint8_t *buffer = xmalloc(room);
  size_t held = 0;      /* bytes of an unfinished line at the front */
  int overflow = 0;     /* the unfinished line is already too long: its start is kept */
  int first = 1;
  for (;;) {
    ssize_t n = read(fd, buffer + held, CHUNK_BYTES);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(EXIT_NOINPUT, "cannot read '%s'", path);
    }
    size_t start = 0, end = held + (size_t)n;
    if (first && end >= 3 && buffer[0] == 0xef && buffer[1] == 0xbb && buffer[2] == 0xbf) start = 3;
    if (first && (n > 0)) first = 0;
    if (n == 0) {
      if (end > 0 || overflow) {
        size_t len = end;
        if (!overflow && len > 0 && buffer[len - 1] == '\r') len--;
        row(p, buffer, len > 80 && (overflow || len > MAX_LINE_BYTES) ? 80 : len, overflow || len > MAX_LINE_BYTES);
      }
      break;
    }
    for (;;) {
      const uint8_t *lf = memchr(buffer + start, '\n', end - start);
      if (!lf) break;
      size_t stop = (size_t)(lf - buffer);
      size_t len = stop - start;
      if (!overflow && len > 0 && buffer[stop - 1] == '\r') len--;
      int too_long = overflow || len > MAX_LINE_BYTES;
      row(p, buffer + start, too_long && len > 80 ? 80 : len, too_long);
      overflow = 0;
      start = stop + 1;
    }
    held = end - start;
    if (held > MAX_LINE_BYTES + 1) {
      /* Keep only the start of a line that is too long already. */
      held = 80;
      overflow = 1;
    }
    memmove(buffer, buffer + start, held);
  }
  free(buffer);
  close(fd);
}

/* ---- the metadata, as JSON.stringify writes build.js's describeBuild() ---- */

static size_t json_string(char *out, const char *s) {
  size_t n = 0;
  out[n++] = '"';
  for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
    switch (*c) {
      case '"': n += (size_t)sprintf(out + n, "\\\""); break;
      case '\\': n += (size_t)sprintf(out + n, "\\\\"); break;
      case '\b': n += (size_t)sprintf(out + n, "\\b"); break;
      case '\f': n += (size_t)sprintf(out + n, "\\f"); break;
      case '\n': n += (size_t)sprintf(out + n, "\\n"); break;
      case '\r': n += (size_t)sprintf(out + n, "\\r"); break;
      case '\t': n += (size_t)sprintf(out + n, "\\t"); break;
      default:
        if (*c < 0x20) n += (size_t)sprintf(out + n, "\\u%04x", *c);
        else out[n++] = (char)*c;
    }
  }
  out[n++] = '"';
  out[n] = 0;
  return n;
}

static char *metadata_json(const char *path, const pass *counted, const char *min_count_text) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  char *out = xmalloc(strlen(base) * 6 + 256);
  size_t n = (size_t)sprintf(out, "{\"source\":");
  n += json_string(out + n, base);
  n += (size_t)sprintf(out + n, ",\"format\":\"hibp\"");
  if (counted) {
    n += (size_t)sprintf(out + n, ",\"items\":%llu,\"skipped\":%llu", (unsigned long long)counted->items,
                         (unsigned long long)(counted->invalid + counted->below));
  }
  sprintf(out + n, ",\"minCount\":%s}", min_count_text);
  return out;
}

/* ---- the file ---- */

static void write_file(const char *path, const uint8_t *bytes, size_t length) {
  FILE *f = fopen(path, "wb");
  if (!f) fail(EXIT_CANTCREAT, "cannot create '%s'", path);
  if (fwrite(bytes, 1, length, f) != length || fclose(f) != 0) fail(EXIT_CANTCREAT, "cannot write '%s'", path);
}

static uint8_t *serialize(const bg_filter *filter, size_t *length) {
  size_t size = bg_filter_serialized_size(filter);
  uint8_t *bytes = xmalloc(size);
  bg_status rc = bg_filter_serialize(filter, bytes, size, length);
  if (rc != BG_OK) fail_bg("bg_filter_serialize", rc);
  return bytes;
}

static uint64_t get_u64(const uint8_t *b) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = (v << 8) | b[i];
  return v;
}

static void put_u64(uint8_t *b, uint64_t v) {
  for (int i = 0; i < 8; i++) b[i] = (uint8_t)(v >> (8 * i));
}

/*
 * A sharded fuse file (docs/kinds/fuse.md, js/cli/fuse-shards.js writeFuseFile):
 * the template's header, a 32-byte payload header and S+1 offsets, each
 * shard's unsharded payload; m, count, payload_length set from the shards;
 * then the checksum.
 */
static uint8_t *sharded_fuse(bg_filter *template, int kind, uint64_t seed, const pass *p, size_t *length) {
  size_t template_length;
  bg_status rc = bg_filter_seal(template);
  if (rc != BG_OK) fail_bg("bg_filter_seal (template)", rc);
  uint8_t *head = serialize(template, &template_length);
  uint64_t payload_offset = get_u64(head + 96);
  unsigned shards = 1u << p->shard_bits;
  size_t table = 32 + 8 * ((size_t)shards + 1);
  size_t cap = payload_offset + table + 1024, used = payload_offset + table;
  uint8_t *out = xmalloc(cap);
  uint64_t *offsets = xmalloc(((size_t)shards + 1) * sizeof(uint64_t));
  uint64_t count = 0, cells = 0, keys = 0;
  int width = kind == BG_KIND_FUSE16 ? 2 : 1;
  for (unsigned s = 0; s < shards; s++) {
    bg_filter *shard;
    size_t records = p->shard_used[s];
    rc = bg_filter_create(kind, records < 1 ? 1 : records > SHARD_KEYS ? SHARD_KEYS : records, 0.5, seed, 0, &shard);
    if (rc != BG_OK) fail_bg("bg_filter_create (shard)", rc);
    if ((rc = bg_filter_add_h1(shard, p->shard_h1[s], records)) != BG_OK) fail_bg("bg_filter_add_h1", rc);
    if ((rc = bg_filter_seal(shard)) != BG_OK) fail_bg("bg_filter_seal (shard)", rc);
    size_t file_length;
    uint8_t *file = serialize(shard, &file_length);
    bg_filter_free(shard);
    const uint8_t *payload = file + 128;
    size_t payload_length = file_length - 128;
    if (used + payload_length > cap) {
      while (used + payload_length > cap) cap *= 2;
      out = realloc(out, cap);
      if (!out) fail(EXIT_SOFTWARE, "out of memory (%s)", "file");
    }
    offsets[s] = used - payload_offset;
    memcpy(out + used, payload, payload_length);
    used += payload_length;
    count += records;
    cells += (uint64_t)payload[12] | (uint64_t)payload[13] << 8 | (uint64_t)payload[14] << 16 | (uint64_t)payload[15] << 24;
    keys += get_u64(payload + 16);
    free(file);
  }
  offsets[shards] = used - payload_offset;
  memcpy(out, head, payload_offset);
  uint8_t *t = out + payload_offset;
  memset(t, 0, 32);
  t[0] = (uint8_t)(8 * width);
  t[1] = (uint8_t)p->shard_bits;
  put_u64(t + 16, keys);
  for (unsigned i = 0; i <= shards; i++) put_u64(t + 32 + 8 * (size_t)i, offsets[i]);
  put_u64(out + 32, cells * 8 * (uint64_t)width);
  put_u64(out + 56, count);
  put_u64(out + 104, used - payload_offset);
  bg_file_hasher *hasher = bg_file_hasher_new();
  if (!hasher) fail(EXIT_SOFTWARE, "out of memory (%s)", "hasher");
  bg_file_hasher_update(hasher, out, used);
  put_u64(out + 8, bg_file_hasher_digest(hasher));
  bg_file_hasher_free(hasher);
  free(offsets);
  free(head);
  *length = used;
  return out;
}

static int parse_kind(const char *name, double error_rate) {
  if (!strcmp(name, "classic")) return BG_KIND_CLASSIC;
  if (!strcmp(name, "blocked")) return BG_KIND_BLOCKED;
  if (!strcmp(name, "fuse8")) return BG_KIND_FUSE8;
  if (!strcmp(name, "fuse16")) return BG_KIND_FUSE16;
  if (!strcmp(name, "fuse")) return error_rate >= 1.0 / 256 ? BG_KIND_FUSE8 : BG_KIND_FUSE16;
  fail(EXIT_USAGE, "unsupported --kind '%s' (classic, blocked, fuse, fuse8, fuse16)", name);
  return 0;
}

static uint64_t parse_u64(const char *name, const char *text) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(text, &end, 0);
  if (errno || *end || end == text || text[0] == '-') fail(EXIT_USAGE, "invalid --%s", name);
  return (uint64_t)v;
}

int main(int argc, char **argv) {
  const char *input = NULL, *output = NULL, *kind_name = "classic", *min_count_text = "1";
  double error_rate = 0.01;
  uint64_t seed = 0, capacity = 0, shards_given = 0;
  int skip_invalid = 0, batch = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--skip-invalid")) {
      skip_invalid = 1;
      continue;
    }
    if (!strcmp(a, "--batch")) {
      batch = 1;
      continue;
    }
    if (a[0] == '-' && a[1] != 0) {
      if (!v) fail(EXIT_USAGE, "%s needs a value", a);
      i++;
      if (!strcmp(a, "-o") || !strcmp(a, "--output")) output = v;
      else if (!strcmp(a, "--kind")) kind_name = v;
      else if (!strcmp(a, "--error-rate")) error_rate = strtod(v, NULL);
      else if (!strcmp(a, "--min-count")) min_count_text = v;
      else if (!strcmp(a, "--seed")) seed = parse_u64("seed", v);
      else if (!strcmp(a, "--capacity")) capacity = parse_u64("capacity", v);
      else if (!strcmp(a, "--shards")) shards_given = parse_u64("shards", v);
      else fail(EXIT_USAGE, "unknown option %s", a);
    } else if (!input) {
      input = a;
    } else {
      fail(EXIT_USAGE, "one input, got also '%s'", a);
    }
  }
  if (!input || !output) fail(EXIT_USAGE, "usage: %s INPUT -o OUT [--kind K] [--error-rate P] [--min-count C] [--seed S] [--capacity N] [--shards S] [--skip-invalid] [--batch]", argv[0]);
  if (!(error_rate > 0 && error_rate < 1)) fail(EXIT_USAGE, "invalid --error-rate (%s)", "0 < P < 1");
  uint64_t min_count = parse_u64("min-count", min_count_text);
  char min_count_canonical[32];
  snprintf(min_count_canonical, sizeof min_count_canonical, "%llu", (unsigned long long)min_count);
  int kind = parse_kind(kind_name, error_rate);
  int fuse = kind == BG_KIND_FUSE8 || kind == BG_KIND_FUSE16;
  init_hex();

  double t0 = now_s();
  pass counted = {.min_count = (double)min_count, .skip_invalid = skip_invalid};
  int have_count = capacity == 0;
  if (have_count) {
    read_pass(input, &counted);
    capacity = counted.items > 0 ? counted.items : 1;
  }
  double t1 = now_s();

  char *metadata = metadata_json(input, have_count ? &counted : NULL, min_count_canonical);
  bg_filter *filter;
  /* --batch keys the filter as utf8 (bg_filter_add_many would SHA-1 each key under sha1) and
   * gives the file the sha1 encoding at the end, as the CLI does (js/cli/digest-keys.js). */
  bg_status rc = bg_filter_create(kind, capacity, error_rate, seed, batch ? BG_KEY_UTF8 : BG_KEY_SHA1, &filter);
  if (rc != BG_OK) fail_bg("bg_filter_create", rc);
  if ((rc = bg_filter_set_metadata(filter, metadata, strlen(metadata))) != BG_OK) fail_bg("bg_filter_set_metadata", rc);

  /* The CLI's rule (fuse-shards.js defaultShards): 2^24 keys a shard at most. */
  uint64_t shards = 1;
  if (fuse) {
    if (shards_given) shards = shards_given;
    else
      while (shards < MAX_SHARDS && capacity > shards * SHARD_KEYS) shards *= 2;
    if (shards & (shards - 1)) fail(EXIT_USAGE, "--shards must be a power of two (%s)", "1 .. 2^24");
  }
  pass adding = {.min_count = (double)min_count, .skip_invalid = skip_invalid, .seed = seed};
  if (shards > 1) {
    while ((1ull << adding.shard_bits) < shards) adding.shard_bits++;
    adding.shard_h1 = calloc(shards, sizeof(uint64_t *));
    adding.shard_used = calloc(shards, sizeof(size_t));
    adding.shard_cap = calloc(shards, sizeof(size_t));
    if (!adding.shard_h1 || !adding.shard_used || !adding.shard_cap) fail(EXIT_SOFTWARE, "out of memory (%s)", "shards");
  } else {
    adding.filter = filter;
    if (batch) {
      adding.batch = xmalloc(20 * BATCH_KEYS);
      adding.offsets = xmalloc((BATCH_KEYS + 1) * sizeof(uint32_t));
      for (uint32_t i = 0; i <= BATCH_KEYS; i++) adding.offsets[i] = 20 * i;
    }
  }
  read_pass(input, &adding);
  if (adding.batch) flush_batch(&adding);
  double t2 = now_s();

  if (!have_count) {
    free(metadata);
    metadata = metadata_json(input, &adding, min_count_canonical);
    if ((rc = bg_filter_set_metadata(filter, metadata, strlen(metadata))) != BG_OK) fail_bg("bg_filter_set_metadata", rc);
  }
  uint8_t *bytes;
  size_t length;
  if (shards > 1) {
    bytes = sharded_fuse(filter, kind, seed, &adding, &length);
  } else {
    if ((rc = bg_filter_seal(filter)) != BG_OK) fail_bg("bg_filter_seal", rc);
    bytes = serialize(filter, &length);
    if (adding.batch) {
      bytes[21] = BG_KEY_SHA1; /* the header's key_encoding; then the checksum again */
      bg_file_hasher *hasher = bg_file_hasher_new();
      if (!hasher) fail(EXIT_SOFTWARE, "out of memory (%s)", "hasher");
      bg_file_hasher_update(hasher, bytes, length);
      put_u64(bytes + 8, bg_file_hasher_digest(hasher));
      bg_file_hasher_free(hasher);
    }
  }
  double t3 = now_s();
  write_file(output, bytes, length);
  double t4 = now_s();

  printf("{\"rows\":%llu,\"items\":%llu,\"skipped\":%llu,\"shards\":%llu,\"bytes\":%zu,"
         "\"seconds\":{\"count\":%.6f,\"add\":%.6f,\"seal\":%.6f,\"write\":%.6f,\"total\":%.6f}}\n",
         (unsigned long long)adding.rows, (unsigned long long)adding.items,
         (unsigned long long)(adding.invalid + adding.below), (unsigned long long)shards, length, t1 - t0,
         t2 - t1, t3 - t2, t4 - t3, t4 - t0);
  free(bytes);
  free(metadata);
  free(adding.batch);
  free(adding.offsets);
  bg_filter_free(filter);
  if (adding.shard_h1) {
    for (uint64_t s = 0; s < shards; s++) free(adding.shard_h1[s]);
    free(adding.shard_h1);
    free(adding.shard_used);
    free(adding.shard_cap);
  }
  return 0;
}
