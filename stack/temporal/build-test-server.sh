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

command -v java >/dev/null 2>&1 || [[ -n "${JAVA_HOME:-}" ]] || die "'java' is not on PATH (Java 17 is expected)"
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

# Resolve into a private directory, then rename into place: a half-finished download never
# looks complete.
TMP="$(mktemp -d "$BASE/.$VERSION.XXXXXX")" || die "cannot create a temporary directory in $BASE"
trap 'rm -rf "$TMP"' EXIT
chmod 755 "$TMP"

log "resolving io.temporal:temporal-testing:$VERSION and its runtime dependencies"
start=$SECONDS
# mvn writes its messages to stdout; keep stdout for the result line only.
if ! mvn -B -q -Dstyle.color=never -f "$POM" \
      -Dtemporal.version="$VERSION" \
      -DincludeScope=runtime \
      -DoutputDirectory="$TMP/lib" \
      dependency:copy-dependencies >&2; then
  die "mvn dependency:copy-dependencies failed for io.temporal:temporal-testing:$VERSION (see above)"
fi

shopt -s nullglob
jars=("$TMP"/lib/*.jar)
shopt -u nullglob
(( ${#jars[@]} > 0 )) || die "no jars were copied to $TMP/lib"
# Entry names in a jar's central directory are stored uncompressed, so grep finds the class.
grep -l -a -F "${MAIN_CLASS//.//}.class" "${jars[@]}" >/dev/null \
  || die "$MAIN_CLASS is not in the resolved jars"

cat >"$TMP/temporal-test-server" <<EOF
#!/bin/sh
# Temporal time-skipping test server (io.temporal:temporal-testing:$VERSION).
# Usage: temporal-test-server <port> [test server arguments]
# Extra JVM options can be given in TEMPORAL_TEST_SERVER_JAVA_OPTS.
if [ -n "\${JAVA_HOME:-}" ]; then java="\$JAVA_HOME/bin/java"; else java=java; fi
exec "\$java" \${TEMPORAL_TEST_SERVER_JAVA_OPTS:-} -cp "$DEST/lib/*" $MAIN_CLASS "\$@"
EOF
chmod +x "$TMP/temporal-test-server"
printf 'io.temporal:temporal-testing:%s\njars=%s\n' "$VERSION" "${#jars[@]}" >"$TMP/.complete"

rm -rf "$DEST"
mv "$TMP" "$DEST" || die "cannot move $TMP to $DEST"
trap - EXIT
log "installed ${#jars[@]} jars in $((SECONDS - start)) s"
echo "$WRAPPER"
