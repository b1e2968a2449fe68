/*
 * Multi-buffer MD5 and SHA-256: many independent message streams hashed at
 * once, one stream per 32-bit SIMD lane (8 lanes: AVX2, or AVX-512VL on
 * 256-bit vectors, whose ternary logic and rotate instructions shorten each
 * round), so a core runs the serial compression function of 8 streams in the
 * time of about two. Written from RFC 1321 (MD5) and FIPS 180-4 (SHA-256) and
 * Intel's description of the SHA extensions; constants are derived at load
 * (sin for MD5, exact integer roots for SHA-256) and every kernel is
 * self-tested against the portable code before use.
 *
 * The unit of work is a job: a state (4 or 8 host-order u32 words) and a run
 * of whole 64-byte blocks. Padding and the final length block are the
 * caller's (TypeScript) business. Jobs of one call must have distinct states.
 * A scheduler keeps the lanes full: each lane takes the next job when its
 * own runs out; when fewer than 3 jobs are left, the scalar kernel finishes
 * them (idle lanes cost as much as busy ones). The scalar kernel runs each
 * stream on its own instruction chain; with the SHA extensions it
 * interleaves up to four SHA-256 streams on one core (see SHA_NI_GROUP).
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "mbhash.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define MB_X86 1
#endif

static uint32_t md5_t[64];
static uint32_t sha_k[64];
static uint32_t sha_iv[8];
static const int md5_s[4][4] = {{7, 12, 17, 22}, {5, 9, 14, 20}, {4, 11, 16, 23}, {6, 10, 15, 21}};

static inline uint32_t rotl32(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }
static inline uint32_t rotr32(uint32_t x, int r) { return (x >> r) | (x << (32 - r)); }
static inline uint32_t le32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static inline uint32_t be32(const uint8_t *p) { return (uint32_t)p[3] | (uint32_t)p[2] << 8 | (uint32_t)p[1] << 16 | (uint32_t)p[0] << 24; }

static inline int md5_index(int i) {
  switch (i >> 4) {
    case 0: return i;
    case 1: return (5 * i + 1) & 15;
    case 2: return (3 * i + 5) & 15;
    default: return (7 * i) & 15;
  }
}

/* floor(frac(root(p)) * 2^32) exactly: the double estimate, corrected with 128-bit integers. */
static uint32_t frac_root(uint32_t p, int cube) {
  double r = cube ? cbrt((double)p) : sqrt((double)p);
  unsigned __int128 c = (unsigned __int128)(r * 4294967296.0);
  unsigned __int128 target = (unsigned __int128)p << (cube ? 96 : 64);
#define POW(x) (cube ? (x) * (x) * (x) : (x) * (x))
  while (POW(c) > target) c--;
  while (POW(c + 1) <= target) c++;
#undef POW
  return (uint32_t)c;
}

static void md5_block(uint32_t *s, const uint8_t *p) {
  uint32_t x[16];
  for (int i = 0; i < 16; i++) x[i] = le32(p + 4 * i);
  uint32_t a = s[0], b = s[1], c = s[2], d = s[3];
  for (int i = 0; i < 64; i++) {
    uint32_t f;
    switch (i >> 4) {
      case 0: f = d ^ (b & (c ^ d)); break;
      case 1: f = c ^ (d & (b ^ c)); break;
      case 2: f = b ^ c ^ d; break;
      default: f = c ^ (b | ~d); break;
    }
    uint32_t t = d;
    d = c;
    c = b;
    b = b + rotl32(a + f + md5_t[i] + x[md5_index(i)], md5_s[i >> 4][i & 3]);
    a = t;
  }
  s[0] += a;
  s[1] += b;
  s[2] += c;
  s[3] += d;
}

