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
/* Kernels, slowest first: each stream alone; 8 lanes in AVX2; 8 lanes in AVX-512VL (ternary logic, rotations). */
enum { SVC_MB_SCALAR = 0, SVC_MB_AVX2 = 1, SVC_MB_AVX512 = 2, SVC_MB_KERNELS = 3 };

/* One stream's step: `blocks` whole 64-byte blocks at `data` folded into `state` (host-order words). */
typedef struct {
  uint32_t *state;
  const uint8_t *data;
  size_t blocks;
} svc_mb_job;

/* Derives constants, detects the SIMD kernels and self-tests them; idempotent and thread-safe. */
void svc_mb_init(void);
/* The fastest kernel this CPU runs (SVC_MB_SCALAR when none of the lane kernels passed). */
int svc_mb_kernel(void);
/* 1 when `kernel` runs here. */
int svc_mb_has_kernel(int kernel);
/* What runs one stream alone: "openssl" (the process's OpenSSL) or "portable" (C). */
const char *svc_mb_single(int alg);
/* Streams the scalar kernel runs interleaved on one core (SHA-256 with SHA extensions: up to 4); 1: each alone. */
int svc_mb_interleave(int alg);
/* State words: 4 (MD5) or 8 (SHA-256). */
int svc_mb_words(int alg);
void svc_mb_iv(int alg, uint32_t *state);
/* Runs every job to its end (states must be distinct) with `kernel` (SVC_MB_SCALAR: each stream alone). */
void svc_mb_run(int alg, svc_mb_job *jobs, size_t n, int kernel);

/* Adds `mbHashKernels`, `mbHashIv`, `mbHashBlocks` and `mbHashBlocksAsync` to the addon's exports. */
napi_status svc_mbhash_register(napi_env env, napi_value exports);

#endif
