/*
 * Node-API binding of the multi-buffer hashes (mbhash.c):
 *
 *   mbHashKernels                  ['avx512', 'avx2', 'scalar'], those this CPU runs, fastest first
 *   mbHashIv(alg, state)           writes the initial state (alg 0 = MD5, 1 = SHA-256)
 *   mbHashInterleave               { md5, sha256 }: streams the 'scalar' kernel runs
 *                                  interleaved on one core (4 for SHA-256 with the SHA
 *                                  extensions; 1: each alone)
 *   mbHashBlocks(alg, states, datas [, kernel])
 *                                  folds datas[i] (whole 64-byte blocks) into states[i]
 *                                  (Uint32Array, host order), all streams at once
 *   mbHashSingle                   { md5, sha256 }: what hashes one stream alone (the
 *                                  'scalar' kernel): 'openssl' (the process's) or 'portable'
 *   mbHashBlocksAsync(alg, states, datas, callback [, lanes = true])
 *                                  the same on a libuv pool thread (lanes false: each stream
 *                                  alone, the 'scalar' kernel); callback(err) on the
 *                                  main thread. The caller must leave states and datas
 *                                  alone (not write, transfer or detach them) until then;
 *                                  references keep them alive.
 */
#include <stdlib.h>
#include <string.h>

#include "mbhash.h"
#include "napi_check.h"

static const char *const kernel_names[SVC_MB_KERNELS] = {"scalar", "avx2", "avx512"};

static int typed(napi_env env, napi_value v, napi_typedarray_type want, void **data, size_t *len) {
  bool is_ta = false;
  if (napi_is_typedarray(env, v, &is_ta) != napi_ok || !is_ta) return 0;
  napi_typedarray_type type;
  napi_value ab;
  size_t offset;
  if (napi_get_typedarray_info(env, v, &type, len, data, &ab, &offset) != napi_ok) return 0;
  if (type == napi_uint8_clamped_array) type = napi_uint8_array;
  return type == want;
}

typedef struct {
  int alg;
  int simd; /* async: lanes allowed */
  size_t n;
  svc_mb_job *jobs;
  napi_ref *refs; /* 2n: states then datas */
  napi_ref callback;
  napi_async_work work;
} batch;

static void batch_free(napi_env env, batch *b) {
  if (b->refs) {
    for (size_t i = 0; i < 2 * b->n; i++)
      if (b->refs[i]) napi_delete_reference(env, b->refs[i]);
  }
  if (b->callback) napi_delete_reference(env, b->callback);
  free(b->refs);
  free(b->jobs);
  free(b);
}

/* Reads (alg, states, datas) into a batch; throws and returns NULL on bad arguments. */
static batch *read_batch(napi_env env, napi_value *argv, int keep_refs) {
  int32_t alg;
  bool sa = false, da = false;
  uint32_t ns = 0, nd = 0;
  if (napi_get_value_int32(env, argv[0], &alg) != napi_ok || alg < 0 || alg >= SVC_MB_ALGS ||
      napi_is_array(env, argv[1], &sa) != napi_ok || !sa || napi_is_array(env, argv[2], &da) != napi_ok || !da ||
      napi_get_array_length(env, argv[1], &ns) != napi_ok || napi_get_array_length(env, argv[2], &nd) != napi_ok ||
      ns != nd) {
    napi_throw_type_error(env, NULL, "mbHashBlocks(alg 0|1, states: Uint32Array[], datas: Uint8Array[]) of equal length");
    return NULL;
  }
  batch *b = calloc(1, sizeof *b);
  if (!b) goto oom;
  b->alg = alg;
  b->n = ns;
  b->jobs = calloc(ns ? ns : 1, sizeof *b->jobs);
  if (!b->jobs) goto oom;
  if (keep_refs) {
    b->refs = calloc(ns ? 2 * ns : 1, sizeof *b->refs);
    if (!b->refs) goto oom;
  }
  size_t words = (size_t)svc_mb_words(alg);
  for (uint32_t i = 0; i < ns; i++) {
    napi_value s, d;
    void *sp, *dp;
    size_t sl, dl;
    if (napi_get_element(env, argv[1], i, &s) != napi_ok || napi_get_element(env, argv[2], i, &d) != napi_ok ||
        !typed(env, s, napi_uint32_array, &sp, &sl) || !typed(env, d, napi_uint8_array, &dp, &dl)) {
      batch_free(env, b);
      napi_throw_type_error(env, NULL, "mbHashBlocks: states must be Uint32Arrays and datas Uint8Arrays");
      return NULL;
    }
    if (sl < words || dl % 64 != 0) {
      batch_free(env, b);
      napi_throw_range_error(env, NULL, "mbHashBlocks: a state is too short or a data length is not a multiple of 64");
      return NULL;
    }
    for (uint32_t j = 0; j < i; j++) {
      if (b->jobs[j].state == (uint32_t *)sp) {
        batch_free(env, b);
        napi_throw_range_error(env, NULL, "mbHashBlocks: the same state twice in one batch");
        return NULL;
      }
    }
    b->jobs[i] = (svc_mb_job){(uint32_t *)sp, (const uint8_t *)dp, dl / 64};
    if (keep_refs && (napi_create_reference(env, s, 1, &b->refs[2 * i]) != napi_ok ||
                      napi_create_reference(env, d, 1, &b->refs[2 * i + 1]) != napi_ok)) {
      batch_free(env, b);
      napi_throw_error(env, "ERR_SVC_NATIVE", "mbHashBlocksAsync: could not reference its buffers");
      return NULL;
    }
  }
  return b;
oom:
  if (b) batch_free(env, b);
  napi_throw_error(env, "ERR_SVC_NATIVE", "mbHashBlocks: out of memory");
  return NULL;
}

