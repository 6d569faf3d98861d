/*
 * test_url.c — Safe Browsing URL canonicalization and expressions: every
 * published vector, our edge cases, buffer and argument contracts, the
 * linear-time unescaping against a naive "repeat until nothing changes"
 * model, and a seeded property run (idempotence, output bound, expressions).
 *
 * Usage: test_url [url_vectors.json]        also check the golden JSON is current
 *        test_url --write-json <path>       regenerate the golden JSON
 */
#include <stdlib.h>

#include "test_util.h"
#include "url_vectors.h"

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

/* 3*len + 32 always holds a canonical URL: escaping triples a byte, and the
 * added "http://", "/" or a widened IPv4 ("0" -> "0.0.0.0") fit in 32. */
static size_t canonical_bound(size_t len) { return 3 * len + 32; }

static uint64_t rng_state = 0x9E3779B97F4A7C15u;
static uint64_t rng_next(void) { /* splitmix64: deterministic across platforms */
  uint64_t z = (rng_state += 0x9E3779B97F4A7C15u);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
  return z ^ (z >> 31);
}

/* Canonicalize into a malloc'd NUL-terminated string; NULL (and *status) on error. */
static char *canonicalize(const char *input, size_t len, int *status_out) {
  size_t capacity = canonical_bound(len), out_len = 12345;
  char *out = malloc(capacity + 1);
  if (!out) return NULL;
  int status = bg_url_canonicalize(input, len, out, capacity, &out_len);
  if (status_out) *status_out = status;
  if (status != BG_OK) {
    free(out);
    return NULL;
  }
  out[out_len] = '\0';
  return out;
}

static void print_bytes(FILE *f, const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\')
      fprintf(f, "\\x%02x", c);
    else
      fputc(c, f);
  }
}

/* ------------------------------------------------------------------------ */
static void test_canonical_vectors(void) {
  size_t spec_total = 0, spec_passed = 0, all_passed = 0;
  for (size_t i = 0; i < COUNT_OF(url_canon_vectors); i++) {
    const url_canon_vector *v = &url_canon_vectors[i];
    int is_spec = strcmp(v->source, "sb-v4") == 0;
    spec_total += is_spec;
    int status = 0;
    char *got = canonicalize(v->input, v->input_len, &status);
    int ok = got && strcmp(got, v->canonical) == 0;
    CHECK_STATUS_AT(status, BG_OK, "vector %zu", i);
    if (!ok) {
      test_checks++;
      test_failures++;
      fprintf(stderr, "canonical vector %zu (%s): \"", i, v->source);
      print_bytes(stderr, v->input, v->input_len);
      fprintf(stderr, "\" -> \"%s\", expected \"%s\"\n", got ? got : "(error)", v->canonical);
    } else {
      test_checks++;
      spec_passed += is_spec;
      all_passed++;
      /* Idempotent: the canonical form is its own canonical form. */
      char *again = canonicalize(got, strlen(got), &status);
      CHECK_MSG(again && strcmp(again, got) == 0, "not idempotent: %s -> %s", got, again ? again : "(error)");
      free(again);
    }
    free(got);
  }
  CHECK_EQ_U64(spec_total, 33); /* the whole published v4 list */
  CHECK_EQ_U64(spec_passed, spec_total);
  printf("test_url: %zu of %zu Safe Browsing v4 vectors pass, %zu of %zu canonicalization vectors in all\n",
         spec_passed, spec_total, all_passed, COUNT_OF(url_canon_vectors));
}

static void test_error_vectors(void) {
  for (size_t i = 0; i < COUNT_OF(url_error_vectors); i++) {
    const url_error_vector *v = &url_error_vectors[i];
    char out[256];
    size_t out_len = 999;
    int status = bg_url_canonicalize(v->input, v->input_len, out, sizeof out, &out_len);
    CHECK_STATUS_AT(status, v->status, "error vector %zu (%s) \"%s\"", i, v->source, v->input);
    CHECK_EQ_U64(out_len, 0);
    uint32_t offsets[BG_URL_MAX_EXPRESSIONS + 1];
    size_t count = 99;
    CHECK_STATUS_AT(bg_url_expressions(v->input, v->input_len, out, sizeof out, offsets, &count), v->status,
                    "expressions of error vector %zu \"%s\"", i, v->input);
    CHECK_EQ_U64(count, 0);
  }
}

