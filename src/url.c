/*
 * url.c — Safe Browsing (v4, "URLs and Hashing") URL canonicalization and the
 * host-suffix x path-prefix expressions that list entries are hashed from.
 *
 * The order of operations follows the specification text literally:
 *   1. drop every tab, CR and LF; trim C0 controls and spaces at both ends
 *      (what a browser does before it navigates, so we check what it fetches);
 *   2. cut the fragment at the first '#';
 *   3. percent-unescape until no escape is left;
 *   4. only then split scheme / authority / path / query, so an escaped '/',
 *      '?', '@' or ':' takes effect exactly as it would after one more decode;
 *      only the schemes Safe Browsing checks (http, https, ftp, ws, wss) have
 *      a canonical form, and no scheme means http;
 *   5. host: dots trimmed and collapsed, IPv4 in any inet_aton form written
 *      as four decimals, bracketed IPv6 compressed (RFC 5952; IPv4-mapped and
 *      NAT64 become IPv4, as the current Safe Browsing reference asks), ASCII
 *      lowercased; userinfo and port dropped (the v4 test vectors drop ports);
 *   6. path: "." and ".." segments resolved, then runs of '/' collapsed;
 *   7. every byte <= 0x20, >= 0x7f, '#' or '%' escaped as %XX (uppercase).
 * Because the decoded string holds no escape and step 7 escapes every '%',
 * the output decodes back to what was normalized: canonicalizing a canonical
 * URL returns it unchanged.
 *
 * Memory: one malloc of the input's size for the decoded copy; output is
 * written straight into the caller's buffer and never past its capacity.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Output cursor that keeps counting past the capacity, so a too-small buffer
 * still learns the size it needs (reported through *out_len / offsets). */
typedef struct {
  char *data;
  size_t capacity;
  size_t length;
} url_writer;

static void put_byte(url_writer *w, unsigned char c) {
  if (w->length < w->capacity) w->data[w->length] = (char)c;
  w->length++;
}

static void put_bytes(url_writer *w, const unsigned char *s, size_t n) {
  for (size_t i = 0; i < n; i++) put_byte(w, s[i]);
}

static int needs_escape(unsigned char c) { return c <= 0x20 || c >= 0x7f || c == '#' || c == '%'; }

static void put_escaped(url_writer *w, const unsigned char *s, size_t n) {
  static const char hex_digits[] = "0123456789ABCDEF";
  for (size_t i = 0; i < n; i++) {
    if (needs_escape(s[i])) {
      put_byte(w, '%');
      put_byte(w, (unsigned char)hex_digits[s[i] >> 4]);
      put_byte(w, (unsigned char)hex_digits[s[i] & 15]);
    } else {
      put_byte(w, s[i]);
    }
  }
}

static void put_decimal(url_writer *w, unsigned value) {
  unsigned char digits[10];
  size_t n = 0;
  do {
    digits[n++] = (unsigned char)('0' + value % 10);
    value /= 10;
  } while (value);
  while (n) put_byte(w, digits[--n]);
}

static void put_ipv4(url_writer *w, uint32_t address) {
  for (int shift = 24; shift >= 0; shift -= 8) {
    put_decimal(w, (address >> shift) & 255u);
    if (shift) put_byte(w, '.');
  }
}

static int hex_value(unsigned char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static unsigned char to_lower(unsigned char c) { return (c >= 'A' && c <= 'Z') ? (unsigned char)(c + 32) : c; }

static int is_alpha(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static int is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

/*
 * Percent-unescape in place until no "%XX" is left, in one linear pass.
 * Decoding a triple never overlaps another triple ('%' is not a hex digit), so
 * every order of decoding reaches the same result as the specification's
 * "repeat until nothing changes"; keeping the decoded prefix as a stack and
 * re-checking its top after each push reaches it without the quadratic cost
 * of repeated passes over "%252525...".
 */
static size_t unescape_fully(unsigned char *s, size_t n) {
  size_t top = 0;
  for (size_t i = 0; i < n; i++) {
    s[top++] = s[i];
    while (top >= 3 && s[top - 3] == '%' && hex_value(s[top - 2]) >= 0 && hex_value(s[top - 1]) >= 0) {
      s[top - 3] = (unsigned char)(hex_value(s[top - 2]) * 16 + hex_value(s[top - 1]));
      top -= 2;
    }
  }
  return top;
}

/* ------------------------------------------------------------------------ */
/* IPv4: the forms inet_aton and browsers accept: 1 to 4 parts, each decimal, */
/* octal (leading 0) or hex (0x); the last part fills the remaining bytes.    */
/* A value out of range means "not an address": the host stays a name.        */
/* ------------------------------------------------------------------------ */
static int parse_ipv4_number(const unsigned char *s, size_t n, uint64_t *value) {
  unsigned base = 10;
  if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s += 2;
    n -= 2; /* "0x" alone is 0, as in browsers */
  } else if (n >= 2 && s[0] == '0') {
    base = 8;
    s += 1;
    n -= 1;
  } else if (n == 0) {
    return 0;
  }
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++) {
    int digit = hex_value(s[i]);
    if (digit < 0 || (unsigned)digit >= base) return 0;
    v = v * base + (unsigned)digit;
    if (v > 0xFFFFFFFFu) v = (uint64_t)1 << 32; /* saturate: already out of range */
  }
  *value = v;
  return 1;
}

