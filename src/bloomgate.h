/*
 * bloomgate.h — the public C API of the bloomgate core.
 *
 * The core is C11 with no I/O: it never prints, exits, aborts or touches a
 * file. Every function that can fail returns a bg_status (BG_OK = 0, errors
 * are negative); the queries return an int, 1 or 0 for the answer and a
 * negative bg_status for a failure. Every allocation is checked; out of memory
 * is BG_E_NOMEM. The same sources build natively and to WebAssembly and give
 * bit-identical filters and files on both (docs/FORMAT.md is the byte-level spec).
 *
 * Each function's @return names every status it can return. BG_E_ARG is
 * always a caller's bug: a NULL where a pointer is required, a NULL pointer
 * with a non-zero length, or sizes that contradict each other. No function
 * keeps a caller's pointer after it returns (metadata and payloads are
 * copied), except the bg_filter_deserialize_owned readers, which take the buffer.
 *
 * Notation follows the Bloom filter literature: m bits, k probes per key,
 * n items, target false-positive probability p.
 */
#ifndef BLOOMGATE_H
#define BLOOMGATE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Version of the library (checked against package.json by the tests). The
 * file format has its own number, BG_FORMAT_VERSION, which changes only when
 * old readers could misread new files.
 */
#define BG_VERSION_MAJOR 0
#define BG_VERSION_MINOR 1
#define BG_VERSION_PATCH 0
#define BG_VERSION_NUMBER (BG_VERSION_MAJOR * 10000 + BG_VERSION_MINOR * 100 + BG_VERSION_PATCH)
#define BG__STRINGIFY(x) #x
#define BG__VERSION_STRING(a, b, c) BG__STRINGIFY(a) "." BG__STRINGIFY(b) "." BG__STRINGIFY(c)
#define BG_VERSION_STRING BG__VERSION_STRING(BG_VERSION_MAJOR, BG_VERSION_MINOR, BG_VERSION_PATCH)

/*
 * The boundary contract. Every fact that JavaScript, the CLI and the file
 * format share with the core is one row of one of the tables below. The core
 * expands them into its enums, registry and header code; a native generator
 * (scripts/contract.c) prints js/wasm/contract.js from them, and CI fails
 * when the committed copy is stale. Add a row here and nowhere else.
 */

/* ------------------------------------------------------------------------ */
/* Status codes: X(name, value, class, message).                             */
/* The class says what a failure means to a caller (and sets the CLI's exit  */
/* code): DATA (the input is bad), USAGE (the arguments are), RESOURCE      */
/* (memory ran out), INTERNAL (a bug in the caller or here).                 */
/* ------------------------------------------------------------------------ */
#define BG_STATUS_LIST(X)                                                                                  \
  X(OK, 0, DATA, "ok")                                                                                     \
  X(E_ARG, -1, INTERNAL, "invalid argument")                                                               \
  X(E_RANGE, -2, USAGE, "capacity, error rate, value bits (0..8) or value (below 2^bits) out of range")    \
  X(E_NOMEM, -3, RESOURCE, "out of memory")                                                                \
  X(E_TOO_LARGE, -4, DATA, "filter size exceeds the supported maximum")                                    \
  X(E_TRUNCATED, -5, DATA, "filter file is truncated")                                                     \
  X(E_MAGIC, -6, DATA, "not a bloomgate filter file (bad magic bytes)")                                    \
  X(E_VERSION, -7, DATA, "unsupported filter file format version")                                         \
  X(E_HEADER, -8, DATA, "filter file header is inconsistent")                                              \
  X(E_TRAILING, -9, DATA, "filter file has bytes after its payload")                                       \
  X(E_CHECKSUM, -10, DATA, "filter file checksum mismatch (corrupted)")                                    \
  X(E_KIND, -11, DATA, "unknown or unsupported filter kind")                                               \
  X(E_KEY_ENCODING, -12, DATA, "unknown or unsupported key encoding")                                      \
  X(E_HASH, -13, DATA, "unknown hash algorithm")                                                           \
  X(E_PAYLOAD, -14, DATA, "filter payload is inconsistent with its header")                                \
  X(E_INCOMPATIBLE, -15, DATA, "filters are incompatible (kind, m, k, seed, hash or key encoding differ)") \
  X(E_BUFFER, -16, INTERNAL, "destination buffer is too small")                                            \
  X(E_METADATA, -17, DATA, "metadata block is too large")                                                  \
  X(E_URL, -18, DATA, "URL cannot be parsed or canonicalized")                                             \
  X(E_FULL, -19, DATA, "filter is full: the item could not be placed")                                     \
  X(E_UNSUPPORTED, -20, DATA, "operation not supported by this filter kind")                               \
  X(E_NOT_FOUND, -21, DATA, "item is not in the filter, so it cannot be removed")                          \
  X(E_STATIC, -22, DATA, "a static filter cannot take items after it is built")                            \
  X(E_DELTA_BASE, -23, DATA, "delta does not apply to this filter (another list, generation or file)")     \
  X(E_DELTA, -24, DATA, "delta file is corrupt or inconsistent")

typedef enum {
#define BG_STATUS_ENUM(name, value, class, message) BG_##name = value,
  BG_STATUS_LIST(BG_STATUS_ENUM)
#undef BG_STATUS_ENUM
} bg_status;

/**
 * @brief Human-readable message for a status code ("filter file checksum mismatch ...").
 * @param status a bg_status (any int is accepted).
 * @return a static string, never NULL ("unknown status code" for values not in the table).
 */
const char *bg_strerror(int status);
/**
 * @brief Stable name of a status code without the BG_ prefix ("E_CHECKSUM").
 * @param status a bg_status (any int is accepted).
 * @return a static string, never NULL ("E_UNKNOWN" for values not in the table).
 */
const char *bg_status_name(int status);

/* ------------------------------------------------------------------------ */
/* Filter kinds: X(ID, name, header id, properties).                         */
/* The name is the one JavaScript and the CLI use; properties are BG_KP_*.    */
/* ------------------------------------------------------------------------ */
#define BG_KP_STATIC 1u        /* built once from all its keys (bg_filter_seal); no adds after */
#define BG_KP_REMOVE 2u        /* bg_filter_remove works */
#define BG_KP_MERGE 4u         /* bg_filter_merge works */
#define BG_KP_CLASSIC_SIZED 8u /* m and k are bg_size_for's */
#define BG_KP_VALUES 16u       /* stores an r-bit value with each key (bg_filter_create_with_values) */
#define BG_KIND_LIST(X)                                                      \
  X(CLASSIC, classic, 1, BG_KP_MERGE | BG_KP_CLASSIC_SIZED)                  \
  X(BLOCKED, blocked, 2, BG_KP_MERGE)                                        \
  X(FUSE8, fuse8, 3, BG_KP_STATIC)                                           \
  X(FUSE16, fuse16, 4, BG_KP_STATIC)                                         \
  X(COUNTING, counting, 5, BG_KP_REMOVE | BG_KP_MERGE | BG_KP_CLASSIC_SIZED) \
  X(SCALABLE, scalable, 6, BG_KP_CLASSIC_SIZED)                              \
  X(CUCKOO, cuckoo, 7, BG_KP_REMOVE)                                         \
  X(FUSE4, fuse4, 8, BG_KP_STATIC | BG_KP_VALUES)
