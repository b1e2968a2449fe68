/*
 * svc native addon: GF(2^8) matrix kernels for the Reed-Solomon codec, XXH64
 * for bitrot hashes, CRC-64/NVME for S3 checksums, the SSE package cipher
 * (through the OpenSSL the node binary exports); whole-file I/O steps are in
 * fileio.c. Plain C, Node-API.
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
/* XXH64 (seed 0) of each of n inputs into out[i]; several at once where the CPU allows (AVX-512: 4). */
void svc_xxh64_many(const uint8_t *const *p, const size_t *len, size_t n, uint64_t *out);
/* Inputs svc_xxh64_many hashes side by side: 4 with the AVX-512 path, else 1. */
int svc_xxh64_many_lanes(void);

uint64_t svc_crc64nvme(const uint8_t *p, size_t len, uint64_t prev);
void svc_crc64nvme_init(void);
/* `pclmul` or `table`. */
const char *svc_crc64nvme_kernel(void);

/*
 * The package cipher (AES-256-GCM over fixed-size packages, see gcm.c).
 * svc_gcm_available: 1 when built with OpenSSL. Seal: writes the packages of
 * `plain` (all full but the last when `final_last`) to `out`; returns the
 * bytes written, -1 on bad sizes. Open: whole packages from `cipher` to
 * plaintext in `out`; returns the bytes written, -1 on bad sizes, -2 when a
 * package fails its checks or authentication (`*failed_seq` names it).
 * `out == cipher` opens in place, the plaintext left at the buffer's start;
 * otherwise the two must not overlap (-1).
 */
int svc_gcm_available(void);
long svc_gcm_seal(const uint8_t key[32], const uint8_t nonce[12], uint32_t first_seq, int final_last, const uint8_t *plain,
                  size_t plain_len, size_t package_size, uint8_t *out, size_t out_len);
long svc_gcm_open(const uint8_t key[32], const uint8_t nonce[12], uint32_t first_seq, uint32_t last_of_stream, const uint8_t *cipher,
                  size_t cipher_len, size_t package_size, uint8_t *out, size_t out_len, uint32_t *failed_seq);

#endif
