/*
 * Stand-alone check of the C kernels without Node: every GF kernel this CPU
 * runs against the scalar one on random matrices and lengths, the GFNI
 * matrices by emulation, XXH64 and CRC-64/NVME known values. Used to test
 * the arm64 (NEON) build under an emulator: see cross-arm64.sh.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../svc_native.h"

static uint32_t rng = 12345;
static uint32_t next(void) {
  rng ^= rng << 13;
  rng ^= rng >> 17;
  rng ^= rng << 5;
  return rng;
}

int main(void) {
  svc_gf_init();
  svc_crc64nvme_init();
  int failures = 0;
  const svc_gf_kernel *list;
  const int n = svc_gf_kernels(&list);
  const svc_gf_matmul_fn scalar = list[n - 1].fn;
  enum { MAXD = 20, MAXLEN = 3000 };
  uint8_t *mem = malloc((size_t)(MAXD * 3) * MAXLEN);
  for (int k = 0; k < n; k++) {
    int ok = 1;
    for (int iter = 0; iter < 300 && ok; iter++) {
      const int rows = 1 + (int)(next() % 12), cols = 1 + (int)(next() % MAXD);
      const size_t len = next() % MAXLEN;
      uint8_t coef[12 * MAXD];
      for (int i = 0; i < rows * cols; i++) coef[i] = (uint8_t)next();
      const uint8_t *in[MAXD];
      uint8_t *want[12], *got[12];
      for (int j = 0; j < cols; j++) {
        uint8_t *p = mem + (size_t)j * MAXLEN;
        for (size_t b = 0; b < len; b++) p[b] = (uint8_t)next();
        in[j] = p;
      }
      for (int r = 0; r < rows; r++) {
        want[r] = mem + (size_t)(MAXD + r) * MAXLEN;
        got[r] = mem + (size_t)(2 * MAXD + r) * MAXLEN;
      }
      scalar(coef, rows, cols, in, want, len);
      list[k].fn(coef, rows, cols, in, got, len);
      for (int r = 0; r < rows; r++) ok &= memcmp(want[r], got[r], len) == 0;
    }
    printf("kernel %-10s %s\n", list[k].name, ok ? "ok" : "MISMATCH");
    failures += !ok;
  }
  free(mem);
  /* A SIMD kernel that failed the load-time self-test is silently dropped;
   * here that is a failure. */
  const char *expected[4];
  int n_expected = 0;
#if defined(__aarch64__)
  expected[n_expected++] = "neon";
#elif defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2")) expected[n_expected++] = "avx2";
  if (__builtin_cpu_supports("ssse3")) expected[n_expected++] = "ssse3";
  if (__builtin_cpu_supports("gfni") && __builtin_cpu_supports("avx2")) expected[n_expected++] = "gfni-avx2";
  if (__builtin_cpu_supports("gfni") && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")) {
    expected[n_expected++] = "gfni";
  }
#endif
  for (int e = 0; e < n_expected; e++) {
    int found = 0;
    for (int k = 0; k < n; k++) found |= strcmp(list[k].name, expected[e]) == 0;
    if (!found) {
      printf("kernel %-10s MISSING (failed its load-time self-test)\n", expected[e]);
      failures++;
    }
  }
  const int affine = svc_gf_affine_check();
  printf("gfni affine matrices %s\n", affine ? "ok" : "WRONG");
  failures += !affine;
  const uint64_t crc = svc_crc64nvme((const uint8_t *)"123456789", 9, 0);
  printf("crc64nvme(123456789) = %016llx (%s)\n", (unsigned long long)crc, svc_crc64nvme_kernel());
  failures += crc != 0xAE8B14860A799888ULL;
  const uint64_t h = svc_xxh64((const uint8_t *)"abc", 3, 0);
  printf("xxh64(abc) = %016llx\n", (unsigned long long)h);
  failures += h != 0x44BC2CF5AD770999ULL;
  printf("%s\n", failures ? "FAILED" : "all ok");
  return failures ? 1 : 0;
}
