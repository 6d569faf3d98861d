/*
 * keys.c — how an item becomes the key(s) that are hashed: every rule of
 * BG_KEY_ENCODING_LIST lives here (utf8, sha1, url), so the builder, the
 * browser and every kind derive the same keys from the same item.
 */
#include <math.h>
#include <stdlib.h>

#include "internal.h"

bg_status bg_encode_key(int key_encoding, const void *item, size_t len, uint8_t *scratch, const uint8_t **key,
                        size_t *key_len) {
  switch (key_encoding) {
    case BG_KEY_UTF8:
      *key = (const uint8_t *)item;
      *key_len = len;
      return BG_OK;
    case BG_KEY_SHA1:
      bg_sha1(item, len, scratch);
      *key = scratch;
      *key_len = 20;
      return BG_OK;
    default: /* a url item stands for several keys: bg__url_keys */
      return BG_E_KEY_ENCODING;
  }
}

/*
 * A URL query asks up to BG_URL_MAX_EXPRESSIONS keys, and escalates when any
 * of them is a false positive. For url filters the target p is the share of
 * clean URLs that escalate, so each key gets p_e with 1 - (1 - p_e)^30 = p:
 * p_e = 1 - (1 - p)^(1/30), computed as -expm1(log1p(-p) / 30) to stay exact
 * for small p. URLs with fewer expressions escalate less often than p.
 */
BG_COLD double bg_key_error_rate(int key_encoding, double error_rate) {
  if (key_encoding != BG_KEY_URL) return error_rate;
  return -expm1(log1p(-error_rate) / (double)BG_URL_MAX_EXPRESSIONS);
}

/*
 * URL items stand for several keys: the SHA-256 of each Safe Browsing
 * expression (bg_url_expressions), most specific first. Writes the
 * expressions into text (BG_E_BUFFER when text_capacity is short, with
 * offsets[*count] the size needed) and the digests of all of them.
 */
bg_status bg__url_keys(const void *item, size_t len, char *text, size_t text_capacity, uint32_t *offsets,
                       size_t *count, uint8_t (*digests)[32]) {
  bg_status rc = bg_url_expressions((const char *)item, len, text, text_capacity, offsets, count);
  if (rc != BG_OK) return rc;
  for (size_t i = 0; i < *count; i++) bg_sha256(text + offsets[i], offsets[i + 1] - offsets[i], digests[i]);
  return BG_OK;
}

/* bg__url_keys with a text buffer of its own: the first call learns its size. */
bg_status bg__url_digests(const void *item, size_t len, uint8_t (*digests)[32], size_t *count) {
  uint32_t offsets[BG_URL_MAX_EXPRESSIONS + 1];
  bg_status rc = bg_url_expressions((const char *)item, len, NULL, 0, offsets, count);
  if (rc != BG_OK && rc != BG_E_BUFFER) return rc;
  size_t size = offsets[*count] ? offsets[*count] : 1;
  char *text = (char *)malloc(size);
  BG_RETURN_IF(!text, BG_E_NOMEM);
  rc = bg__url_keys(item, len, text, size, offsets, count, digests);
  free(text);
  return rc;
}

/*
 * The one key an item is added or removed as; scratch (32 bytes) holds a
 * digest. A URL is added as its most specific expression (host, path and
 * query; "evil.example" lists the whole host as "evil.example/").
 */
bg_status bg__item_key(uint32_t key_encoding, const void *item, size_t len, uint8_t scratch[32],
                       const uint8_t **key, size_t *key_len) {
  if (key_encoding == BG_KEY_UTF8) {
    *key = (const uint8_t *)item;
    *key_len = len;
    return BG_OK;
  }
  if (key_encoding == BG_KEY_URL) {
    uint8_t digests[BG_URL_MAX_EXPRESSIONS][32];
    size_t count = 0;
    bg_status rc = bg__url_digests(item, len, digests, &count);
    BG_RETURN_IF(rc != BG_OK, rc);
    BG_RETURN_IF(count == 0, BG_E_URL);
    memcpy(scratch, digests[0], 32);
    *key = scratch;
    *key_len = 32;
    return BG_OK;
  }
  return bg_encode_key((int)key_encoding, item, len, scratch, key, key_len);
}
