/*
 * Multi-buffer MD5 and SHA-256: many independent message streams hashed at
 * once, one stream per 32-bit SIMD lane (AVX2: 8 lanes), so a core runs the
 * serial compression function of 8 streams in the time of about two. Written
 * from RFC 1321 (MD5) and FIPS 180-4 (SHA-256); constants are derived at
 * load (sin for MD5, exact integer roots for SHA-256) and the kernels are
 * self-tested against the scalar code before use.
 *
 * The unit of work is a job: a state (4 or 8 host-order u32 words) and a run
 * of whole 64-byte blocks. Padding and the final length block are the
 * caller's (TypeScript) business. Jobs of one call must have distinct states.
 * A scheduler keeps the lanes full: each lane takes the next job when its
 * own runs out; when fewer than 3 jobs are left, the scalar code finishes
 * them (idle lanes cost as much as busy ones).
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
#define V __m256i

AVX2 static inline V vrotl(V x, int r) { return _mm256_or_si256(_mm256_slli_epi32(x, r), _mm256_srli_epi32(x, 32 - r)); }
AVX2 static inline V vrotr(V x, int r) { return _mm256_or_si256(_mm256_srli_epi32(x, r), _mm256_slli_epi32(x, 32 - r)); }

/* Word `w` (little-endian) of the current block of each lane. */
AVX2 static inline V gather_le(const uint8_t *const *p, int w) {
  uint32_t v[8];
  for (int l = 0; l < 8; l++) memcpy(&v[l], p[l] + 4 * w, 4);
  return _mm256_loadu_si256((const V *)v);
}

/* MD5 over `n` blocks of each lane; st[word][lane]; lane l advances step[l] bytes per block. */
AVX2 static void md5_x8(uint32_t st[4][8], const uint8_t **p, const size_t *step, size_t n) {
  V a0 = _mm256_loadu_si256((V *)st[0]), b0 = _mm256_loadu_si256((V *)st[1]);
  V c0 = _mm256_loadu_si256((V *)st[2]), d0 = _mm256_loadu_si256((V *)st[3]);
  const V ones = _mm256_set1_epi32(-1);
  const uint8_t *q[8];
  for (int l = 0; l < 8; l++) q[l] = p[l];
  for (size_t blk = 0; blk < n; blk++) {
    V x[16];
    for (int w = 0; w < 16; w++) x[w] = gather_le(q, w);
    V a = a0, b = b0, c = c0, d = d0;
#define STEP(F, i)                                                                                  \
  do {                                                                                              \
    V t = _mm256_add_epi32(_mm256_add_epi32(a, F), _mm256_add_epi32(_mm256_set1_epi32((int)md5_t[i]), x[md5_index(i)])); \
    t = _mm256_add_epi32(b, vrotl(t, md5_s[(i) >> 4][(i) & 3]));                                   \
    a = d;                                                                                          \
    d = c;                                                                                          \
    c = b;                                                                                          \
    b = t;                                                                                          \
  } while (0)
    for (int i = 0; i < 16; i++) STEP(_mm256_xor_si256(d, _mm256_and_si256(b, _mm256_xor_si256(c, d))), i);
    for (int i = 16; i < 32; i++) STEP(_mm256_xor_si256(c, _mm256_and_si256(d, _mm256_xor_si256(b, c))), i);
    for (int i = 32; i < 48; i++) STEP(_mm256_xor_si256(b, _mm256_xor_si256(c, d)), i);
    for (int i = 48; i < 64; i++) STEP(_mm256_xor_si256(c, _mm256_or_si256(b, _mm256_xor_si256(d, ones))), i);
#undef STEP
    a0 = _mm256_add_epi32(a0, a);
    b0 = _mm256_add_epi32(b0, b);
    c0 = _mm256_add_epi32(c0, c);
    d0 = _mm256_add_epi32(d0, d);
    for (int l = 0; l < 8; l++) q[l] += step[l];
  }
  _mm256_storeu_si256((V *)st[0], a0);
  _mm256_storeu_si256((V *)st[1], b0);
  _mm256_storeu_si256((V *)st[2], c0);
  _mm256_storeu_si256((V *)st[3], d0);
}

