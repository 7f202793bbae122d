#!/usr/bin/env bash
# Ensures the Temporal CLI (which embeds the dev server: `temporal server start-dev`) is built at
# the pinned version in ${LETHE_CACHE_DIR:-$HOME/.cache/lethe}/bin/temporal.
#
# Contract: idempotent; the absolute path of the binary is the LAST line on stdout; all progress
# and errors go to stderr; exit status is non-zero on failure.
#
# Environment:
#   LETHE_CACHE_DIR        cache root (default: $HOME/.cache/lethe)
#   TEMPORAL_CLI_VERSION   CLI version to build (default: 1.5.1; later tags carry a `replace`
#                          directive in go.mod, which `go install pkg@version` refuses)
set -euo pipefail

VERSION="${TEMPORAL_CLI_VERSION:-1.5.1}"
CACHE_DIR="${LETHE_CACHE_DIR:-$HOME/.cache/lethe}"
BIN_DIR="$CACHE_DIR/bin"
BIN="$BIN_DIR/temporal"
MODULE="github.com/temporalio/cli/cmd/temporal"

log() { printf 'build-cli: %s\n' "$*" >&2; }
die() { printf 'build-cli: error: %s\n' "$*" >&2; exit 1; }

# `temporal --version` prints "temporal version 1.5.1 (Server 1.29.1, UI 2.42.1)" only when the
# version is stamped at link time (as release builds and this script do); a plain `go install`
# leaves it at "0.0.0-DEV", and such a binary is rebuilt (a relink when the Go cache is warm).
has_version() {
  local bin="$1" out
  [[ -x "$bin" ]] || return 1
  out="$("$bin" --version 2>/dev/null)" || return 1
  [[ "$out" == *"version $VERSION "* || "$out" == *"version $VERSION" ]]
}

if has_version "$BIN"; then
  log "temporal $VERSION already present"
  echo "$BIN"
  exit 0
fi

command -v go >/dev/null 2>&1 || die "'go' is not on PATH; install Go (>= 1.25, as the CLI's go.mod requires) to build the Temporal CLI"

mkdir -p "$BIN_DIR" || die "cannot create $BIN_DIR"

# Serialise concurrent runs (two cold builds at once would double a ~3-4 minute compile).
if command -v flock >/dev/null 2>&1; then
  exec 9>"$BIN_DIR/.temporal-build.lock"
  if ! flock -n 9; then
    log "another build is running; waiting for it"
    flock 9
  fi
  if has_version "$BIN"; then
    log "temporal $VERSION built by a concurrent run"
    echo "$BIN"
    exit 0
  fi
fi

# Build into a private directory, then move into place, so that an interrupted build never
# leaves a truncated binary at $BIN.
TMP_BIN_DIR="$(mktemp -d "$BIN_DIR/.temporal-build.XXXXXX")" || die "cannot create a temporary directory in $BIN_DIR"
trap 'rm -rf "$TMP_BIN_DIR"' EXIT

log "building $MODULE@v$VERSION with $(go version) (a cold build takes several minutes on 2 cores)"
start=$SECONDS
if ! GOBIN="$TMP_BIN_DIR" go install \
      -ldflags "-X github.com/temporalio/cli/temporalcli.Version=$VERSION" \
      "$MODULE@v$VERSION" >&2; then
  die "go install $MODULE@v$VERSION failed (see the output above)"
fi
[[ -x "$TMP_BIN_DIR/temporal" ]] || die "go install succeeded but produced no 'temporal' binary"
has_version "$TMP_BIN_DIR/temporal" \
  || die "built binary does not report version $VERSION: $("$TMP_BIN_DIR/temporal" --version 2>&1 || true)"
mv -f "$TMP_BIN_DIR/temporal" "$BIN" || die "cannot move the binary to $BIN"
log "built in $((SECONDS - start)) s: $("$BIN" --version)"
echo "$BIN"