/*
 * classic:  the classic Bloom filter;            blocked: split-block, one 64-byte block per key;
 * fuse8/16: binary fuse, 8/16-bit fingerprints;  counting: 4-bit saturating counters;
 * scalable: a chain of growing classic layers;   cuckoo: cuckoo filter;
 * fuse4:    4-wise binary fuse, 1..32-bit fingerprints and 0..8-bit values. Each has a page in docs/kinds/.
 */
typedef enum {
#define BG_KIND_ENUM(ID, name, id, properties) BG_KIND_##ID = id,
  BG_KIND_LIST(BG_KIND_ENUM)
#undef BG_KIND_ENUM
} bg_kind;

/* ------------------------------------------------------------------------ */
/* Key encodings: X(ID, name, header id) — how an item becomes its key(s).   */
/*   utf8: the item's bytes are the key (strings as UTF-8);                  */
/*   sha1: the key is the 20-byte SHA-1 of the item (breached passwords);    */
/*   url:  the keys are the SHA-256 of the item's Safe Browsing expressions  */
/*         (an add stores the most specific one; a query asks all of them).  */
/* src/keys.c holds every one of these rules.                                */
/* ------------------------------------------------------------------------ */
#define BG_KEY_ENCODING_LIST(X) \
  X(UTF8, utf8, 0)              \
  X(SHA1, sha1, 1)              \
  X(URL, url, 2)

typedef enum {
#define BG_KEY_ENUM(ID, name, id) BG_KEY_##ID = id,
  BG_KEY_ENCODING_LIST(BG_KEY_ENUM)
#undef BG_KEY_ENUM
} bg_key_encoding;

/* Hash algorithms: X(ID, "name", header id). XXH3-128 seeded, enhanced double hashing, multiply-shift reduction. */
#define BG_HASH_LIST(X) X(XXH3_128, "xxh3-128", 1)

typedef enum {
#define BG_HASH_ENUM(ID, name, id) BG_HASH_##ID = id,
  BG_HASH_LIST(BG_HASH_ENUM)
#undef BG_HASH_ENUM
} bg_hash_algorithm;

/* ------------------------------------------------------------------------ */
/* The fixed .bgf header: X(name, offset, size, type, role), little-endian.  */
/* role MEMBER: the bg_header field of that name; FIXED: a constant the      */
/* reader checks (the magic, the header size, zero flags and reserved bytes).*/
/* docs/FORMAT.md describes each field.                                       */
/* ------------------------------------------------------------------------ */
#define BG_HEADER_FIELDS(X)              \
  X(magic, 0, 8, bytes, FIXED)           \
  X(checksum, 8, 8, u64, MEMBER)         \
  X(version, 16, 2, u16, MEMBER)         \
  X(header_size, 18, 2, u16, FIXED)      \
  X(kind, 20, 1, u8, MEMBER)             \
  X(key_encoding, 21, 1, u8, MEMBER)     \
  X(hash_algorithm, 22, 1, u8, MEMBER)   \
  X(flags, 23, 1, u8, FIXED)             \
  X(k, 24, 4, u32, MEMBER)               \
  X(metadata_length, 28, 4, u32, MEMBER) \
  X(m, 32, 8, u64, MEMBER)               \
  X(capacity, 40, 8, u64, MEMBER)        \
  X(error_rate, 48, 8, f64, MEMBER)      \
  X(count, 56, 8, u64, MEMBER)           \
  X(seed, 64, 8, u64, MEMBER)            \
  X(generation, 72, 8, u64, MEMBER)      \
  X(list_id, 80, 16, bytes, MEMBER)      \
  X(payload_offset, 96, 8, u64, MEMBER)  \
  X(payload_length, 104, 8, u64, MEMBER) \
  X(reserved, 112, 16, bytes, FIXED)

/*
 * What a filter reports about itself (bg_filter_info, the bg_info struct):
 * X(name, type). The wasm boundary flattens it in this order.
 *   error_rate: the target it was sized for; fill_ratio: bits_set / m
 *   (occupied slots for slot-based kinds); estimated_items and
 *   estimated_error_rate: from the fill ratio, what queries see now;
 *   theoretical_error_rate: what the kind's math predicts after count items;
 *   value_bits: r, the bits of value stored with each key (0 for kinds without values);
 *   build_attempts: the seeds a static kind tried before it built (fuse4; 0 otherwise).
 */
#define BG_INFO_FIELDS(X)        \
  X(kind, u32)                   \
  X(k, u32)                      \
  X(key_encoding, u32)           \
  X(hash_algorithm, u32)         \
  X(m, u64)                      \
  X(capacity, u64)               \
  X(count, u64)                  \
  X(seed, u64)                   \
  X(generation, u64)             \
  X(bits_set, u64)               \
  X(payload_bytes, u64)          \
  X(serialized_bytes, u64)       \
  X(error_rate, f64)             \
  X(fill_ratio, f64)             \
  X(estimated_items, f64)        \
  X(estimated_error_rate, f64)   \
  X(theoretical_error_rate, f64) \
  X(value_bits, u32)             \
  X(build_attempts, u32)         \
  X(list_id, bytes16)

/*
 * What a delta file says about itself (bg_delta_peek, the bg_delta_info
 * struct): X(name, type), flattened in this order.
 *   version: BG_DELTA_VERSION; list_id: the list both files belong to;
 *   base_*: the .bgf it applies to (its generation, file length and header
 *   checksum field); target_*: the same for the .bgf it makes;
 *   changed_bits: body bits that differ (the part both files share);
 *   appended_bytes: bytes the target adds after it (scalable layers);
 *   delta_length: the .bgd file's own length.
 */
#define BG_DELTA_INFO_FIELDS(X) \
  X(version, u32)               \
  X(list_id, bytes16)           \
  X(base_generation, u64)       \
  X(base_length, u64)           \
  X(base_checksum, u64)         \
  X(target_generation, u64)     \
  X(target_length, u64)         \
  X(target_checksum, u64)       \
  X(changed_bits, u64)          \
  X(appended_bytes, u64)        \
  X(delta_length, u64)

/* ------------------------------------------------------------------------ */
/* Limits. Every size product is checked against these before allocation.   */
/* ------------------------------------------------------------------------ */
#define BG_MAX_BITS ((uint64_t)1 << 43)     /* 1 TiB of bits; wasm is bounded by its 4 GiB memory first */
#define BG_MAX_K 64u                        /* p >= ~5e-20; beyond that more bits per key buy nothing real */
#define BG_MAX_CAPACITY ((uint64_t)1 << 53) /* exact in a double, so JavaScript sees the same number */
#define BG_MAX_METADATA (1u << 20)          /* 1 MiB of metadata JSON */
#define BG_MAX_VALUE_BITS 8u                /* r: values per key are 0 .. 2^r - 1 (fuse4) */
#define BG_HEADER_SIZE 128u                 /* fixed part of the .bgf header */
#define BG_PAYLOAD_ALIGN 64u                /* payload offset alignment (cache line) */
#define BG_FORMAT_VERSION 1u

