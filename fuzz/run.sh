#!/usr/bin/env bash
# Builds and runs the `.pce` loader fuzz target without cargo-fuzz installed:
# the same flags `cargo fuzz build` passes (SanitizerCoverage for libFuzzer,
# AddressSanitizer, debug assertions, overflow checks), on nightly. With
# cargo-fuzz available, `cargo +nightly fuzz run pce_load` is equivalent.
#
#   fuzz/run.sh [seconds = 600] [extra libFuzzer flags...]
#
# Seeds: `CUZK_FUZZ_SEEDS=fuzz/corpus/pce_load CARGO_TARGET_DIR=target/mem \
#   cargo test --release --no-default-features --test pce_file -- --ignored write_fuzz_seeds`
set -euo pipefail
cd "$(dirname "$0")"
secs=${1:-600}
shift || true
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$(pwd)/../target/fuzz}
RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cdebug-assertions -Coverflow-checks \
-Zsanitizer=address" \
  cargo +nightly build --release --target x86_64-unknown-linux-gnu --bin pce_load
mkdir -p corpus/pce_load artifacts/pce_load
exec nice -n 19 "$CARGO_TARGET_DIR/x86_64-unknown-linux-gnu/release/pce_load" \
  -max_total_time="$secs" -max_len=65536 -rss_limit_mb=2048 -malloc_limit_mb=2048 \
  -artifact_prefix=artifacts/pce_load/ "$@" corpus/pce_load