static void sha256_block(uint32_t *s, const uint8_t *p) {
  uint32_t w[64];
  for (int i = 0; i < 16; i++) w[i] = be32(p + 4 * i);
  for (int i = 16; i < 64; i++) {
    uint32_t s0 = rotr32(w[i - 15], 7) ^ rotr32(w[i - 15], 18) ^ (w[i - 15] >> 3);
    uint32_t s1 = rotr32(w[i - 2], 17) ^ rotr32(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  uint32_t a = s[0], b = s[1], c = s[2], d = s[3], e = s[4], f = s[5], g = s[6], h = s[7];
  for (int i = 0; i < 64; i++) {
    uint32_t t1 = h + (rotr32(e, 6) ^ rotr32(e, 11) ^ rotr32(e, 25)) + (g ^ (e & (f ^ g))) + sha_k[i] + w[i];
    uint32_t t2 = (rotr32(a, 2) ^ rotr32(a, 13) ^ rotr32(a, 22)) + ((a & b) | (c & (a | b)));
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  s[0] += a;
  s[1] += b;
  s[2] += c;
  s[3] += d;
  s[4] += e;
  s[5] += f;
  s[6] += g;
  s[7] += h;
}

#ifdef MB_X86
#define AVX2 __attribute__((target("avx2")))
#define AVX512 __attribute__((target("avx2,avx512f,avx512vl")))
#define V __m256i

AVX2 static inline V vrotl(V x, int r) { return _mm256_or_si256(_mm256_slli_epi32(x, r), _mm256_srli_epi32(x, 32 - r)); }
AVX2 static inline V vrotr(V x, int r) { return _mm256_or_si256(_mm256_srli_epi32(x, r), _mm256_slli_epi32(x, 32 - r)); }

/*
 * Words off/4 .. off/4+7 (little-endian) of the current block of the 8 lanes,
 * word-major: out[w] holds word w of every lane. One 32-byte load per lane and
 * an 8x8 transpose of 32-bit words (unpack 32, unpack 64, swap 128-bit
 * halves), instead of 64 scalar loads stored and reloaded as vectors.
 */
AVX2 static inline void load_words8(V out[8], const uint8_t *const *p, int off) {
  V r[8], t[8], u[8];
  for (int l = 0; l < 8; l++) r[l] = _mm256_loadu_si256((const V *)(p[l] + off));
  for (int l = 0; l < 8; l += 2) {
    t[l] = _mm256_unpacklo_epi32(r[l], r[l + 1]);
    t[l + 1] = _mm256_unpackhi_epi32(r[l], r[l + 1]);
  }
  for (int h = 0; h < 8; h += 4) {
    u[h] = _mm256_unpacklo_epi64(t[h], t[h + 2]);
    u[h + 1] = _mm256_unpackhi_epi64(t[h], t[h + 2]);
    u[h + 2] = _mm256_unpacklo_epi64(t[h + 1], t[h + 3]);
    u[h + 3] = _mm256_unpackhi_epi64(t[h + 1], t[h + 3]);
  }
  for (int w = 0; w < 4; w++) {
    out[w] = _mm256_permute2x128_si256(u[w], u[w + 4], 0x20);
    out[w + 4] = _mm256_permute2x128_si256(u[w], u[w + 4], 0x31);
  }
}

/* MD5's four round functions and rotation: AVX2 (two or three logic operations, three for a rotation). */
#define MD5_F2(b, c, d) _mm256_xor_si256(d, _mm256_and_si256(b, _mm256_xor_si256(c, d)))
#define MD5_G2(b, c, d) _mm256_xor_si256(c, _mm256_and_si256(d, _mm256_xor_si256(b, c)))
#define MD5_H2(b, c, d) _mm256_xor_si256(b, _mm256_xor_si256(c, d))
#define MD5_I2(b, c, d) _mm256_xor_si256(c, _mm256_or_si256(b, _mm256_xor_si256(d, _mm256_set1_epi32(-1))))
#define ROTL2(x, r) vrotl(x, r)
/* AVX-512VL on 256-bit vectors: each round function is one ternary-logic operation (its truth
 * table over b, c, d as the immediate) and a rotation is one instruction. */
#define MD5_F5(b, c, d) _mm256_ternarylogic_epi32(b, c, d, 0xca)
#define MD5_G5(b, c, d) _mm256_ternarylogic_epi32(b, c, d, 0xe4)
#define MD5_H5(b, c, d) _mm256_ternarylogic_epi32(b, c, d, 0x96)
#define MD5_I5(b, c, d) _mm256_ternarylogic_epi32(b, c, d, 0x39)
#define ROTL5(x, r) _mm256_rol_epi32(x, r)

#define MD5_STEP(FN, ROTL, i)                                                                        \
  do {                                                                                                \
    V t = _mm256_add_epi32(_mm256_add_epi32(a, FN(b, c, d)),                                          \
                           _mm256_add_epi32(_mm256_set1_epi32((int)md5_t[i]), x[md5_index(i)]));      \
    t = _mm256_add_epi32(b, ROTL(t, md5_s[(i) >> 4][(i) & 3]));                                       \
    a = d;                                                                                            \
    d = c;                                                                                            \
    c = b;                                                                                            \
    b = t;                                                                                            \
  } while (0)

/* MD5 over `n` blocks of each lane; st[word][lane]; lane l advances step[l] bytes per block. */
#define MD5_LANES(NAME, ATTR, F, G, H, I, ROTL)                                                       \
  ATTR static void NAME(uint32_t st[4][8], const uint8_t **p, const size_t *step, size_t n) {          \
    V a0 = _mm256_loadu_si256((V *)st[0]), b0 = _mm256_loadu_si256((V *)st[1]);                       \
    V c0 = _mm256_loadu_si256((V *)st[2]), d0 = _mm256_loadu_si256((V *)st[3]);                       \
    const uint8_t *q[8];                                                                               \
    for (int l = 0; l < 8; l++) q[l] = p[l];                                                           \
    for (size_t blk = 0; blk < n; blk++) {                                                             \
      V x[16];                                                                                         \
      load_words8(x, q, 0);                                                                            \
      load_words8(x + 8, q, 32);                                                                       \
      V a = a0, b = b0, c = c0, d = d0;                                                                \
      _Pragma("GCC unroll 16") for (int i = 0; i < 16; i++) MD5_STEP(F, ROTL, i);                     \
      _Pragma("GCC unroll 16") for (int i = 16; i < 32; i++) MD5_STEP(G, ROTL, i);                    \
      _Pragma("GCC unroll 16") for (int i = 32; i < 48; i++) MD5_STEP(H, ROTL, i);                    \
      _Pragma("GCC unroll 16") for (int i = 48; i < 64; i++) MD5_STEP(I, ROTL, i);                    \
      a0 = _mm256_add_epi32(a0, a);                                                                    \
      b0 = _mm256_add_epi32(b0, b);                                                                    \
      c0 = _mm256_add_epi32(c0, c);                                                                    \
      d0 = _mm256_add_epi32(d0, d);                                                                    \
      for (int l = 0; l < 8; l++) q[l] += step[l];                                                     \
    }                                                                                                  \
    _mm256_storeu_si256((V *)st[0], a0);                                                               \
    _mm256_storeu_si256((V *)st[1], b0);                                                               \
    _mm256_storeu_si256((V *)st[2], c0);                                                               \
    _mm256_storeu_si256((V *)st[3], d0);                                                               \
  }

MD5_LANES(md5_x8, AVX2, MD5_F2, MD5_G2, MD5_H2, MD5_I2, ROTL2)
MD5_LANES(md5_x8_512, AVX512, MD5_F5, MD5_G5, MD5_H5, MD5_I5, ROTL5)

/* SHA-256's three-way xor, choice, majority and rotation, as for MD5 above. */
#define XOR3_2(x, y, z) _mm256_xor_si256(_mm256_xor_si256(x, y), z)
#define CH2(e, f, g) _mm256_xor_si256(g, _mm256_and_si256(e, _mm256_xor_si256(f, g)))
#define MAJ2(a, b, c) _mm256_or_si256(_mm256_and_si256(a, b), _mm256_and_si256(c, _mm256_or_si256(a, b)))
#define ROTR2(x, r) vrotr(x, r)
#define XOR3_5(x, y, z) _mm256_ternarylogic_epi32(x, y, z, 0x96)
#define CH5(e, f, g) _mm256_ternarylogic_epi32(e, f, g, 0xca)
#define MAJ5(a, b, c) _mm256_ternarylogic_epi32(a, b, c, 0xe8)
#define ROTR5(x, r) _mm256_ror_epi32(x, r)

/* SHA-256 over `n` blocks of each lane; st[word][lane]. */
#define SHA256_LANES(NAME, ATTR, XOR3, CH, MAJ, ROTR)                                                 \
  ATTR static void NAME(uint32_t st[8][8], const uint8_t **p, const size_t *step, size_t n) {         \
    V s[8];                                                                                           \
    for (int i = 0; i < 8; i++) s[i] = _mm256_loadu_si256((V *)st[i]);                               \
    const V bswap = _mm256_setr_epi8(3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12, 3, 2, 1, 0, \
                                     7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12);                        \
    const uint8_t *q[8];                                                                              \
    for (int l = 0; l < 8; l++) q[l] = p[l];                                                          \
    for (size_t blk = 0; blk < n; blk++) {                                                            \
      V w[64];                                                                                        \
      load_words8(w, q, 0);                                                                           \
      load_words8(w + 8, q, 32);                                                                      \
      for (int i = 0; i < 16; i++) w[i] = _mm256_shuffle_epi8(w[i], bswap);                          \
      for (int i = 16; i < 64; i++) {                                                                \
        V s0 = XOR3(ROTR(w[i - 15], 7), ROTR(w[i - 15], 18), _mm256_srli_epi32(w[i - 15], 3));        \
        V s1 = XOR3(ROTR(w[i - 2], 17), ROTR(w[i - 2], 19), _mm256_srli_epi32(w[i - 2], 10));         \
        w[i] = _mm256_add_epi32(_mm256_add_epi32(w[i - 16], s0), _mm256_add_epi32(w[i - 7], s1));     \
      }                                                                                               \
      V a = s[0], b = s[1], c = s[2], d = s[3], e = s[4], f = s[5], g = s[6], h = s[7];               \
      for (int i = 0; i < 64; i++) {                                                                  \
        V S1 = XOR3(ROTR(e, 6), ROTR(e, 11), ROTR(e, 25));                                            \
        V t1 = _mm256_add_epi32(_mm256_add_epi32(h, S1),                                              \
                                _mm256_add_epi32(CH(e, f, g), _mm256_add_epi32(_mm256_set1_epi32((int)sha_k[i]), w[i]))); \
        V t2 = _mm256_add_epi32(XOR3(ROTR(a, 2), ROTR(a, 13), ROTR(a, 22)), MAJ(a, b, c));            \
        h = g;                                                                                        \
        g = f;                                                                                        \
        f = e;                                                                                        \
        e = _mm256_add_epi32(d, t1);                                                                  \
        d = c;                                                                                        \
        c = b;                                                                                        \
        b = a;                                                                                        \
        a = _mm256_add_epi32(t1, t2);                                                                 \
      }                                                                                               \
      s[0] = _mm256_add_epi32(s[0], a);                                                               \
      s[1] = _mm256_add_epi32(s[1], b);                                                               \
      s[2] = _mm256_add_epi32(s[2], c);                                                               \
      s[3] = _mm256_add_epi32(s[3], d);                                                               \
      s[4] = _mm256_add_epi32(s[4], e);                                                               \
      s[5] = _mm256_add_epi32(s[5], f);                                                               \
      s[6] = _mm256_add_epi32(s[6], g);                                                               \
      s[7] = _mm256_add_epi32(s[7], h);                                                               \
      for (int l = 0; l < 8; l++) q[l] += step[l];                                                    \
    }                                                                                                 \
    for (int i = 0; i < 8; i++) _mm256_storeu_si256((V *)st[i], s[i]);                                \
  }

SHA256_LANES(sha256_x8, AVX2, XOR3_2, CH2, MAJ2, ROTR2)
SHA256_LANES(sha256_x8_512, AVX512, XOR3_5, CH5, MAJ5, ROTR5)

/*
 * SHA-256 with the SHA extensions, 2 to 4 streams interleaved. One stream's
 * rounds are a chain of SHA256RNDS2 instructions, each waiting for the last
 * (latency about twice the issue interval on the CPUs measured), so one core
 * runs a second and third stream's chains in the gaps: on an AVX-512 EPYC,
 * 0.55 ms per MB alone (OpenSSL's code, the same instructions), 0.29 for two
 * streams together, 0.23 for three or four. The state is kept in the
 * instructions' layout (ABEF, CDGH) for the whole run; per group of four
 * rounds: the message words plus constants, two SHA256RNDS2, and the schedule
 * of later words (SHA256MSG1 / SHA256MSG2 with the "w[i-7]" term from an
 * alignment of the two previous groups). Built twice: legacy SSE encoding for
 * any CPU with the extensions, and AVX-512VL encoding (32 vector registers:
 * four streams without spills).
 */
#define SHA_NI_GROUP(NAME, ATTR, NS)                                                                      \
  ATTR static void NAME(uint32_t *const *st, const uint8_t *const *p, size_t n) {                        \
    const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);                    \
    __m128i s0[NS], s1[NS];                                                                               \
    const uint8_t *q[NS];                                                                                 \
    for (int j = 0; j < NS; j++) {                                                                        \
      __m128i dcba = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)st[j]), 0xb1);                    \
      __m128i hgfe = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)(st[j] + 4)), 0x1b);              \
      s0[j] = _mm_alignr_epi8(dcba, hgfe, 8);                                                             \
      s1[j] = _mm_blend_epi16(hgfe, dcba, 0xf0);                                                          \
      q[j] = p[j];                                                                                        \
    }                                                                                                     \
    for (size_t blk = 0; blk < n; blk++) {                                                                \
      __m128i save0[NS], save1[NS], m[4][NS];                                                             \
      for (int j = 0; j < NS; j++) {                                                                      \
        save0[j] = s0[j];                                                                                 \
        save1[j] = s1[j];                                                                                 \
      }                                                                                                   \
      _Pragma("GCC unroll 16") for (int g = 0; g < 16; g++) {                                             \
        const __m128i k = _mm_loadu_si128((const __m128i *)(sha_k + 4 * g));                              \
        for (int j = 0; j < NS; j++) {                                                                    \
          if (g < 4) m[g][j] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(q[j] + 16 * g)), bswap); \
          const __m128i msg = _mm_add_epi32(m[g % 4][j], k);                                              \
          s1[j] = _mm_sha256rnds2_epu32(s1[j], s0[j], msg);                                               \
          if (g >= 3 && g <= 14) {                                                                        \
            const __m128i w7 = _mm_alignr_epi8(m[g % 4][j], m[(g + 3) % 4][j], 4);                        \
            m[(g + 1) % 4][j] = _mm_sha256msg2_epu32(_mm_add_epi32(m[(g + 1) % 4][j], w7), m[g % 4][j]);  \
          }                                                                                               \
          s0[j] = _mm_sha256rnds2_epu32(s0[j], s1[j], _mm_shuffle_epi32(msg, 0x0e));                      \
          if (g >= 1 && g <= 12) m[(g + 3) % 4][j] = _mm_sha256msg1_epu32(m[(g + 3) % 4][j], m[g % 4][j]); \
        }                                                                                                 \
      }                                                                                                   \
      for (int j = 0; j < NS; j++) {                                                                      \
        s0[j] = _mm_add_epi32(s0[j], save0[j]);                                                           \
        s1[j] = _mm_add_epi32(s1[j], save1[j]);                                                           \
        q[j] += 64;                                                                                       \
      }                                                                                                   \
    }                                                                                                     \
    for (int j = 0; j < NS; j++) {                                                                        \
      __m128i feba = _mm_shuffle_epi32(s0[j], 0x1b);                                                      \
      __m128i dchg = _mm_shuffle_epi32(s1[j], 0xb1);                                                      \
      _mm_storeu_si128((__m128i *)st[j], _mm_blend_epi16(feba, dchg, 0xf0));                              \
      _mm_storeu_si128((__m128i *)(st[j] + 4), _mm_alignr_epi8(dchg, feba, 8));                           \
    }                                                                                                     \
  }

