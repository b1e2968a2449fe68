/*
 * CRC-64/NVME (the S3 `x-amz-checksum-crc64nvme` algorithm): reflected
 * polynomial 0x9A6C9329AC4BC9B5 (normal form 0xAD93D23594C93659),
 * init and xorout all ones. Check value of "123456789": 0xAE8B14860A799888.
 *
 * Two paths:
 * - table-driven, eight bytes per step ("slicing-by-8"), everywhere;
 * - carry-less-multiply folding (PCLMULQDQ) on x86-64, picked at run time
 *   and checked against the table path at load.
 *
 * Folding, in the reflected domain (bit i of a 64-bit word is the
 * coefficient of x^(63-i); of a 128-bit little-endian block, x^(127-i)):
 * a 16-byte accumulator X = L·x^64 + H (L = low word, H = high word) moved
 * d bits further along the message is X·x^d ≡ L·(x^(d+64) mod P) + H·(x^d mod P).
 * A carry-less product of two reflected 64-bit words lands one bit short of
 * the 128-bit reflected position, so the constants carry one factor of x
 * less: x^(d+63) mod P and x^(d-1) mod P. Once the message is folded into
 * 16 bytes, those 16 bytes have the same remainder mod P as the folded
 * prefix, so the table path finishes them (and the tail).
 * The CRC's initial value is the same as XORing it into the first 8 bytes.
 */
#include <pthread.h>
#include <string.h>

#include "svc_native.h"

#if defined(__x86_64__)
#define SVC_CLMUL 1
#include <immintrin.h>
#endif

#define POLY_REFLECTED 0x9A6C9329AC4BC9B5ULL

static uint64_t table[8][256];
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int use_clmul = 0;

/* Raw CRC update (no init/xorout inversion). */
static uint64_t crc_table(uint64_t c, const uint8_t *p, size_t len) {
#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  while (len >= 8) {
    uint64_t v;
    memcpy(&v, p, 8);
    c ^= v;
    c = table[7][c & 0xff] ^ table[6][(c >> 8) & 0xff] ^ table[5][(c >> 16) & 0xff] ^ table[4][(c >> 24) & 0xff] ^
        table[3][(c >> 32) & 0xff] ^ table[2][(c >> 40) & 0xff] ^ table[1][(c >> 48) & 0xff] ^ table[0][c >> 56];
    p += 8;
    len -= 8;
  }
#endif
  while (len--) c = (c >> 8) ^ table[0][(c ^ *p++) & 0xff];
  return c;
}

#ifdef SVC_CLMUL
/* x^n mod P in the reflected representation. */
static uint64_t xpow_mod(unsigned n) {
  uint64_t v = 0x8000000000000000ULL; /* x^0 */
  while (n--) v = (v >> 1) ^ ((v & 1) ? POLY_REFLECTED : 0);
  return v;
}

static uint64_t k128_lo, k128_hi, k512_lo, k512_hi;

__attribute__((target("pclmul,sse4.1"))) static inline __m128i fold(__m128i x, __m128i k, __m128i next) {
  const __m128i a = _mm_clmulepi64_si128(x, k, 0x00); /* L × (x^(d+63) mod P) */
  const __m128i b = _mm_clmulepi64_si128(x, k, 0x11); /* H × (x^(d-1) mod P) */
  return _mm_xor_si128(_mm_xor_si128(a, b), next);
}

/* Raw CRC update for len ≥ 64, starting from raw state c. */
__attribute__((target("pclmul,sse4.1"))) static uint64_t crc_clmul(uint64_t c, const uint8_t *p, size_t len) {
  const __m128i k512 = _mm_set_epi64x((long long)k512_hi, (long long)k512_lo);
  const __m128i k128 = _mm_set_epi64x((long long)k128_hi, (long long)k128_lo);
  __m128i x0 = _mm_loadu_si128((const __m128i *)p);
  __m128i x1 = _mm_loadu_si128((const __m128i *)(p + 16));
  __m128i x2 = _mm_loadu_si128((const __m128i *)(p + 32));
  __m128i x3 = _mm_loadu_si128((const __m128i *)(p + 48));
  x0 = _mm_xor_si128(x0, _mm_set_epi64x(0, (long long)c));
  p += 64;
  len -= 64;
  while (len >= 64) {
    x0 = fold(x0, k512, _mm_loadu_si128((const __m128i *)p));
    x1 = fold(x1, k512, _mm_loadu_si128((const __m128i *)(p + 16)));
    x2 = fold(x2, k512, _mm_loadu_si128((const __m128i *)(p + 32)));
    x3 = fold(x3, k512, _mm_loadu_si128((const __m128i *)(p + 48)));
    p += 64;
    len -= 64;
  }
  x0 = fold(x0, k128, x1);
  x0 = fold(x0, k128, x2);
  x0 = fold(x0, k128, x3);
  while (len >= 16) {
    x0 = fold(x0, k128, _mm_loadu_si128((const __m128i *)p));
    p += 16;
    len -= 16;
  }
  uint8_t folded[16];
  _mm_storeu_si128((__m128i *)folded, x0);
  return crc_table(crc_table(0, folded, 16), p, len);
}
#endif

#ifdef SVC_CLMUL
static int clmul_self_test(void);
#endif

static void init_once_fn(void) {
  for (int b = 0; b < 256; b++) {
    uint64_t c = (uint64_t)b;
    for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ POLY_REFLECTED : c >> 1;
    table[0][b] = c;
  }
  for (int b = 0; b < 256; b++) {
    for (int t = 1; t < 8; t++) table[t][b] = (table[t - 1][b] >> 8) ^ table[0][table[t - 1][b] & 0xff];
  }
#ifdef SVC_CLMUL
  k128_lo = xpow_mod(128 + 63);
  k128_hi = xpow_mod(128 - 1);
  k512_lo = xpow_mod(512 + 63);
  k512_hi = xpow_mod(512 - 1);
  __builtin_cpu_init();
  if (__builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1") && clmul_self_test()) use_clmul = 1;
#endif
}

/* Worker threads load the addon too, possibly at the same time: once only. */
void svc_crc64nvme_init(void) { pthread_once(&init_once, init_once_fn); }

const char *svc_crc64nvme_kernel(void) { return use_clmul ? "pclmul" : "table"; }

/* `prev` is a finished CRC (0 for none); the result continues it. */
uint64_t svc_crc64nvme(const uint8_t *p, size_t len, uint64_t prev) {
  uint64_t c = ~prev;
#ifdef SVC_CLMUL
  if (use_clmul && len >= 64) return ~crc_clmul(c, p, len);
#endif
  return ~crc_table(c, p, len);
}

/* The folding path against the table path on lengths around every branch. */
#ifdef SVC_CLMUL
static int clmul_self_test(void) {
  uint8_t buf[700];
  uint32_t s = 0x2545f491u;
  for (size_t i = 0; i < sizeof buf; i++) {
    s ^= s << 13;
    s ^= s >> 17;
    s ^= s << 5;
    buf[i] = (uint8_t)s;
  }
  for (size_t len = 64; len <= sizeof buf; len++) {
    const uint64_t init = ~(uint64_t)len * 0x9E3779B97F4A7C15ULL;
    if (crc_clmul(init, buf, len) != crc_table(init, buf, len)) return 0;
  }
  return 1;
}
#endif