static int is_digit_char(char c) { return c >= '0' && c <= '9'; }

/* Only the schemes Safe Browsing checks have a canonical form, however they are written;
 * every other scheme is BG_E_URL, with or without "//", never rewritten to http://. A name
 * before ':' is a host only when it holds a '.' and no "//" follows. */
static void test_schemes(void) {
  static const char *const checked[] = {"http", "https", "ftp", "ws", "wss",
                                        "HTTP", "hTTpS", "Ftp", "WS", "wsS"};
  static const char *const others[] = {"mailto", "gopher", "javascript", "data", "file",    "about",
                                       "blob",   "news",   "chrome",     "x",    "h",       "httpx",
                                       "http+s", "ftps",   "w-s",        "a.b",  "a1.b+c-d"};
  static const char *const tails[] = {":a.com/x", "://a.com/x", ":/a.com/x", ":///a.com/x",
                                      ":8999",    ":8999/x",    ":"};
  char url[64], out[128];
  for (size_t t = 0; t < COUNT_OF(tails); t++) {
    int has_host = strcmp(tails[t], ":") != 0;
    for (size_t c = 0; c < COUNT_OF(checked); c++) {
      snprintf(url, sizeof url, "%s%s", checked[c], tails[t]);
      size_t len = 0;
      int status = bg_url_canonicalize(url, strlen(url), out, sizeof out, &len);
      CHECK_STATUS_AT(status, has_host ? BG_OK : BG_E_URL, "%s", url);
      if (status != BG_OK) continue;
      size_t scheme = strlen(checked[c]);
      for (size_t i = 0; i < scheme; i++) CHECK(out[i] == (char)(checked[c][i] | 0x20));
      CHECK(len > scheme + 3 && memcmp(out + scheme, "://", 3) == 0);
    }
    for (size_t o = 0; o < COUNT_OF(others); o++) {
      snprintf(url, sizeof url, "%s%s", others[o], tails[t]);
      /* A dotted name is a host when a port (digits, or nothing) follows: "a.b:8999/x". */
      const char *rest = tails[t] + 1, *path = strchr(rest, '/');
      int host = strchr(others[o], '.') && !(rest[0] == '/' && rest[1] == '/') &&
                 (!*rest || *rest == '/' || is_digit_char(*rest));
      size_t len = 0;
      CHECK_STATUS_AT(bg_url_canonicalize(url, strlen(url), out, sizeof out, &len), host ? BG_OK : BG_E_URL,
                      "%s", url);
      if (host) {
        char want[64];
        snprintf(want, sizeof want, "http://%s%s", others[o], path ? path : "/");
        CHECK_MSG(len == strlen(want) && memcmp(out, want, len) == 0, "%s -> %.*s", url, (int)len, out);
      }
    }
  }
}

