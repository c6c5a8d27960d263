#!/bin/sh
# The entrypoint of the local PostgreSQL image (scripts/image.sh --postgres):
# a first start makes the cluster and the database from POSTGRES_USER,
# POSTGRES_PASSWORD and POSTGRES_DB, as the official image does.
set -e
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  printf '%s\n' "$POSTGRES_PASSWORD" >/tmp/pwfile
  initdb -D "$PGDATA" -U "$POSTGRES_USER" --pwfile=/tmp/pwfile --auth-local=trust \
    --auth-host=scram-sha-256 --locale=C --encoding=UTF8 >/dev/null
  rm /tmp/pwfile
  printf "listen_addresses = '*'\njit = off\n" >>"$PGDATA/postgresql.conf"
  echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
  if [ "$POSTGRES_DB" != postgres ]; then
    echo "CREATE DATABASE \"$POSTGRES_DB\"" | postgres --single -D "$PGDATA" postgres >/dev/null
  fi
fi
exec postgres -D "$PGDATA" "$@"
