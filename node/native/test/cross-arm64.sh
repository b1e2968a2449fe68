#!/usr/bin/env bash
# Builds the C kernels for arm64 and runs selftest.c under qemu-user, so the
# NEON kernel is tested on an x86-64 development machine. Needs the Debian
# packages gcc-aarch64-linux-gnu, libc6-dev-arm64-cross and qemu-user. Also
# runs the same self-test natively.
set -euo pipefail
cd "$(dirname "$0")/.."
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
gcc -O2 -std=gnu11 -Wall -Wextra -o "$out/selftest-native" gf.c xxh64.c crc64nvme.c test/selftest.c -lpthread
"$out/selftest-native"
aarch64-linux-gnu-gcc -O2 -std=gnu11 -Wall -Wextra -static -o "$out/selftest-arm64" gf.c xxh64.c crc64nvme.c test/selftest.c -lpthread
qemu-aarch64 "$out/selftest-arm64"
