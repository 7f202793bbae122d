#!/usr/bin/env bash
# Builds the lethe-ferretdb binary (FerretDB 1.24.2 embedded in a small main of
# our own) into a content-addressed cache directory and prints its absolute path
# as the last line of stdout. Everything else goes to stderr.
#
#   ${LETHE_CACHE_DIR:-$HOME/.cache/lethe}/ferretdb/<hash>/lethe-ferretdb
#
# <hash> covers go.mod, go.sum and main.go, so an unchanged source tree reuses
# the binary and a change builds a new one. Safe to run repeatedly and
# concurrently (a lock serialises builds). Needs Go >= 1.24 and the Go module
# proxy (or a warm module cache); no cgo, no C compiler.
set -euo pipefail

die() { echo "stack/ferretdb/build.sh: error: $*" >&2; exit 1; }

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

go_bin=${GO:-}
if [ -z "$go_bin" ]; then
  if command -v go >/dev/null 2>&1; then
    go_bin=$(command -v go)
  elif [ -x /usr/local/go/bin/go ]; then
    go_bin=/usr/local/go/bin/go
  else
    die "no Go toolchain found (set GO=/path/to/go or put go on PATH; Go >= 1.24 needed)"
  fi
fi

for f in go.mod go.sum main.go; do
  [ -f "$here/$f" ] || die "missing $here/$f"
done

hash=$(cd "$here" && cat go.mod go.sum main.go | sha256sum | cut -c1-16)
cache_root=${LETHE_CACHE_DIR:-${HOME:?HOME is not set}/.cache/lethe}
out_dir="$cache_root/ferretdb/$hash"
out="$out_dir/lethe-ferretdb"

if [ -x "$out" ]; then
  echo "stack/ferretdb/build.sh: up to date: $out" >&2
  echo "$out"
  exit 0
fi

mkdir -p "$out_dir" || die "cannot create $out_dir"
out_dir=$(cd "$out_dir" && pwd)
out="$out_dir/lethe-ferretdb"

# Serialise concurrent builds of the same hash.
exec 9>"$out_dir/.lock"
if command -v flock >/dev/null 2>&1; then
  flock 9 || die "cannot lock $out_dir/.lock"
fi

if [ -x "$out" ]; then
  echo "stack/ferretdb/build.sh: built by a concurrent run: $out" >&2
  echo "$out"
  exit 0
fi

tmp="$out.tmp.$$"
trap 'rm -f "$tmp"' EXIT

echo "stack/ferretdb/build.sh: building $out with $("$go_bin" version 2>/dev/null || echo "$go_bin")" >&2
start=$(date +%s)
if ! (
  cd "$here" &&
    GOFLAGS=-mod=readonly GOTOOLCHAIN=local CGO_ENABLED=0 GOWORK=off \
      "$go_bin" build -trimpath -o "$tmp" . >&2
); then
  die "go build failed (see above). With an empty module cache the Go module proxy must be reachable; go.sum must match go.mod (run 'go mod tidy' in $here after changing imports)."
fi
mv -f "$tmp" "$out"
trap - EXIT
echo "stack/ferretdb/build.sh: built in $(( $(date +%s) - start ))s" >&2
echo "$out"
