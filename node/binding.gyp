{
  "targets": [
    {
      "target_name": "svc_native",
      "sources": [
        "native/addon.c",
        "native/gf.c",
        "native/xxh64.c",
        "native/crc64nvme.c",
        "native/mbhash.c",
        "native/mbhash_napi.c",
        "native/gcm.c",
        "native/fileio.c"
      ],
      "defines": ["NAPI_VERSION=8"],
      "cflags_c": ["-O3", "-std=gnu11", "-Wall", "-Wextra", "-fno-strict-aliasing"],
      "cflags!": ["-O2"],
      "xcode_settings": {
        "GCC_OPTIMIZATION_LEVEL": "3",
        "OTHER_CFLAGS": ["-std=gnu11"]
      }
    }
  ]
}
