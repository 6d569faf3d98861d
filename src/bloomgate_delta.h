/*
 * bloomgate_delta.h — .bgd delta files: the change from one generation of a
 * filter file to the next (delta.c; docs/FORMAT.md, "Delta files (.bgd)").
 *
 * A delta names the exact .bgf it applies to (list id, generation, length
 * and header checksum) and the exact file it produces. It carries the
 * target's header, metadata and padding raw, the payload bits that differ as
 * Golomb-Rice gap-coded positions, and the payload bytes the target appends
 * (scalable filters grow by layers) as the positions of their set bits, coded
 * the same way. Like the rest of the core: no I/O, every
 * size checked, nothing allocated on a claimed size alone.
 *
 * (To be folded into bloomgate.h.)
 */
#ifndef BLOOMGATE_DELTA_H
#define BLOOMGATE_DELTA_H

#include "bloomgate.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BG_DELTA_VERSION 1u
#define BG_DELTA_HEADER_SIZE 144u /* fixed part of the .bgd header */

/** @brief What a delta says about itself (bg_delta_peek). */
typedef struct {
  uint32_t version;
  uint8_t list_id[16];
  /* The .bgf it applies to (its header checksum field and file length), and the one it makes. */
  uint64_t base_generation, base_length, base_checksum;
  uint64_t target_generation, target_length, target_checksum;
  uint64_t changed_bits;   /* payload bits that differ (same-length part) */
  uint64_t appended_bytes; /* payload bytes the target adds at its end (scalable layers) */
  uint64_t delta_length;   /* the .bgd file's own length */
} bg_delta_info;

/**
 * @brief Validate a delta's own header, length and checksum (needs the whole delta).
 * Checks what can be checked without the base: magic, version, header fields
 * and their consistency, exact length, checksum, generation order. The Rice
 * stream itself is checked by bg_delta_apply before it touches anything.
 * @return BG_OK, BG_E_ARG, BG_E_MAGIC, BG_E_VERSION, BG_E_TRUNCATED (fewer
 *         bytes than the header declares), BG_E_DELTA (inconsistent header,
 *         or bytes past the declared length) or BG_E_CHECKSUM.
 */
bg_status bg_delta_peek(const uint8_t *delta, size_t len, bg_delta_info *info);

/**
 * @brief Encode target relative to base.
 * Both must be valid .bgf files (else bg_file_validate's status for the first
 * that is not) of one list: same list_id, kind, seed, hash and key encoding,
 * the same m and k (scalable: the same initial capacity and error rate, since
 * its m and k grow with its layers), target generation > base generation, and
 * a target payload at least as long as the base's; else BG_E_INCOMPATIBLE.
 * When dst_capacity is too small: BG_E_BUFFER with *written = the exact size
 * needed (dst may be NULL with dst_capacity 0, so a caller can call twice).
 * @return BG_OK, BG_E_ARG, a validation status, BG_E_INCOMPATIBLE,
 *         BG_E_BUFFER or BG_E_TOO_LARGE (a delta past SIZE_MAX).
 */
bg_status bg_delta_encode(const uint8_t *base, size_t base_len, const uint8_t *target, size_t target_len,
                          uint8_t *dst, size_t dst_capacity, size_t *written);

/**
 * @brief Apply a delta in place.
 * file holds the base (file_len bytes) in a buffer of capacity bytes, at least
 * info.target_length (grow the buffer first, from bg_delta_peek). On success
 * the buffer holds the target, byte-identical, checked against the target
 * checksum and bg_file_validate (and the same list, kind and geometry as the
 * base), and *new_len = target length. On any failure the buffer's first
 * file_len bytes are exactly the base again, and the status says why:
 * bg_delta_peek's statuses for the delta itself; BG_E_DELTA_BASE when the
 * file is not the base the delta names (another list, generation, length,
 * checksum, or bytes that do not match the checksum); BG_E_BUFFER when
 * capacity < target length; BG_E_DELTA when the delta's change stream is
 * malformed or its result is not the valid target it claims; BG_E_NOMEM.
 * Allocates one copy of the base's header and metadata (bounded by file_len).
 */
bg_status bg_delta_apply(uint8_t *file, size_t file_len, size_t capacity, const uint8_t *delta, size_t delta_len,
                         size_t *new_len);

#ifdef __cplusplus
}
#endif
#endif /* BLOOMGATE_DELTA_H */
