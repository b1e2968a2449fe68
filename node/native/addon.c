/*
 * Node-API bindings. Every call is synchronous and works in place on the
 * caller's Uint8Arrays (Buffers included): no copies, no allocations on the
 * hot path. Argument errors throw TypeError/RangeError; the TypeScript layer
 * validates shapes before calling, so these are guards, not control flow.
 */
#include <node_api.h>
#include <string.h>
#include <sys/resource.h>

#include "fileio.h"
#include "mbhash.h"
#include "svc_native.h"
#include "napi_check.h"

static int get_bytes(napi_env env, napi_value v, uint8_t **data, size_t *len) {
  bool is_ta = false;
  if (napi_is_typedarray(env, v, &is_ta) != napi_ok || !is_ta) return 0;
  napi_typedarray_type type;
  size_t length, offset;
  void *ptr;
  napi_value ab;
  if (napi_get_typedarray_info(env, v, &type, &length, &ptr, &ab, &offset) != napi_ok) return 0;
  if (type != napi_uint8_array && type != napi_uint8_clamped_array) return 0;
  *data = (uint8_t *)ptr;
  *len = length;
  return 1;
}

static int get_int(napi_env env, napi_value v, int64_t *out) {
  return napi_get_value_int64(env, v, out) == napi_ok;
}

/* Reads `count` Uint8Arrays of at least `min_len` bytes from a JS array. */
static int get_array(napi_env env, napi_value arr, uint32_t count, size_t min_len, uint8_t **ptrs) {
  bool is_array = false;
  uint32_t n = 0;
  if (napi_is_array(env, arr, &is_array) != napi_ok || !is_array) return 0;
  if (napi_get_array_length(env, arr, &n) != napi_ok || n != count) return 0;
  for (uint32_t i = 0; i < n; i++) {
    napi_value el;
    size_t len;
    if (napi_get_element(env, arr, i, &el) != napi_ok) return 0;
    if (!get_bytes(env, el, &ptrs[i], &len) || len < min_len) return 0;
  }
  return 1;
}

static const svc_gf_kernel *find_kernel(const char *name) {
  const svc_gf_kernel *list;
  int n = svc_gf_kernels(&list);
  for (int i = 0; i < n; i++) {
    if (strcmp(list[i].name, name) == 0) return &list[i];
  }
  return NULL;
}

/* matMul(coef, rows, cols, inputs, outputs, len [, kernelName]) */
static napi_value mat_mul(napi_env env, napi_callback_info info) {
  size_t argc = 7;
  napi_value argv[7];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc < 6) {
    napi_throw_type_error(env, NULL, "matMul(coef, rows, cols, inputs, outputs, len[, kernel])");
    return NULL;
  }
  uint8_t *coef;
  size_t coef_len;
  int64_t rows, cols, len;
  if (!get_bytes(env, argv[0], &coef, &coef_len) || !get_int(env, argv[1], &rows) || !get_int(env, argv[2], &cols) ||
      !get_int(env, argv[5], &len)) {
    napi_throw_type_error(env, NULL, "matMul: bad argument types");
    return NULL;
  }
  if (rows < 0 || cols < 1 || rows > SVC_GF_MAX_DIM || cols > SVC_GF_MAX_DIM || len < 0 ||
      coef_len < (size_t)(rows * cols)) {
    napi_throw_range_error(env, NULL, "matMul: bad dimensions");
    return NULL;
  }
  const svc_gf_kernel *k;
  const svc_gf_kernel *list;
  svc_gf_kernels(&list);
  k = &list[0];
  if (argc >= 7) {
    char name[32];
    size_t name_len;
    if (napi_get_value_string_utf8(env, argv[6], name, sizeof name, &name_len) != napi_ok ||
        (k = find_kernel(name)) == NULL) {
      napi_throw_range_error(env, NULL, "matMul: unknown or unavailable kernel");
      return NULL;
    }
  }
  uint8_t *in[SVC_GF_MAX_DIM];
  uint8_t *out[SVC_GF_MAX_DIM];
  if (!get_array(env, argv[3], (uint32_t)cols, (size_t)len, in) ||
      !get_array(env, argv[4], (uint32_t)rows, (size_t)len, out)) {
    napi_throw_range_error(env, NULL, "matMul: inputs/outputs must be arrays of cols/rows Uint8Arrays of >= len bytes");
    return NULL;
  }
  if (len > 0 && rows > 0) k->fn(coef, (int)rows, (int)cols, (const uint8_t *const *)in, out, (size_t)len);
  return NULL;
}

