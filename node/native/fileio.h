/*
 * Whole-file steps of a local drive as one libuv pool job each (fileio.c).
 */
#ifndef SVC_FILEIO_H
#define SVC_FILEIO_H

#include <node_api.h>

/* Adds fileRead and fileWriteDurable to the addon's exports. */
napi_status svc_fileio_register(napi_env env, napi_value exports);

#endif
