/* internal.h — helpers shared by the core's files; not part of the public API. */
#ifndef BLOOMGATE_INTERNAL_H
#define BLOOMGATE_INTERNAL_H

#include <string.h>

#include "bloomgate.h"

/* Fail fast with a status: the lz4 idiom, used wherever validation reads top-down. */
#define BG_RETURN_IF(cond, status) \
  do {                             \
    if (cond) return (status);     \
  } while (0)

/*
 * Code that runs once per filter, not per key (creation, validation, stats,
 * serialization) in files otherwise built for speed: built for size where the
 * compiler allows it, which keeps the wasm module inside its 45 KB gzip budget.
 */
#if defined(__clang__)
#define BG_COLD __attribute__((cold, minsize))
#elif defined(__GNUC__)
#define BG_COLD __attribute__((cold))
#else
#define BG_COLD
#endif

/* Little-endian field access, byte by byte so it is the same on any host. */
static inline void bg__put_u16(uint8_t *p, uint16_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
}
static inline void bg__put_u32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static inline void bg__put_u64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static inline uint16_t bg__get_u16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static inline uint32_t bg__get_u32(const uint8_t *p) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static inline uint64_t bg__get_u64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}
static inline void bg__put_f64(uint8_t *p, double d) {
  uint64_t v;
  memcpy(&v, &d, sizeof v);
  bg__put_u64(p, v);
}
static inline double bg__get_f64(const uint8_t *p) {
  uint64_t v = bg__get_u64(p);
  double d;
  memcpy(&d, &v, sizeof d);
  return d;
}

/* Set bits in n bytes (fill ratios of bit-array kinds). */
static inline uint64_t bg__popcount_bytes(const uint8_t *p, uint64_t n) {
  uint64_t total = 0, i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t word;
    memcpy(&word, p + i, 8);
    total += (uint64_t)__builtin_popcountll(word);
  }
  for (; i < n; i++) total += (uint64_t)__builtin_popcount(p[i]);
  return total;
}

/* Offset of the payload for a metadata block of this length: after the header, 64-byte aligned. */
static inline uint64_t bg__payload_offset(uint64_t metadata_length) {
  return (BG_HEADER_SIZE + metadata_length + (BG_PAYLOAD_ALIGN - 1)) & ~(uint64_t)(BG_PAYLOAD_ALIGN - 1);
}

/* keys.c: the one key an item is added or removed as (scratch holds a digest). */
bg_status bg__item_key(uint32_t key_encoding, const void *item, size_t len, uint8_t scratch[32],
                       const uint8_t **key, size_t *key_len);
/* keys.c: a URL item's expressions into text (BG_E_BUFFER protocol of bg_url_expressions) and their SHA-256 keys. */
bg_status bg__url_keys(const void *item, size_t len, char *text, size_t text_capacity, uint32_t *offsets,
                       size_t *count, uint8_t (*digests)[32]);
/* keys.c: every SHA-256 key of a URL item (at most BG_URL_MAX_EXPRESSIONS). */
bg_status bg__url_digests(const void *item, size_t len, uint8_t (*digests)[32], size_t *count);

/* format.c: write the fixed header (checksum field left zero) into dst[0..BG_HEADER_SIZE). */
void bg__header_write(const bg_header *header, uint8_t *dst);
/* format.c: stamp the checksum of a complete file into its header. */
void bg__file_seal(uint8_t *file, size_t file_length);
/* format.c: stamp into a file's head ([0, payload_offset)) the checksum of the head and its payload. */
void bg__file_seal_parts(uint8_t *head, size_t head_length, const uint8_t *payload, size_t payload_length);

#endif /* BLOOMGATE_INTERNAL_H */
