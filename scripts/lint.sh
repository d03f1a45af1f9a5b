#!/usr/bin/env bash
# The mechanical checks: shellcheck on scripts/ and .ci/run, gofmt on the Go
# bindings, no import circles between the library's files
# (scripts/import-cycles.py), rustfmt (rustfmt.toml) and clippy with warnings
# as errors on every target, for the default features; with --cuda, clippy for
# the `cuda` feature too (compile only, no GPU needed: nvcc from
# scripts/cuda-env.sh).
#
#   scripts/lint.sh           # shellcheck, gofmt, import circles, rustfmt, clippy (default features)
#   scripts/lint.sh --cuda    # and clippy --features cuda
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/ensure-tools.sh
source scripts/ensure-tools.sh
shellcheck -x scripts/*.sh .ci/run
unformatted=$("$(go env GOROOT)/bin/gofmt" -l go-bindings tests/link-beside/go)
if [ -n "$unformatted" ]; then
  echo "lint: gofmt would change these files (run: gofmt -w on them):" >&2
  echo "$unformatted" >&2
  exit 1
fi
python3 scripts/import-cycles.py
cargo fmt --check
(cd tests/link-beside && cargo fmt --check)
cargo clippy --release --all-targets -- -D warnings
if [ "${1:-}" = "--cuda" ]; then
  (
    # shellcheck source=scripts/cuda-env.sh
    source scripts/cuda-env.sh
    cargo clippy --release --features cuda --all-targets -- -D warnings
  )
fi
echo "lint: clean"
