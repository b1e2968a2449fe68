#!/usr/bin/env bash
# A Ceph RGW (S3) on loopback from Debian's packages (ceph-mon ceph-osd radosgw), for tests and
# benchmarks that need a real non-svc S3 service. One monitor, one OSD on memstore (RAM, sized by
# RGW_MEMSTORE_BYTES, default 2 GiB), pools of size 1, no manager (nothing here needs one), cephx
# off, messenger v2 in crc mode; everything lives in DIR, on ports of its own (lib.sh).
#
#   e2e/rgw/rgw.sh start DIR [S3_PORT]   # prints one JSON line: {"endpoint","accessKey","secretKey","dir"}
#   e2e/rgw/rgw.sh stop DIR              # stops the daemons started for DIR (by their pid files)
#
# About 20-40 s to start on 2 cores. Logs in DIR/log. Exit 2 when the packages are missing.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

packages="ceph-mon ceph-osd radosgw"
rgw_init "$@"
rgw_require ceph-mon ceph-osd radosgw radosgw-admin monmaptool ceph ceph-authtool
rgw_conf <<CONF
osd pool default size = 1
osd pool default min size = 1
mon allow pool size one = true
mon warn on pool no redundancy = false
osd pool default pg num = 8
osd pool default pgp num = 8
osd objectstore = memstore
memstore device bytes = ${RGW_MEMSTORE_BYTES:-2147483648}
CONF
rgw_start_mon
rgw_start_osd 0
rgw_wait_osds 1 150
rgw_start_gateway
rgw_print_info
