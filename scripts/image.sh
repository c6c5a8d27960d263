#!/usr/bin/env bash
# Builds paymock's image from the Dockerfile and prints its tag (the last
# line of output; everything else goes to stderr).
#
#   scripts/image.sh                  # builds paymock:dev
#   PAYMOCK_IMAGE=paymock:ci VERSION=v1.2.3 scripts/image.sh
#   scripts/image.sh --bases          # prints BUILDER_IMAGE=... and RUNTIME_IMAGE=... only
#   scripts/image.sh --postgres       # prints the tag of a local PostgreSQL image
#
# The Dockerfile's bases are golang:1.26-bookworm and
# gcr.io/distroless/static-debian12:nonroot. Where a registry cannot be
# reached, this script makes local stand-ins once (kept by tag, made again
# only when missing) and passes them as the BUILDER_IMAGE and
# RUNTIME_IMAGE build arguments; the Dockerfile is the same either way:
#
#   paymock-local/golang:<go version>  this machine's Go toolchain
#       ($(go env GOROOT)) and Debian's busybox-static as /bin/sh
#   paymock-local/golang:<go version>-warm-<hash>  the builder: that, with
#       the modules of both go.sum files and a build cache of paymock and
#       the example shop, so the build downloads nothing and compiles only
#       what changed
#   paymock-local/static:nonroot-1     what distroless static holds: CA
#       certificates and tzdata from Debian's packages, /etc/passwd with
#       root, nobody and nonroot (65532), /tmp; no shell, no libc
#
# --postgres makes (once) and prints paymock-local/postgres:debian-1, a
# PostgreSQL image from Debian's packages, for the compose file and tests.
#
# PAYMOCK_LOCAL_BASES=1 always uses the local bases, =0 never; unset, they
# are used when the default bases are neither present nor pullable.
set -euo pipefail
cd "$(dirname "$0")/.."

builder_default=golang:1.26-bookworm
runtime_default=gcr.io/distroless/static-debian12:nonroot
# Bump the suffix when the recipe below changes, so machines make it again.
runtime_local=paymock-local/static:nonroot-1

log() { echo "image.sh: $*" >&2; }

scratch=() # folders and files made here, removed at exit
trap 'rm -rf "${scratch[@]}"' EXIT

# as_root runs a command as root, through sudo when not root.
as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

# have_image reports whether the daemon has the image, pulling it if it
# can; a machine with no registry answers a pull at once.
have_image() {
  docker image inspect "$1" >/dev/null 2>&1 || timeout 300 docker pull -q "$1" >/dev/null 2>&1
}

