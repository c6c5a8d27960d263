#!/usr/bin/env bash
# Makes sure PostgreSQL's server programs are installed, for the tests that
# start a throwaway database (internal/pgtest). Installs Debian's
# postgresql package with apt when initdb is missing; does nothing when it
# is there, when PAYMOCK_POSTGRES_URL names a server to use instead, or
# when PAYMOCK_SKIP_POSTGRES=1 skips those tests.
set -euo pipefail

if [ "${PAYMOCK_SKIP_POSTGRES:-}" = 1 ] || [ -n "${PAYMOCK_POSTGRES_URL:-}" ]; then
  exit 0
fi
# Debian keeps initdb out of PATH, under /usr/lib/postgresql/<version>/bin.
if compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || command -v initdb >/dev/null; then
  exit 0
fi
if ! command -v apt-get >/dev/null; then
  echo "PostgreSQL is missing and this is not a Debian-like system: install PostgreSQL's server," >&2
  echo "set PAYMOCK_POSTGRES_URL to a server, or PAYMOCK_SKIP_POSTGRES=1 to skip its tests." >&2
  exit 1
fi
sudo=""
if [ "$(id -u)" != 0 ]; then
  if ! command -v sudo >/dev/null; then
    echo "PostgreSQL is missing; installing it needs root (or sudo): apt-get install postgresql" >&2
    exit 1
  fi
  sudo="sudo"
fi
echo "installing postgresql with apt-get"
$sudo apt-get update -qq
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
