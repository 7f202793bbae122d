#!/usr/bin/env bash
# Idempotent bootstrap of a running Lethe PostgreSQL cluster for FerretDB:
#
#   stack/postgres/bootstrap.sh <port> [<datadir>]
#
# Connects over TCP to 127.0.0.1:<port> as the postgres superuser (trust, as set
# up by prepare.sh), waits up to 30 s for the server, creates the database
# "ferretdb" if missing, sets plan_cache_mode = force_custom_plan on it and
# applies bootstrap.sql there (GIN companion event triggers). <datadir> is
# optional and only used to name the log file in error messages.
# Env: PG_BIN (default /usr/lib/postgresql/15/bin), LETHE_PG_DB (default ferretdb).
set -euo pipefail

die() { echo "stack/postgres/bootstrap.sh: error: $*" >&2; exit 1; }

[ $# -ge 1 ] && [ $# -le 2 ] || die "usage: $0 <port> [<datadir>]"
port=$1
datadir=${2:-}
case $port in ''|*[!0-9]*) die "port must be a number, got '$port'" ;; esac

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
db=${LETHE_PG_DB:-ferretdb}
case $db in ''|*[!a-z0-9_]*) die "LETHE_PG_DB must match [a-z0-9_]+, got '$db'" ;; esac
[ -x "$PG_BIN/psql" ] || die "$PG_BIN/psql not found"

conn=(-h 127.0.0.1 -p "$port" -U postgres)
psql_() { PGCONNECT_TIMEOUT=5 "$PG_BIN/psql" "${conn[@]}" -X -q -v ON_ERROR_STOP=1 "$@"; }

ready=
for _ in $(seq 1 60); do
  if "$PG_BIN/pg_isready" "${conn[@]}" -d postgres -q; then ready=1; break; fi
  sleep 0.5
done
[ -n "$ready" ] || die "no PostgreSQL accepting connections on 127.0.0.1:$port after 30 s${datadir:+ (see the pg_ctl log for $datadir)}"

db_exists() { psql_ -d postgres -tA -c "SELECT 1 FROM pg_database WHERE datname = '$db'" | grep -qx 1; }
if ! db_exists; then
  # A concurrent run may win the race: accept "already exists".
  psql_ -d postgres -c "CREATE DATABASE $db" >/dev/null 2>&1 || db_exists || die "cannot create database $db"
fi

psql_ -d postgres -c "ALTER DATABASE $db SET plan_cache_mode = force_custom_plan" >/dev/null \
  || die "cannot set plan_cache_mode on $db"

out=$(psql_ -d "$db" -tA -f "$here/bootstrap.sql" 2>&1) || die "bootstrap.sql failed: $out"
# bootstrap.sql deleted the value statistics ANALYZE had taken; rewrite the catalog's file so their dead
# versions are gone from disk too (VACUUM cannot run inside bootstrap.sql's transaction).
psql_ -d "$db" -c "VACUUM FULL pg_catalog.pg_statistic" >/dev/null || die "cannot compact pg_statistic in $db"
backfilled=$(printf '%s\n' "$out" | grep -E '^[0-9]+$' | tail -n1)
echo "stack/postgres/bootstrap.sh: database $db ready on 127.0.0.1:$port (GIN companion trigger installed; ${backfilled:-0} backfilled)" >&2
