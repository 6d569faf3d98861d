/*
 * bloomgate.h — the public C API of the bloomgate core.
 *
 * The core is C11 with no I/O: it never prints, exits, aborts or touches a
 * file. Every function that can fail returns a bg_status (BG_OK = 0, errors
 * are negative). Every allocation is checked; out of memory is BG_E_NOMEM.
 * The same sources build natively and to WebAssembly and give bit-identical
 * filters and files on both (docs/FORMAT.md is the byte-level spec).
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
#define BG_STATUS_LIST(X)                                                                                 \
  X(OK, 0, DATA, "ok")                                                                                    \
  X(E_ARG, -1, INTERNAL, "invalid argument")                                                              \
  X(E_RANGE, -2, USAGE, "capacity or error rate out of range")                                            \
  X(E_NOMEM, -3, RESOURCE, "out of memory")                                                               \
  X(E_TOO_LARGE, -4, DATA, "filter size exceeds the supported maximum")                                   \
  X(E_TRUNCATED, -5, DATA, "filter file is truncated")                                                    \
  X(E_MAGIC, -6, DATA, "not a bloomgate filter file (bad magic bytes)")                                   \
  X(E_VERSION, -7, DATA, "unsupported filter file format version")                                        \
  X(E_HEADER, -8, DATA, "filter file header is inconsistent")                                             \
  X(E_TRAILING, -9, DATA, "filter file has bytes after its payload")                                      \
  X(E_CHECKSUM, -10, DATA, "filter file checksum mismatch (corrupted)")                                   \
  X(E_KIND, -11, DATA, "unknown or unsupported filter kind")                                              \
  X(E_KEY_ENCODING, -12, DATA, "unknown or unsupported key encoding")                                     \
  X(E_HASH, -13, DATA, "unknown hash algorithm")                                                          \
  X(E_PAYLOAD, -14, DATA, "filter payload is inconsistent with its header")                               \
  X(E_INCOMPATIBLE, -15, DATA, "filters are incompatible (kind, m, k, seed, hash or key encoding differ)") \
  X(E_BUFFER, -16, INTERNAL, "destination buffer is too small")                                           \
  X(E_METADATA, -17, DATA, "metadata block is too large")                                                 \
  X(E_URL, -18, DATA, "URL cannot be parsed or canonicalized")                                            \
  X(E_FULL, -19, DATA, "filter is full: the item could not be placed")                                    \
  X(E_UNSUPPORTED, -20, DATA, "operation not supported by this filter kind")                              \
  X(E_NOT_FOUND, -21, DATA, "item is not in the filter, so it cannot be removed")                         \
  X(E_STATIC, -22, DATA, "a static filter cannot take items after it is built")                           \
  X(E_DELTA_BASE, -23, DATA, "delta does not apply to this filter (another list, generation or file)")    \
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
#define BG_KIND_LIST(X)                                                           \
  X(CLASSIC, classic, 1, BG_KP_MERGE | BG_KP_CLASSIC_SIZED)                       \
  X(BLOCKED, blocked, 2, BG_KP_MERGE)                                             \
  X(FUSE8, fuse8, 3, BG_KP_STATIC)                                                \
  X(FUSE16, fuse16, 4, BG_KP_STATIC)                                              \
  X(COUNTING, counting, 5, BG_KP_REMOVE | BG_KP_MERGE | BG_KP_CLASSIC_SIZED)      \
  X(SCALABLE, scalable, 6, BG_KP_CLASSIC_SIZED)                                   \
  X(CUCKOO, cuckoo, 7, BG_KP_REMOVE)
/*
 * classic:  the classic Bloom filter;            blocked: split-block, one 64-byte block per key;
 * fuse8/16: binary fuse, 8/16-bit fingerprints;  counting: 4-bit saturating counters;
 * scalable: a chain of growing classic layers;   cuckoo: cuckoo filter. Each has a page in docs/kinds/.
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
/*   url:  the keys are the SHA-256 of the item's Safe Browsing expressions. */
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
#define BG_HEADER_FIELDS(X)             \
  X(magic, 0, 8, bytes, FIXED)          \
  X(checksum, 8, 8, u64, MEMBER)        \
  X(version, 16, 2, u16, MEMBER)        \
  X(header_size, 18, 2, u16, FIXED)     \
  X(kind, 20, 1, u8, MEMBER)            \
  X(key_encoding, 21, 1, u8, MEMBER)    \
  X(hash_algorithm, 22, 1, u8, MEMBER)  \
  X(flags, 23, 1, u8, FIXED)            \
  X(k, 24, 4, u32, MEMBER)              \
  X(metadata_length, 28, 4, u32, MEMBER) \
  X(m, 32, 8, u64, MEMBER)              \
  X(capacity, 40, 8, u64, MEMBER)       \
  X(error_rate, 48, 8, f64, MEMBER)     \
  X(count, 56, 8, u64, MEMBER)          \
  X(seed, 64, 8, u64, MEMBER)           \
  X(generation, 72, 8, u64, MEMBER)     \
  X(list_id, 80, 16, bytes, MEMBER)     \
  X(payload_offset, 96, 8, u64, MEMBER) \
  X(payload_length, 104, 8, u64, MEMBER) \
  X(reserved, 112, 16, bytes, FIXED)