static void test_arguments_and_limits(void) {
  char out[64];
  size_t out_len = 0;
  CHECK_STATUS(bg_url_canonicalize(NULL, 3, out, sizeof out, &out_len), BG_E_ARG);
  CHECK_STATUS(bg_url_canonicalize("a.b", 3, out, sizeof out, NULL), BG_E_ARG);
  CHECK_STATUS(bg_url_canonicalize("a.b", 3, NULL, 5, &out_len), BG_E_ARG);
  /* A NULL buffer of capacity 0 asks for the size. */
  CHECK_STATUS(bg_url_canonicalize("a.b", 3, NULL, 0, &out_len), BG_E_BUFFER);
  CHECK_EQ_U64(out_len, strlen("http://a.b/"));

  uint32_t offsets[BG_URL_MAX_EXPRESSIONS + 1];
  size_t count = 0;
  CHECK_STATUS(bg_url_expressions(NULL, 3, out, sizeof out, offsets, &count), BG_E_ARG);
  CHECK_STATUS(bg_url_expressions("a.b", 3, out, sizeof out, NULL, &count), BG_E_ARG);
  CHECK_STATUS(bg_url_expressions("a.b", 3, out, sizeof out, offsets, NULL), BG_E_ARG);
  CHECK_STATUS(bg_url_expressions("a.b", 3, NULL, 1, offsets, &count), BG_E_ARG);
  CHECK_STATUS(bg_url_expressions("a.b", 3, NULL, 0, offsets, &count), BG_E_BUFFER);
  CHECK_EQ_U64(count, 1);
  CHECK_EQ_U64(offsets[1], strlen("a.b/"));

  /* Exactly BG_URL_MAX_LENGTH is accepted, one more byte is not. The path is the worst
   * case for repeated unescaping ("%252525..." shrinks by two bytes a round), so this
   * also shows the unescaping is linear: quadratic rounds would take minutes here. */
  size_t max = BG_URL_MAX_LENGTH;
  char *big = malloc(max + 1);
  REQUIRE(big != NULL);
  memcpy(big, "http://h/%", 10);
  for (size_t i = 10; i < max + 1; i++) big[i] = (i - 10) % 2 ? '5' : '2';
  big[max - 1] = '5'; /* end on a complete "25" */
  char *got = canonicalize(big, max, NULL);
  CHECK_MSG(got && strcmp(got, "http://h/%25") == 0, "got %s", got ? got : "(error)");
  free(got);
  size_t need = 0;
  CHECK_STATUS(bg_url_canonicalize(big, max + 1, NULL, 0, &need), BG_E_URL);
  CHECK_STATUS(bg_url_expressions(big, max + 1, NULL, 0, offsets, &count), BG_E_URL);

  /* A maximal input of bytes that all need escaping meets the documented bound exactly. */
  memcpy(big, "http://h/", 9);
  memset(big + 9, 0x80, max - 9);
  size_t bound = canonical_bound(max), len = 0;
  char *wide = malloc(bound);
  REQUIRE(wide != NULL);
  CHECK_STATUS(bg_url_canonicalize(big, max, wide, bound, &len), BG_OK);
  CHECK_EQ_U64(len, 9 + 3 * (max - 9));
  CHECK_STATUS(bg_url_expressions(big, max, NULL, 0, offsets, &count), BG_E_BUFFER);
  CHECK_EQ_U64(count, 2); /* h/<path> and h/ */
  CHECK_EQ_U64(offsets[2], 2 * strlen("h/") + 3 * (max - 9));
  free(wide);
  free(big);
}

/* Every capacity below the needed size gives BG_E_BUFFER and the needed size, and not
 * one byte is written past the capacity. */
static void test_small_buffers(void) {
  const char *input = "HTTP://user@Www.Example.COM:99/a/../%7e%zz/0x7f.1?q= #f";
  const char *expected = "http://www.example.com/~%25zz/0x7f.1?q=%20";
  size_t need = strlen(expected);
  char buffer[128];
  for (size_t capacity = 0; capacity <= need; capacity++) {
    memset(buffer, 'Z', sizeof buffer);
    size_t out_len = 0;
    int status = bg_url_canonicalize(input, strlen(input), buffer, capacity, &out_len);
    CHECK_STATUS_AT(status, capacity < need ? BG_E_BUFFER : BG_OK, "capacity %zu", capacity);
    CHECK_EQ_U64(out_len, need);
    for (size_t i = capacity; i < sizeof buffer; i++)
      CHECK_MSG(buffer[i] == 'Z', "write past %zu at %zu", capacity, i);
    if (capacity == need) CHECK(memcmp(buffer, expected, need) == 0);
  }

  const char *url = "http://a.b.c/1/2.html?param=1";
  uint32_t offsets[BG_URL_MAX_EXPRESSIONS + 1];
  size_t count = 0;
  CHECK_STATUS(bg_url_expressions(url, strlen(url), buffer, sizeof buffer, offsets, &count), BG_OK);
  size_t total = offsets[count];
  for (size_t capacity = 0; capacity < total; capacity += 7) {
    char small[128];
    memset(small, 'Z', sizeof small);
    CHECK_STATUS(bg_url_expressions(url, strlen(url), small, capacity, offsets, &count), BG_E_BUFFER);
    CHECK_EQ_U64(count, 8);
    CHECK_EQ_U64(offsets[count], total);
    for (size_t i = capacity; i < sizeof small; i++) CHECK(small[i] == 'Z');
    CHECK(memcmp(small, buffer, capacity) == 0);
  }
}

