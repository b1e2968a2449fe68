#!/usr/bin/env bash
# The benchmark peer: a Ceph RGW whose object data lives in an erasure-coded 2+2 pool on four
# BlueStore OSDs, each on a sparse file, from Debian's packages (ceph-mon ceph-mgr ceph-osd
# radosgw). One monitor, one manager, cephx off, messenger v2 in crc mode, everything bound to
# loopback and kept in DIR (data, logs, sockets), on ports of its own. The bucket index and RGW's
# other pools are replicated with Ceph's default size (3); the data pool is created as EC 2+2
# (failure domain: OSD) before RGW's first start, so every object's data is erasure coded as
# svc's is with EC:2 on four drives. BlueStore commits every write to its device before it
# acknowledges, as svc fsyncs before it acknowledges.
#
#   e2e/rgw/rgw-ec.sh start DIR [S3_PORT]  # one JSON line: {"endpoint","accessKey","secretKey","dir","pids"}
#   e2e/rgw/rgw-ec.sh stop DIR             # stops what was started for DIR (by its pid files)
#
# About 40-90 s to start on 2 cores. Each OSD's file is sparse (RGW_EC_OSD_BYTES, default 16 GiB;
# only what is written takes space). Logs in DIR/log. Exit 2 when the packages are missing.
set -euo pipefail

cmd=${1:-}
dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: $0 start|stop DIR [S3_PORT]" >&2; exit 64; }

pidfiles() { ls "$dir"/run/*.pid 2>/dev/null || true; }

stop() {
  for f in $(pidfiles); do
    pid=$(cat "$f" 2>/dev/null || true)
    [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  done
  for _ in $(seq 1 100); do
    alive=0
    for f in $(pidfiles); do
      pid=$(cat "$f" 2>/dev/null || true)
      [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && alive=1
    done
    [ $alive -eq 0 ] && return 0
    sleep 0.2
  done
  for f in $(pidfiles); do
    pid=$(cat "$f" 2>/dev/null || true)
    [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null || true
  done
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# Waits until `$@` succeeds (up to $1 tenths of a second... in 0.2 s steps, count first).
wait_for() {
  local tries=$1
  shift
  for _ in $(seq 1 "$tries"); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  echo "timed out waiting for: $*" >&2
  return 1
}

if [ "$cmd" = stop ]; then stop; exit 0; fi
[ "$cmd" = start ] || { echo "unknown command $cmd" >&2; exit 64; }

for b in ceph-mon ceph-mgr ceph-osd radosgw radosgw-admin monmaptool ceph ceph-authtool python3 curl; do
  command -v "$b" >/dev/null || { echo "missing $b: apt-get install ceph-mon ceph-mgr ceph-osd radosgw" >&2; exit 2; }
done

mkdir -p "$dir"/{mon.a,mgr.x,run,log,rgw}
mon_port=$(free_port)
s3_port=${3:-$(free_port)}
fsid=$(cat /proc/sys/kernel/random/uuid)
access=rgw$(head -c 6 /dev/urandom | od -An -tx1 | tr -d ' \n')
secret=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
conf="$dir/ceph.conf"
cat > "$conf" <<CONF
[global]
fsid = $fsid
mon host = v2:127.0.0.1:$mon_port
public addr = 127.0.0.1
cluster addr = 127.0.0.1
auth cluster required = none
auth service required = none
auth client required = none
ms bind msgr1 = false
ms client mode = crc
ms mon client mode = crc
ms cluster mode = crc
ms service mode = crc
ms mon service mode = crc
ms mon cluster mode = crc
osd pool default pg autoscale mode = off
osd pool default pg num = 16
osd pool default pgp num = 16
mon max pg per osd = 1000
osd crush chooseleaf type = 0
mon data avail warn = 1
mon data avail crit = 0
mon allow pool delete = true
run dir = $dir/run
admin socket = $dir/run/\$name.asok
log file = $dir/log/\$name.log
pid file = $dir/run/\$name.pid
mon data = $dir/mon.\$id
mgr data = $dir/mgr.\$id
osd data = $dir/osd.\$id
keyring = $dir/keyring
osd objectstore = bluestore
bluestore block create = true
bluestore block size = ${RGW_EC_OSD_BYTES:-17179869184}
bluestore fsck on mount = false
osd memory target = 939524096
[client.rgw]
rgw frontends = beast endpoint=127.0.0.1:$s3_port
rgw data = $dir/rgw
rgw dns name = 127.0.0.1
CONF

ceph-authtool --create-keyring "$dir/keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null
monmaptool --create --addv a "[v2:127.0.0.1:$mon_port]" --fsid "$fsid" "$dir/monmap" >/dev/null
ceph-mon -c "$conf" --mkfs -i a --monmap "$dir/monmap" --keyring "$dir/keyring"
ceph-mon -c "$conf" -i a
trap 'stop' ERR
wait_for 150 ceph -c "$conf" --connect-timeout 5 mon stat
ceph-mgr -c "$conf" -i x
for i in 0 1 2 3; do
  mkdir -p "$dir/osd.$i"
  uuid=$(cat /proc/sys/kernel/random/uuid)
  ceph -c "$conf" osd new "$uuid" >/dev/null
  ceph-osd -c "$conf" -i "$i" --mkfs --osd-uuid "$uuid" >"$dir/log/osd.$i.mkfs" 2>&1
  ceph-osd -c "$conf" -i "$i" 2>>"$dir/log/osd.$i.start"
done
wait_for 600 sh -c "ceph -c '$conf' osd stat 2>/dev/null | grep -q '4 up'"
ceph -c "$conf" osd erasure-code-profile set ec22 k=2 m=2 crush-failure-domain=osd >/dev/null
ceph -c "$conf" osd pool create default.rgw.buckets.data 32 32 erasure ec22 >/dev/null 2>&1
ceph -c "$conf" osd pool application enable default.rgw.buckets.data rgw >/dev/null 2>&1
radosgw -c "$conf" -n client.rgw
wait_for 600 sh -c "curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$s3_port/ | grep -Eq '^(200|403)$'"
radosgw-admin -c "$conf" user create --uid=svc --display-name=svc --access-key="$access" --secret="$secret" >/dev/null
pids=$(for f in $(pidfiles); do printf '"%s":%s,' "$(basename "$f" .pid)" "$(cat "$f")"; done)
printf '{"endpoint":"http://127.0.0.1:%s","accessKey":"%s","secretKey":"%s","dir":"%s","pids":{%s}}\n' "$s3_port" "$access" "$secret" "$dir" "${pids%,}"
