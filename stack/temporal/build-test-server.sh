#!/usr/bin/env bash
# Ensures the Temporal time-skipping test server (io.temporal:temporal-testing, a JVM program)
# is resolved from Maven Central into
#   ${LETHE_CACHE_DIR:-$HOME/.cache/lethe}/temporal-test-server/<version>/lib/
# with an executable wrapper next to it:
#   ${LETHE_CACHE_DIR:-$HOME/.cache/lethe}/temporal-test-server/<version>/temporal-test-server
# The wrapper takes the test server's own arguments (`temporal-test-server <port>`), which is what
# TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path',
# path } } }) passes.
#
# It also records a class-data-sharing archive (AppCDS, temporal-test-server.jsa) from one
# start of the server, which the wrapper uses when present: it cuts JVM start-up by more than
# half. This matters because the TypeScript SDK gives the test server about 5 s to answer and
# does not make that configurable. The archive is optional: if it cannot be made, or does not
# match the JVM in use, the server starts without it.
#
# Contract: idempotent (a stamp file marks a complete install); the absolute path of the wrapper
# is the LAST line on stdout; all progress and errors go to stderr; exit status is non-zero on
# failure.
#
# Environment:
#   LETHE_CACHE_DIR               cache root (default: $HOME/.cache/lethe)
#   TEMPORAL_TEST_SERVER_VERSION  io.temporal:temporal-testing version (default: 1.38.0)
set -euo pipefail

VERSION="${TEMPORAL_TEST_SERVER_VERSION:-1.38.0}"
CACHE_DIR="${LETHE_CACHE_DIR:-$HOME/.cache/lethe}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
POM="$HERE/test-server/pom.xml"
BASE="$CACHE_DIR/temporal-test-server"
DEST="$BASE/$VERSION"
WRAPPER="$DEST/temporal-test-server"
JSA="$DEST/temporal-test-server.jsa"
STAMP="$DEST/.complete"
MAIN_CLASS="io.temporal.testserver.TestServer"

log() { printf 'build-test-server: %s\n' "$*" >&2; }
die() { printf 'build-test-server: error: %s\n' "$*" >&2; exit 1; }

is_complete() { [[ -f "$STAMP" && -x "$WRAPPER" ]]; }

if is_complete; then
  log "temporal-testing $VERSION already present"
  echo "$WRAPPER"
  exit 0
fi

if [[ -n "${JAVA_HOME:-}" ]]; then JAVA="$JAVA_HOME/bin/java"; else JAVA=java; fi
command -v "$JAVA" >/dev/null 2>&1 || die "'$JAVA' not found (Java 17 is expected)"
command -v mvn >/dev/null 2>&1 || die "'mvn' is not on PATH (Maven 3.8+ is expected)"
[[ -f "$POM" ]] || die "missing $POM"

mkdir -p "$BASE" || die "cannot create $BASE"

if command -v flock >/dev/null 2>&1; then
  exec 9>"$BASE/.lock"
  flock 9
  if is_complete; then
    log "temporal-testing $VERSION installed by a concurrent run"
    echo "$WRAPPER"
    exit 0
  fi
fi

# Resolve into a private directory, then rename into place; the stamp is written last, so a
# half-finished install never looks complete.
TMP="$(mktemp -d "$BASE/.$VERSION.XXXXXX")" || die "cannot create a temporary directory in $BASE"
trap 'rm -rf "$TMP"' EXIT
chmod 755 "$TMP"

log "resolving io.temporal:temporal-testing:$VERSION and its runtime dependencies"
start=$SECONDS
# mvn writes its messages to stdout: send them to stderr, without the bare colour-reset codes
# that Maven 3.8 prints even in batch mode (pipefail keeps mvn's exit status).
if ! mvn -B -q -Dstyle.color=never -f "$POM" \
      -Dtemporal.version="$VERSION" \
      -DincludeScope=runtime \
      -DoutputDirectory="$TMP/lib" \
      dependency:copy-dependencies 2>&1 | sed 's/\x1b\[[0-9;]*m//g' >&2; then
  die "mvn dependency:copy-dependencies failed for io.temporal:temporal-testing:$VERSION (see above)"
fi

shopt -s nullglob
jars=("$TMP"/lib/*.jar)
shopt -u nullglob
(( ${#jars[@]} > 0 )) || die "no jars were copied to $TMP/lib"
# Entry names in a jar's central directory are stored uncompressed, so grep finds the class.
grep -l -a -F "${MAIN_CLASS//.//}.class" "${jars[@]}" >/dev/null \
  || die "$MAIN_CLASS is not in the resolved jars"

# The wrapper names absolute paths under $DEST (the directory is renamed before first use).
cat >"$TMP/temporal-test-server" <<EOF
#!/bin/sh
# Temporal time-skipping test server (io.temporal:temporal-testing:$VERSION).
# Usage: temporal-test-server <port> [--enable-time-skipping]
# It listens on every interface (the test server has no bind-address option).
# Extra JVM options can be given in TEMPORAL_TEST_SERVER_JAVA_OPTS.
lib='$DEST/lib'
jsa='$JSA'
if [ -n "\${JAVA_HOME:-}" ]; then java="\$JAVA_HOME/bin/java"; else java=java; fi
if [ -f "\$jsa" ]; then
  # Class-data-sharing archive recorded at install time; silently unused if it does not match.
  set -- -XX:SharedArchiveFile="\$jsa" -Xlog:cds=off -Xlog:cds+dynamic=off \\
    -cp "\$lib/*" $MAIN_CLASS "\$@"
else
  set -- -cp "\$lib/*" $MAIN_CLASS "\$@"
fi
exec "\$java" \${TEMPORAL_TEST_SERVER_JAVA_OPTS:-} "\$@"
EOF
chmod +x "$TMP/temporal-test-server"

rm -rf "$DEST"
mv "$TMP" "$DEST" || die "cannot move $TMP to $DEST"
trap - EXIT
log "installed ${#jars[@]} jars in $((SECONDS - start)) s"

# Record the AppCDS archive: start the server once (with the final classpath, which the archive
# records) until it accepts connections, then stop it; the JVM writes the archive on exit.
record_cds_archive() {
  local port="" i pid
  for i in $(seq 1 50); do
    port=$(( 20000 + RANDOM % 40000 ))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
    port=""
  done
  [[ -n "$port" ]] || return 1
  rm -f "$JSA" "$JSA.tmp"
  "$JAVA" -XX:ArchiveClassesAtExit="$JSA.tmp" -Xlog:cds=off -Xlog:cds+dynamic=off \
    -cp "$DEST/lib/*" "$MAIN_CLASS" "$port" >/dev/null 2>&1 &
  pid=$!
  for i in $(seq 1 1200); do   # up to 120 s on a loaded machine
    kill -0 "$pid" 2>/dev/null || { wait "$pid" || true; return 1; }
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
    sleep 0.1
  done
  kill -TERM "$pid" 2>/dev/null || true
  wait "$pid" || true
  [[ -s "$JSA.tmp" ]] || return 1
  mv -f "$JSA.tmp" "$JSA"
}
cds_start=$SECONDS
if record_cds_archive; then
  log "recorded a class-data-sharing archive in $((SECONDS - cds_start)) s"
else
  rm -f "$JSA" "$JSA.tmp"
  log "warning: could not record a class-data-sharing archive; the server will start without it"
fi

printf 'io.temporal:temporal-testing:%s\njars=%s\n' "$VERSION" "${#jars[@]}" >"$STAMP"
echo "$WRAPPER"