/* ------------------------------------------------------------------------ */
/* Expressions.                                                               */
/* ------------------------------------------------------------------------ */
static void test_expression_vectors(void) {
  char out[4096];
  uint32_t offsets[BG_URL_MAX_EXPRESSIONS + 1];
  for (size_t i = 0; i < COUNT_OF(url_expression_vectors); i++) {
    const url_expression_vector *v = &url_expression_vectors[i];
    size_t count = 0, expected_count = 0;
    while (v->expressions[expected_count]) expected_count++;
    int status = bg_url_expressions(v->url, strlen(v->url), out, sizeof out, offsets, &count);
    CHECK_STATUS_AT(status, BG_OK, "expressions of %s", v->url);
    CHECK_MSG(count == expected_count, "%s: %zu expressions, expected %zu", v->url, count, expected_count);
    CHECK_EQ_U64(offsets[0], 0);
    for (size_t e = 0; e < count && e < expected_count; e++) {
      size_t length = offsets[e + 1] - offsets[e];
      CHECK_MSG(length == strlen(v->expressions[e]) && memcmp(out + offsets[e], v->expressions[e], length) == 0,
                "%s expression %zu: \"%.*s\", expected \"%s\"", v->url, e, (int)length, out + offsets[e],
                v->expressions[e]);
    }
    /* The same expressions from the canonical form. */
    char *canonical = canonicalize(v->url, strlen(v->url), NULL);
    REQUIRE(canonical != NULL);
    char again[4096];
    uint32_t offsets_again[BG_URL_MAX_EXPRESSIONS + 1];
    size_t count_again = 0;
    CHECK_STATUS(
        bg_url_expressions(canonical, strlen(canonical), again, sizeof again, offsets_again, &count_again),
        BG_OK);
    CHECK(count_again == count && memcmp(offsets_again, offsets, (count + 1) * sizeof offsets[0]) == 0 &&
          memcmp(again, out, offsets[count]) == 0);
    free(canonical);
  }
}

/* A long host: only the last five labels make suffixes. */
static void test_long_host(void) {
  char url[1200] = "http://";
  size_t n = strlen(url);
  for (int label = 0; label < 300; label++) {
    url[n++] = (char)('a' + label % 26);
    url[n++] = '.';
  }
  memcpy(url + n, "com/x/y", 8);
  n += 7;
  char *canonical = canonicalize(url, n, NULL);
  CHECK(canonical && strcmp(canonical, url) == 0);
  free(canonical);
  char out[8192];
  uint32_t offsets[BG_URL_MAX_EXPRESSIONS + 1];
  size_t count = 0;
  CHECK_STATUS(bg_url_expressions(url, n, out, sizeof out, offsets, &count), BG_OK);
  CHECK_EQ_U64(count, 5 * 3);
  const char *suffixes[] = {"k.l.m.n.com", "l.m.n.com", "m.n.com", "n.com"}; /* labels 296..299 */
  for (size_t h = 0; h < 4; h++) {
    size_t e = (h + 1) * 3, length = offsets[e + 1] - offsets[e];
    char want[64];
    snprintf(want, sizeof want, "%s/x/y", suffixes[h]);
    CHECK_MSG(length == strlen(want) && memcmp(out + offsets[e], want, length) == 0, "host %zu: %.*s", h,
              (int)length, out + offsets[e]);
  }
}

/* ------------------------------------------------------------------------ */
/* Unescaping: the linear pass equals "unescape until nothing changes".       */
/* ------------------------------------------------------------------------ */
static int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* One left-to-right pass, as the specification's words describe. */
static size_t naive_unescape_once(char *s, size_t n, int *changed) {
  size_t w = 0;
  *changed = 0;
  for (size_t r = 0; r < n; r++) {
    if (s[r] == '%' && r + 2 < n && hex_digit(s[r + 1]) >= 0 && hex_digit(s[r + 2]) >= 0) {
      s[w++] = (char)(hex_digit(s[r + 1]) * 16 + hex_digit(s[r + 2]));
      r += 2;
      *changed = 1;
    } else {
      s[w++] = s[r];
    }
  }
  return w;
}

