/*
 * The package cipher of server-side encryption (see
 * node/src/crypto/package-cipher.ts for the format), batched: runs of 64 KiB
 * packages sealed or opened with one AES-256-GCM context whose key schedule
 * is set once per call and only the nonce changed per package, in place in
 * the caller's buffers. node:crypto creates a cipher object per package,
 * which costs as much as the encryption itself at this package size.
 *
 * It uses the OpenSSL that the node binary carries and exports (EVP API),
 * so OpenSSL's own CPU dispatch picks AES-NI/VAES/PCLMUL code or its
 * portable code, exactly as for node:crypto. Built only when OpenSSL's
 * headers are found; reported available only when the running process
 * exports the EVP functions (a node linked without them never calls into
 * unresolved symbols). Otherwise the TypeScript layer keeps using
 * node:crypto (same bytes).
 */
#define _GNU_SOURCE
#include "svc_native.h"

#if defined(__has_include)
#if __has_include(<openssl/evp.h>)
#define SVC_HAVE_OPENSSL 1
#endif
#endif

#ifdef SVC_HAVE_OPENSSL
#include <dlfcn.h>
#include <openssl/evp.h>
#include <string.h>

#define HEADER 16
#define TAG 16
#define VERSION 1
#define FINAL 0x80

int svc_gcm_available(void) {
  static const char *const needed[] = {"EVP_aes_256_gcm",    "EVP_CIPHER_CTX_new",  "EVP_CIPHER_CTX_free", "EVP_CIPHER_CTX_ctrl",
                                       "EVP_EncryptInit_ex", "EVP_EncryptUpdate",   "EVP_EncryptFinal_ex", "EVP_DecryptInit_ex",
                                       "EVP_DecryptUpdate",  "EVP_DecryptFinal_ex"};
  for (size_t i = 0; i < sizeof needed / sizeof needed[0]; i++) {
    if (dlsym(RTLD_DEFAULT, needed[i]) == NULL) return 0;
  }
  return 1;
}

static void package_iv(const uint8_t nonce[12], uint32_t seq, uint8_t iv[12]) {
  memcpy(iv, nonce, 12);
  uint32_t last = ((uint32_t)iv[8] << 24 | (uint32_t)iv[9] << 16 | (uint32_t)iv[10] << 8 | (uint32_t)iv[11]) ^ seq;
  iv[8] = (uint8_t)(last >> 24);
  iv[9] = (uint8_t)(last >> 16);
  iv[10] = (uint8_t)(last >> 8);
  iv[11] = (uint8_t)last;
}

long svc_gcm_seal(const uint8_t key[32], const uint8_t nonce[12], uint32_t first_seq, int final_last, const uint8_t *plain,
                  size_t plain_len, size_t package_size, uint8_t *out, size_t out_len) {
  size_t packages = plain_len == 0 ? 1 : (plain_len + package_size - 1) / package_size;
  /* only the stream's final package may be short or empty */
  if (!final_last && (plain_len == 0 || plain_len % package_size != 0)) return -1;
  if (out_len < plain_len + packages * (HEADER + TAG)) return -1;
  EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
  if (ctx == NULL) return -1;
  long written = -1;
  if (EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), NULL, key, NULL) != 1) goto done;
  size_t at = 0;
  for (size_t i = 0; i < packages; i++) {
    size_t off = i * package_size;
    size_t n = plain_len - off < package_size ? plain_len - off : package_size;
    uint8_t *h = out + at;
    h[0] = VERSION;
    h[1] = (final_last && i == packages - 1) ? FINAL : 0;
    h[2] = 0;
    h[3] = 0;
    memcpy(h + 4, nonce, 12);
    uint8_t iv[12];
    package_iv(nonce, first_seq + (uint32_t)i, iv);
    int l;
    if (EVP_EncryptInit_ex(ctx, NULL, NULL, NULL, iv) != 1) goto done;
    if (EVP_EncryptUpdate(ctx, NULL, &l, h, HEADER) != 1) goto done;
    if (n > 0 && EVP_EncryptUpdate(ctx, h + HEADER, &l, plain + off, (int)n) != 1) goto done;
    if (EVP_EncryptFinal_ex(ctx, h + HEADER + n, &l) != 1) goto done;
    if (EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, TAG, h + HEADER + n) != 1) goto done;
    at += HEADER + n + TAG;
  }
  written = (long)at;