static int parse_ipv4(const unsigned char *s, size_t n, uint32_t *address) {
  uint64_t parts[4];
  size_t count = 0, i = 0;
  for (;;) {
    size_t start = i;
    while (i < n && s[i] != '.') i++;
    if (count == 4 || !parse_ipv4_number(s + start, i - start, &parts[count])) return 0;
    count++;
    if (i == n) break;
    i++;
  }
  uint64_t result = 0;
  for (size_t p = 0; p + 1 < count; p++) {
    if (parts[p] > 255) return 0;
    result |= parts[p] << (24 - 8 * p);
  }
  if (parts[count - 1] >= ((uint64_t)1 << (8 * (5 - count)))) return 0;
  *address = (uint32_t)(result | parts[count - 1]);
  return 1;
}

/* The dotted quad written by put_ipv4: four decimal parts <= 255, no leading zeros. */
static int is_canonical_ipv4(const unsigned char *s, size_t n) {
  size_t i = 0;
  for (int part = 0; part < 4; part++) {
    size_t start = i;
    unsigned value = 0;
    while (i < n && is_digit(s[i]) && i - start < 3) value = value * 10 + (unsigned)(s[i++] - '0');
    if (i == start || value > 255 || (i - start > 1 && s[start] == '0')) return 0;
    if (part < 3) {
      if (i >= n || s[i] != '.') return 0;
      i++;
    }
  }
  return i == n;
}

/* ------------------------------------------------------------------------ */
/* IPv6 (RFC 4291 text forms, with an optional dotted IPv4 tail).             */
/* ------------------------------------------------------------------------ */
static int parse_dotted_quad_strict(const unsigned char *s, size_t n, uint16_t *high, uint16_t *low) {
  uint32_t address = 0;
  size_t i = 0;
  for (int part = 0; part < 4; part++) {
    size_t start = i;
    unsigned value = 0;
    while (i < n && is_digit(s[i]) && i - start < 3) value = value * 10 + (unsigned)(s[i++] - '0');
    if (i == start || value > 255 || (i - start > 1 && s[start] == '0')) return 0;
    address = (address << 8) | value;
    if (part < 3) {
      if (i >= n || s[i] != '.') return 0;
      i++;
    }
  }
  if (i != n) return 0;
  *high = (uint16_t)(address >> 16);
  *low = (uint16_t)address;
  return 1;
}

static int parse_ipv6(const unsigned char *s, size_t n, uint16_t groups[8]) {
  uint16_t parsed[8];
  int count = 0, compress_at = -1;
  size_t i = 0;
  if (n >= 2 && s[0] == ':' && s[1] == ':') {
    compress_at = 0;
    i = 2;
  } else if (n >= 1 && s[0] == ':') {
    return 0;
  }
  while (i < n) {
    if (s[i] == ':') {
      if (compress_at >= 0) return 0;
      compress_at = count;
      i++;
      continue;
    }
    if (count == 8) return 0;
    size_t start = i;
    unsigned value = 0;
    while (i < n && i - start < 4 && hex_value(s[i]) >= 0) value = value * 16 + (unsigned)hex_value(s[i++]);
    if (i == start) return 0;
    if (i < n && s[i] == '.') {
      if (count > 6 || !parse_dotted_quad_strict(s + start, n - start, &parsed[count], &parsed[count + 1]))
        return 0;
      count += 2;
      break;
    }
    parsed[count++] = (uint16_t)value;
    if (i < n) {
      if (s[i] != ':') return 0;
      i++;
      if (i == n) return 0; /* a single trailing ':' */
    }
  }
  if (compress_at >= 0) {
    if (count == 8) return 0;
    int tail = count - compress_at;
    memset(groups, 0, 8 * sizeof groups[0]);
    memcpy(groups, parsed, (size_t)compress_at * sizeof groups[0]);
    memcpy(groups + 8 - tail, parsed + compress_at, (size_t)tail * sizeof groups[0]);
  } else {
    if (count != 8) return 0;
    memcpy(groups, parsed, sizeof parsed);
  }
  return 1;
}

