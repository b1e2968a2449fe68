# Shared by the Ceph RGW starters (rgw.sh: one memstore OSD; rgw-ec.sh: an EC 2+2 pool on four
# BlueStore OSDs). Sourced, not run. A starter calls, in order:
#
#   rgw_init "$@"                  # usage, `stop DIR` (exits), the ports, keys and paths below
#   rgw_require BIN...             # exit 2 naming the packages when one is missing
#   rgw_conf <<EXTRA ... EXTRA     # DIR/ceph.conf: the shared settings plus the starter's [global] lines
#   rgw_start_mon                  # the monitor, then `stop` on any later failure
#   ... its OSDs (rgw_start_osd N, rgw_wait_osds COUNT TRIES) and pools ...
#   rgw_start_gateway              # radosgw, up on S3_PORT, with an S3 user of its own
#   rgw_print_info [JSON_FIELDS]   # one JSON line: {"endpoint","accessKey","secretKey","dir"[,...]}
#
# Every daemon writes DIR/run/$name.pid; `stop` signals them by those files (TERM, then KILL after
# 20 s). The starter sets `packages`: the Debian packages to name when a binary is missing.

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

# Waits until `$@` succeeds: up to TRIES attempts (the first argument), 0.2 s apart.
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

rgw_init() {
  cmd=${1:-}
  dir=${2:-}
  [ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: $0 start|stop DIR [S3_PORT]" >&2; exit 64; }
  if [ "$cmd" = stop ]; then stop; exit 0; fi
  [ "$cmd" = start ] || { echo "unknown command $cmd" >&2; exit 64; }
  s3_port_arg=${3:-}
}

rgw_require() {
  for b in "$@" python3 curl; do
    command -v "$b" >/dev/null || { echo "missing $b: apt-get install $packages" >&2; exit 2; }
  done
}

# Picks the ports and the S3 user's keys, then writes DIR/ceph.conf: one monitor at 127.0.0.1, no
# cephx, messenger v2 only in crc mode, RGW's beast frontend on loopback; the starter's own [global]
# lines come on stdin.
rgw_conf() {
  mkdir -p "$dir"/{mon.a,run,log,rgw}
  mon_port=$(free_port)
  s3_port=${s3_port_arg:-$(free_port)}
  fsid=$(cat /proc/sys/kernel/random/uuid)
  access=rgw$(head -c 6 /dev/urandom | od -An -tx1 | tr -d ' \n')
  secret=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
  conf="$dir/ceph.conf"
  {
    cat <<CONF
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
osd pool default pg autoscale mode = off
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
keyring = $dir/keyring
CONF
    cat
    cat <<CONF
[client.rgw]
rgw frontends = beast endpoint=127.0.0.1:$s3_port
rgw data = $dir/rgw
rgw dns name = 127.0.0.1
CONF
  } >"$conf"
}

rgw_start_mon() {
  ceph-authtool --create-keyring "$dir/keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null
  monmaptool --create --addv a "[v2:127.0.0.1:$mon_port]" --fsid "$fsid" "$dir/monmap" >/dev/null
  ceph-mon -c "$conf" --mkfs -i a --monmap "$dir/monmap" --keyring "$dir/keyring"
  ceph-mon -c "$conf" -i a
  set -E  # the trap below also for failures inside the functions that follow
  trap 'stop' ERR
  wait_for 150 ceph -c "$conf" --connect-timeout 5 mon stat
}

# Creates and starts OSD $1 (its data in DIR/osd.$1, as the conf's objectstore says).
rgw_start_osd() {
  local i=$1 uuid
  mkdir -p "$dir/osd.$i"
  uuid=$(cat /proc/sys/kernel/random/uuid)
  ceph -c "$conf" osd new "$uuid" >/dev/null
  ceph-osd -c "$conf" -i "$i" --mkfs --osd-uuid "$uuid" >"$dir/log/osd.$i.mkfs" 2>&1
  ceph-osd -c "$conf" -i "$i" 2>>"$dir/log/osd.$i.start"
}

# Waits until $1 OSDs are up (up to $2 tries, 0.2 s apart).
rgw_wait_osds() {
  wait_for "$2" sh -c "ceph -c '$conf' osd stat 2>/dev/null | grep -q '$1 up'"
}

rgw_start_gateway() {
  radosgw -c "$conf" -n client.rgw
  wait_for 600 sh -c "curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$s3_port/ | grep -Eq '^(200|403)$'"
  radosgw-admin -c "$conf" user create --uid=svc --display-name=svc --access-key="$access" --secret="$secret" >/dev/null
}

rgw_print_info() {
  printf '{"endpoint":"http://127.0.0.1:%s","accessKey":"%s","secretKey":"%s","dir":"%s"%s}\n' "$s3_port" "$access" "$secret" "$dir" "${1:+,$1}"
}
