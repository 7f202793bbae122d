#!/usr/bin/env bash
# Prepares (idempotently) a PostgreSQL 15 cluster of Lethe's own for FerretDB.
#
#   stack/postgres/prepare.sh <datadir> <port>
#
# - creates <datadir> (owned by postgres, mode 0700) if missing and runs initdb
#   as the postgres user (UTF8, C locale) unless the directory already holds a
#   PostgreSQL 15 cluster;
# - (over)writes <datadir>/pg_hba.conf (trust on 127.0.0.1/32 over TCP, peer on
#   the Unix socket, nothing else) and <datadir>/lethe.conf, which
#   postgresql.conf includes: listen on 127.0.0.1:<port> only, Unix socket in
#   <datadir>, plan_cache_mode = force_custom_plan, small memory settings.
#
# It never starts or stops the server. Start/stop (as the orchestrator does):
#   runuser -u postgres -- /usr/lib/postgresql/15/bin/pg_ctl -D <datadir> -l <logfile> -w start
#   runuser -u postgres -- /usr/lib/postgresql/15/bin/pg_ctl -D <datadir> -w stop -m fast
# The postmaster pid is the first line of <datadir>/postmaster.pid.
# Run as root (or as postgres). Exits non-zero with a message on any problem.
set -euo pipefail
umask 022

die() { echo "stack/postgres/prepare.sh: error: $*" >&2; exit 1; }
note() { echo "stack/postgres/prepare.sh: $*" >&2; }

[ $# -eq 2 ] || die "usage: $0 <datadir> <port>"
datadir_arg=$1
port=$2

PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
[ -x "$PG_BIN/initdb" ] || die "$PG_BIN/initdb not found (PostgreSQL 15 server binaries; on Debian: apt-get install postgresql-15)"
[ -x "$PG_BIN/postgres" ] || die "$PG_BIN/postgres not found"

case $port in
  ''|*[!0-9]*) die "port must be a number, got '$port'" ;;
esac
[ "$port" -ge 1 ] && [ "$port" -le 65535 ] || die "port out of range: $port"

[ -n "$datadir_arg" ] || die "empty datadir"
case $datadir_arg in
  *"'"*|*'"'*|*$'\n'*) die "datadir must not contain quotes or newlines: $datadir_arg" ;;
esac
datadir=$(realpath -m -- "$datadir_arg")
[ "$datadir" != / ] || die "refusing to use / as datadir"

id postgres >/dev/null 2>&1 || die "there is no 'postgres' user (install the postgresql-15 package)"

as_pg() {
  if [ "$(id -un)" = postgres ]; then
    (cd / && "$@")
  elif [ "$(id -u)" -eq 0 ]; then
    (cd / && runuser -u postgres -- "$@")
  else
    die "run this as root (it switches to the postgres user with runuser) or as postgres"
  fi
}

# The postgres user must be able to traverse every directory down to <datadir>
# (a path under /root, mode 0700, is the usual trap). Check the deepest existing
# ancestor before creating anything.
ancestor=$datadir
while [ ! -e "$ancestor" ]; do ancestor=$(dirname -- "$ancestor"); done
[ -d "$ancestor" ] || die "$ancestor exists and is not a directory"
if ! as_pg sh -c 'cd -- "$1"' sh "$ancestor" 2>/dev/null; then
  die "the postgres user cannot traverse $ancestor (on the way to $datadir); PostgreSQL runs as postgres and cannot use a data directory there (e.g. under /root). Choose a datadir outside it, e.g. /var/tmp/lethe/pg or /tmp/lethe-pg"
fi

if [ ! -d "$datadir" ]; then
  mkdir -p -- "$datadir" || die "cannot create $datadir"
  note "created $datadir"
fi

if [ "$(id -u)" -eq 0 ]; then
  owner=$(stat -c %U -- "$datadir")
  if [ "$owner" != postgres ]; then
    if [ -e "$datadir/PG_VERSION" ] || [ -z "$(ls -A -- "$datadir")" ]; then
      chown -R postgres:postgres -- "$datadir" || die "cannot chown $datadir to postgres"
    else
      die "$datadir is not empty, not a PostgreSQL cluster and not owned by postgres; refusing to take it over"
    fi
  fi
fi
chmod 0700 -- "$datadir" 2>/dev/null || as_pg chmod 0700 "$datadir" || die "cannot chmod 0700 $datadir"