#define SHANI_SSE __attribute__((target("sha,sse4.1,ssse3")))
#define SHANI_EVEX __attribute__((target("sha,avx2,avx512f,avx512vl")))
SHA_NI_GROUP(sha256_ni_x2, SHANI_SSE, 2)
SHA_NI_GROUP(sha256_ni_x3, SHANI_SSE, 3)
SHA_NI_GROUP(sha256_ni_x4, SHANI_SSE, 4)
SHA_NI_GROUP(sha256_ni_x2_evex, SHANI_EVEX, 2)
SHA_NI_GROUP(sha256_ni_x3_evex, SHANI_EVEX, 3)
SHA_NI_GROUP(sha256_ni_x4_evex, SHANI_EVEX, 4)

static void md5_x8_any(uint32_t st[][8], const uint8_t **p, const size_t *step, size_t n) {
  md5_x8((uint32_t(*)[8])st, p, step, n);
}
static void sha256_x8_any(uint32_t st[][8], const uint8_t **p, const size_t *step, size_t n) {
  sha256_x8((uint32_t(*)[8])st, p, step, n);
}
static void md5_x8_512_any(uint32_t st[][8], const uint8_t **p, const size_t *step, size_t n) {
  md5_x8_512((uint32_t(*)[8])st, p, step, n);
}
static void sha256_x8_512_any(uint32_t st[][8], const uint8_t **p, const size_t *step, size_t n) {
  sha256_x8_512((uint32_t(*)[8])st, p, step, n);
}
#endif