/* ------------------------------------------------------------------------ */
/* Sizing: (n, p) -> (m, k), and what a filter's fill says about it.          */
/* ------------------------------------------------------------------------ */
/**
 * @brief Size a classic filter: m = max(1, ceil(-n ln p / (ln 2)^2)), k = max(1, round((m/n) ln 2)).
 * @param capacity n, in [1, BG_MAX_CAPACITY].
 * @param error_rate p, 0 < p < 1 (NaN is out of range).
 * @param m receives the bit count; not NULL.
 * @param k receives the probe count; not NULL.
 * @return BG_OK; BG_E_ARG (m or k NULL); BG_E_RANGE (capacity or rate out of
 *         range, or a k above BG_MAX_K); BG_E_TOO_LARGE (m above BG_MAX_BITS).
 *         On failure *m and *k are unchanged.
 */
bg_status bg_size_for(uint64_t capacity, double error_rate, uint64_t *m, uint32_t *k);
/**
 * @brief (1 - e^(-kn/m))^k: the false-positive rate expected after n inserts.
 * @param m bits.
 * @param k probes per key.
 * @param n items inserted.
 * @return the rate, a double in [0, 1]; 1.0 when m or k is 0.
 */
double bg_theoretical_error_rate(uint64_t m, uint32_t k, uint64_t n);
/**
 * @brief n* = -(m/k) ln(1 - X/m): the items implied by X set bits.
 * @param m bits.
 * @param k probes per key.
 * @param bits_set X, the set bits.
 * @return the estimate, a double; INFINITY when bits_set >= m, 0.0 when m or k is 0.
 */
double bg_estimated_items(uint64_t m, uint32_t k, uint64_t bits_set);
/**
 * @brief (X/m)^k: the false-positive rate the current fill implies.
 * @param m bits.
 * @param k probes per key.
 * @param bits_set X, the set bits.
 * @return the rate, a double; 1.0 when m or k is 0.
 */
double bg_estimated_error_rate(uint64_t m, uint32_t k, uint64_t bits_set);

/* ------------------------------------------------------------------------ */
/* Hashing: where a key becomes bit positions (hash.c).                       */
/* ------------------------------------------------------------------------ */
typedef struct {
  uint64_t h1, h2; /* low and high halves of XXH3-128(key, seed) */
} bg_hash_pair;

/**
 * @brief The two base hashes of a key: XXH3_128bits_withSeed(key, len, seed).
 * @param key the key's len bytes; NULL only when len is 0.
 * @param len the key's length in bytes.
 * @param seed the filter's seed.
 * @return the pair by value (h1 the low half, h2 the high half); never fails.
 */
bg_hash_pair bg_hash(const void *key, size_t len, uint64_t seed);
/**
 * @brief The k positions in [0, m) of a hashed key, by enhanced double hashing:
 *        x = h1, y = h2; for i in 0..k-1: out[i] = reduce(x, m); x += y; y += i + 1
 *        (all mod 2^64), with reduce() the multiply-shift range reduction of docs/FORMAT.md.
 * Returns nothing (void).
 * @param hash the key's bg_hash pair.
 * @param m the range; 0 writes nothing.
 * @param k how many positions.
 * @param out room for k positions; not NULL (unless m or k is 0).
 */
void bg_positions(bg_hash_pair hash, uint64_t m, uint32_t k, uint64_t *out);

/* ------------------------------------------------------------------------ */
/* Digests (sha1.c, sha256.c): keys for password and URL filters, integrity */
/* of downloads. bg_encode_key (keys.c) applies a key encoding.             */
/* ------------------------------------------------------------------------ */
/**
 * @brief SHA-1 of data into out[20].
 * Returns nothing (void); never fails.
 * @param data len bytes; NULL only when len is 0.
 * @param len the data's length in bytes.
 * @param out receives the 20-byte digest; not NULL.
 */
void bg_sha1(const void *data, size_t len, uint8_t out[20]);

typedef struct {
  uint32_t state[8];
  uint64_t length; /* bytes hashed so far */
  uint8_t block[64];
  uint32_t used; /* bytes in block */
} bg_sha256_ctx;
/**
 * @brief Start a streaming SHA-256 (also to reuse a context after bg_sha256_final).
 * Returns nothing (void).
 * @param ctx the caller's context (any storage, no allocation); not NULL.
 */
void bg_sha256_init(bg_sha256_ctx *ctx);
/**
 * @brief Hash the next len bytes; pieces of any size, in order.
 * Returns nothing (void).
 * @param ctx a context started by bg_sha256_init; not NULL.
 * @param data len bytes; not NULL.
 * @param len the piece's length in bytes (0 is fine).
 */
void bg_sha256_update(bg_sha256_ctx *ctx, const void *data, size_t len);
/**
 * @brief Finish: the digest of every byte given to bg_sha256_update.
 * Returns nothing (void).
 * @param ctx the context; not NULL. Spent afterwards: bg_sha256_init it again to reuse it.
 * @param out receives the 32-byte digest; not NULL.
 */
void bg_sha256_final(bg_sha256_ctx *ctx, uint8_t out[32]);
/**
 * @brief One-shot SHA-256 of data into out[32].
 * Returns nothing (void); never fails.
 * @param data len bytes; NULL only when len is 0.
 * @param len the data's length in bytes.
 * @param out receives the 32-byte digest; not NULL.
 */
void bg_sha256(const void *data, size_t len, uint8_t out[32]);

/**
 * @brief Apply a single-key encoding to an item (keys.c).
 * For BG_KEY_UTF8 *key points at the item itself; for BG_KEY_SHA1 it points at
 * scratch holding the 20-byte digest. BG_KEY_URL is not a single key: a URL
 * item stands for the SHA-256 of each of its expressions (bg_url_expressions).
 * @param key_encoding a BG_KEY_* value.
 * @param item the item's len bytes; NULL only when len is 0.
 * @param len the item's length in bytes.
 * @param scratch at least 20 bytes the caller owns (unused for utf8); not NULL for sha1.
 * @param key receives a pointer to the key (into item or scratch); not NULL.
 * @param key_len receives the key's length; not NULL.
 * @return BG_OK, or BG_E_KEY_ENCODING (BG_KEY_URL or an unknown encoding;
 *         *key and *key_len unchanged).
 */
bg_status bg_encode_key(int key_encoding, const void *item, size_t len, uint8_t *scratch, const uint8_t **key,
                        size_t *key_len);

/* ------------------------------------------------------------------------ */
/* Safe Browsing URLs (url.c): canonical form and host-suffix x path-prefix   */
/* expressions, so builders and browsers derive identical keys.               */
/* ------------------------------------------------------------------------ */
#define BG_URL_MAX_EXPRESSIONS 30
#define BG_URL_MAX_LENGTH (64u * 1024u) /* longer inputs are rejected with BG_E_URL */