static napi_value mb_blocks(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc < 3) {
    napi_throw_type_error(env, NULL, "mbHashBlocks(alg, states, datas [, kernel])");
    return NULL;
  }
  int kernel = svc_mb_kernel();
  napi_valuetype t = napi_undefined;
  if (argc >= 4) CHECK(napi_typeof(env, argv[3], &t));
  if (t == napi_string) {
    char name[16];
    size_t len;
    CHECK(napi_get_value_string_utf8(env, argv[3], name, sizeof name, &len));
    kernel = -1;
    for (int k = 0; k < SVC_MB_KERNELS; k++)
      if (strcmp(name, kernel_names[k]) == 0) kernel = k;
    if (kernel < 0 || !svc_mb_has_kernel(kernel)) {
      napi_throw_range_error(env, NULL, "mbHashBlocks: kernel not available on this CPU");
      return NULL;
    }
  }
  batch *b = read_batch(env, argv, 0);
  if (!b) return NULL;
  svc_mb_run(b->alg, b->jobs, b->n, kernel);
  batch_free(env, b);
  return NULL;
}

static void async_execute(napi_env env, void *data) {
  (void)env;
  batch *b = data;
  svc_mb_run(b->alg, b->jobs, b->n, b->simd ? svc_mb_kernel() : SVC_MB_SCALAR);
}

static void async_complete(napi_env env, napi_status status, void *data) {
  batch *b = data;
  napi_value cb, global, arg;
  if (napi_get_reference_value(env, b->callback, &cb) == napi_ok && napi_get_global(env, &global) == napi_ok) {
    if (status == napi_ok) napi_get_null(env, &arg);
    else {
      napi_value msg;
      napi_create_string_utf8(env, "mbHashBlocksAsync: cancelled", NAPI_AUTO_LENGTH, &msg);
      napi_create_error(env, NULL, msg, &arg);
    }
    napi_call_function(env, global, cb, 1, &arg, NULL);
  }
  napi_delete_async_work(env, b->work);
  batch_free(env, b);
}

