/*
 * Multi-buffer MD5 / SHA-256 (mbhash.c) and its Node-API binding
 * (mbhash_napi.c).
 */
#ifndef SVC_MBHASH_H
#define SVC_MBHASH_H

#include <node_api.h>
#include <stddef.h>
#include <stdint.h>

enum { SVC_MB_MD5 = 0, SVC_MB_SHA256 = 1, SVC_MB_ALGS = 2 };

/* One stream's step: `blocks` whole 64-byte blocks at `data` folded into `state` (host-order words). */
typedef struct {
  uint32_t *state;
  const uint8_t *data;
  size_t blocks;
} svc_mb_job;

/* Derives constants, detects AVX2 and self-tests it; idempotent and thread-safe. */
void svc_mb_init(void);
/* 1 when the 8-lane AVX2 kernels are in use. */
int svc_mb_simd(void);
/* What runs one stream alone: "openssl" (the process's OpenSSL) or "portable" (C). */
const char *svc_mb_single(int alg);
/* State words: 4 (MD5) or 8 (SHA-256). */
int svc_mb_words(int alg);
void svc_mb_iv(int alg, uint32_t *state);
/* Runs every job to its end (states must be distinct); `use_simd` 0 forces the scalar code. */
void svc_mb_run(int alg, svc_mb_job *jobs, size_t n, int use_simd);

/* Adds `mbHashKernels`, `mbHashIv`, `mbHashBlocks` and `mbHashBlocksAsync` to the addon's exports. */
napi_status svc_mbhash_register(napi_env env, napi_value exports);

#endif