static void test_unescape_model(void) {
  /* Decoded bytes from these digits are never '/', '?' or '#' (no 3, 6 or F), and the
   * leading "x" keeps the one segment from being "." or "..": the canonical form is
   * just the model's bytes, escaped. */
  static const char alphabet[] = "%%%%2541acg";
  for (int round = 0; round < 20000; round++) {
    char path[40], model[40];
    size_t n = 1 + rng_next() % 24;
    for (size_t i = 0; i < n; i++) path[i] = alphabet[rng_next() % (sizeof alphabet - 1)];
    memcpy(model, path, n);
    size_t m = n;
    int changed = 1;
    while (changed) m = naive_unescape_once(model, m, &changed);
    char expected[160] = "http://h/x";
    size_t e = strlen(expected);
    for (size_t i = 0; i < m; i++) {
      unsigned char c = (unsigned char)model[i];
      if (c <= 0x20 || c >= 0x7f || c == '#' || c == '%')
        e += (size_t)sprintf(expected + e, "%%%02X", c);
      else
        expected[e++] = (char)c;
    }
    expected[e] = '\0';
    char url[64] = "http://h/x";
    memcpy(url + 10, path, n);
    char *got = canonicalize(url, 10 + n, NULL);
    CHECK_MSG(got && strcmp(got, expected) == 0, "%.*s -> %s, model %s", (int)n, path, got ? got : "(error)",
              expected);
    free(got);
    if (test_failures > 20) return;
  }
}

/* ------------------------------------------------------------------------ */
/* Properties over seeded random URL-like inputs.                             */
/* ------------------------------------------------------------------------ */
static size_t random_url(char *buffer, size_t capacity) {
  static const char *const tokens[] = {
      "http://", "https://", "HTTP://",    "ftp:", "//",   "/",     "/",       "/",         ".",       ".",
      "..",      "./",       "../",        "?",    "?",    "#",     "@",       ":",         ":80",     "[",
      "]",       "[::1]",    "::",         "%",    "%25",  "%2",    "%2e",     "%2E",       "%2f",     "%3F",
      "%23",     "%40",      "%3a",        "%00",  "%ff",  "%41",   "0x",      "0",         "1",       "7",
      "255",     "256",      "4294967295", "077",  "a",    "B",     "com",     "www.",      "example", " ",
      "\t",      "\n",       "\r",         "\x01", "\x7f", "\x80",  "\xff",    "\xc3\xa9",  "\0",      "~",
      "=",       "&",        "+",          "-",    "_",    "ffff:", "1.2.3.4", "64:ff9b::", "mailto:", "ws:",
      "wss://",  "gopher:",  "a.b:"};
  size_t n = 0, parts = 1 + rng_next() % 14;
  for (size_t p = 0; p < parts; p++) {
    const char *t = tokens[rng_next() % COUNT_OF(tokens)];
    size_t length = t[0] ? strlen(t) : 1; /* "\0" is one NUL byte */
    if (n + length > capacity) break;
    memcpy(buffer + n, t, length);
    n += length;
  }
  /* Sometimes flip a byte to anything at all. */
  if (n && rng_next() % 4 == 0) buffer[rng_next() % n] = (char)(rng_next() & 0xff);
  return n;
}