/*
 * What a filter reports about itself (bg_filter_info, the bg_info struct):
 * X(name, type). The wasm boundary flattens it in this order.
 *   error_rate: the target it was sized for; fill_ratio: bits_set / m
 *   (occupied slots for slot-based kinds); estimated_items and
 *   estimated_error_rate: from the fill ratio, what queries see now;
 *   theoretical_error_rate: what the kind's math predicts after count items.
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
  X(list_id, bytes16)

/*
 * What a delta file says about itself (bg_delta_peek, the bg_delta_info
 * struct of bloomgate_delta.h): X(name, type), flattened in this order.
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
#define BG_MAX_BITS ((uint64_t)1 << 43)      /* 1 TiB of bits; wasm is bounded by its 4 GiB memory first */
#define BG_MAX_K 64u                         /* p >= ~5e-20; beyond that more bits per key buy nothing real */
#define BG_MAX_CAPACITY ((uint64_t)1 << 53)  /* exact in a double, so JavaScript sees the same number */
#define BG_MAX_METADATA (1u << 20)           /* 1 MiB of metadata JSON */
#define BG_HEADER_SIZE 128u                  /* fixed part of the .bgf header */
#define BG_PAYLOAD_ALIGN 64u                 /* payload offset alignment (cache line) */
#define BG_FORMAT_VERSION 1u

/* ------------------------------------------------------------------------ */
/* Sizing: (n, p) -> (m, k), and what a filter's fill says about it.          */
/* ------------------------------------------------------------------------ */
/**
 * @brief Size a classic filter: m = ceil(-n ln p / (ln 2)^2), k = max(1, round((m/n) ln 2)).
 * @pre capacity in [1, BG_MAX_CAPACITY], 0 < error_rate < 1.
 * @return BG_OK; BG_E_RANGE for a bad capacity/rate or a k above BG_MAX_K;
 *         BG_E_TOO_LARGE when m exceeds BG_MAX_BITS.
 */
bg_status bg_size_for(uint64_t capacity, double error_rate, uint64_t *m, uint32_t *k);
/** @brief (1 - e^(-kn/m))^k: the false-positive rate expected after n inserts. */
double bg_theoretical_error_rate(uint64_t m, uint32_t k, uint64_t n);
/** @brief n* = -(m/k) ln(1 - X/m): items implied by X set bits (infinity when every bit is set). */
double bg_estimated_items(uint64_t m, uint32_t k, uint64_t bits_set);
/** @brief (X/m)^k: the false-positive rate the current fill implies. */
double bg_estimated_error_rate(uint64_t m, uint32_t k, uint64_t bits_set);

/* ------------------------------------------------------------------------ */
/* Hashing: where a key becomes bit positions (hash.c).                       */
/* ------------------------------------------------------------------------ */
typedef struct {
  uint64_t h1, h2; /* low and high halves of XXH3-128(key, seed) */
} bg_hash_pair;

/** @brief The two base hashes of a key: XXH3_128bits_withSeed(key, len, seed). */
bg_hash_pair bg_hash(const void *key, size_t len, uint64_t seed);
/**
 * @brief The k positions in [0, m) of a hashed key, by enhanced double hashing:
 *        x = h1, y = h2; for i in 0..k-1: out[i] = reduce(x, m); x += y; y += i + 1
 *        (all mod 2^64), with reduce() the multiply-shift range reduction of docs/FORMAT.md.
 */
void bg_positions(bg_hash_pair hash, uint64_t m, uint32_t k, uint64_t *out);

/* ------------------------------------------------------------------------ */
/* Digests (sha.c): keys for password filters, integrity of downloads.      */
/* ------------------------------------------------------------------------ */
/** @brief SHA-1 of data into out[20]. */
void bg_sha1(const void *data, size_t len, uint8_t out[20]);

