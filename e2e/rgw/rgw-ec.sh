#!/usr/bin/env bash
# The benchmark peer: a Ceph RGW whose object data lives in an erasure-coded 2+2 pool on four
# BlueStore OSDs, each on a sparse file, from Debian's packages (ceph-mon ceph-mgr ceph-osd
# radosgw). One monitor, one manager, cephx off, messenger v2 in crc mode, everything bound to
# loopback and kept in DIR (data, logs, sockets), on ports of its own (lib.sh). The bucket index
# and RGW's other pools are replicated with Ceph's default size (3); the data pool is created as
# EC 2+2 (failure domain: OSD) before RGW's first start, so every object's data is erasure coded
# as svc's is with EC:2 on four drives. BlueStore commits every write to its device before it
# acknowledges, as svc fsyncs before it acknowledges.
#
#   e2e/rgw/rgw-ec.sh start DIR [S3_PORT]  # one JSON line: {"endpoint","accessKey","secretKey","dir","pids"}
#   e2e/rgw/rgw-ec.sh stop DIR             # stops what was started for DIR (by its pid files)
#
# About 40-90 s to start on 2 cores. Each OSD's file is sparse (RGW_EC_OSD_BYTES, default 16 GiB;
# only what is written takes space). Logs in DIR/log. Exit 2 when the packages are missing.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

packages="ceph-mon ceph-mgr ceph-osd radosgw"
rgw_init "$@"
rgw_require ceph-mon ceph-mgr ceph-osd radosgw radosgw-admin monmaptool ceph ceph-authtool
rgw_conf <<CONF
cluster addr = 127.0.0.1
osd pool default pg num = 16
osd pool default pgp num = 16
mon allow pool delete = true
mgr data = $dir/mgr.\$id
osd objectstore = bluestore
bluestore block create = true
bluestore block size = ${RGW_EC_OSD_BYTES:-17179869184}
bluestore fsck on mount = false
osd memory target = 939524096
CONF
mkdir -p "$dir/mgr.x"
rgw_start_mon
ceph-mgr -c "$conf" -i x
for i in 0 1 2 3; do rgw_start_osd "$i"; done
rgw_wait_osds 4 600
ceph -c "$conf" osd erasure-code-profile set ec22 k=2 m=2 crush-failure-domain=osd >/dev/null
ceph -c "$conf" osd pool create default.rgw.buckets.data 32 32 erasure ec22 >/dev/null 2>&1
ceph -c "$conf" osd pool application enable default.rgw.buckets.data rgw >/dev/null 2>&1
rgw_start_gateway
rgw_print_info "\"pids\":{$(for f in $(pidfiles); do printf '"%s":%s,' "$(basename "$f" .pid)" "$(cat "$f")"; done | sed 's/,$//')}"