static napi_value mb_blocks_async(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value argv[5];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  napi_valuetype t = napi_undefined;
  if (argc >= 4) CHECK(napi_typeof(env, argv[3], &t));
  if (argc < 4 || t != napi_function) {
    napi_throw_type_error(env, NULL, "mbHashBlocksAsync(alg, states, datas, callback [, lanes])");
    return NULL;
  }
  bool lanes = true;
  napi_valuetype lt = napi_undefined;
  if (argc >= 5) CHECK(napi_typeof(env, argv[4], &lt));
  if (lt == napi_boolean) CHECK(napi_get_value_bool(env, argv[4], &lanes));
  batch *b = read_batch(env, argv, 1);
  if (!b) return NULL;
  b->simd = lanes;
  napi_value name;
  if (napi_create_reference(env, argv[3], 1, &b->callback) != napi_ok ||
      napi_create_string_utf8(env, "svc.mbhash", NAPI_AUTO_LENGTH, &name) != napi_ok ||
      napi_create_async_work(env, NULL, name, async_execute, async_complete, b, &b->work) != napi_ok) {
    batch_free(env, b);
    napi_throw_error(env, "ERR_SVC_NATIVE", "mbHashBlocksAsync: could not queue the work");
    return NULL;
  }
  if (napi_queue_async_work(env, b->work) != napi_ok) {
    napi_delete_async_work(env, b->work);
    batch_free(env, b);
    napi_throw_error(env, "ERR_SVC_NATIVE", "mbHashBlocksAsync: could not queue the work");
    return NULL;
  }
  return NULL;
}

static napi_value mb_iv(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  int32_t alg;
  void *sp;
  size_t sl;
  if (argc < 2 || napi_get_value_int32(env, argv[0], &alg) != napi_ok || alg < 0 || alg >= SVC_MB_ALGS ||
      !typed(env, argv[1], napi_uint32_array, &sp, &sl) || sl < (size_t)svc_mb_words(alg)) {
    napi_throw_type_error(env, NULL, "mbHashIv(alg 0|1, state: Uint32Array)");
    return NULL;
  }
  svc_mb_iv(alg, (uint32_t *)sp);
  return NULL;
}

napi_status svc_mbhash_register(napi_env env, napi_value exports) {
  svc_mb_init();
  napi_value kernels, s;
  napi_status st;
  uint32_t k = 0;
  if ((st = napi_create_array(env, &kernels)) != napi_ok) return st;
  for (int kernel = SVC_MB_KERNELS - 1; kernel >= 0; kernel--) {
    if (!svc_mb_has_kernel(kernel)) continue;
    if ((st = napi_create_string_utf8(env, kernel_names[kernel], NAPI_AUTO_LENGTH, &s)) != napi_ok) return st;
    if ((st = napi_set_element(env, kernels, k++, s)) != napi_ok) return st;
  }
  napi_value single, m, h;
  if ((st = napi_create_object(env, &single)) != napi_ok) return st;
  if ((st = napi_create_string_utf8(env, svc_mb_single(SVC_MB_MD5), NAPI_AUTO_LENGTH, &m)) != napi_ok) return st;
  if ((st = napi_create_string_utf8(env, svc_mb_single(SVC_MB_SHA256), NAPI_AUTO_LENGTH, &h)) != napi_ok) return st;
  if ((st = napi_set_named_property(env, single, "md5", m)) != napi_ok) return st;
  if ((st = napi_set_named_property(env, single, "sha256", h)) != napi_ok) return st;
  napi_value interleave, im, ih;
  if ((st = napi_create_object(env, &interleave)) != napi_ok) return st;
  if ((st = napi_create_int32(env, svc_mb_interleave(SVC_MB_MD5), &im)) != napi_ok) return st;
  if ((st = napi_create_int32(env, svc_mb_interleave(SVC_MB_SHA256), &ih)) != napi_ok) return st;
  if ((st = napi_set_named_property(env, interleave, "md5", im)) != napi_ok) return st;
  if ((st = napi_set_named_property(env, interleave, "sha256", ih)) != napi_ok) return st;
  napi_property_descriptor props[] = {
      {"mbHashKernels", NULL, NULL, NULL, NULL, kernels, napi_enumerable, NULL},
      {"mbHashSingle", NULL, NULL, NULL, NULL, single, napi_enumerable, NULL},
      {"mbHashInterleave", NULL, NULL, NULL, NULL, interleave, napi_enumerable, NULL},
      {"mbHashIv", NULL, mb_iv, NULL, NULL, NULL, napi_enumerable, NULL},
      {"mbHashBlocks", NULL, mb_blocks, NULL, NULL, NULL, napi_enumerable, NULL},
      {"mbHashBlocksAsync", NULL, mb_blocks_async, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  return napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
}