static void test_properties(void) {
  char input[256], out[1024], exprs[32768];
  uint32_t offsets[BG_URL_MAX_EXPRESSIONS + 1];
  long ok = 0, rejected = 0;
  for (int round = 0; round < 50000 && test_failures < 20; round++) {
    size_t n = random_url(input, sizeof input);
    size_t out_len = 0;
    int status = bg_url_canonicalize(input, n, out, sizeof out, &out_len);
    if (status == BG_E_URL) {
      rejected++;
      continue;
    }
    CHECK_STATUS(status, BG_OK);
    if (status != BG_OK) continue;
    ok++;
    CHECK(out_len <= canonical_bound(n));
    int bad_byte = 0;
    for (size_t i = 0; i < out_len; i++) {
      unsigned char c = (unsigned char)out[i];
      if (c <= 0x20 || c >= 0x7f || c == '#') bad_byte = 1;
    }
    CHECK_MSG(!bad_byte, "unescaped byte in %.*s", (int)out_len, out);
    char *again = canonicalize(out, out_len, &status);
    CHECK_MSG(again && strlen(again) == out_len && memcmp(again, out, out_len) == 0,
              "not idempotent: %.*s -> %s", (int)out_len, out, again ? again : bg_status_name(status));
    free(again);

    size_t count = 0;
    status = bg_url_expressions(input, n, exprs, sizeof exprs, offsets, &count);
    CHECK_STATUS(status, BG_OK);
    CHECK(count >= 1 && count <= BG_URL_MAX_EXPRESSIONS);
    /* The first expression is the canonical URL without its scheme; none repeats. */
    const char *after_scheme = strstr(out, "://");
    size_t scheme = after_scheme ? (size_t)(after_scheme - out) : 0;
    CHECK_MSG((scheme == 4 && memcmp(out, "http", 4) == 0) || (scheme == 5 && memcmp(out, "https", 5) == 0) ||
                  (scheme == 3 && memcmp(out, "ftp", 3) == 0) || (scheme == 2 && memcmp(out, "ws", 2) == 0) ||
                  (scheme == 3 && memcmp(out, "wss", 3) == 0),
              "unchecked scheme in %.*s", (int)out_len, out);
    CHECK(after_scheme && offsets[1] == out_len - (size_t)(after_scheme + 3 - out) &&
          memcmp(exprs, after_scheme + 3, offsets[1]) == 0);
    for (size_t a = 0; a < count; a++)
      for (size_t b = a + 1; b < count; b++) {
        size_t la = offsets[a + 1] - offsets[a], lb = offsets[b + 1] - offsets[b];
        CHECK_MSG(la != lb || memcmp(exprs + offsets[a], exprs + offsets[b], la) != 0, "duplicate in %.*s",
                  (int)out_len, out);
      }
  }
  CHECK(ok > 10000 && rejected > 100); /* the generator reaches both outcomes */
  printf("test_url: %ld random inputs canonicalized, %ld rejected as unparsable\n", ok, rejected);
}

/* ------------------------------------------------------------------------ */
/* The golden JSON shared with the JavaScript tests.                          */
/* ------------------------------------------------------------------------ */
typedef struct {
  char *data;
  size_t length, capacity;
} text;

static void text_put(text *t, const char *s, size_t n) {
  if (t->length + n + 1 > t->capacity) {
    size_t capacity = (t->capacity + n + 1) * 2;
    char *grown = realloc(t->data, capacity);
    if (!grown) abort();
    t->data = grown;
    t->capacity = capacity;
  }
  memcpy(t->data + t->length, s, n);
  t->length += n;
  t->data[t->length] = '\0';
}
static void text_puts(text *t, const char *s) { text_put(t, s, strlen(s)); }

static int is_valid_utf8(const unsigned char *s, size_t n) {
  for (size_t i = 0; i < n;) {
    unsigned char c = s[i];
    size_t extra;
    unsigned char low = 0x80, high = 0xbf; /* allowed range of the second byte */
    if (c < 0x80) {
      i++;
      continue;
    } else if (c >= 0xc2 && c <= 0xdf) {
      extra = 1;
    } else if (c >= 0xe0 && c <= 0xef) {
      extra = 2;
      if (c == 0xe0) low = 0xa0;  /* overlong */
      if (c == 0xed) high = 0x9f; /* surrogates */
    } else if (c >= 0xf0 && c <= 0xf4) {
      extra = 3;
      if (c == 0xf0) low = 0x90;
      if (c == 0xf4) high = 0x8f;
    } else {
      return 0;
    }
    if (n - i <= extra || s[i + 1] < low || s[i + 1] > high) return 0;
    for (size_t k = 2; k <= extra; k++)
      if ((s[i + k] & 0xc0) != 0x80) return 0;
    i += extra + 1;
  }
  return 1;
}

static void json_string(text *t, const char *s, size_t n) {
  text_puts(t, "\"");
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    char escape[8];
    if (c == '"' || c == '\\') {
      escape[0] = '\\';
      escape[1] = (char)c;
      text_put(t, escape, 2);
    } else if (c < 0x20 || c == 0x7f) {
      snprintf(escape, sizeof escape, "\\u%04x", c);
      text_puts(t, escape);
    } else {
      text_put(t, (const char *)&s[i], 1);
    }
  }
  text_puts(t, "\"");
}

/* Inputs that are not UTF-8 (raw bytes like 0x80) cannot be JSON strings: they carry
 * "inputHex" instead of "input". */