typedef struct {
  uint32_t state[8];
  uint64_t length; /* bytes hashed so far */
  uint8_t block[64];
  uint32_t used; /* bytes in block */
} bg_sha256_ctx;
void bg_sha256_init(bg_sha256_ctx *ctx);
void bg_sha256_update(bg_sha256_ctx *ctx, const void *data, size_t len);
void bg_sha256_final(bg_sha256_ctx *ctx, uint8_t out[32]);
/** @brief One-shot SHA-256 of data into out[32]. */
void bg_sha256(const void *data, size_t len, uint8_t out[32]);

/**
 * @brief Apply a key encoding to an item.
 * For BG_KEY_UTF8 *key points at the item itself; for BG_KEY_SHA1 it points at
 * scratch (at least 32 bytes) holding the digest.
 * @return BG_OK or BG_E_KEY_ENCODING.
 */
bg_status bg_encode_key(int key_encoding, const void *item, size_t len, uint8_t *scratch,
                        const uint8_t **key, size_t *key_len);

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
 * URL (not NUL-terminated).
 * @return BG_OK, BG_E_URL, BG_E_BUFFER or BG_E_ARG.
 */
bg_status bg_url_canonicalize(const char *url, size_t len, char *out, size_t out_capacity,
                              size_t *out_len);
/**
 * @brief The host-suffix x path-prefix expressions of a canonical URL (at most
 * BG_URL_MAX_EXPRESSIONS), most specific first, each "host/path[?query]"
 * without scheme. Expression i is out[offsets[i] .. offsets[i+1]); offsets has
 * room for BG_URL_MAX_EXPRESSIONS + 1 entries.
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
 * header->file_length before it has (or allocates for) the payload.
 * @return BG_OK, BG_E_TRUNCATED (fewer than BG_HEADER_SIZE bytes), BG_E_MAGIC,
 *         BG_E_VERSION, BG_E_HEADER or BG_E_TOO_LARGE.
 */
bg_status bg_header_peek(const uint8_t *src, size_t src_size, bg_header *header);
/**
 * @brief Validate a whole file: lengths, checksum, kind, key encoding, hash, and
 * the kind's own parameters against its payload. Allocates nothing.
 */
bg_status bg_file_validate(const uint8_t *src, size_t src_size, bg_header *header);
/** @brief The checksum a file should carry: XXH3-64 (seed 0) of bytes [16, file_length). */
uint64_t bg_file_checksum(const uint8_t *src, size_t file_length);
/**
 * @brief bg_file_validate with the checksum already computed by the caller,
 * over bytes [16, src_size) as they arrived (bg_file_hasher): every other check
 * runs; a checksum different from the header's is BG_E_CHECKSUM.
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
/** @brief A new hasher (NULL when out of memory); free it with bg_file_hasher_free. */
bg_file_hasher *bg_file_hasher_new(void);
void bg_file_hasher_free(bg_file_hasher *hasher);
void bg_file_hasher_update(bg_file_hasher *hasher, const uint8_t *bytes, size_t len);
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
 * rate of a query. Equal to error_rate except for url filters, whose queries
 * ask up to BG_URL_MAX_EXPRESSIONS keys: there it is 1 - (1 - p)^(1/30), so at
 * most a share p of clean URLs escalates.
 */
double bg_key_error_rate(int key_encoding, double error_rate);

/** @brief The name of a kind ("classic", ...), or NULL when this build does not have it. */
const char *bg_kind_name(int kind);

/**
 * @brief Create an empty filter of a kind, sized for capacity items at error_rate.
 * @return BG_OK, BG_E_ARG, BG_E_RANGE, BG_E_KIND, BG_E_KEY_ENCODING, BG_E_TOO_LARGE or BG_E_NOMEM.
 */
bg_status bg_filter_create(int kind, uint64_t capacity, double error_rate, uint64_t seed,
                           int key_encoding, bg_filter **out);
/** @brief Release a filter (NULL is fine). */
void bg_filter_free(bg_filter *filter);
/** @brief Remove every item. */
void bg_filter_clear(bg_filter *filter);