static void put_be64(uint8_t *p, uint64_t v) {
  for (int i = 7; i >= 0; i--) {
    p[i] = (uint8_t)v;
    v >>= 8;
  }
}

/* xxh64Into(buf, out, outOffset): canonical (big-endian) XXH64, seed 0. */
static napi_value xxh64_into(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  uint8_t *buf, *out;
  size_t len, out_len;
  int64_t off;
  if (argc < 3 || !get_bytes(env, argv[0], &buf, &len) || !get_bytes(env, argv[1], &out, &out_len) ||
      !get_int(env, argv[2], &off)) {
    napi_throw_type_error(env, NULL, "xxh64Into(buf, out, outOffset)");
    return NULL;
  }
  if (off < 0 || (size_t)off + 8 > out_len) {
    napi_throw_range_error(env, NULL, "xxh64Into: output offset out of range");
    return NULL;
  }
  put_be64(out + off, svc_xxh64(buf, len, 0));
  return NULL;
}

/* xxh64Many(shards, out): hash i written at out[8*i], one call for a stripe (inputs side by side where the CPU allows). */
static napi_value xxh64_many(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  uint8_t *out;
  size_t out_len;
  uint32_t n = 0;
  bool is_array = false;
  if (argc < 2 || napi_is_array(env, argv[0], &is_array) != napi_ok || !is_array ||
      napi_get_array_length(env, argv[0], &n) != napi_ok || !get_bytes(env, argv[1], &out, &out_len)) {
    napi_throw_type_error(env, NULL, "xxh64Many(shards, out)");
    return NULL;
  }
  if ((size_t)n * 8 > out_len) {
    napi_throw_range_error(env, NULL, "xxh64Many: output too small");
    return NULL;
  }
  enum { BATCH = 32 };
  const uint8_t *bufs[BATCH];
  size_t lens[BATCH];
  uint64_t hashes[BATCH];
  for (uint32_t base = 0; base < n; base += BATCH) {
    const uint32_t k = n - base < BATCH ? n - base : BATCH;
    for (uint32_t i = 0; i < k; i++) {
      napi_value el;
      uint8_t *buf;
      CHECK(napi_get_element(env, argv[0], base + i, &el));
      if (!get_bytes(env, el, &buf, &lens[i])) {
        napi_throw_type_error(env, NULL, "xxh64Many: shards must be Uint8Arrays");
        return NULL;
      }
      bufs[i] = buf;
    }
    svc_xxh64_many(bufs, lens, k, hashes);
    for (uint32_t i = 0; i < k; i++) put_be64(out + 8 * (size_t)(base + i), hashes[i]);
  }
  return NULL;
}

/* crc64nvme(buf, prev: bigint): bigint */
static napi_value crc64nvme(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  uint8_t *buf;
  size_t len;
  uint64_t prev = 0;
  bool lossless;
  if (argc < 2 || !get_bytes(env, argv[0], &buf, &len) ||
      napi_get_value_bigint_uint64(env, argv[1], &prev, &lossless) != napi_ok || !lossless) {
    napi_throw_type_error(env, NULL, "crc64nvme(buf, prev: bigint in [0, 2^64))");
    return NULL;
  }
  napi_value result;
  CHECK(napi_create_bigint_uint64(env, svc_crc64nvme(buf, len, prev), &result));
  return result;
}

#define GCM_PACKAGE (64 * 1024)

/* Set at load: the cipher may be called (never into unresolved OpenSSL symbols otherwise). */
static int gcm_ok = 0;

