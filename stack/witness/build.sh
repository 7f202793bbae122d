#!/usr/bin/env bash
# Builds the local stack's witness into a content-addressed cache directory and prints the launcher's absolute path
# as the last line of stdout; progress and errors go to stderr.
#
#   ${LETHE_CACHE_DIR:-$HOME/.cache/lethe}/witness/<hash>/{lethe-witness,litewitness,witnessctl}
#
# litewitness and witnessctl are filippo.io/torchwood's (the version go.mod pins); lethe-witness is our launcher
# (main.go, see README.md). <hash> covers go.mod, go.sum and main.go. Idempotent and safe to run concurrently; needs
# Go and the Go module proxy (or a warm module cache); no cgo (the SQLite under litewitness is pure Go).
set -euo pipefail

die() { echo "stack/witness/build.sh: error: $*" >&2; exit 1; }

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
command -v go >/dev/null 2>&1 || die "no Go toolchain on PATH"
for f in go.mod go.sum main.go; do
  [ -f "$here/$f" ] || die "missing $here/$f"
done

hash=$(cd "$here" && cat go.mod go.sum main.go | sha256sum | cut -c1-16)
out_dir="${LETHE_CACHE_DIR:-${HOME:?HOME is not set}/.cache/lethe}/witness/$hash"
out="$out_dir/lethe-witness"
if [ -x "$out" ]; then
  echo "stack/witness/build.sh: up to date: $out" >&2
  echo "$out"
  exit 0
fi

mkdir -p "$out_dir" || die "cannot create $out_dir"
exec 9>"$out_dir/.lock"
if command -v flock >/dev/null 2>&1; then flock 9 || die "cannot lock $out_dir/.lock"; fi
if [ -x "$out" ]; then
  echo "$out"
  exit 0
fi

# Build beside the targets, then rename; the launcher last, since its presence says the directory is complete.
tmp="$out_dir/.tmp.$$"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp"
start=$(date +%s)
export GOFLAGS=-mod=readonly GOTOOLCHAIN=local CGO_ENABLED=0 GOWORK=off
(cd "$here" &&
  go build -trimpath -o "$tmp/litewitness" filippo.io/torchwood/cmd/litewitness >&2 &&
  go build -trimpath -o "$tmp/witnessctl" filippo.io/torchwood/cmd/witnessctl >&2 &&
  go build -trimpath -o "$tmp/lethe-witness" . >&2) ||
  die "go build failed (see above); with an empty module cache the Go module proxy must be reachable"
mv -f "$tmp/litewitness" "$out_dir/litewitness"
mv -f "$tmp/witnessctl" "$out_dir/witnessctl"
mv -f "$tmp/lethe-witness" "$out"
echo "stack/witness/build.sh: built in $(( $(date +%s) - start ))s" >&2
echo "$out"
