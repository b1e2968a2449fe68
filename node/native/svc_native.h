/*
 * svc native addon: GF(2^8) matrix kernels for the Reed-Solomon codec, XXH64
 * for bitrot hashes, CRC-64/NVME for S3 checksums. Plain C, Node-API only.
 */
#ifndef SVC_NATIVE_H
#define SVC_NATIVE_H

#include <stddef.h>
#include <stdint.h>

/* Largest matrix dimension accepted (rows or columns): K+M ≤ 256 in GF(2^8). */
#define SVC_GF_MAX_DIM 256

/*
 * For r in 0..rows-1: out[r][0..len) = XOR over j of coef[r*cols + j] * in[j][0..len)
 * in GF(2^8) with polynomial 0x11d. Outputs must not alias inputs.
 */
typedef void (*svc_gf_matmul_fn)(const uint8_t *coef, int rows, int cols, const uint8_t *const *in,
                                 uint8_t *const *out, size_t len);

typedef struct {
  const char *name;
  svc_gf_matmul_fn fn;
} svc_gf_kernel;

/* Builds tables, detects the CPU, self-tests each kernel; idempotent. */
void svc_gf_init(void);
/* Kernels usable on this CPU that passed the self-test, fastest first. */
int svc_gf_kernels(const svc_gf_kernel **list);
uint8_t svc_gf_mul(uint8_t a, uint8_t b);
/* 1 when the GFNI affine matrices multiply correctly (checked in software). */
int svc_gf_affine_check(void);

uint64_t svc_xxh64(const uint8_t *p, size_t len, uint64_t seed);

uint64_t svc_crc64nvme(const uint8_t *p, size_t len, uint64_t prev);
void svc_crc64nvme_init(void);
/* `pclmul` or `table`. */
const char *svc_crc64nvme_kernel(void);

#endif