/**
 * @brief Canonicalize a URL as the Safe Browsing v4 specification describes.
 * The host must already be ASCII (callers convert IDN hosts to punycode first;
 * in JavaScript the WHATWG URL parser does that one step). A URL without a
 * scheme is taken as http://; schemes other than http, https, ftp, ws and wss
 * (mailto:, javascript:, gopher:8999, ...) are BG_E_URL. Writes the canonical
 * URL (not NUL-terminated). Allocates one temporary copy of the input.
 * @param url the URL's len bytes; not NULL.
 * @param len 1..BG_URL_MAX_LENGTH bytes.
 * @param out where the canonical URL goes; NULL only with out_capacity 0 (to learn the size).
 * @param out_capacity out's size in bytes; never written past.
 * @param out_len receives the canonical length (also on BG_E_BUFFER: the size needed; 0 on
 *        other failures); not NULL.
 * @return BG_OK; BG_E_ARG (url or out_len NULL, or out NULL with out_capacity > 0);
 *         BG_E_URL (empty, too long, or not a URL with a canonical form);
 *         BG_E_BUFFER (out_capacity < *out_len); BG_E_NOMEM.
 */
bg_status bg_url_canonicalize(const char *url, size_t len, char *out, size_t out_capacity, size_t *out_len);
/**
 * @brief The host-suffix x path-prefix expressions of a URL (at most
 * BG_URL_MAX_EXPRESSIONS), most specific first, each "host/path[?query]"
 * without scheme. The input is canonicalized again first, so any URL gives the
 * expressions of its canonical form. Expression i is out[offsets[i] .. offsets[i+1]).
 * Allocates temporary buffers (at most 4 * len + 32 bytes).
 * @param canonical the URL's len bytes; not NULL.
 * @param len 1..BG_URL_MAX_LENGTH bytes.
 * @param out where the expressions' text goes (not NUL-terminated); NULL only with out_capacity 0.
 * @param out_capacity out's size in bytes; never written past.
 * @param offsets room for BG_URL_MAX_EXPRESSIONS + 1 entries; not NULL. Filled also on
 *        BG_E_BUFFER, where offsets[*count] is the size out needs.
 * @param count receives the number of expressions (0 on other failures); not NULL.
 * @return BG_OK; BG_E_ARG (canonical, offsets or count NULL, or out NULL with
 *         out_capacity > 0); BG_E_URL (as bg_url_canonicalize); BG_E_BUFFER
 *         (out too small); BG_E_NOMEM.
 */
bg_status bg_url_expressions(const char *canonical, size_t len, char *out, size_t out_capacity,
                             uint32_t *offsets, size_t *count);

/* ------------------------------------------------------------------------ */
/* The .bgf container header (format.c). See docs/FORMAT.md.                 */
/* ------------------------------------------------------------------------ */
typedef struct {
  uint32_t version, kind, key_encoding, hash_algorithm, k, metadata_length;
  uint64_t m, capacity, count, seed, generation, payload_offset, payload_length, file_length;
  double error_rate;
  uint8_t list_id[16];
  uint64_t checksum;
} bg_header;

/**
 * @brief Read the fixed header and check the fields that fix the file's length.
 * Needs only the first BG_HEADER_SIZE bytes: a streaming loader learns
 * header->file_length before it has (or allocates for) the payload. Checks
 * neither the checksum nor the kind's fields (bg_file_validate does).
 * @param src the file's first src_size bytes (more is fine); NULL only when src_size is 0.
 * @param src_size how many bytes src holds.
 * @param header receives the fields; not NULL. Partly filled on failure.
 * @return BG_OK; BG_E_ARG (header NULL, or src NULL with src_size > 0);
 *         BG_E_MAGIC (the bytes present are not the magic); BG_E_TRUNCATED
 *         (fewer than BG_HEADER_SIZE bytes); BG_E_VERSION; BG_E_HEADER (header
 *         size, flags, reserved bytes or payload offset wrong); BG_E_METADATA
 *         (metadata above BG_MAX_METADATA); BG_E_TOO_LARGE (a payload above the
 *         limit, or a file longer than SIZE_MAX).
 */
bg_status bg_header_peek(const uint8_t *src, size_t src_size, bg_header *header);
/**
 * @brief Validate a whole file: lengths, checksum, kind, key encoding, hash, and
 * the kind's own parameters against its payload. Allocates nothing.
 * @param src exactly the file's src_size bytes; NULL only when src_size is 0.
 * @param src_size the file's length.
 * @param header receives the header's fields; may be NULL.
 * @return BG_OK; bg_header_peek's statuses; BG_E_TRUNCATED (fewer bytes than
 *         the header declares); BG_E_TRAILING (more); BG_E_CHECKSUM; BG_E_KIND;
 *         BG_E_KEY_ENCODING; BG_E_HASH; BG_E_HEADER (non-zero padding, or a
 *         kind's header fields); BG_E_PAYLOAD (the payload disagrees with them).
 */
bg_status bg_file_validate(const uint8_t *src, size_t src_size, bg_header *header);
/**
 * @brief The checksum a file should carry: XXH3-64 (seed 0) of bytes [16, file_length).
 * @param src file_length bytes; not NULL when file_length >= 16.
 * @param file_length the file's length.
 * @return the checksum; 0 when file_length < 16.
 */
uint64_t bg_file_checksum(const uint8_t *src, size_t file_length);
/**
 * @brief bg_file_validate with the checksum already computed by the caller,
 * over bytes [16, src_size) as they arrived (bg_file_hasher): every other check
 * runs; a checksum different from the header's is BG_E_CHECKSUM.
 * @param src exactly the file's src_size bytes; NULL only when src_size is 0.
 * @param src_size the file's length.
 * @param header receives the header's fields; may be NULL.
 * @param checksum the caller's XXH3-64 of bytes [16, src_size).
 * @return the statuses of bg_file_validate.
 */
bg_status bg_file_validate_checked(const uint8_t *src, size_t src_size, uint64_t checksum, bg_header *header);

/**
 * @brief The file checksum computed piece by piece, for loaders that receive a
 * file in chunks: hashing each chunk while it is still in cache (or while the
 * next one is on the network) instead of reading the whole file again.
 * Feed the whole file, from byte 0, in pieces of any size, in order; the
 * digest equals bg_file_checksum of the file (the hasher skips the bytes the
 * checksum does not cover).
 */
typedef struct bg_file_hasher bg_file_hasher;
/**
 * @brief A new hasher; free it with bg_file_hasher_free.
 * @return the hasher, owned by the caller, or NULL when out of memory.
 */
bg_file_hasher *bg_file_hasher_new(void);
/**
 * @brief Release a hasher.
 * Returns nothing (void).
 * @param hasher from bg_file_hasher_new; NULL is fine.
 */