static void json_input(text *t, const char *key, const char *s, size_t n) {
  char buffer[16];
  if (is_valid_utf8((const unsigned char *)s, n)) {
    snprintf(buffer, sizeof buffer, "\"%s\": ", key);
    text_puts(t, buffer);
    json_string(t, s, n);
  } else {
    snprintf(buffer, sizeof buffer, "\"%sHex\": \"", key);
    text_puts(t, buffer);
    for (size_t i = 0; i < n; i++) {
      snprintf(buffer, sizeof buffer, "%02x", (unsigned char)s[i]);
      text_puts(t, buffer);
    }
    text_puts(t, "\"");
  }
}

static void golden_json(text *t) {
  text_puts(t, "{\n  \"format\": 1,\n");
  text_puts(t,
            "  \"about\": \"Safe Browsing URL vectors, generated from tests/c/url_vectors.h by test_url "
            "--write-json, where each source is described. source sb-v4 = the published v4 list; expressions "
            "are most specific first. Inputs that are not UTF-8 are given as inputHex.\",\n");
  text_puts(t, "  \"canonicalize\": [\n");
  for (size_t i = 0; i < COUNT_OF(url_canon_vectors); i++) {
    const url_canon_vector *v = &url_canon_vectors[i];
    text_puts(t, "    {");
    json_input(t, "input", v->input, v->input_len);
    text_puts(t, ", \"canonical\": ");
    json_string(t, v->canonical, strlen(v->canonical));
    text_puts(t, ", \"source\": ");
    json_string(t, v->source, strlen(v->source));
    text_puts(t, i + 1 < COUNT_OF(url_canon_vectors) ? "},\n" : "}\n");
  }
  text_puts(t, "  ],\n  \"expressions\": [\n");
  for (size_t i = 0; i < COUNT_OF(url_expression_vectors); i++) {
    const url_expression_vector *v = &url_expression_vectors[i];
    text_puts(t, "    {\"url\": ");
    json_string(t, v->url, strlen(v->url));
    text_puts(t, ", \"source\": ");
    json_string(t, v->source, strlen(v->source));
    text_puts(t, ", \"expressions\": [");
    for (size_t e = 0; v->expressions[e]; e++) {
      if (e) text_puts(t, ", ");
      json_string(t, v->expressions[e], strlen(v->expressions[e]));
    }
    text_puts(t, i + 1 < COUNT_OF(url_expression_vectors) ? "]},\n" : "]}\n");
  }
  text_puts(t, "  ],\n  \"invalid\": [\n");
  for (size_t i = 0; i < COUNT_OF(url_error_vectors); i++) {
    const url_error_vector *v = &url_error_vectors[i];
    text_puts(t, "    {");
    json_input(t, "input", v->input, v->input_len);
    text_puts(t, ", \"code\": ");
    const char *name = bg_status_name(v->status);
    json_string(t, name, strlen(name));
    text_puts(t, ", \"source\": ");
    json_string(t, v->source, strlen(v->source));
    text_puts(t, i + 1 < COUNT_OF(url_error_vectors) ? "},\n" : "}\n");
  }
  text_puts(t, "  ]\n}\n");
}

static void test_golden_json(const char *path) {
  text t = {0};
  golden_json(&t);
  FILE *f = fopen(path, "rb");
  CHECK_MSG(f != NULL, "cannot open %s", path);
  if (f) {
    text file = {0};
    char chunk[4096];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) text_put(&file, chunk, got);
    fclose(f);
    CHECK_MSG(file.length == t.length && memcmp(file.data, t.data, t.length) == 0,
              "%s is stale: run test_url --write-json %s", path, path);
    free(file.data);
  }
  free(t.data);
}

static int write_json(const char *path) {
  text t = {0};
  golden_json(&t);
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(t.data, 1, t.length, f) != t.length || fclose(f) != 0) {
    fprintf(stderr, "test_url: cannot write %s\n", path);
    free(t.data);
    return 1;
  }
  free(t.data);
  printf("test_url: wrote %s\n", path);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "--write-json") == 0) return write_json(argv[2]);
  test_canonical_vectors();
  test_error_vectors();
  test_schemes();
  test_arguments_and_limits();
  test_small_buffers();
  test_expression_vectors();
  test_long_host();
  test_unescape_model();
  test_properties();
  if (argc == 2) test_golden_json(argv[1]);
  return test_report("test_url");
}