static void put_ipv6(url_writer *w, const uint16_t g[8]) {
  static const char hex_digits[] = "0123456789abcdef";
  /* RFC 5952: the longest run of two or more zero groups becomes "::" (the first on a tie). */
  int best_start = -1, best_length = 1;
  for (int i = 0; i < 8;) {
    if (g[i] != 0) {
      i++;
      continue;
    }
    int j = i;
    while (j < 8 && g[j] == 0) j++;
    if (j - i > best_length) {
      best_start = i;
      best_length = j - i;
    }
    i = j;
  }
  put_byte(w, '[');
  for (int i = 0; i < 8; i++) {
    if (i == best_start) {
      put_byte(w, ':');
      if (i == 0) put_byte(w, ':');
      i += best_length - 1;
      continue;
    }
    int shift = 12;
    while (shift > 0 && ((g[i] >> shift) & 15) == 0) shift -= 4;
    for (; shift >= 0; shift -= 4) put_byte(w, (unsigned char)hex_digits[(g[i] >> shift) & 15]);
    if (i < 7) put_byte(w, ':');
  }
  put_byte(w, ']');
}

/* ------------------------------------------------------------------------ */
/* Host and path normalization (in place: both only ever shrink).            */
/* ------------------------------------------------------------------------ */
static bg_status write_host(url_writer *w, unsigned char *host, size_t n) {
  if (n > 0 && host[0] == '[') { /* the authority parser guarantees the closing ']' */
    uint16_t groups[8];
    BG_RETURN_IF(n < 2 || !parse_ipv6(host + 1, n - 2, groups), BG_E_URL);
    int mapped = !groups[0] && !groups[1] && !groups[2] && !groups[3] && !groups[4] && groups[5] == 0xffff;
    int nat64 = groups[0] == 0x64 && groups[1] == 0xff9b && !groups[2] && !groups[3] && !groups[4] &&
                !groups[5];
    if (mapped || nat64)
      put_ipv4(w, ((uint32_t)groups[6] << 16) | groups[7]);
    else
      put_ipv6(w, groups);
    return BG_OK;
  }
  size_t length = 0;
  for (size_t i = 0; i < n; i++) {
    if (host[i] == '.' && (length == 0 || host[length - 1] == '.')) continue;
    host[length++] = to_lower(host[i]);
  }
  while (length > 0 && host[length - 1] == '.') length--;
  BG_RETURN_IF(length == 0, BG_E_URL);
  /* Brackets belong to IPv6 literals only; "[.a" would otherwise come out as "[a", which
   * reads back as a broken literal. */
  BG_RETURN_IF(memchr(host, '[', length) != NULL || memchr(host, ']', length) != NULL, BG_E_URL);
  uint32_t address;
  if (parse_ipv4(host, length, &address))
    put_ipv4(w, address);
  else
    put_escaped(w, host, length);
  return BG_OK;
}

/* Resolve "." and ".." segments (RFC 3986 5.2.4 on a path that starts with '/'),
 * then collapse runs of '/': the specification's order. Returns the new length. */
static size_t normalize_path(unsigned char *path, size_t n) {
  size_t out = 0, i = 0;
  while (i < n) { /* path[i] == '/' here */
    size_t start = i + 1, end = start;
    while (end < n && path[end] != '/') end++;
    size_t segment = end - start;
    int last = end == n;
    if (segment == 1 && path[start] == '.') {
      if (last) path[out++] = '/';
    } else if (segment == 2 && path[start] == '.' && path[start + 1] == '.') {
      while (out > 0 && path[out - 1] != '/') out--;
      if (out > 0) out--; /* drop the segment's own '/' */
      if (last) path[out++] = '/';
    } else {
      path[out++] = '/';
      memmove(path + out, path + start, segment);
      out += segment;
    }
    i = end;
  }
  size_t collapsed = 0;
  for (size_t j = 0; j < out; j++) {
    if (path[j] == '/' && collapsed > 0 && path[collapsed - 1] == '/') continue;
    path[collapsed++] = path[j];
  }
  return collapsed;
}

/* ------------------------------------------------------------------------ */
/* The URL as a whole.                                                        */
/* ------------------------------------------------------------------------ */
/* The schemes Safe Browsing checks (Chromium's CanCheckUrl: http, https, ftp, ws, wss). */
static int is_checked_scheme(const unsigned char *s, size_t n) {
  static const char *const names[] = {"http", "https", "ftp", "ws", "wss"};
  for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
    size_t length = strlen(names[k]);
    if (length != n) continue;
    size_t i = 0;
    while (i < n && to_lower(s[i]) == (unsigned char)names[k][i]) i++;
    if (i == n) return 1;
  }
  return 0;
}