void bg_file_hasher_free(bg_file_hasher *hasher);
/**
 * @brief Feed the file's next len bytes.
 * Returns nothing (void).
 * @param hasher the hasher; NULL does nothing.
 * @param bytes len bytes, not kept; NULL with len > 0 does nothing.
 * @param len the piece's length (0 is fine).
 */
void bg_file_hasher_update(bg_file_hasher *hasher, const uint8_t *bytes, size_t len);
/**
 * @brief The checksum of the bytes fed so far (the hasher stays usable).
 * @param hasher the hasher; NULL gives 0.
 * @return the XXH3-64 digest, equal to bg_file_checksum once the whole file is fed.
 */
uint64_t bg_file_hasher_digest(const bg_file_hasher *hasher);

/* ------------------------------------------------------------------------ */
/* Filters (filter.c): one handle and one verb set for every kind.           */
/* The kind is chosen at creation, or read from the file when loading.      */
/* ------------------------------------------------------------------------ */
typedef struct bg_filter bg_filter;

/** @brief Everything a filter knows about itself (the fields of BG_INFO_FIELDS). */
typedef struct {
#define BG__INFO_MEMBER_bytes16(name) uint8_t name[16];
#define BG__INFO_MEMBER_u32(name) uint32_t name;
#define BG__INFO_MEMBER_u64(name) uint64_t name;
#define BG__INFO_MEMBER_f64(name) double name;
#define BG__INFO_MEMBER(name, type) BG__INFO_MEMBER_##type(name)
  BG_INFO_FIELDS(BG__INFO_MEMBER)
#undef BG__INFO_MEMBER
} bg_info;

/**
 * @brief The per-key false-positive rate a filter is sized for, given the target
 * rate of a query (keys.c). Equal to error_rate except for url filters, whose
 * queries ask up to BG_URL_MAX_EXPRESSIONS keys: there it is 1 - (1 - p)^(1/30),
 * so at most a share p of clean URLs escalates.
 * @param key_encoding a BG_KEY_* value.
 * @param error_rate p, 0 < p < 1.
 * @return the per-key rate, a double.
 */
double bg_key_error_rate(int key_encoding, double error_rate);

/**
 * @brief The name of a kind ("classic", ...): its BG_KIND_LIST name (kinds.c).
 * @param kind a header id (any int is accepted).
 * @return a static string, or NULL when this build has no kind with that id.
 */
const char *bg_kind_name(int kind);

/**
 * @brief Create an empty filter of a kind, sized for capacity items at error_rate
 * (for url filters: at bg_key_error_rate of it per key).
 * @param kind a BG_KIND_* id.
 * @param capacity n, 1..BG_MAX_CAPACITY.
 * @param error_rate p, 0 < p < 1; fuse8 and fuse16 need p >= 2^-8 and 2^-16, fuse4 p >= 2^-32
 *        (its fingerprints have w = ceil(log2(1/p)) bits, 1..32).
 * @param seed the hash seed (two filters merge or diff only with the same seed).
 * @param key_encoding a BG_KEY_* value.
 * @param out receives the filter, owned by the caller (bg_filter_free); NULL on failure; not NULL.
 * @return BG_OK; BG_E_ARG (out NULL); BG_E_KIND; BG_E_KEY_ENCODING; BG_E_RANGE
 *         (capacity or rate out of range, or a rate the kind cannot reach:
 *         classic and counting past BG_MAX_K probes, fuse below 2^-bits,
 *         cuckoo past 32-bit fingerprints); BG_E_TOO_LARGE (the filter would
 *         pass BG_MAX_BITS or the address space; blocked and scalable also for
 *         a rate they cannot reach); BG_E_NOMEM.
 */
bg_status bg_filter_create(int kind, uint64_t capacity, double error_rate, uint64_t seed, int key_encoding,
                           bg_filter **out);
/**
 * @brief bg_filter_create for a kind that stores a value with each key
 * (BG_KP_VALUES: fuse4): value_bits r, 0..BG_MAX_VALUE_BITS. r = 0 is exactly
 * bg_filter_create. With r > 0 every key is added with a value below 2^r
 * (bg_filter_add_value); bg_filter_value reads it back.
 * @param kind, capacity, error_rate, seed, key_encoding, out as for bg_filter_create.
 * @param value_bits r.
 * @return the statuses of bg_filter_create; BG_E_RANGE (r above BG_MAX_VALUE_BITS);
 *         BG_E_UNSUPPORTED (r > 0 for a kind without values).
 */
bg_status bg_filter_create_with_values(int kind, uint64_t capacity, double error_rate, uint64_t seed,
                                       int key_encoding, unsigned value_bits, bg_filter **out);
/**
 * @brief Release a filter, with its metadata and the buffer of an owned load.
 * Returns nothing (void).
 * @param filter the filter; NULL is fine.
 */
void bg_filter_free(bg_filter *filter);
/**
 * @brief Remove every item: count 0, metadata and identity kept. A static kind
 * goes back to collecting keys (unsealed); a scalable one to its first layer.
 * Returns nothing (void).
 * @param filter the filter; NULL does nothing.
 */
void bg_filter_clear(bg_filter *filter);

/**
 * @brief Add an item; the filter's key encoding is applied first (a url item is
 * added as the SHA-256 of its most specific expression).
 * @param filter the filter; not NULL.
 * @param item the item's len bytes, not kept; NULL only when len is 0 (and not for url filters).
 * @param len the item's length in bytes.
 * @return BG_OK; BG_E_ARG; BG_E_URL or BG_E_NOMEM (url filters: the item's
 *         expressions); and the kind's refusals, as for bg_filter_add_key.
 */
bg_status bg_filter_add(bg_filter *filter, const void *item, size_t len);
/**
 * @brief Ask for an item; the filter's key encoding is applied first (a url
 * item is maybe when any of its expressions is).
 * @param filter the filter; not NULL.
 * @param item the item's len bytes; NULL only when len is 0 (and not for url filters).
 * @param len the item's length in bytes.
 * @return 1 (maybe), 0 (definitely not), or a negative bg_status: BG_E_ARG;
 *         BG_E_URL or BG_E_NOMEM (url filters); BG_E_UNSUPPORTED (a static kind
 *         not sealed yet).
 */
int bg_filter_contains(const bg_filter *filter, const void *item, size_t len);
/**
 * @brief Add a key that is already encoded (e.g. a 20-byte SHA-1 from a breach dump).
 * @param filter the filter; not NULL.
 * @param key the key's len bytes, not kept; NULL only when len is 0.
 * @param len the key's length in bytes.
 * @return BG_OK; BG_E_ARG; BG_E_FULL (cuckoo: no room; the table is unchanged);
 *         BG_E_STATIC (a static kind after bg_filter_seal); BG_E_TOO_LARGE (fuse:
 *         past its key limit; scalable: no further layer fits); BG_E_NOMEM (fuse,
 *         scalable). On failure the filter and its count are unchanged.
 */
