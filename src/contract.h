/*
 * contract.h — how the tables of bloomgate.h cross the wasm boundary
 * (internal; shared by wasm/bloomgate_wasm.c, which flattens structs into
 * doubles, and scripts/contract.c, which tells JavaScript where each field
 * landed). One rule for both, so they cannot disagree: every numeric field
 * takes BG__SLOTS_<type> doubles (a u64 takes two, its u32 halves lo then hi,
 * since a double holds only 53 bits), and byte fields go to a separate byte
 * area in table order.
 */
#ifndef BLOOMGATE_CONTRACT_H
#define BLOOMGATE_CONTRACT_H

#define BG__SLOTS_u8 1
#define BG__SLOTS_u16 1
#define BG__SLOTS_u32 1
#define BG__SLOTS_u64 2
#define BG__SLOTS_f64 1
#define BG__SLOTS_bytes 0
#define BG__SLOTS_bytes16 0

/* Flatten one value of a type into out[*slot...] or bytes[*byte...]. */
#define BG__FLAT_u8(v, out, slot, bytes, byte) (out)[(slot)++] = (double)(v)
#define BG__FLAT_u16(v, out, slot, bytes, byte) (out)[(slot)++] = (double)(v)
#define BG__FLAT_u32(v, out, slot, bytes, byte) (out)[(slot)++] = (double)(v)
#define BG__FLAT_u64(v, out, slot, bytes, byte)      \
  do {                                               \
    (out)[(slot)++] = (double)(uint32_t)(v);         \
    (out)[(slot)++] = (double)(uint32_t)((v) >> 32); \
  } while (0)
#define BG__FLAT_f64(v, out, slot, bytes, byte) (out)[(slot)++] = (v)
#define BG__FLAT_bytes(v, out, slot, bytes, byte) \
  do {                                            \
    memcpy((bytes) + (byte), (v), sizeof(v));     \
    (byte) += sizeof(v);                          \
  } while (0)
#define BG__FLAT_bytes16 BG__FLAT_bytes

/* The sizes JavaScript allocates for structs it hands to the core (checked in bloomgate_wasm.c). */
#define BG__SHA256_CTX_SIZE 112

#endif /* BLOOMGATE_CONTRACT_H */
