#!/usr/bin/env bash
# The project's test command: formatting, vet, the contract lint and the
# whole Go test suite with the race detector. Works on a fresh machine with
# Go and node/npm; installs whatever else the tests need.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt wants to change:"; echo "$unformatted"; exit 1
fi

echo "== go vet"
go vet ./...

echo "== lint openapi.yaml and sandbox/openapi.yaml"
# Pinned so that a new linter release cannot turn CI red on its own.
npx --yes @redocly/cli@2.77.0 lint --format=stylish openapi.yaml sandbox/openapi.yaml

echo "== chromium for the browser tests of the hosted pages"
# The hosted pages are tested end to end in Debian's headless Chromium
# (mockserver/browser_test.go). PAYMOCK_SKIP_BROWSER=1 skips those tests,
# and this install with them.
if [ "${PAYMOCK_SKIP_BROWSER:-}" != 1 ] && [ -z "${CHROMIUM:-}" ] && ! command -v chromium >/dev/null; then
  sudo=""
  if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null; then sudo="sudo"; fi
  $sudo apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi

echo "== go test -race"
go test -race -count=1 ./... "$@"