# ensure_packages installs Debian packages whose marker file is missing.
ensure_packages() {
  local missing=()
  while [ $# -gt 0 ]; do
    [ -e "$2" ] || missing+=("$1")
    shift 2
  done
  if [ ${#missing[@]} -gt 0 ]; then
    log "installing ${missing[*]}"
    as_root apt-get update -qq >&2
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
  fi
}

# import_dir makes an image of a folder: owned by root, sorted, with fixed
# times, so that the same files make the same layer.
import_dir() {
  local dir=$1 tag=$2
  shift 2
  tar -C "$dir" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -c . |
    docker import "$@" - "$tag" >/dev/null
}

make_builder() {
  local tag=$1 goroot stage
  goroot=$(go env GOROOT)
  ensure_packages busybox-static /bin/busybox ca-certificates /etc/ssl/certs/ca-certificates.crt
  stage=$(mktemp -d)
  scratch+=("$stage" "$stage.tar")
  mkdir -p "$stage"/{bin,etc/ssl/certs,tmp,root,go,usr/local}
  chmod 1777 "$stage/tmp"
  cp /bin/busybox "$stage/bin/busybox"
  # Every applet busybox has, as /bin/NAME (sh, ls, cat, ...).
  for applet in $(/bin/busybox --list); do
    [ -e "$stage/bin/$applet" ] || ln -s busybox "$stage/bin/$applet"
  done
  cp /etc/ssl/certs/ca-certificates.crt "$stage/etc/ssl/certs/"
  printf 'root:x:0:0:root:/root:/bin/sh\n' >"$stage/etc/passwd"
  printf 'root:x:0:\n' >"$stage/etc/group"
  printf 'hosts: files dns\n' >"$stage/etc/nsswitch.conf"
  cp -a "$goroot" "$stage/usr/local/go"
  import_dir "$stage" "$tag" \
    --change 'ENV PATH=/go/bin:/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV GOPATH=/go' \
    --change 'ENV GOTOOLCHAIN=local' \
    --change 'WORKDIR /go'
}

make_runtime() {
  local tag=$1 stage
  ensure_packages ca-certificates /etc/ssl/certs/ca-certificates.crt tzdata /usr/share/zoneinfo/UTC
  stage=$(mktemp -d)
  scratch+=("$stage" "$stage.tar")
  mkdir -p "$stage"/{etc/ssl/certs,tmp,root,home/nonroot,usr/share}
  chmod 1777 "$stage/tmp"
  chmod 700 "$stage/root" "$stage/home/nonroot"
  cp /etc/ssl/certs/ca-certificates.crt "$stage/etc/ssl/certs/"
  cp -a /usr/share/zoneinfo "$stage/usr/share/zoneinfo"
  # distroless's accounts: nonroot is 65532, with no login shell (there is none).
  cat >"$stage/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/sbin/nologin
nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin
nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin
EOF
  cat >"$stage/etc/group" <<'EOF'
root:x:0:
nobody:x:65534:
nonroot:x:65532:
EOF
  printf 'hosts: files dns\n' >"$stage/etc/nsswitch.conf"
  # Everything is root's but nonroot's home, added to the archive after.
  tar -C "$stage" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner \
    --exclude=./home/nonroot -cf "$stage.tar" .
  tar -C "$stage" --mtime=@0 --owner=65532 --group=65532 --numeric-owner --no-recursion \
    -rf "$stage.tar" ./home/nonroot
  docker import --change 'USER 65532:65532' --change 'WORKDIR /home/nonroot' "$stage.tar" "$tag" >/dev/null
}

# warm_builder makes $2 from the toolchain image $1: the modules of both
# go.sum files and a build cache of paymock and the example shop, so that
# a build compiles only what changed since, and downloads nothing. The
# modules come from this machine's module cache, served to the container
# as a file proxy: the container needs no network.
warm_builder() {
  local base=$1 tag=$2 modcache cid
  go mod download
  (cd examples/merchant-go && go mod download)
  modcache=$(go env GOMODCACHE)
  cid=$(docker create --network none -v "$PWD:/src:ro" -v "$modcache/cache/download:/proxy:ro" -w /src "$base" sh -ec '
    export GOPROXY=file:///proxy GOSUMDB=off GOFLAGS=-buildvcs=false CGO_ENABLED=0
    go mod download
    go build -trimpath -ldflags "-s -w" -o /tmp/paymock ./cmd/paymock
    cd examples/merchant-go
    go mod download
    go build -trimpath -ldflags "-s -w" -o /tmp/shop ./cmd/shop
    rm /tmp/paymock /tmp/shop')
  if ! docker start -a "$cid" >&2; then
    docker rm "$cid" >/dev/null
    return 1
  fi
  docker commit "$cid" "$tag" >/dev/null
  docker rm "$cid" >/dev/null
}

# bases sets builder and runtime to the images the build uses.
bases() {
  local local_bases=${PAYMOCK_LOCAL_BASES:-} toolchain sums old
  if [ -z "$local_bases" ]; then
    local_bases=1
    if have_image "$builder_default" && have_image "$runtime_default"; then local_bases=0; fi
  fi
  if [ "$local_bases" = 0 ]; then
    builder=$builder_default runtime=$runtime_default
    return
  fi
  toolchain="paymock-local/golang:$(go env GOVERSION)"
  sums=$(cat go.mod go.sum examples/merchant-go/go.mod examples/merchant-go/go.sum | sha256sum | cut -c1-12)
  builder="$toolchain-warm-$sums"
  runtime=$runtime_local
  if ! docker image inspect "$builder" >/dev/null 2>&1; then
    if ! docker image inspect "$toolchain" >/dev/null 2>&1; then
      log "making the toolchain image $toolchain"
      make_builder "$toolchain"
    fi
    log "making the builder base $builder (modules and build cache of these go.sum files)"
    warm_builder "$toolchain" "$builder"
    # Older warm bases, of other go.sum files, are of no more use.
    for old in $(docker image ls --format '{{.Repository}}:{{.Tag}}' paymock-local/golang | grep -- '-warm-' | grep -vx "$builder" || true); do
      docker rmi "$old" >/dev/null 2>&1 || true
    done
  fi
  if ! docker image inspect "$runtime" >/dev/null 2>&1; then
    log "making the runtime base $runtime"
    make_runtime "$runtime"
  fi
}

# make_postgres makes an image of the PostgreSQL server this machine has
# from Debian's packages: its programs, the libraries they load, and the
# entrypoint of scripts/postgres-image, which takes the official image's
# POSTGRES_USER, POSTGRES_PASSWORD and POSTGRES_DB; pg_isready is there for
# health checks, busybox is the shell.
make_postgres() {
  local tag=$1 pgbin pgdir stage lib
  ensure_packages busybox-static /bin/busybox tzdata /usr/share/zoneinfo/UTC
  PAYMOCK_SKIP_POSTGRES=0 PAYMOCK_POSTGRES_URL='' scripts/postgres.sh >&2
  pgbin=$(dirname "$(ls -d /usr/lib/postgresql/*/bin/initdb | sort -V | tail -1)")
  pgdir=$(dirname "$pgbin")
  stage=$(mktemp -d)
  scratch+=("$stage" "$stage.tar")
  mkdir -p "$stage"/{bin,etc,tmp,usr/share,var/run/postgresql,var/lib/postgresql/data}
  chmod 1777 "$stage/tmp"
  cp /bin/busybox "$stage/bin/busybox"
  for applet in sh cat echo printf rm mkdir ls; do ln -s busybox "$stage/bin/$applet"; done
  # Debian's paths, by which the programs find each other and their data.
  mkdir -p "$stage$pgdir"
  cp -a "$pgdir/." "$stage$pgdir/"
  rm -rf "$stage$pgdir/lib/bitcode" "$stage$pgdir"/lib/llvmjit*
  cp -a /usr/share/postgresql "$stage/usr/share/"
  cp -a /usr/share/zoneinfo "$stage/usr/share/zoneinfo"
  for f in "$stage$pgdir"/bin/* "$stage$pgdir"/lib/*.so; do
    ldd "$f" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\/.*ld-linux/ {print $1}'
  done | sort -u | while read -r lib; do
    mkdir -p "$stage$(dirname "$lib")"
    cp -L "$lib" "$stage$lib"
  done
  printf 'root:x:0:0:root:/root:/bin/sh\npostgres:x:999:999:PostgreSQL:/var/lib/postgresql:/bin/sh\n' >"$stage/etc/passwd"
  printf 'root:x:0:\npostgres:x:999:\n' >"$stage/etc/group"
  printf 'hosts: files dns\n' >"$stage/etc/nsswitch.conf"
  install -m 755 scripts/postgres-image/entrypoint.sh "$stage/entrypoint.sh"
  tar -C "$stage" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner \
    --exclude=./var/lib/postgresql --exclude=./var/run/postgresql -cf "$stage.tar" .
  tar -C "$stage" --sort=name --mtime=@0 --owner=999 --group=999 --numeric-owner \
    -rf "$stage.tar" ./var/lib/postgresql ./var/run/postgresql
  docker import \
    --change "ENV PATH=$pgbin:/bin" --change 'ENV PGDATA=/var/lib/postgresql/data' \
    --change 'ENV POSTGRES_USER=postgres' --change 'ENV POSTGRES_DB=postgres' \
    --change 'USER 999:999' --change 'EXPOSE 5432' \
    --change 'ENTRYPOINT ["/entrypoint.sh"]' "$stage.tar" "$tag" >/dev/null
}

if [ "${1:-}" = --postgres ]; then
  # Bump the suffix when the recipe above changes.
  tag=paymock-local/postgres:debian-1
  if ! docker image inspect "$tag" >/dev/null 2>&1; then
    log "making the PostgreSQL image $tag"
    make_postgres "$tag"
  fi
  echo "$tag"
  exit 0
fi

bases
if [ "${1:-}" = --bases ]; then
  echo "BUILDER_IMAGE=$builder"
  echo "RUNTIME_IMAGE=$runtime"
  exit 0
fi

tag=${PAYMOCK_IMAGE:-paymock:dev}
log "building $tag on $builder and $runtime"
docker build -t "$tag" \
  --build-arg "BUILDER_IMAGE=$builder" --build-arg "RUNTIME_IMAGE=$runtime" \
  --build-arg "GOPROXY=$(go env GOPROXY)" \
  --build-arg "VERSION=${VERSION:-dev}" . >&2
echo "$tag"
