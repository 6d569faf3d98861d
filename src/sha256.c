/*
 * sha256.c — SHA-256 (FIPS 180-4 §6.2), written from the specification.
 * Streaming, so a download's Subresource-Integrity digest is computed chunk by
 * chunk as the bytes arrive; also the key encoding of URL filters.
 */
#include <string.h>

#include "bloomgate.h"

static const uint32_t K256[64] = {
    0x428a2f98u, 0x71374491u, 0xb5c0fbcfu, 0xe9b5dba5u, 0x3956c25bu, 0x59f111f1u, 0x923f82a4u, 0xab1c5ed5u,
    0xd807aa98u, 0x12835b01u, 0x243185beu, 0x550c7dc3u, 0x72be5d74u, 0x80deb1feu, 0x9bdc06a7u, 0xc19bf174u,
    0xe49b69c1u, 0xefbe4786u, 0x0fc19dc6u, 0x240ca1ccu, 0x2de92c6fu, 0x4a7484aau, 0x5cb0a9dcu, 0x76f988dau,
    0x983e5152u, 0xa831c66du, 0xb00327c8u, 0xbf597fc7u, 0xc6e00bf3u, 0xd5a79147u, 0x06ca6351u, 0x14292967u,
    0x27b70a85u, 0x2e1b2138u, 0x4d2c6dfcu, 0x53380d13u, 0x650a7354u, 0x766a0abbu, 0x81c2c92eu, 0x92722c85u,
    0xa2bfe8a1u, 0xa81a664bu, 0xc24b8b70u, 0xc76c51a3u, 0xd192e819u, 0xd6990624u, 0xf40e3585u, 0x106aa070u,
    0x19a4c116u, 0x1e376c08u, 0x2748774cu, 0x34b0bcb5u, 0x391c0cb3u, 0x4ed8aa4au, 0x5b9cca4fu, 0x682e6ff3u,
    0x748f82eeu, 0x78a5636fu, 0x84c87814u, 0x8cc70208u, 0x90befffau, 0xa4506cebu, 0xbef9a3f7u, 0xc67178f2u};

static uint32_t rotr32(uint32_t x, unsigned n) { return (x >> n) | (x << (32 - n)); }

static void sha256_block(uint32_t h[8], const uint8_t *block) {
  uint32_t w[64];
  for (int t = 0; t < 16; t++)
    w[t] = ((uint32_t)block[4 * t] << 24) | ((uint32_t)block[4 * t + 1] << 16) |
           ((uint32_t)block[4 * t + 2] << 8) | block[4 * t + 3];
  for (int t = 16; t < 64; t++) {
    uint32_t s0 = rotr32(w[t - 15], 7) ^ rotr32(w[t - 15], 18) ^ (w[t - 15] >> 3);
    uint32_t s1 = rotr32(w[t - 2], 17) ^ rotr32(w[t - 2], 19) ^ (w[t - 2] >> 10);
    w[t] = w[t - 16] + s0 + w[t - 7] + s1;
  }
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
  for (int t = 0; t < 64; t++) {
    uint32_t s1 = rotr32(e, 6) ^ rotr32(e, 11) ^ rotr32(e, 25);
    uint32_t ch = (e & f) ^ (~e & g);
    uint32_t t1 = hh + s1 + ch + K256[t] + w[t];
    uint32_t s0 = rotr32(a, 2) ^ rotr32(a, 13) ^ rotr32(a, 22);
    uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
    uint32_t t2 = s0 + maj;
    hh = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  h[0] += a;
  h[1] += b;
  h[2] += c;
  h[3] += d;
  h[4] += e;
  h[5] += f;
  h[6] += g;
  h[7] += hh;
}

void bg_sha256_init(bg_sha256_ctx *ctx) {
  static const uint32_t initial[8] = {0x6a09e667u, 0xbb67ae85u, 0x3c6ef372u, 0xa54ff53au,
                                      0x510e527fu, 0x9b05688cu, 0x1f83d9abu, 0x5be0cd19u};
  memcpy(ctx->state, initial, sizeof initial);
  ctx->length = 0;
  ctx->used = 0;
}

void bg_sha256_update(bg_sha256_ctx *ctx, const void *data, size_t len) {
  const uint8_t *p = (const uint8_t *)data;
  ctx->length += len;
  if (ctx->used) {
    size_t take = 64 - ctx->used < len ? 64 - ctx->used : len;
    memcpy(ctx->block + ctx->used, p, take);
    ctx->used += (uint32_t)take;
    p += take;
    len -= take;
    if (ctx->used < 64) return;
    sha256_block(ctx->state, ctx->block);
    ctx->used = 0;
  }
  for (; len >= 64; len -= 64, p += 64) sha256_block(ctx->state, p);
  if (len) {
    memcpy(ctx->block, p, len);
    ctx->used = (uint32_t)len;
  }
}

void bg_sha256_final(bg_sha256_ctx *ctx, uint8_t out[32]) {
  uint64_t bit_len = ctx->length * 8;
  uint8_t pad[72] = {0x80};
  /* Pad to 56 mod 64, then append the bit length big-endian. */
  size_t pad_len = ctx->used < 56 ? 56 - ctx->used : 120 - ctx->used;
  for (int i = 0; i < 8; i++) pad[pad_len + i] = (uint8_t)(bit_len >> (56 - 8 * i));
  uint64_t length = ctx->length;
  bg_sha256_update(ctx, pad, pad_len + 8);
  ctx->length = length;
  for (int i = 0; i < 8; i++) {
    out[4 * i] = (uint8_t)(ctx->state[i] >> 24);
    out[4 * i + 1] = (uint8_t)(ctx->state[i] >> 16);
    out[4 * i + 2] = (uint8_t)(ctx->state[i] >> 8);
    out[4 * i + 3] = (uint8_t)ctx->state[i];
  }
}

void bg_sha256(const void *data, size_t len, uint8_t out[32]) {
  bg_sha256_ctx ctx;
  bg_sha256_init(&ctx);
  bg_sha256_update(&ctx, data, len);
  bg_sha256_final(&ctx, out);
}
