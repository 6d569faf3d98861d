/*
 * kind.h — the interface every filter kind implements (internal).
 *
 * The generic layer (filter.c) owns everything kinds have in common: key
 * encoding, hashing a key to (h1, h2), counting items, metadata, identity and
 * the .bgf container. A kind sees only hash pairs and its own payload, so the
 * place where a key becomes a hash stays single (hash_inline.h), and every
 * kind is stored, loaded and validated the same way.
 *
 * Each kind lives in one file (bloom.c, blocked.c, fuse.c, counting.c,
 * cuckoo.c, scalable.c) and exports one `const bg_kind_ops bg_kind_<name>`;
 * kinds.c lists them by their BG_KIND_LIST row.
 */
#ifndef BLOOMGATE_KIND_H
#define BLOOMGATE_KIND_H

#include "internal.h"

/* What a caller asks for; each kind turns it into its own geometry. */
typedef struct {
  uint64_t capacity;   /* n, 1..BG_MAX_CAPACITY (validated by the caller) */
  double error_rate;   /* p, 0 < p < 1 (validated by the caller) */
  unsigned value_bits; /* r, 0..BG_MAX_VALUE_BITS; > 0 only for kinds with BG_KP_VALUES */
} bg_kind_params;

/* What a kind reports about itself; the generic layer adds the rest of bg_info. */
typedef struct {
  uint64_t m;                    /* bits of filter state (header field m) */
  uint32_t k;                    /* probes per query (header field k) */
  uint64_t bits_set;             /* set bits / occupied slots, for the fill ratio */
  double fill_ratio;             /* 0..1 */
  double estimated_items;        /* from the fill */
  double estimated_error_rate;   /* the false-positive rate queries see now */
  double theoretical_error_rate; /* expected at `count` items */
  uint32_t value_bits;           /* r (0 unless the kind stores values) */
  uint32_t build_attempts;       /* seeds a static kind tried (0 when not reported) */
} bg_kind_info;

typedef struct bg_kind_ops {
  uint32_t kind; /* BG_KIND_* stored in the header (its name comes from BG_KIND_LIST) */

  /* Size for params and allocate an empty filter. Static kinds (fuse) collect keys until sealed. */
  bg_status (*create)(const bg_kind_params *params, void **state);
  void (*destroy)(void *state);
  void (*clear)(void *state);

  /* One hashed key. add may fail (E_FULL, E_STATIC after sealing a static kind). */
  bg_status (*add)(void *state, bg_hash_pair hash);
  /* Optional (BG_KP_VALUES): add with a value below 2^r (E_RANGE otherwise). */
  bg_status (*add_value)(void *state, bg_hash_pair hash, uint32_t value);
  /* 1 maybe, 0 definitely not, negative status (E_UNSUPPORTED when a static kind is not sealed). */
  int (*contains)(const void *state, bg_hash_pair hash);
  /* Optional batch form (results[i] = 0/1); NULL means "loop over contains". */
  bg_status (*contains_many)(const void *state, const bg_hash_pair *hashes, size_t count, uint8_t *results);
  /* Optional (BG_KP_VALUES): contains, and on 1 the value read back into *value. */
  int (*value)(const void *state, bg_hash_pair hash, uint32_t *value);
  /* Optional: NULL means the kind cannot delete (E_UNSUPPORTED). */
  bg_status (*remove)(void *state, bg_hash_pair hash);
  /* Optional: static kinds build their structure here; NULL means nothing to do. */
  bg_status (*seal)(void *state, uint64_t seed);
  /* Optional: dst |= src for same-geometry filters; E_INCOMPATIBLE otherwise. NULL: E_UNSUPPORTED. */
  bg_status (*merge)(void *dst, const void *src);
  /* Optional (counting): a classic state with the same m and k, bit i set iff slot i is non-zero. */
  bg_status (*to_classic)(const void *state, void **classic_state);
  /* count = items added, for the theoretical rate. */
  void (*describe)(const void *state, uint64_t count, bg_kind_info *info);

  /* The payload of the .bgf file: its exact size, and the bytes. */
  uint64_t (*payload_size)(const void *state);
  void (*write_payload)(const void *state, uint8_t *dst);
  /* Optional: the payload where it lies, for kinds that keep it in file layout (written without a copy). */
  const uint8_t *(*payload_view)(const void *state);
  /* After the checksum: the header's m, k, capacity, error_rate and this payload agree. */
  bg_status (*validate)(const bg_header *header, const uint8_t *payload);
  /*
   * Build a state from a validated payload. When in_place is set, payload
   * outlives the state and may be used (and modified) where it lies;
   * otherwise the kind copies what it keeps.
   */
  bg_status (*load)(const bg_header *header, uint8_t *payload, int in_place, void **state);
} bg_kind_ops;

/* Every kind's operations, declared from its BG_KIND_LIST row. */
#define BG__KIND_OPS_DECLARE(ID, name, id, properties) extern const bg_kind_ops bg_kind_##name;
BG_KIND_LIST(BG__KIND_OPS_DECLARE)
#undef BG__KIND_OPS_DECLARE

/* kinds.c: the operations of a kind, or NULL when it is not a kind of this build. */
const bg_kind_ops *bg__kind_ops(uint32_t kind);

/* bloom.c, for kinds built from classic parts (counting export, scalable layers). */
bg_status bg__classic_alloc(uint64_t m, uint32_t k, void **state);
uint8_t *bg__classic_bits(void *state);

#endif /* BLOOMGATE_KIND_H */
