/* key_encoding.c — how an item becomes the key that is hashed (stored in the file header). */
#include "bloomgate.h"

bg_status bg_encode_key(int key_encoding, const void *item, size_t len, uint8_t *scratch,
                        const uint8_t **key, size_t *key_len) {
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
    default: /* BG_KEY_URL items are several keys: filter.c expands them (url_item_keys). */
      return BG_E_KEY_ENCODING;
  }
}