bg_status bg_filter_add_key(bg_filter *filter, const void *key, size_t len);
/**
 * @brief Ask for a key that is already encoded.
 * @param filter the filter; not NULL.
 * @param key the key's len bytes; NULL only when len is 0.
 * @param len the key's length in bytes.
 * @return 1 (maybe), 0 (definitely not), or a negative bg_status: BG_E_ARG;
 *         BG_E_UNSUPPORTED (a static kind not sealed yet).
 */
int bg_filter_contains_key(const bg_filter *filter, const void *key, size_t len);
/**
 * @brief Add keys to a fuse filter (fuse8, fuse16, fuse4 without values) by their h1 alone: h1[i]
 * is the low half of bg_hash(key, len, seed) with the filter's seed. How a
 * sharded build feeds one shard (docs/kinds/fuse.md): the shard's payload is
 * that of the unsharded filter of these keys. Each value counts as one add.
 * @param filter a fuse filter, not sealed; not NULL.
 * @param h1 count values, not kept; NULL only when count is 0.
 * @param count how many values.
 * @return BG_OK; BG_E_ARG; BG_E_UNSUPPORTED (other kinds); BG_E_STATIC (already
 *         sealed); BG_E_TOO_LARGE (past the key limit); BG_E_NOMEM. On failure
 *         the values before the failing one stay added.
 */
bg_status bg_filter_add_h1(bg_filter *filter, const uint64_t *h1, size_t count);
/**
 * @brief bg_filter_add_h1 with a value for each key (see bg_filter_add_value).
 * @param filter a fuse filter, not sealed; not NULL.
 * @param h1 count values, not kept; NULL only when count is 0.
 * @param values count values, each below 2^r; NULL means none, allowed only when r = 0.
 * @param count how many keys.
 * @return the statuses of bg_filter_add_h1; BG_E_ARG (values NULL with r > 0);
 *         BG_E_RANGE (a value of 2^r or more). The keys before the failing one stay added.
 */
bg_status bg_filter_add_h1_values(bg_filter *filter, const uint64_t *h1, const uint8_t *values, size_t count);
/**
 * @brief Add an item with its value (kinds with BG_KP_VALUES; the key encoding
 * applies as for bg_filter_add). An item added twice with different values
 * keeps the larger one (duplicates are resolved when the filter is sealed, so
 * the result does not depend on the order). Any kind takes value 0 when it
 * stores no values (r = 0), so bg_filter_add_value(f, item, len, 0) is
 * bg_filter_add there.
 * @param filter the filter; not NULL.
 * @param item the item's len bytes; NULL only when len is 0.
 * @param len the item's length.
 * @param value 0 .. 2^r - 1.
 * @return the statuses of bg_filter_add; BG_E_RANGE (value of 2^r or more).
 *         (bg_filter_add itself, without a value, is BG_E_ARG on a filter with r > 0.)
 */
bg_status bg_filter_add_value(bg_filter *filter, const void *item, size_t len, uint32_t value);
/**
 * @brief bg_filter_add_value for a key that is already encoded.
 * @return the statuses of bg_filter_add_key; BG_E_RANGE (value of 2^r or more).
 */
bg_status bg_filter_add_key_value(bg_filter *filter, const void *key, size_t len, uint32_t value);
/**
 * @brief Ask for an item and read its value: 1 (maybe; *value written), 0
 * (definitely not; *value untouched). A member reads exactly the value it was
 * added with; a false positive reads an arbitrary value below 2^r. Kinds
 * without values (and r = 0) answer as bg_filter_contains with *value = 0. A
 * url item's value is that of the first of its expressions (most specific
 * first) that might be listed.
 * @param filter the filter; not NULL.
 * @param item the item's len bytes; NULL only when len is 0.
 * @param len its length.
 * @param value receives the value; not NULL.
 * @return 1, 0, or the negative statuses of bg_filter_contains (BG_E_ARG also for value NULL).
 */
int bg_filter_value(const bg_filter *filter, const void *item, size_t len, uint32_t *value);
/**
 * @brief bg_filter_value for a key that is already encoded.
 * @return 1, 0, or the negative statuses of bg_filter_contains_key.
 */
int bg_filter_value_key(const bg_filter *filter, const void *key, size_t len, uint32_t *value);
/** @brief One URL checked against a url filter (bg_filter_match_url). */
typedef struct {
  uint32_t count;                               /* the URL's expressions, most specific first */
  uint32_t maybe;                               /* bit i set: expression i might be listed */
  uint32_t offsets[BG_URL_MAX_EXPRESSIONS + 1]; /* expression i is text[offsets[i] .. offsets[i + 1]) */
  uint8_t digests[BG_URL_MAX_EXPRESSIONS][32];  /* the key of expression i: its SHA-256 */
} bg_url_match;

/**
 * @brief Check every expression of a URL in one call and say which might be
 *        listed, with their text and keys (what an escalation needs).
 * @param filter a filter with key encoding BG_KEY_URL; not NULL.
 * @param url the URL's len bytes (host already ASCII, as for bg_url_canonicalize); not NULL.
 * @param len the URL's length, 1..BG_URL_MAX_LENGTH.
 * @param text where the expressions' text goes (as bg_url_expressions' out);
 *        NULL only with text_capacity 0 (to learn the size).
 * @param text_capacity text's size in bytes; never written past.
 * @param out the caller's: receives the expressions' count and offsets, their
 *        keys and the maybe mask; not NULL.
 * @return 1 when some expression might be listed, 0 when none is (definitely
 *         clean), or a negative bg_status: BG_E_ARG; BG_E_KEY_ENCODING (not a
 *         url filter); BG_E_URL; BG_E_BUFFER (text too small:
 *         out->offsets[out->count] is the size needed, no keys computed);
 *         BG_E_NOMEM; BG_E_UNSUPPORTED (a static kind not sealed yet).
 */
int bg_filter_match_url(const bg_filter *filter, const char *url, size_t len, char *text, size_t text_capacity,
                        bg_url_match *out);
/**
 * @brief Remove an item (kinds with BG_KP_REMOVE: counting, cuckoo); the key
 * encoding is applied first, as for bg_filter_add.
 * @param filter the filter; not NULL.
 * @param item the item's len bytes; NULL only when len is 0 (and not for url filters).
 * @param len the item's length in bytes.
 * @return BG_OK; BG_E_ARG; BG_E_URL or BG_E_NOMEM (url filters); and the
 *         statuses of bg_filter_remove_key.
 */
bg_status bg_filter_remove(bg_filter *filter, const void *item, size_t len);
/**
 * @brief Remove a key that is already encoded; on success the count drops by one (not below 0).
 * @param filter the filter; not NULL.
 * @param key the key's len bytes; NULL only when len is 0.
 * @param len the key's length in bytes.
 * @return BG_OK; BG_E_ARG; BG_E_UNSUPPORTED (a kind that cannot delete);
 *         BG_E_NOT_FOUND (the key's slots say it was never added; nothing changes).
 */
bg_status bg_filter_remove_key(bg_filter *filter, const void *key, size_t len);

