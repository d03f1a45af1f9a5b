#!/usr/bin/env bash
# The mechanical checks: rustfmt (rustfmt.toml) and clippy with warnings as
# errors on every target, for the default features; with --cuda, clippy for
# the `cuda` feature too (compile only: nvcc 13.0 from PyPI, no GPU needed).
#
#   scripts/lint.sh           # fmt + clippy, default features
#   scripts/lint.sh --cuda    # and clippy --features cuda
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/ensure-tools.sh
source scripts/ensure-tools.sh
cargo fmt --check
cargo clippy --release --all-targets -- -D warnings
if [ "${1:-}" = "--cuda" ]; then
  (
    # shellcheck disable=SC1091
    source ../shared/tools/cuda-env.sh >/dev/null
    export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target/cuda}"
    cargo clippy --release --features cuda --all-targets -- -D warnings
  )
fi
echo "lint: clean"
