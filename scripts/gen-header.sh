#!/usr/bin/env bash
# Regenerates include/cuzk.h from src/ffi/ (only: cbindgen starts at
# src/ffi/mod.rs and follows its `mod`s) with the pinned cbindgen.
#   scripts/gen-header.sh          # write include/cuzk.h
#   scripts/gen-header.sh --check  # fail if the committed header is stale (CI)
# The cbindgen version is pinned: point releases change the output.
set -euo pipefail
cd "$(dirname "$0")/.."
CBINDGEN_VERSION=0.29.4
bin=.devkit/cbindgen/bin/cbindgen
if ! [ -x "$bin" ] || [ "$("$bin" --version)" != "cbindgen $CBINDGEN_VERSION" ]; then
  echo "gen-header: installing cbindgen $CBINDGEN_VERSION into .devkit/cbindgen" >&2
  cargo install cbindgen --version "=$CBINDGEN_VERSION" --locked --root .devkit/cbindgen >&2
fi
out=include/cuzk.h
if [ "${1:-}" = "--check" ]; then
  tmp=$(mktemp)
  trap 'rm -f "$tmp"' EXIT
  "$bin" --config cbindgen.toml --output "$tmp" --quiet src/ffi/mod.rs
  if ! diff -u "$out" "$tmp"; then
    echo "gen-header: $out is stale: run scripts/gen-header.sh and commit it" >&2
    exit 1
  fi
  echo "gen-header: $out is up to date (cbindgen $CBINDGEN_VERSION)"
else
  mkdir -p include
  "$bin" --config cbindgen.toml --output "$out" --quiet src/ffi/mod.rs
  echo "gen-header: wrote $out"
fi