/* gcmSeal(key, nonce, firstSeq, finalLast, plain, out): bytes written into out. */
static napi_value gcm_seal(napi_env env, napi_callback_info info) {
  size_t argc = 6;
  napi_value argv[6];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  uint8_t *key, *nonce, *plain, *out;
  size_t key_len, nonce_len, plain_len, out_len;
  int64_t first;
  bool final_last;
  if (!gcm_ok) {
    napi_throw_error(env, NULL, "gcmSeal: the package cipher is not available in this process");
    return NULL;
  }
  if (argc < 6 || !get_bytes(env, argv[0], &key, &key_len) || key_len != 32 || !get_bytes(env, argv[1], &nonce, &nonce_len) || nonce_len != 12 ||
      !get_int(env, argv[2], &first) || first < 0 || first > UINT32_MAX || napi_get_value_bool(env, argv[3], &final_last) != napi_ok ||
      !get_bytes(env, argv[4], &plain, &plain_len) || !get_bytes(env, argv[5], &out, &out_len)) {
    napi_throw_type_error(env, NULL, "gcmSeal(key32, nonce12, firstSeq, finalLast, plain, out)");
    return NULL;
  }
  long r = svc_gcm_seal(key, nonce, (uint32_t)first, final_last, plain, plain_len, GCM_PACKAGE, out, out_len);
  if (r < 0) {
    napi_throw_range_error(env, NULL, "gcmSeal: bad sizes or cipher failure");
    return NULL;
  }
  napi_value result;
  CHECK(napi_create_int64(env, r, &result));
  return result;
}

/* gcmOpen(key, nonce, firstSeq, lastOfStream, cipher, out): bytes written, or -1 - seq of the package that failed. */
static napi_value gcm_open(napi_env env, napi_callback_info info) {
  size_t argc = 6;
  napi_value argv[6];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  uint8_t *key, *nonce, *cipher, *out;
  size_t key_len, nonce_len, cipher_len, out_len;
  int64_t first, last;
  if (!gcm_ok) {
    napi_throw_error(env, NULL, "gcmOpen: the package cipher is not available in this process");
    return NULL;
  }
  if (argc < 6 || !get_bytes(env, argv[0], &key, &key_len) || key_len != 32 || !get_bytes(env, argv[1], &nonce, &nonce_len) || nonce_len != 12 ||
      !get_int(env, argv[2], &first) || first < 0 || first > UINT32_MAX || !get_int(env, argv[3], &last) || last < 0 || last > UINT32_MAX ||
      !get_bytes(env, argv[4], &cipher, &cipher_len) || !get_bytes(env, argv[5], &out, &out_len)) {
    napi_throw_type_error(env, NULL, "gcmOpen(key32, nonce12, firstSeq, lastOfStream, cipher, out)");
    return NULL;
  }
  uint32_t failed = 0;
  long r = svc_gcm_open(key, nonce, (uint32_t)first, (uint32_t)last, cipher, cipher_len, GCM_PACKAGE, out, out_len, &failed);
  if (r == -1) {
    napi_throw_range_error(env, NULL, "gcmOpen: bad sizes or cipher failure");
    return NULL;
  }
  napi_value result;
  CHECK(napi_create_int64(env, r == -2 ? -1 - (int64_t)failed : r, &result));
  return result;
}

/* affineCheck(): the GFNI matrices verified by software emulation (for tests). */
static napi_value affine_check(napi_env env, napi_callback_info info) {
  napi_value result;
  CHECK(napi_get_boolean(env, svc_gf_affine_check() == 1, &result));
  return result;
}

/*
 * raiseFileLimit(): raises this process's soft RLIMIT_NOFILE to its hard
 * limit (allowed without privileges); returns { soft, hard, raised } after.
 * An unlimited hard limit raises the soft one to 1 << 20.
 */
static napi_value raise_file_limit(napi_env env, napi_callback_info info) {
  (void)info;
  struct rlimit rl;
  bool raised = false;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) {
    napi_throw_error(env, NULL, "getrlimit(RLIMIT_NOFILE) failed");
    return NULL;
  }
  rlim_t want = rl.rlim_max == RLIM_INFINITY ? (rlim_t)1 << 20 : rl.rlim_max;
  if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
    struct rlimit next = {want, rl.rlim_max};
    if (setrlimit(RLIMIT_NOFILE, &next) == 0) {
      rl.rlim_cur = want;
      raised = true;
    }
  }
  napi_value out, soft, hard, r;
  CHECK(napi_create_object(env, &out));
  CHECK(napi_create_double(env, rl.rlim_cur == RLIM_INFINITY ? -1 : (double)rl.rlim_cur, &soft));
  CHECK(napi_create_double(env, rl.rlim_max == RLIM_INFINITY ? -1 : (double)rl.rlim_max, &hard));
  CHECK(napi_get_boolean(env, raised, &r));
  CHECK(napi_set_named_property(env, out, "soft", soft));
  CHECK(napi_set_named_property(env, out, "hard", hard));
  CHECK(napi_set_named_property(env, out, "raised", r));
  return out;
}