done:
  EVP_CIPHER_CTX_free(ctx);
  return written;
}

long svc_gcm_open(const uint8_t key[32], const uint8_t nonce[12], uint32_t first_seq, uint32_t last_of_stream, const uint8_t *cipher,
                  size_t cipher_len, size_t package_size, uint8_t *out, size_t out_len, uint32_t *failed_seq) {
  const size_t full = package_size + HEADER + TAG;
  /* out == cipher: open in place, the plaintext left at the start of the buffer; otherwise
   * the two must not overlap */
  const int in_place = out == cipher;
  if (!in_place && (uintptr_t)out < (uintptr_t)cipher + cipher_len && (uintptr_t)cipher < (uintptr_t)out + out_len) return -1;
  EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
  if (ctx == NULL) return -1;
  long result = -1;
  *failed_seq = first_seq;
  if (EVP_DecryptInit_ex(ctx, EVP_aes_256_gcm(), NULL, key, NULL) != 1) goto done;
  size_t at = 0;
  size_t wrote = 0;
  uint32_t seq = first_seq;
  while (at < cipher_len) {
    size_t left = cipher_len - at;
    size_t len = left < full ? left : full;
    /* only the stream's last package may be short */
    if (len < HEADER + TAG || (len < full && seq != last_of_stream)) goto fail;
    size_t n = len - HEADER - TAG;
    if (wrote + n > out_len) goto done;
    const uint8_t *h = cipher + at;
    if (h[0] != VERSION || h[1] != (seq == last_of_stream ? FINAL : 0) || h[2] != 0 || h[3] != 0 || memcmp(h + 4, nonce, 12) != 0) goto fail;
    uint8_t iv[12];
    package_iv(nonce, seq, iv);
    /* In place: each body is opened where it lies (OpenSSL allows in == out), then moved down
     * over the headers and tags already read; the move never reaches a byte not yet opened. */
    uint8_t *dst = in_place ? out + at + HEADER : out + wrote;
    int l;
    if (EVP_DecryptInit_ex(ctx, NULL, NULL, NULL, iv) != 1) goto fail;
    if (EVP_DecryptUpdate(ctx, NULL, &l, h, HEADER) != 1) goto fail;
    if (n > 0 && EVP_DecryptUpdate(ctx, dst, &l, h + HEADER, (int)n) != 1) goto fail;
    if (EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, TAG, (void *)(h + HEADER + n)) != 1) goto fail;
    if (EVP_DecryptFinal_ex(ctx, dst + n, &l) != 1) goto fail;
    if (in_place && n > 0) memmove(out + wrote, dst, n);
    wrote += n;
    at += len;
    seq++;
  }
  result = (long)wrote;
  goto done;
fail:
  *failed_seq = seq;
  result = -2;
done:
  EVP_CIPHER_CTX_free(ctx);
  return result;
}

#else

int svc_gcm_available(void) { return 0; }

long svc_gcm_seal(const uint8_t key[32], const uint8_t nonce[12], uint32_t first_seq, int final_last, const uint8_t *plain,
                  size_t plain_len, size_t package_size, uint8_t *out, size_t out_len) {
  (void)key, (void)nonce, (void)first_seq, (void)final_last, (void)plain, (void)plain_len, (void)package_size, (void)out, (void)out_len;
  return -1;
}

long svc_gcm_open(const uint8_t key[32], const uint8_t nonce[12], uint32_t first_seq, uint32_t last_of_stream, const uint8_t *cipher,
                  size_t cipher_len, size_t package_size, uint8_t *out, size_t out_len, uint32_t *failed_seq) {
  (void)key, (void)nonce, (void)first_seq, (void)last_of_stream, (void)cipher, (void)cipher_len, (void)package_size, (void)out, (void)out_len;
  *failed_seq = first_seq;
  return -1;
}

#endif