typedef void (*block_fn)(uint32_t *s, const uint8_t *p);
typedef void (*lanes_fn)(uint32_t st[][8], const uint8_t **p, const size_t *step, size_t n);
typedef void (*run_fn)(uint32_t *s, const uint8_t *p, size_t blocks);
typedef void (*group_fn)(uint32_t *const *st, const uint8_t *const *p, size_t blocks);

/* Most streams a group function interleaves. */
#define GROUP_MAX 4

typedef struct {
  int words;
  block_fn block;
  lanes_fn lanes8[SVC_MB_KERNELS]; /* by kernel; [SVC_MB_SCALAR] and kernels this CPU lacks: NULL */
  run_fn single;   /* one stream through OpenSSL's own code; NULL: `block` */
  group_fn group[GROUP_MAX + 1]; /* [k]: k streams interleaved (the scalar kernel's); NULL: none */
} alg_impl;

static alg_impl algs[SVC_MB_ALGS];
static int best_kernel = SVC_MB_SCALAR;

/*
 * One stream alone runs faster through the OpenSSL the node binary carries
 * (hand-written assembly; SHA-NI where the CPU has it) than through the
 * portable C above: on an AVX2 EPYC with SHA-NI, MD5 700 vs 480 MB/s,
 * SHA-256 1 570 vs ~250. Its low-level MD5_Update / SHA256_Update take a
 * context whose chaining words are the same host-order words as ours, so a
 * run of whole blocks goes through them with a context built from our state
 * and read back after (no tail: the length is a multiple of 64). Resolved at
 * run time from the process (a node without them keeps the C code) and
 * self-tested against it before use.
 */