/*
 * alignOffset(view, alignment): bytes from the start of `view` (a Uint8Array
 * or Buffer) to its first address that is a multiple of `alignment` (a power
 * of two). O_DIRECT writes need their memory aligned to the device's block
 * size, and JavaScript cannot see an address.
 */
static napi_value align_offset(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  bool is_ta = false;
  if (argc < 2 || napi_is_typedarray(env, argv[0], &is_ta) != napi_ok || !is_ta) {
    napi_throw_type_error(env, NULL, "alignOffset(view, alignment): view must be a Uint8Array");
    return NULL;
  }
  napi_typedarray_type type;
  size_t length;
  void *data;
  CHECK(napi_get_typedarray_info(env, argv[0], &type, &length, &data, NULL, NULL));
  uint32_t align;
  if (napi_get_value_uint32(env, argv[1], &align) != napi_ok || align == 0 || (align & (align - 1)) != 0) {
    napi_throw_range_error(env, NULL, "alignOffset: alignment must be a power of two");
    return NULL;
  }
  uintptr_t addr = (uintptr_t)data;
  napi_value out;
  CHECK(napi_create_uint32(env, (uint32_t)((align - (addr & (align - 1))) & (align - 1)), &out));
  return out;
}

static napi_value init(napi_env env, napi_value exports) {
  svc_gf_init();
  svc_crc64nvme_init();
  const svc_gf_kernel *list;
  int n = svc_gf_kernels(&list);
  napi_value kernel, kernels, crc_kernel, gcm;
  gcm_ok = svc_gcm_available() == 1;
  CHECK(napi_get_boolean(env, gcm_ok, &gcm));
  CHECK(napi_create_string_utf8(env, svc_crc64nvme_kernel(), NAPI_AUTO_LENGTH, &crc_kernel));
  CHECK(napi_create_string_utf8(env, list[0].name, NAPI_AUTO_LENGTH, &kernel));
  CHECK(napi_create_array_with_length(env, (size_t)n, &kernels));
  for (int i = 0; i < n; i++) {
    napi_value s;
    CHECK(napi_create_string_utf8(env, list[i].name, NAPI_AUTO_LENGTH, &s));
    CHECK(napi_set_element(env, kernels, (uint32_t)i, s));
  }
  napi_value xxh_lanes;
  CHECK(napi_create_int32(env, svc_xxh64_many_lanes(), &xxh_lanes));
  napi_property_descriptor props[] = {
      {"kernel", NULL, NULL, NULL, NULL, kernel, napi_enumerable, NULL},
      {"kernels", NULL, NULL, NULL, NULL, kernels, napi_enumerable, NULL},
      {"matMul", NULL, mat_mul, NULL, NULL, NULL, napi_enumerable, NULL},
      {"affineCheck", NULL, affine_check, NULL, NULL, NULL, napi_enumerable, NULL},
      {"xxh64Into", NULL, xxh64_into, NULL, NULL, NULL, napi_enumerable, NULL},
      {"xxh64Many", NULL, xxh64_many, NULL, NULL, NULL, napi_enumerable, NULL},
      {"xxh64ManyLanes", NULL, NULL, NULL, NULL, xxh_lanes, napi_enumerable, NULL},
      {"crc64nvme", NULL, crc64nvme, NULL, NULL, NULL, napi_enumerable, NULL},
      {"crc64nvmeKernel", NULL, NULL, NULL, NULL, crc_kernel, napi_enumerable, NULL},
      {"gcm", NULL, NULL, NULL, NULL, gcm, napi_enumerable, NULL},
      {"gcmSeal", NULL, gcm_seal, NULL, NULL, NULL, napi_enumerable, NULL},
      {"gcmOpen", NULL, gcm_open, NULL, NULL, NULL, napi_enumerable, NULL},
      {"raiseFileLimit", NULL, raise_file_limit, NULL, NULL, NULL, napi_enumerable, NULL},
      {"alignOffset", NULL, align_offset, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  CHECK(napi_define_properties(env, exports, sizeof props / sizeof props[0], props));
  CHECK(svc_mbhash_register(env, exports));
  CHECK(svc_fileio_register(env, exports));
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
