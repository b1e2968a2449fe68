/*
 * CHECK(call): a Node-API call that fails throws ERR_SVC_NATIVE naming the
 * call and returns NULL from the calling napi function. Shared by every
 * Node-API entry point of the addon.
 */
#ifndef SVC_NAPI_CHECK_H
#define SVC_NAPI_CHECK_H

#include <node_api.h>

#define CHECK(call)                                                            \
  do {                                                                         \
    if ((call) != napi_ok) {                                                   \
      napi_throw_error(env, "ERR_SVC_NATIVE", "Node-API call failed: " #call); \
      return NULL;                                                             \
    }                                                                          \
  } while (0)

#endif
