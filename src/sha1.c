/*
 * sha1.c — SHA-1 (FIPS 180-4 §6.1), written from the specification.
 * Used only as a key encoding: breached-password lists are published as
 * SHA-1 digests, so a password filter's keys are SHA-1(password). It is not
 * used for anything that needs collision resistance.
 */
#include <string.h>

#include "bloomgate.h"

static uint32_t rotl32(uint32_t x, unsigned n) { return (x << n) | (x >> (32 - n)); }

static uint32_t load_be32(const uint8_t *p) {
  return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static void sha1_block(uint32_t h[5], const uint8_t *block) {
  uint32_t w[80];
  for (int t = 0; t < 16; t++) w[t] = load_be32(block + 4 * t);
  for (int t = 16; t < 80; t++) w[t] = rotl32(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1);
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
  for (int t = 0; t < 80; t++) {
    uint32_t f, k;
    if (t < 20) {
      f = (b & c) | (~b & d);
      k = 0x5a827999u;
    } else if (t < 40) {
      f = b ^ c ^ d;
      k = 0x6ed9eba1u;
    } else if (t < 60) {
      f = (b & c) | (b & d) | (c & d);
      k = 0x8f1bbcdcu;
    } else {
      f = b ^ c ^ d;
      k = 0xca62c1d6u;
    }
    uint32_t temp = rotl32(a, 5) + f + e + k + w[t];
    e = d;
    d = c;
    c = rotl32(b, 30);
    b = a;
    a = temp;
  }
  h[0] += a;
  h[1] += b;
  h[2] += c;
  h[3] += d;
  h[4] += e;
}

void bg_sha1(const void *data, size_t len, uint8_t out[20]) {
  uint32_t h[5] = {0x67452301u, 0xefcdab89u, 0x98badcfeu, 0x10325476u, 0xc3d2e1f0u};
  const uint8_t *p = (const uint8_t *)data;
  size_t remaining = len;
  for (; remaining >= 64; remaining -= 64, p += 64) sha1_block(h, p);
  /* Padding: 0x80, zeros, then the message length in bits, big-endian. */
  uint8_t tail[128] = {0};
  if (remaining) memcpy(tail, p, remaining);
  tail[remaining] = 0x80;
  size_t tail_len = remaining + 1 + 8 <= 64 ? 64 : 128;
  uint64_t bit_len = (uint64_t)len * 8;
  for (int i = 0; i < 8; i++) tail[tail_len - 1 - i] = (uint8_t)(bit_len >> (8 * i));
  sha1_block(h, tail);
  if (tail_len == 128) sha1_block(h, tail + 64);
  for (int i = 0; i < 5; i++) {
    out[4 * i] = (uint8_t)(h[i] >> 24);
    out[4 * i + 1] = (uint8_t)(h[i] >> 16);
    out[4 * i + 2] = (uint8_t)(h[i] >> 8);
    out[4 * i + 3] = (uint8_t)h[i];
  }
}