#if defined(__has_include)
#if __has_include(<openssl/md5.h>) && __has_include(<openssl/sha.h>)
#define MB_OPENSSL 1
#endif
#endif

#ifdef MB_OPENSSL
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include <dlfcn.h>
#include <openssl/md5.h>
#include <openssl/sha.h>

static int (*ssl_md5_update)(MD5_CTX *, const void *, size_t);
static int (*ssl_sha256_update)(SHA256_CTX *, const void *, size_t);

static void md5_ssl(uint32_t *s, const uint8_t *p, size_t blocks) {
  MD5_CTX c;
  memset(&c, 0, sizeof c);
  c.A = s[0];
  c.B = s[1];
  c.C = s[2];
  c.D = s[3];
  ssl_md5_update(&c, p, blocks * 64);
  s[0] = c.A;
  s[1] = c.B;
  s[2] = c.C;
  s[3] = c.D;
}

static void sha256_ssl(uint32_t *s, const uint8_t *p, size_t blocks) {
  SHA256_CTX c;
  memset(&c, 0, sizeof c);
  for (int i = 0; i < 8; i++) c.h[i] = s[i];
  c.md_len = SHA256_DIGEST_LENGTH;
  ssl_sha256_update(&c, p, blocks * 64);
  for (int i = 0; i < 8; i++) s[i] = c.h[i];
}
#endif

