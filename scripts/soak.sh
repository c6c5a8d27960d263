#!/usr/bin/env bash
# scripts/soak.sh MINUTES [paymock-soak flags...]
#
# Soaks one paymock server the way a fleet of CI jobs uses a shared
# sandbox: builds the binary, runs it on loopback with a real clock,
# metrics on and webhooks going to a receiver that fails a third of its
# deliveries, and drives it with many merchants creating, completing,
# failing and letting payments expire, each resetting its sandbox every
# few hundred payments. Prints a row of /metrics figures each minute and
# exits non-zero on any 5xx, on memory or goroutines still growing over
# the second half, or on any webhook event unaccounted for.
# cmd/paymock-soak says exactly what is checked.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -lt 1 ] || ! [[ "$1" =~ ^[0-9]+([.][0-9]+)?$ ]]; then
  echo "usage: scripts/soak.sh MINUTES [paymock-soak flags...]" >&2
  exit 2
fi
minutes="$1"; shift

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "== building paymock and paymock-soak"
go build -o "$work/paymock" ./cmd/paymock
go build -o "$work/paymock-soak" ./cmd/paymock-soak
echo "== soaking for $minutes minutes"
"$work/paymock-soak" --paymock "$work/paymock" --minutes "$minutes" "$@"