/** @brief Add an item; the filter's key encoding is applied first. */
bg_status bg_filter_add(bg_filter *filter, const void *item, size_t len);
/** @return 1 (maybe), 0 (definitely not) or a negative bg_status. */
int bg_filter_contains(const bg_filter *filter, const void *item, size_t len);
/** @brief Add a key that is already encoded (e.g. a 20-byte SHA-1 from a breach dump). */
bg_status bg_filter_add_key(bg_filter *filter, const void *key, size_t len);
/** @return 1, 0 or a negative bg_status, for an already-encoded key. */
int bg_filter_contains_key(const bg_filter *filter, const void *key, size_t len);
/**
 * @brief Add keys to a fuse filter (fuse8, fuse16) by their h1 alone: h1[i]
 * is the low half of bg_hash(key, len, seed) with the filter's seed. How a
 * sharded build feeds one shard (docs/kinds/fuse.md): the shard's payload is
 * that of the unsharded filter of these keys. Each value counts as one add.
 * BG_E_UNSUPPORTED for other kinds.
 */
bg_status bg_filter_add_h1(bg_filter *filter, const uint64_t *h1, size_t count);
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
 * @param filter a filter with key encoding BG_KEY_URL.
 * @param url, len the URL (host already ASCII, as for bg_url_canonicalize).
 * @param text, text_capacity where the expressions' text goes.
 * @param out the expressions, their keys and the maybe mask.
 * @return 1 when some expression might be listed, 0 when none is (definitely
 *         clean), or BG_E_URL, BG_E_KEY_ENCODING (not a url filter),
 *         BG_E_BUFFER (text too small: out->offsets[out->count] is the size
 *         needed), BG_E_NOMEM or BG_E_ARG.
 */
int bg_filter_match_url(const bg_filter *filter, const char *url, size_t len, char *text, size_t text_capacity,
                        bg_url_match *out);
/** @brief Remove an item (kinds that support deletion; BG_E_UNSUPPORTED otherwise). */
bg_status bg_filter_remove(bg_filter *filter, const void *item, size_t len);
bg_status bg_filter_remove_key(bg_filter *filter, const void *key, size_t len);

/**
 * @brief Batches: item i is items[offsets[i] .. offsets[i+1]); offsets has count+1
 * entries. Hashes a group of items first and probes second, so memory
 * latency overlaps. results[i] = 1 or 0.
 */
bg_status bg_filter_add_many(bg_filter *filter, const uint8_t *items, const uint32_t *offsets,
                             size_t count);
bg_status bg_filter_contains_many(const bg_filter *filter, const uint8_t *items,
                                  const uint32_t *offsets, size_t count, uint8_t *results);

/** @brief Static kinds build their structure from the added keys; a no-op for the others. */
bg_status bg_filter_seal(bg_filter *filter);
/**
 * @brief The classic filter a counting filter publishes: same m, k, seed and key
 * encoding, bit i set iff counter i is non-zero. BG_E_UNSUPPORTED for other kinds.
 */
bg_status bg_filter_to_classic(const bg_filter *filter, bg_filter **out);
/** @brief dst |= src; both must share kind, geometry, seed, hash and key encoding. */
bg_status bg_filter_merge(bg_filter *dst, const bg_filter *src);
/** @brief Fill *info. */
void bg_filter_info(const bg_filter *filter, bg_info *info);

/** @brief Attach metadata (UTF-8 JSON by convention; copied; at most BG_MAX_METADATA bytes). */
bg_status bg_filter_set_metadata(bg_filter *filter, const void *data, size_t len);
/** @brief The metadata block (not NUL-terminated); *len = 0 when there is none. */
const uint8_t *bg_filter_metadata(const bg_filter *filter, size_t *len);
/** @brief Name the list this filter was built from and its generation. */
void bg_filter_set_identity(bg_filter *filter, const uint8_t list_id[16], uint64_t generation);

/** @brief Exact size of bg_filter_serialize()'s output. */
size_t bg_filter_serialized_size(const bg_filter *filter);
/** @brief Write the .bgf file into dst; *written = bytes written. */
bg_status bg_filter_serialize(const bg_filter *filter, uint8_t *dst, size_t dst_capacity,
                              size_t *written);
/** @brief Validate a .bgf file and build a filter from a copy of its payload. */
bg_status bg_filter_deserialize(const uint8_t *src, size_t src_size, bg_filter **out);
/**
 * @brief Like bg_filter_deserialize, but takes ownership of buffer (from malloc)
 * and uses the payload in place, with no copy. On error the buffer stays the
 * caller's.
 */
bg_status bg_filter_deserialize_owned(uint8_t *buffer, size_t size, bg_filter **out);
/** @brief bg_filter_deserialize_owned with the checksum the caller computed as the bytes arrived (bg_file_hasher). */
bg_status bg_filter_deserialize_owned_checked(uint8_t *buffer, size_t size, uint64_t checksum, bg_filter **out);

#ifdef __cplusplus
}
#endif
#endif /* BLOOMGATE_H */