/**
 * @brief Batches: item i is items[offsets[i] .. offsets[i+1]); offsets has count+1
 * entries. Hashes a group of items first and probes second, so memory
 * latency overlaps. Each item is what bg_filter_add / bg_filter_contains take.
 * @param filter the filter; not NULL.
 * @param items the items' bytes, back to back (below 4 GiB); NULL only when count is 0.
 * @param offsets count + 1 non-decreasing offsets into items; NULL only when count is 0.
 * @param count how many items.
 * @return BG_OK; BG_E_ARG (also for a decreasing offset); the statuses of
 *         bg_filter_add. On failure the items before the failing one may
 *         already be added (and counted).
 */
bg_status bg_filter_add_many(bg_filter *filter, const uint8_t *items, const uint32_t *offsets, size_t count);
/**
 * @brief bg_filter_add_many with a value for each item (see bg_filter_add_value).
 * @param filter, items, offsets, count as for bg_filter_add_many.
 * @param values count values, values[i] for item i, each below 2^r; NULL means
 *        none (exactly bg_filter_add_many), allowed only when r = 0.
 * @return the statuses of bg_filter_add_many; BG_E_ARG (values NULL with r > 0);
 *         BG_E_RANGE (a value of 2^r or more). The items before the failing one
 *         stay added (and counted).
 */
bg_status bg_filter_add_many_values(bg_filter *filter, const uint8_t *items, const uint32_t *offsets,
                                    const uint8_t *values, size_t count);
/**
 * @brief Ask for a batch of items (see bg_filter_add_many for items and offsets).
 * @param filter the filter; not NULL.
 * @param items the items' bytes, back to back; NULL only when count is 0.
 * @param offsets count + 1 non-decreasing offsets into items; NULL only when count is 0.
 * @param count how many items.
 * @param results room for count bytes: results[i] = 1 (maybe) or 0; NULL only when count is 0.
 * @return BG_OK; BG_E_ARG (also for a decreasing offset); BG_E_URL or BG_E_NOMEM
 *         (url filters); BG_E_UNSUPPORTED (a static kind not sealed yet). On
 *         failure results is partly written.
 */
bg_status bg_filter_contains_many(const bg_filter *filter, const uint8_t *items, const uint32_t *offsets,
                                  size_t count, uint8_t *results);

/**
 * @brief Static kinds build their structure from the added keys (duplicates
 * dropped) and take no keys after; a no-op for the others, and for a sealed filter.
 * @param filter the filter; not NULL.
 * @return BG_OK; BG_E_ARG; BG_E_NOMEM or BG_E_FULL (fuse: the keys could not be
 *         arranged). On failure the filter stays unsealed with its keys.
 */
bg_status bg_filter_seal(bg_filter *filter);
/**
 * @brief The classic filter a counting filter publishes: same m, k, seed, key
 * encoding, count, identity and metadata, bit i set iff counter i is non-zero.
 * @param filter a counting filter; not NULL.
 * @param out receives the new filter, owned by the caller; NULL on failure; not NULL.
 * @return BG_OK; BG_E_ARG; BG_E_UNSUPPORTED (other kinds); BG_E_NOMEM.
 */
bg_status bg_filter_to_classic(const bg_filter *filter, bg_filter **out);
/**
 * @brief dst |= src (counting: counters added, saturating at 15); both must share
 * kind, geometry, seed, hash and key encoding. dst's count becomes the sum
 * (saturating); its metadata and identity stay.
 * @param dst the filter that changes; not NULL.
 * @param src the filter merged in, unchanged; not NULL.
 * @return BG_OK; BG_E_ARG; BG_E_INCOMPATIBLE (kind, seed, key encoding, m or k
 *         differ); BG_E_UNSUPPORTED (a kind without BG_KP_MERGE). dst is
 *         unchanged on failure.
 */
bg_status bg_filter_merge(bg_filter *dst, const bg_filter *src);
/**
 * @brief Fill *info (the fields of BG_INFO_FIELDS).
 * Returns nothing (void).
 * @param filter the filter; NULL gives an all-zero info.
 * @param info the caller's struct; not NULL.
 */
void bg_filter_info(const bg_filter *filter, bg_info *info);

/**
 * @brief Attach metadata (UTF-8 JSON by convention; copied; at most BG_MAX_METADATA bytes),
 * replacing any before; len 0 removes it.
 * @param filter the filter; not NULL.
 * @param data len bytes, copied; NULL only when len is 0.
 * @param len the metadata's length in bytes.
 * @return BG_OK; BG_E_ARG; BG_E_METADATA (len above BG_MAX_METADATA); BG_E_NOMEM.
 *         On failure the old metadata stays.
 */
bg_status bg_filter_set_metadata(bg_filter *filter, const void *data, size_t len);
/**
 * @brief The metadata block (not NUL-terminated).
 * @param filter the filter; NULL is treated as a filter without metadata.
 * @param len receives its length (0 when there is none); may be NULL.
 * @return a pointer owned by the filter, valid until the next bg_filter_set_metadata
 *         or bg_filter_free; NULL when there is none.
 */
const uint8_t *bg_filter_metadata(const bg_filter *filter, size_t *len);
/**
 * @brief Name the list this filter was built from and its generation (the
 * header's list_id and generation, which deltas check).
 * Returns nothing (void).
 * @param filter the filter; NULL does nothing.
 * @param list_id 16 bytes, copied; NULL keeps the current list id.
 * @param generation the generation number.
 */
void bg_filter_set_identity(bg_filter *filter, const uint8_t list_id[16], uint64_t generation);

/**
 * @brief Exact size of bg_filter_serialize()'s output.
 * @param filter the filter; NULL gives 0.
 * @return the size in bytes (for a static kind not sealed yet: header and
 *         metadata only, and bg_filter_serialize refuses it).
 */
size_t bg_filter_serialized_size(const bg_filter *filter);
/**
 * @brief Write the .bgf file into dst.
 * @param filter the filter; not NULL.
 * @param dst the caller's buffer; not NULL (ask bg_filter_serialized_size first).
 * @param dst_capacity dst's size in bytes.
 * @param written receives the bytes written; may be NULL.
 * @return BG_OK; BG_E_ARG (filter or dst NULL); BG_E_UNSUPPORTED (a static kind
 *         not sealed yet); BG_E_BUFFER (dst_capacity below the size; nothing written).
 */
bg_status bg_filter_serialize(const bg_filter *filter, uint8_t *dst, size_t dst_capacity, size_t *written);
/**
 * @brief The .bgf file in two parts, for writers that should not hold a
 *        serialized copy: its head (header, metadata and padding, with the
 *        checksum of the whole file) written into head, and its payload where
 *        the filter keeps it. Writing head then payload gives exactly
 *        bg_filter_serialize's bytes.
 * @param filter the filter (not NULL).
 * @param head, head_capacity where the head goes; head may be NULL with capacity 0.
 * @param head_length set to the head's size (also on BG_E_BUFFER, so a caller can call twice).
 * @param payload set to the payload inside the filter: valid until the filter changes or is freed.
 * @param payload_length set to the payload's size.
 * @return BG_OK; BG_E_ARG (a NULL out-parameter or filter); BG_E_UNSUPPORTED (a kind
 *         that does not keep its payload in file layout, or a static kind not sealed
 *         yet: use bg_filter_serialize); BG_E_BUFFER (head_capacity below *head_length).
 */