/* SHA-256 over `n` blocks of each lane; st[word][lane]. */
AVX2 static void sha256_x8(uint32_t st[8][8], const uint8_t **p, const size_t *step, size_t n) {
  V s[8];
  for (int i = 0; i < 8; i++) s[i] = _mm256_loadu_si256((V *)st[i]);
  const V bswap = _mm256_setr_epi8(3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12, 3, 2, 1, 0, 7, 6, 5, 4, 11, 10,
                                   9, 8, 15, 14, 13, 12);
  const uint8_t *q[8];
  for (int l = 0; l < 8; l++) q[l] = p[l];
  for (size_t blk = 0; blk < n; blk++) {
    V w[64];
    for (int i = 0; i < 16; i++) w[i] = _mm256_shuffle_epi8(gather_le(q, i), bswap);
    for (int i = 16; i < 64; i++) {
      V s0 = _mm256_xor_si256(_mm256_xor_si256(vrotr(w[i - 15], 7), vrotr(w[i - 15], 18)), _mm256_srli_epi32(w[i - 15], 3));
      V s1 = _mm256_xor_si256(_mm256_xor_si256(vrotr(w[i - 2], 17), vrotr(w[i - 2], 19)), _mm256_srli_epi32(w[i - 2], 10));
      w[i] = _mm256_add_epi32(_mm256_add_epi32(w[i - 16], s0), _mm256_add_epi32(w[i - 7], s1));
    }
    V a = s[0], b = s[1], c = s[2], d = s[3], e = s[4], f = s[5], g = s[6], h = s[7];
    for (int i = 0; i < 64; i++) {
      V S1 = _mm256_xor_si256(_mm256_xor_si256(vrotr(e, 6), vrotr(e, 11)), vrotr(e, 25));
      V ch = _mm256_xor_si256(g, _mm256_and_si256(e, _mm256_xor_si256(f, g)));
      V t1 = _mm256_add_epi32(_mm256_add_epi32(h, S1), _mm256_add_epi32(ch, _mm256_add_epi32(_mm256_set1_epi32((int)sha_k[i]), w[i])));
      V S0 = _mm256_xor_si256(_mm256_xor_si256(vrotr(a, 2), vrotr(a, 13)), vrotr(a, 22));
      V maj = _mm256_or_si256(_mm256_and_si256(a, b), _mm256_and_si256(c, _mm256_or_si256(a, b)));
      h = g;
      g = f;
      f = e;
      e = _mm256_add_epi32(d, t1);
      d = c;
      c = b;
      b = a;
      a = _mm256_add_epi32(t1, _mm256_add_epi32(S0, maj));
    }
    s[0] = _mm256_add_epi32(s[0], a);
    s[1] = _mm256_add_epi32(s[1], b);
    s[2] = _mm256_add_epi32(s[2], c);
    s[3] = _mm256_add_epi32(s[3], d);
    s[4] = _mm256_add_epi32(s[4], e);
    s[5] = _mm256_add_epi32(s[5], f);
    s[6] = _mm256_add_epi32(s[6], g);
    s[7] = _mm256_add_epi32(s[7], h);
    for (int l = 0; l < 8; l++) q[l] += step[l];
  }
  for (int i = 0; i < 8; i++) _mm256_storeu_si256((V *)st[i], s[i]);
}

static void md5_x8_any(uint32_t st[][8], const uint8_t **p, const size_t *step, size_t n) {
  md5_x8((uint32_t(*)[8])st, p, step, n);
}
static void sha256_x8_any(uint32_t st[][8], const uint8_t **p, const size_t *step, size_t n) {
  sha256_x8((uint32_t(*)[8])st, p, step, n);
}
#endif

typedef void (*block_fn)(uint32_t *s, const uint8_t *p);
typedef void (*lanes_fn)(uint32_t st[][8], const uint8_t **p, const size_t *step, size_t n);
typedef void (*run_fn)(uint32_t *s, const uint8_t *p, size_t blocks);

typedef struct {
  int words;
  block_fn block;
  lanes_fn lanes8; /* NULL: scalar only */
  run_fn single;   /* one stream through OpenSSL's own code; NULL: `block` */
} alg_impl;

static alg_impl algs[SVC_MB_ALGS];
static int have_avx2 = 0;

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

static const uint8_t zero_block[64];

void svc_mb_run(int alg, svc_mb_job *jobs, size_t n, int use_simd) {
  const alg_impl *a = &algs[alg];
  if (!use_simd || a->lanes8 == NULL) {
    for (size_t i = 0; i < n; i++) run_scalar(a, &jobs[i]);
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
      for (int l = 0; l < 8; l++)
        if (lane[l]) run_scalar(a, lane[l]);
      for (; next < n; next++) run_scalar(a, &jobs[next]);
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
    a->lanes8(st, p, step, m);
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

int svc_mb_simd(void) { return have_avx2; }

/* Self-test: SIMD lanes against the scalar code over varied data and lengths. */
static int self_test(int alg) {
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
  svc_mb_run(alg, x, JOBS, 1);
  svc_mb_run(alg, y, JOBS, 0);
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

const char *svc_mb_single(int alg) { return algs[alg].single ? "openssl" : "portable"; }

static void init_once_fn(void) {
  for (int i = 0; i < 64; i++) md5_t[i] = (uint32_t)(fabs(sin((double)(i + 1))) * 4294967296.0);
  static const uint32_t primes[64] = {2,   3,   5,   7,   11,  13,  17,  19,  23,  29,  31,  37,  41,  43,  47,  53,
                                      59,  61,  67,  71,  73,  79,  83,  89,  97,  101, 103, 107, 109, 113, 127, 131,
                                      137, 139, 149, 151, 157, 163, 167, 173, 179, 181, 191, 193, 197, 199, 211, 223,
                                      227, 229, 233, 239, 241, 251, 257, 263, 269, 271, 277, 281, 283, 293, 307, 311};
  for (int i = 0; i < 64; i++) sha_k[i] = frac_root(primes[i], 1);
  for (int i = 0; i < 8; i++) sha_iv[i] = frac_root(primes[i], 0);
  algs[SVC_MB_MD5] = (alg_impl){4, md5_block, NULL, NULL};
  algs[SVC_MB_SHA256] = (alg_impl){8, sha256_block, NULL, NULL};
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
    algs[SVC_MB_MD5].lanes8 = md5_x8_any;
    algs[SVC_MB_SHA256].lanes8 = sha256_x8_any;
    have_avx2 = self_test(SVC_MB_MD5) && self_test(SVC_MB_SHA256);
    if (!have_avx2) {
      algs[SVC_MB_MD5].lanes8 = NULL;
      algs[SVC_MB_SHA256].lanes8 = NULL;
    }
  }
#endif
}

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

/* Worker threads load the addon too, possibly at the same time: once only. */
void svc_mb_init(void) { pthread_once(&init_once, init_once_fn); }