static void run_scalar(const alg_impl *a, svc_mb_job *j) {
  if (a->single) a->single(j->state, j->data, j->blocks);
  else
    for (size_t b = 0; b < j->blocks; b++) a->block(j->state, j->data + 64 * b);
  j->blocks = 0;
}

/*
 * The scalar kernel: every stream on its own instruction chain. Where the
 * algorithm has group functions (SHA-256 with SHA extensions), up to
 * GROUP_MAX streams run interleaved, each slot refilled with the next job as
 * its own runs out; a stream left alone runs by itself.
 */
static void run_streams(const alg_impl *a, svc_mb_job *const *list, size_t n) {
  svc_mb_job *slot[GROUP_MAX];
  int active = 0;
  size_t next = 0;
  for (;;) {
    while (active < GROUP_MAX && next < n) {
      if (list[next]->blocks > 0) slot[active++] = list[next];
      next++;
    }
    if (active == 0) return;
    if (active == 1 || a->group[active] == NULL) {
      for (int i = 0; i < active; i++) run_scalar(a, slot[i]);
      active = 0;
      continue;
    }
    size_t m = SIZE_MAX;
    uint32_t *st[GROUP_MAX];
    const uint8_t *p[GROUP_MAX];
    for (int i = 0; i < active; i++) {
      if (slot[i]->blocks < m) m = slot[i]->blocks;
      st[i] = slot[i]->state;
      p[i] = slot[i]->data;
    }
    a->group[active](st, p, m);
    int kept = 0;
    for (int i = 0; i < active; i++) {
      slot[i]->data += 64 * m;
      slot[i]->blocks -= m;
      if (slot[i]->blocks > 0) slot[kept++] = slot[i];
    }
    active = kept;
  }
}

static void run_streams_all(const alg_impl *a, svc_mb_job *jobs, size_t n) {
  svc_mb_job *list[64];
  for (size_t i = 0; i < n; i += 64) {
    const size_t k = n - i < 64 ? n - i : 64;
    for (size_t j = 0; j < k; j++) list[j] = &jobs[i + j];
    run_streams(a, list, k);
  }
}

static const uint8_t zero_block[64];