bg_status bg_filter_serialize_parts(const bg_filter *filter, uint8_t *head, size_t head_capacity,
                                    size_t *head_length, const uint8_t **payload, size_t *payload_length);
/**
 * @brief Validate a .bgf file and build a filter from a copy of its payload.
 * @param src exactly the file's src_size bytes, not kept; NULL only when src_size is 0.
 * @param src_size the file's length.
 * @param out receives the filter, owned by the caller; NULL on failure; not NULL.
 * @return BG_OK; BG_E_ARG (out NULL, or src NULL with src_size > 0); the
 *         statuses of bg_file_validate; BG_E_NOMEM.
 */
bg_status bg_filter_deserialize(const uint8_t *src, size_t src_size, bg_filter **out);
/**
 * @brief Like bg_filter_deserialize, but takes ownership of buffer (from malloc)
 * and uses the payload in place, with no copy. On error the buffer stays the
 * caller's.
 * @param buffer exactly the file's size bytes, from malloc; on success freed by
 *        bg_filter_free, and not to be touched by the caller meanwhile.
 * @param size the file's length.
 * @param out receives the filter; NULL on failure; not NULL.
 * @return the statuses of bg_filter_deserialize.
 */
bg_status bg_filter_deserialize_owned(uint8_t *buffer, size_t size, bg_filter **out);
/**
 * @brief bg_filter_deserialize_owned with the checksum the caller computed as the
 * bytes arrived (bg_file_hasher).
 * @param buffer as for bg_filter_deserialize_owned: the file, from malloc, the filter's on success.
 * @param size the file's length.
 * @param out receives the filter; NULL on failure; not NULL.
 * @param checksum the caller's XXH3-64 of bytes [16, size) (bg_file_hasher_digest).
 * @return the statuses of bg_filter_deserialize (BG_E_CHECKSUM when checksum is not the header's).
 */
bg_status bg_filter_deserialize_owned_checked(uint8_t *buffer, size_t size, uint64_t checksum, bg_filter **out);

/* ------------------------------------------------------------------------ */
/* Delta files (delta.c): one generation to the next.                     */
/* A .bgd delta names the exact .bgf it applies to (list id, generation,  */
/* length and header checksum) and the exact file it produces. It carries */
/* the target's head (header, metadata, padding; a scalable filter's      */
/* layer table) raw, the body bits that differ as Golomb-Rice gap-coded   */
/* positions, and the bytes the target appends (scalable filters grow by  */
/* layers) as the positions of their set bits, coded the same way. Like   */
/* the rest of the core: no I/O, every size checked, nothing allocated on */
/* a claimed size alone. docs/FORMAT.md, "Delta files (.bgd)", is the     */
/* byte-level spec.                                                       */
/* ------------------------------------------------------------------------ */
#define BG_DELTA_VERSION 1u
#define BG_DELTA_HEADER_SIZE 144u /* fixed part of the .bgd header */

/**
 * @brief What a delta says about itself (bg_delta_peek): the fields of
 * BG_DELTA_INFO_FIELDS, expanded as bg_info's are (BG__INFO_MEMBER_*).
 */
typedef struct {
#define BG__DELTA_INFO_MEMBER(name, type) BG__INFO_MEMBER_##type(name)
  BG_DELTA_INFO_FIELDS(BG__DELTA_INFO_MEMBER)
#undef BG__DELTA_INFO_MEMBER
} bg_delta_info;

/**
 * @brief Validate a delta's own header, length and checksum (needs the whole delta).
 * Checks what can be checked without the base: magic, version, header fields
 * and their consistency, exact length, checksum, generation order. The Rice
 * stream itself is checked by bg_delta_apply before it touches anything.
 * @param delta the delta's len bytes; NULL only when len is 0.
 * @param len the delta's length.
 * @param info receives what the delta says (only on BG_OK); not NULL.
 * @return BG_OK; BG_E_ARG (info NULL, or delta NULL with len > 0); BG_E_MAGIC;
 *         BG_E_VERSION; BG_E_TRUNCATED (fewer bytes than the fixed header or
 *         than the header declares); BG_E_DELTA (inconsistent header, or bytes
 *         past the declared length); BG_E_CHECKSUM.
 */
bg_status bg_delta_peek(const uint8_t *delta, size_t len, bg_delta_info *info);

/**
 * @brief Encode target relative to base.
 * Both must be valid .bgf files (else bg_file_validate's status for the first
 * that is not) of one list: same list_id, kind, seed, hash and key encoding,
 * the same m and k (scalable: the same initial capacity and error rate, since
 * its m and k grow with its layers), target generation > base generation, and
 * a target body (the payload; scalable: its layers' bits) at least as long as
 * the base's; else BG_E_INCOMPATIBLE.
 * When dst_capacity is too small: BG_E_BUFFER with *written = the exact size
 * needed (dst may be NULL with dst_capacity 0, so a caller can call twice).
 * @param base the base file's base_len bytes; not modified.
 * @param base_len its length.
 * @param target the target file's target_len bytes; not modified.
 * @param target_len its length.
 * @param dst where the delta goes; NULL only with dst_capacity 0.
 * @param dst_capacity dst's size in bytes.
 * @param written receives the delta's size (0 on other failures); not NULL.
 * @return BG_OK; BG_E_ARG (written NULL, or dst NULL with dst_capacity > 0);
 *         bg_file_validate's statuses (base, then target); BG_E_INCOMPATIBLE;
 *         BG_E_TOO_LARGE (a delta past SIZE_MAX); BG_E_BUFFER.
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
 * file_len bytes are exactly the base again (bytes past file_len may have
 * changed), and the status says why.
 * Allocates one copy of the base's head (bounded by file_len).
 * @param file the caller's buffer holding the base; not NULL.
 * @param file_len the base's length.
 * @param capacity the buffer's size, >= file_len.
 * @param delta the delta's delta_len bytes; not modified, and not inside file's buffer.
 * @param delta_len the delta's length.
 * @param new_len receives the target's length (only on BG_OK); not NULL.
 * @return BG_OK; BG_E_ARG (file or new_len NULL, or capacity < file_len);
 *         bg_delta_peek's statuses for the delta itself; BG_E_DELTA_BASE (the
 *         file is not the base the delta names: another list, generation,
 *         length or checksum, or bytes that do not match the checksum);
 *         BG_E_BUFFER (capacity < target length); BG_E_DELTA (the change
 *         streams are malformed, or the result is not the valid target the
 *         delta claims); BG_E_NOMEM.
 */
bg_status bg_delta_apply(uint8_t *file, size_t file_len, size_t capacity, const uint8_t *delta,
                         size_t delta_len, size_t *new_len);

#ifdef __cplusplus
}
#endif
#endif /* BLOOMGATE_H */