if ! as_pg sh -c 'cd -- "$1" && test -w . && test -x .' sh "$datadir"; then
  die "the postgres user cannot enter or write $datadir (check every directory on its path)"
fi

if [ -e "$datadir/PG_VERSION" ]; then
  v=$(cat -- "$datadir/PG_VERSION")
  [ "$v" = 15 ] || die "$datadir holds a PostgreSQL $v cluster, not 15"
  note "cluster already initialised in $datadir"
elif [ -n "$(ls -A -- "$datadir")" ]; then
  die "$datadir is not empty and holds no PostgreSQL cluster (no PG_VERSION); refusing to initdb there"
else
  note "initdb $datadir"
  as_pg "$PG_BIN/initdb" -D "$datadir" --username=postgres --encoding=UTF8 --locale=C \
    --auth-local=peer --auth-host=trust >&2 || die "initdb failed"
fi

write_pg_file() { # <path> ; content on stdin, written as postgres, mode 0600
  as_pg sh -c 'umask 077; cat > "$1.tmp" && mv -f "$1.tmp" "$1"' sh "$1" || die "cannot write $1"
}

write_pg_file "$datadir/pg_hba.conf" <<HBA
# Written by Lethe's stack/postgres/prepare.sh; rewritten on every run.
# TYPE  DATABASE  USER  ADDRESS        METHOD
local   all       all                  peer
host    all       all   127.0.0.1/32   trust
HBA

write_pg_file "$datadir/lethe.conf" <<CONF
# Written by Lethe's stack/postgres/prepare.sh; rewritten on every run.
# Included at the end of postgresql.conf, so these values win over it
# (ALTER SYSTEM values in postgresql.auto.conf still win over these).

# Reachable only from this machine; socket inside the data directory so it
# never collides with a system cluster's /var/run/postgresql socket.
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$datadir'
unix_socket_permissions = 0700

# FerretDB (pgx) uses prepared statements whose filters are
# "_jsonb->\$1 @> \$2"; only a custom plan sees the constant key and can use the
# expression (GIN) index on "_jsonb->'field'".
plan_cache_mode = force_custom_plan

# Modest resources: 2 cores shared with a JVM (Elasticsearch) and Temporal.
max_connections = 100            # FerretDB's pool opens up to 50
shared_buffers = 128MB
effective_cache_size = 1GB
work_mem = 8MB
maintenance_work_mem = 64MB      # GIN index builds
autovacuum_work_mem = 32MB
autovacuum_max_workers = 2
max_worker_processes = 4
max_parallel_workers = 2
max_parallel_workers_per_gather = 1
max_parallel_maintenance_workers = 1
jit = off
huge_pages = off
random_page_cost = 1.1
effective_io_concurrency = 100
min_wal_size = 80MB
max_wal_size = 1GB

# fsync and synchronous_commit stay on (defaults).
timezone = 'UTC'
log_timezone = 'UTC'
log_line_prefix = '%m [%p] %q%u@%d '
# Lethe claims moves and writes idempotently by inserting a unique key and treating a duplicate as
# "already done", so expected errors are frequent: log them without the statement or the DETAIL line,
# which would copy key values (ids, keyed fingerprints) into the log at every retry.
log_error_verbosity = terse
log_min_error_statement = panic
CONF

conf="$datadir/postgresql.conf"
[ -f "$conf" ] || die "$conf missing: the cluster looks broken"
if ! grep -qx "include_if_exists = 'lethe.conf'" "$conf"; then
  as_pg sh -c 'printf "\n# Lethe settings (stack/postgres/prepare.sh)\ninclude_if_exists = %s\n" "'"'lethe.conf'"'" >> "$1"' sh "$conf" \
    || die "cannot append the include to $conf"
fi

# Check the configuration parses and the values are the ones we wrote.
check=$(as_pg "$PG_BIN/postgres" -D "$datadir" -C port 2>&1) || true
if [ -e "$datadir/postmaster.pid" ]; then
  pid=$(head -n1 "$datadir/postmaster.pid")
  if kill -0 "$pid" 2>/dev/null; then
    note "server is running (pid $pid): restart it to apply changes to port/listen/socket settings"
  fi
elif [ "$check" != "$port" ]; then
  die "configuration check failed: postgres -C port gave: $check"
fi

note "ready: datadir=$datadir port=$port socket=$datadir/.s.PGSQL.$port pidfile=$datadir/postmaster.pid"
