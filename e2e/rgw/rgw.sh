#!/usr/bin/env bash
# A Ceph RGW (S3) on loopback from Debian's packages (ceph-mon ceph-osd radosgw), for tests and
# benchmarks that need a real non-svc S3 service. One monitor, one OSD on memstore (RAM, sized by
# RGW_MEMSTORE_BYTES, default 2 GiB), no manager (nothing here needs one), cephx off, messenger v2
# in crc mode; everything lives in DIR, on ports of its own.
#
#   e2e/rgw/rgw.sh start DIR [S3_PORT]   # prints one JSON line: {"endpoint","accessKey","secretKey","dir"}
#   e2e/rgw/rgw.sh stop DIR              # stops the daemons started for DIR (by their pid files)
#
# About 20-40 s to start on 2 cores. Logs in DIR/log. Exit 2 when the packages are missing.
set -euo pipefail

cmd=${1:-}
dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: $0 start|stop DIR [S3_PORT]" >&2; exit 64; }

stop() {
  for f in "$dir"/run/*.pid; do
    [ -e "$f" ] || continue
    pid=$(cat "$f" 2>/dev/null || true)
    [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  done
  # radosgw writes no pid file in foreground-less mode on every version: the one we recorded.
  [ -e "$dir/run/rgw.pid.own" ] && kill "$(cat "$dir/run/rgw.pid.own")" 2>/dev/null || true
  for _ in $(seq 1 50); do
    alive=0
    for f in "$dir"/run/*.pid "$dir/run/rgw.pid.own"; do
      [ -e "$f" ] || continue
      pid=$(cat "$f" 2>/dev/null || true)
      [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && alive=1
    done
    [ $alive -eq 0 ] && return 0
    sleep 0.2
  done
  for f in "$dir"/run/*.pid "$dir/run/rgw.pid.own"; do
    [ -e "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null || true
  done
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

if [ "$cmd" = stop ]; then stop; exit 0; fi
[ "$cmd" = start ] || { echo "unknown command $cmd" >&2; exit 64; }

for b in ceph-mon ceph-osd radosgw radosgw-admin monmaptool ceph; do
  command -v "$b" >/dev/null || { echo "missing $b: apt-get install ceph-mon ceph-osd radosgw" >&2; exit 2; }
done

mkdir -p "$dir"/{mon.a,osd.0,run,log,rgw}
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
osd pool default size = 1
osd pool default min size = 1
mon allow pool size one = true
mon warn on pool no redundancy = false
osd pool default pg autoscale mode = off
osd pool default pg num = 8
osd pool default pgp num = 8
mon max pg per osd = 1000
osd crush chooseleaf type = 0
mon data avail warn = 1
mon data avail crit = 0
run dir = $dir/run
admin socket = $dir/run/\$name.asok
log file = $dir/log/\$name.log
pid file = $dir/run/\$name.pid
mon data = $dir/mon.\$id
osd data = $dir/osd.\$id
osd objectstore = memstore
memstore device bytes = ${RGW_MEMSTORE_BYTES:-2147483648}
keyring = $dir/keyring
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
for _ in $(seq 1 100); do ceph -c "$conf" --connect-timeout 5 mon stat >/dev/null 2>&1 && break; sleep 0.2; done
uuid=$(cat /proc/sys/kernel/random/uuid)
ceph -c "$conf" osd new "$uuid" >/dev/null
ceph-osd -c "$conf" -i 0 --mkfs --osd-uuid "$uuid" >/dev/null 2>&1
ceph-osd -c "$conf" -i 0
for _ in $(seq 1 150); do ceph -c "$conf" osd stat 2>/dev/null | grep -q '1 up' && break; sleep 0.2; done
radosgw -c "$conf" -n client.rgw
pgrep -n -f "radosgw -c $conf" > "$dir/run/rgw.pid.own" || true
for _ in $(seq 1 300); do
  code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$s3_port/" || true)
  [ "$code" = 200 ] || [ "$code" = 403 ] && break
  sleep 0.2
done
radosgw-admin -c "$conf" user create --uid=svc --display-name=svc --access-key="$access" --secret="$secret" >/dev/null
printf '{"endpoint":"http://127.0.0.1:%s","accessKey":"%s","secretKey":"%s","dir":"%s"}\n' "$s3_port" "$access" "$secret" "$dir"