static bg_status canonicalize_decoded(unsigned char *s, size_t n, url_writer *w) {
  /* Scheme: letters, digits, "+-." before ':'. A checked scheme accepts any number of slashes,
   * as browsers do. Any other name before ':' is a scheme with no canonical form (mailto:,
   * javascript:, gopher:8999, myprotocol://), as the public clients read it; only a name
   * with a '.' and no "//" after the ':' is a host and a port ("a.com:8080/x"). */
  size_t scheme_length = 0, authority_start = 0;
  if (n > 0 && is_alpha(s[0])) {
    size_t i = 1, dots = 0;
    while (i < n && (is_alpha(s[i]) || is_digit(s[i]) || s[i] == '+' || s[i] == '-' || s[i] == '.'))
      dots += s[i++] == '.';
    if (i < n && s[i] == ':') {
      if (is_checked_scheme(s, i)) {
        scheme_length = i;
        authority_start = i + 1;
        while (authority_start < n && s[authority_start] == '/') authority_start++;
      } else {
        BG_RETURN_IF(dots == 0 || (i + 2 < n && s[i + 1] == '/' && s[i + 2] == '/'), BG_E_URL);
      }
    }
  }
  if (scheme_length == 0 && n >= 2 && s[0] == '/' && s[1] == '/') authority_start = 2; /* "//host/" */

  size_t authority_end = authority_start;
  while (authority_end < n && s[authority_end] != '/' && s[authority_end] != '?') authority_end++;

  /* userinfo ends at the last '@'; it is discarded. */
  size_t host_start = authority_start;
  for (size_t i = authority_start; i < authority_end; i++)
    if (s[i] == '@') host_start = i + 1;
  size_t host_end;
  if (host_start < authority_end && s[host_start] == '[') {
    host_end = host_start + 1;
    while (host_end < authority_end && s[host_end] != ']') host_end++;
    BG_RETURN_IF(host_end == authority_end, BG_E_URL);
    host_end++; /* keep the ']' */
  } else {
    host_end = host_start;
    while (host_end < authority_end && s[host_end] != ':') host_end++;
  }
  /* The port is discarded, but it must be a port: only digits after the ':'. */
  if (host_end < authority_end) {
    BG_RETURN_IF(s[host_end] != ':', BG_E_URL);
    for (size_t i = host_end + 1; i < authority_end; i++) BG_RETURN_IF(!is_digit(s[i]), BG_E_URL);
  }
  BG_RETURN_IF(host_end == host_start, BG_E_URL);

  if (scheme_length) {
    for (size_t i = 0; i < scheme_length; i++) put_byte(w, to_lower(s[i]));
  } else {
    put_bytes(w, (const unsigned char *)"http", 4);
  }
  put_bytes(w, (const unsigned char *)"://", 3);
  bg_status status = write_host(w, s + host_start, host_end - host_start);
  if (status != BG_OK) return status;

  /* The path runs to the first '?' and an empty one becomes "/"; the query is only escaped. */
  size_t path_end = authority_end;
  while (path_end < n && s[path_end] != '?') path_end++;
  if (path_end == authority_end) {
    put_byte(w, '/');
  } else {
    size_t path_length = normalize_path(s + authority_end, path_end - authority_end);
    put_escaped(w, s + authority_end, path_length);
  }
  if (path_end < n) {
    put_byte(w, '?');
    put_escaped(w, s + path_end + 1, n - path_end - 1);
  }
  return BG_OK;
}

bg_status bg_url_canonicalize(const char *url, size_t len, char *out, size_t out_capacity, size_t *out_len) {
  BG_RETURN_IF(out_len == NULL || url == NULL || (out == NULL && out_capacity > 0), BG_E_ARG);
  *out_len = 0;
  BG_RETURN_IF(len == 0 || len > BG_URL_MAX_LENGTH, BG_E_URL);

  const unsigned char *input = (const unsigned char *)url;
  size_t begin = 0, end = len;
  /* Trimming first keeps "%20" at the edges (a decoded space is data, as the vectors show). */
  while (begin < end && input[begin] <= 0x20) begin++;
  while (end > begin && input[end - 1] <= 0x20) end--;
  BG_RETURN_IF(begin == end, BG_E_URL);

  unsigned char *work = (unsigned char *)malloc(end - begin);
  BG_RETURN_IF(work == NULL, BG_E_NOMEM);
  size_t n = 0;
  for (size_t i = begin; i < end; i++) {
    unsigned char c = input[i];
    if (c == '#') break; /* the fragment goes before any unescaping: "%23" stays data */
    if (c != '\t' && c != '\r' && c != '\n') work[n++] = c;
  }
  n = unescape_fully(work, n);

  url_writer writer = {out, out_capacity, 0};
  bg_status status = n ? canonicalize_decoded(work, n, &writer) : BG_E_URL;
  free(work);
  if (status != BG_OK) return status;
  *out_len = writer.length;
  return writer.length > out_capacity ? BG_E_BUFFER : BG_OK;
}

