#!/usr/bin/env bash
# Builds lethe-kms (local-kms, an emulator of the AWS KMS API, behind a small main of our own that binds one
# address) into a content-addressed cache directory and prints its absolute path as the last line of stdout;
# progress and errors go to stderr.
#
#   ${LETHE_CACHE_DIR:-$HOME/.cache/lethe}/kms/<hash>/lethe-kms
#
# <hash> covers go.mod, go.sum and main.go. It stands in for AWS KMS in the tests of the aws-kms KEK adapter: the
# same SDK, the same calls, the same key states. Idempotent and safe to run concurrently; needs Go and the Go module
# proxy (or a warm module cache); no cgo.
set -euo pipefail

die() { echo "stack/kms/build.sh: error: $*" >&2; exit 1; }

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
command -v go >/dev/null 2>&1 || die "no Go toolchain on PATH"
for f in go.mod go.sum main.go; do
  [ -f "$here/$f" ] || die "missing $here/$f"
done

hash=$(cd "$here" && cat go.mod go.sum main.go | sha256sum | cut -c1-16)
out_dir="${LETHE_CACHE_DIR:-${HOME:?HOME is not set}/.cache/lethe}/kms/$hash"
out="$out_dir/lethe-kms"
if [ -x "$out" ]; then
  echo "stack/kms/build.sh: up to date: $out" >&2
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

# Build beside the target, then rename: an interrupted build never leaves a truncated binary.
tmp="$out.tmp.$$"
trap 'rm -f "$tmp"' EXIT
start=$(date +%s)
(cd "$here" && GOFLAGS=-mod=readonly GOTOOLCHAIN=local CGO_ENABLED=0 GOWORK=off go build -trimpath -o "$tmp" . >&2) ||
  die "go build failed (see above); with an empty module cache the Go module proxy must be reachable"
mv -f "$tmp" "$out"
trap - EXIT
echo "stack/kms/build.sh: built in $(( $(date +%s) - start ))s" >&2
echo "$out"