void svc_mb_run(int alg, svc_mb_job *jobs, size_t n, int kernel) {
  const alg_impl *a = &algs[alg];
  const lanes_fn lanes8 = kernel > SVC_MB_SCALAR && kernel < SVC_MB_KERNELS ? a->lanes8[kernel] : NULL;
  if (lanes8 == NULL) {
    run_streams_all(a, jobs, n);
    return;
  }
  svc_mb_job *lane[8] = {0};
  size_t next = 0, pending = 0;
  for (size_t i = 0; i < n; i++) pending += jobs[i].blocks > 0;
  uint32_t st[8][8], dummy[8];
  memset(dummy, 0, sizeof dummy);
  for (;;) {
    int active = 0;
    for (int l = 0; l < 8; l++) {
      while (lane[l] == NULL && next < n) {
        if (jobs[next].blocks > 0) lane[l] = &jobs[next];
        next++;
      }
      active += lane[l] != NULL;
    }
    if (active == 0) return;
    if (pending < 3) {
      svc_mb_job *rest[2];
      size_t k = 0;
      for (int l = 0; l < 8; l++)
        if (lane[l]) rest[k++] = lane[l];
      for (; next < n; next++)
        if (jobs[next].blocks > 0) rest[k++] = &jobs[next];
      run_streams(a, rest, k);
      return;
    }
    size_t m = SIZE_MAX;
    const uint8_t *p[8];
    size_t step[8];
    for (int l = 0; l < 8; l++) {
      if (lane[l]) {
        if (lane[l]->blocks < m) m = lane[l]->blocks;
        p[l] = lane[l]->data;
        step[l] = 64;
        for (int w = 0; w < a->words; w++) st[w][l] = lane[l]->state[w];
      } else {
        p[l] = zero_block;
        step[l] = 0;
        for (int w = 0; w < a->words; w++) st[w][l] = dummy[w];
      }
    }
    lanes8(st, p, step, m);
    for (int l = 0; l < 8; l++) {
      if (!lane[l]) continue;
      for (int w = 0; w < a->words; w++) lane[l]->state[w] = st[w][l];
      lane[l]->data += 64 * m;
      lane[l]->blocks -= m;
      if (lane[l]->blocks == 0) {
        lane[l] = NULL;
        pending--;
      }
    }
  }
}

int svc_mb_words(int alg) { return algs[alg].words; }

void svc_mb_iv(int alg, uint32_t *state) {
  static const uint32_t md5_iv[4] = {0x67452301u, 0xefcdab89u, 0x98badcfeu, 0x10325476u};
  if (alg == SVC_MB_MD5) memcpy(state, md5_iv, sizeof md5_iv);
  else memcpy(state, sha_iv, sizeof sha_iv);
}

int svc_mb_kernel(void) { return best_kernel; }

int svc_mb_has_kernel(int kernel) {
  return kernel == SVC_MB_SCALAR || (kernel > SVC_MB_SCALAR && kernel < SVC_MB_KERNELS && algs[SVC_MB_MD5].lanes8[kernel] != NULL);
}

/* Self-test: SIMD lanes against the scalar code over varied data and lengths. */
static int self_test(int alg, int kernel) {
  enum { JOBS = 11, MAXB = 5 };
  static uint8_t buf[JOBS * MAXB * 64];
  for (size_t i = 0; i < sizeof buf; i++) buf[i] = (uint8_t)(i * 167 + (i >> 8) * 13 + 1);
  svc_mb_job x[JOBS], y[JOBS];
  uint32_t sx[JOBS][8], sy[JOBS][8];
  memset(sx, 0, sizeof sx);
  memset(sy, 0, sizeof sy);
  for (int i = 0; i < JOBS; i++) {
    svc_mb_iv(alg, sx[i]);
    svc_mb_iv(alg, sy[i]);
    x[i] = (svc_mb_job){sx[i], buf + i * MAXB * 64, (size_t)(1 + (i * 7) % MAXB)};
    y[i] = x[i];
    y[i].state = sy[i];
  }
  svc_mb_run(alg, x, JOBS, kernel);
  svc_mb_run(alg, y, JOBS, SVC_MB_SCALAR);
  return memcmp(sx, sy, sizeof sx) == 0;
}

/* Self-test of the single-stream path: OpenSSL's code against the portable block function. */
static int single_test(int alg) {
  static uint8_t buf[7 * 64];
  for (size_t i = 0; i < sizeof buf; i++) buf[i] = (uint8_t)(i * 31 + 7);
  uint32_t x[8], y[8];
  svc_mb_iv(alg, x);
  svc_mb_iv(alg, y);
  algs[alg].single(x, buf, 7);
  for (int b = 0; b < 7; b++) algs[alg].block(y, buf + 64 * b);
  return memcmp(x, y, (size_t)algs[alg].words * 4) == 0;
}

#ifdef MB_X86
/* The group functions against the portable block function: 2..GROUP_MAX streams of different lengths. */
static int group_test(int alg) {
  enum { JOBS = 9, MAXB = 6 };
  static uint8_t buf[JOBS * MAXB * 64];
  for (size_t i = 0; i < sizeof buf; i++) buf[i] = (uint8_t)(i * 89 + (i >> 7) * 5 + 3);
  svc_mb_job x[JOBS];
  uint32_t sx[JOBS][8], sy[JOBS][8];
  memset(sx, 0, sizeof sx);
  memset(sy, 0, sizeof sy);
  for (int i = 0; i < JOBS; i++) {
    const size_t blocks = (size_t)(1 + (i * 5) % MAXB);
    svc_mb_iv(alg, sx[i]);
    svc_mb_iv(alg, sy[i]);
    x[i] = (svc_mb_job){sx[i], buf + i * MAXB * 64, blocks};
    for (size_t b = 0; b < blocks; b++) algs[alg].block(sy[i], buf + i * MAXB * 64 + 64 * b);
  }
  run_streams_all(&algs[alg], x, JOBS);
  return memcmp(sx, sy, sizeof sx) == 0;
}
#endif

