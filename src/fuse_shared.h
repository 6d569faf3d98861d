/*
 * fuse_shared.h — what the two binary fuse files (fuse.c: 3-wise fuse8 and
 * fuse16; fuse4.c: 4-wise fuse4) share: the mixer that turns a key's h1 into
 * the word its cells and fingerprint come from, the internal seed of each
 * build attempt, the sort, and the payload's common part: its header fields,
 * the shard table (lookup and validation) and the checks of a geometry.
 * Internal; changing the mixer or the seeds changes every fuse file.
 */
#ifndef BLOOMGATE_FUSE_SHARED_H
#define BLOOMGATE_FUSE_SHARED_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "kind.h"

/* SplitMix64's finalizer: a bijection on 64-bit words with full avalanche. */
static inline uint64_t fuse_mix(uint64_t x) {
  x ^= x >> 30;
  x *= UINT64_C(0xbf58476d1ce4e5b9);
  x ^= x >> 27;
  x *= UINT64_C(0x94d049bb133111eb);
  x ^= x >> 31;
  return x;
}

/* The internal seed of build attempt `attempt` (0, 1, ...) for a filter seed. */
static inline uint64_t fuse_attempt_seed(uint64_t seed, uint32_t attempt) {
  return fuse_mix(seed + UINT64_C(0x9e3779b97f4a7c15) * ((uint64_t)attempt + 1));
}

/*
 * Sort n hashes ascending through key_scratch[n], and their values (when
 * values is not NULL) alongside through value_scratch[n]: an LSD radix sort
 * on the top 32 bits (four passes of 8 bits), then insertion sort for words
 * that share those bits (hashes, so such runs are short: about n^2 / 2^33
 * adjacent pairs in all). Defined in fuse4.c.
 */
void bg__fuse_sort(uint64_t *keys, uint8_t *values, uint64_t *key_scratch, uint8_t *value_scratch, size_t n);

/*
 * The payload (docs/FORMAT.md). Both kinds' headers start alike: byte 0 the
 * fingerprint bits, byte 1 shard_bits, bytes 2..3 the kind's own (fuse4:
 * value bits, then zero), then the fields below at bytes 4..31; fuse8/16's
 * header ends there (32 bytes), fuse4's at 40. A sharded payload (shard_bits
 * b = 1..FUSE_MAX_SHARD_BITS) follows its header with a table of 2^b + 1
 * offsets from the payload's start: shard i spans [table[i], table[i + 1]),
 * each an unsharded payload of the same kind and widths.
 */
#define FUSE_MAX_SHARD_BITS 24u /* a table of 2^24 + 1 offsets is 128 MiB */
#define FUSE_MAX_SEGMENT_LENGTH ((uint32_t)1 << 18)

typedef struct {
  uint64_t key_count, fuse_seed;
  uint32_t segment_length, segment_count, array_length;
} fuse_fields;

static inline fuse_fields fuse_read_fields(const uint8_t *payload) {
  fuse_fields g;
  g.segment_length = bg__get_u32(payload + 4);
  g.segment_count = bg__get_u32(payload + 8);
  g.array_length = bg__get_u32(payload + 12);
  g.key_count = bg__get_u64(payload + 16);
  g.fuse_seed = bg__get_u64(payload + 24);
  return g;
}

static inline void fuse_write_fields(uint8_t *payload, const fuse_fields *g) {
  bg__put_u32(payload + 4, g->segment_length);
  bg__put_u32(payload + 8, g->segment_count);
  bg__put_u32(payload + 12, g->array_length);
  bg__put_u64(payload + 16, g->key_count);
  bg__put_u64(payload + 24, g->fuse_seed);
}

/* The shard a key is asked in: the one named by the top shard_bits bits of its h2 (read nowhere else). */
static inline const uint8_t *fuse_shard(const uint8_t *payload, unsigned header_bytes, unsigned shard_bits,
                                        uint64_t h2) {
  return payload + bg__get_u64(payload + header_bytes + 8 * (h2 >> (64 - shard_bits)));
}

/*
 * A loaded filter's cells (or, sharded, its whole payload): `bytes` at src,
 * kept in place or copied into *owned. E_NOMEM when the copy cannot be made.
 */
static inline bg_status fuse_keep(uint8_t *src, size_t bytes, int in_place, uint8_t **cells, void **owned) {
  if (in_place || bytes == 0) {
    *cells = bytes ? src : NULL;
    return BG_OK;
  }
  *owned = malloc(bytes);
  BG_RETURN_IF(!*owned, BG_E_NOMEM);
  memcpy(*owned, src, bytes);
  *cells = (uint8_t *)*owned;
  return BG_OK;
}

/*
 * The checks of one unsharded payload that both kinds make: `length` holds
 * the header (header_bytes), whose bytes 0..3 are (byte0, 0, byte2, 0), and
 * its fields *g describe a consistent geometry of `arity` cells per key
 * (segment_count + arity - 1 segments of a power-of-two length from
 * min_segment_length to 2^18), or no keys, no cells and seed 0. The kind
 * checks the rest of its header and the length against the cells. Defined
 * in fuse.c.
 */
bg_status bg__fuse_check_one(const uint8_t *payload, uint64_t length, unsigned header_bytes, unsigned byte0,
                             unsigned byte2, unsigned arity, uint32_t min_segment_length, fuse_fields *g);

/*
 * The kind's checks of one shard of `length` bytes, given the sharded
 * payload's header (whose widths every shard shares); *cells = its array_length.
 */
typedef bg_status (*fuse_shard_check)(const uint8_t *header, const uint8_t *shard, uint64_t length,
                                      uint32_t *cells);

/*
 * A sharded payload of `length` bytes (payload[1] = b > 0): b at most
 * FUSE_MAX_SHARD_BITS, header bytes 3 and 4..header_bytes zero but for the
 * key count (16..23; byte 2 is the kind's to check), a table that starts right
 * after itself, never decreases and ends at the payload's end, every shard
 * passing check_shard, and key_count the shards' sum. *cells = the shards'
 * cells in all. Reads only inside the payload. Defined in fuse.c.
 */
bg_status bg__fuse_check_sharded(const uint8_t *payload, uint64_t length, unsigned header_bytes,
                                 fuse_shard_check check_shard, uint64_t *cells);

#endif /* BLOOMGATE_FUSE_SHARED_H */