/* ------------------------------------------------------------------------ */
/* Suffix/prefix expressions.                                                 */
/* ------------------------------------------------------------------------ */
typedef struct {
  const unsigned char *start;
  size_t length;
} url_piece;

bg_status bg_url_expressions(const char *canonical, size_t len, char *out, size_t out_capacity,
                             uint32_t *offsets, size_t *count) {
  BG_RETURN_IF(canonical == NULL || offsets == NULL || count == NULL || (out == NULL && out_capacity > 0),
               BG_E_ARG);
  *count = 0;
  offsets[0] = 0;
  BG_RETURN_IF(len == 0 || len > BG_URL_MAX_LENGTH, BG_E_URL);

  /* Canonicalize again: a canonical URL comes back unchanged, and anything else gets the
   * same expressions as its canonical form, never expressions of a half-normalized string. */
  size_t capacity = 3 * len + 32, length = 0;
  unsigned char *url = (unsigned char *)malloc(capacity);
  BG_RETURN_IF(url == NULL, BG_E_NOMEM);
  bg_status status = bg_url_canonicalize(canonical, len, (char *)url, capacity, &length);
  if (status != BG_OK) {
    free(url);
    return status == BG_E_BUFFER ? BG_E_URL : status; /* cannot happen: 3*len + 32 bounds the output */
  }

  /* Split "scheme://host/path?query" (the canonical form always has all but the query). */
  size_t i = 0;
  while (url[i] != ':') i++;
  size_t host_start = i + 3, host_end = host_start;
  while (url[host_end] != '/') host_end++;
  size_t path_end = host_end;
  while (path_end < length && url[path_end] != '?') path_end++;

  url_piece hosts[5];
  size_t host_count = 0;
  const unsigned char *host = url + host_start;
  size_t host_length = host_end - host_start;
  hosts[host_count++] = (url_piece){host, host_length};
  if (host[0] != '[' && !is_canonical_ipv4(host, host_length)) {
    /* Suffixes of five labels down to two (the top-level domain alone is skipped), longest
     * first. dots_from_end[k] is the (k+1)-th dot from the right: after it come k+1 labels. */
    size_t dots_from_end[5], dot_count = 0;
    for (size_t k = host_length; k > 0 && dot_count < 5; k--)
      if (host[k - 1] == '.') dots_from_end[dot_count++] = k - 1;
    for (size_t k = dot_count; k-- > 1;) {
      size_t dot = dots_from_end[k];
      hosts[host_count++] = (url_piece){host + dot + 1, host_length - dot - 1};
    }
  }

  /* Paths, most specific first: with query, without, then the directory prefixes from the
   * root ("/", "/a/", "/a/b/", "/a/b/c/": the first four) longest first. */
  url_piece paths[6];
  size_t path_count = 0;
  const unsigned char *path = url + host_end;
  size_t path_length = path_end - host_end;
  if (path_end < length) paths[path_count++] = (url_piece){path, length - host_end};
  paths[path_count++] = (url_piece){path, path_length};
  size_t prefix_lengths[4], prefix_count = 0;
  for (size_t k = 0; k < path_length && prefix_count < 4; k++)
    if (path[k] == '/') prefix_lengths[prefix_count++] = k + 1;
  while (prefix_count > 0) {
    size_t prefix = prefix_lengths[--prefix_count];
    if (prefix != path_length) paths[path_count++] = (url_piece){path, prefix};
  }

  url_writer writer = {out, out_capacity, 0};
  size_t produced = 0;
  for (size_t h = 0; h < host_count; h++) {
    for (size_t p = 0; p < path_count; p++) {
      put_bytes(&writer, hosts[h].start, hosts[h].length);
      put_bytes(&writer, paths[p].start, paths[p].length);
      offsets[++produced] = (uint32_t)writer.length;
    }
  }
  free(url);
  *count = produced;
  return writer.length > out_capacity ? BG_E_BUFFER : BG_OK;
}