const char *svc_mb_single(int alg) { return algs[alg].single ? "openssl" : "portable"; }

int svc_mb_interleave(int alg) {
  int k = 1;
  for (int i = 2; i <= GROUP_MAX; i++)
    if (algs[alg].group[i] != NULL) k = i;
  return k;
}

static void init_once_fn(void) {
  for (int i = 0; i < 64; i++) md5_t[i] = (uint32_t)(fabs(sin((double)(i + 1))) * 4294967296.0);
  static const uint32_t primes[64] = {2,   3,   5,   7,   11,  13,  17,  19,  23,  29,  31,  37,  41,  43,  47,  53,
                                      59,  61,  67,  71,  73,  79,  83,  89,  97,  101, 103, 107, 109, 113, 127, 131,
                                      137, 139, 149, 151, 157, 163, 167, 173, 179, 181, 191, 193, 197, 199, 211, 223,
                                      227, 229, 233, 239, 241, 251, 257, 263, 269, 271, 277, 281, 283, 293, 307, 311};
  for (int i = 0; i < 64; i++) sha_k[i] = frac_root(primes[i], 1);
  for (int i = 0; i < 8; i++) sha_iv[i] = frac_root(primes[i], 0);
  algs[SVC_MB_MD5] = (alg_impl){4, md5_block, {NULL}, NULL, {NULL}};
  algs[SVC_MB_SHA256] = (alg_impl){8, sha256_block, {NULL}, NULL, {NULL}};
#ifdef MB_OPENSSL
  *(void **)&ssl_md5_update = dlsym(RTLD_DEFAULT, "MD5_Update");
  *(void **)&ssl_sha256_update = dlsym(RTLD_DEFAULT, "SHA256_Update");
  if (ssl_md5_update) {
    algs[SVC_MB_MD5].single = md5_ssl;
    if (!single_test(SVC_MB_MD5)) algs[SVC_MB_MD5].single = NULL;
  }
  if (ssl_sha256_update) {
    algs[SVC_MB_SHA256].single = sha256_ssl;
    if (!single_test(SVC_MB_SHA256)) algs[SVC_MB_SHA256].single = NULL;
  }
#endif
#ifdef MB_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2")) {
    algs[SVC_MB_MD5].lanes8[SVC_MB_AVX2] = md5_x8_any;
    algs[SVC_MB_SHA256].lanes8[SVC_MB_AVX2] = sha256_x8_any;
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")) {
    algs[SVC_MB_MD5].lanes8[SVC_MB_AVX512] = md5_x8_512_any;
    algs[SVC_MB_SHA256].lanes8[SVC_MB_AVX512] = sha256_x8_512_any;
  }
  if (__builtin_cpu_supports("sha") && __builtin_cpu_supports("sse4.1") && __builtin_cpu_supports("ssse3")) {
    group_fn *g = algs[SVC_MB_SHA256].group;
    const int evex = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl");
    g[2] = evex ? sha256_ni_x2_evex : sha256_ni_x2;
    g[3] = evex ? sha256_ni_x3_evex : sha256_ni_x3;
    g[4] = evex ? sha256_ni_x4_evex : sha256_ni_x4;
    if (!group_test(SVC_MB_SHA256)) memset(algs[SVC_MB_SHA256].group, 0, sizeof algs[SVC_MB_SHA256].group);
  }
  /* A kernel is used only if both of its algorithms agree with the scalar code. */
  for (int k = SVC_MB_SCALAR + 1; k < SVC_MB_KERNELS; k++) {
    if (algs[SVC_MB_MD5].lanes8[k] == NULL) continue;
    if (self_test(SVC_MB_MD5, k) && self_test(SVC_MB_SHA256, k)) {
      best_kernel = k;
    } else {
      algs[SVC_MB_MD5].lanes8[k] = NULL;
      algs[SVC_MB_SHA256].lanes8[k] = NULL;
    }
  }
#endif
}

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

/* Worker threads load the addon too, possibly at the same time: once only. */
void svc_mb_init(void) { pthread_once(&init_once, init_once_fn); }
