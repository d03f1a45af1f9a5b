#!/usr/bin/env bash
# Builds and runs a fuzz target (`pce_load`: the `.pce` loader; `c1_parse`: the PoRep C1
# parser; `filecoin_input`: the PoSt and SnapDeals request parsers) without cargo-fuzz installed:
# the same flags `cargo fuzz build` passes (SanitizerCoverage for libFuzzer,
# AddressSanitizer, debug assertions, overflow checks), on nightly. With
# cargo-fuzz available, `cargo +nightly fuzz run TARGET` is equivalent.
#
#   fuzz/run.sh [seconds = 600] [extra libFuzzer flags...]      # pce_load
#   FUZZ_TARGET=c1_parse FUZZ_MAX_LEN=131072 fuzz/run.sh [seconds] [flags...]
#
# Seeds: `CUZK_FUZZ_SEEDS=fuzz/corpus/pce_load CARGO_TARGET_DIR=target/mem \
#   cargo test --release --no-default-features --test pce_file -- --ignored write_fuzz_seeds`;
# for c1_parse, a real C1: `cuzk-bench c1 --sector 2KiB --out fuzz/corpus/c1_parse/2k.json`;
# for filecoin_input, `cuzk-bench fixture --circuit winning-post-2KiB|window-post-2KiB|snap-2KiB`
# outputs with the circuit's byte (0, 1, 2) in front.
set -euo pipefail
cd "$(dirname "$0")"
secs=${1:-600}
target=${FUZZ_TARGET:-pce_load}
shift || true
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$(pwd)/../target/fuzz}
RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cdebug-assertions -Coverflow-checks \
-Zsanitizer=address" \
  cargo +nightly build --release --target x86_64-unknown-linux-gnu --bin "$target"
mkdir -p "corpus/$target" "artifacts/$target"
exec nice -n 19 "$CARGO_TARGET_DIR/x86_64-unknown-linux-gnu/release/$target" \
  -max_total_time="$secs" -max_len="${FUZZ_MAX_LEN:-65536}" -rss_limit_mb=2048 -malloc_limit_mb=2048 \
  -artifact_prefix="artifacts/$target/" "$@" "corpus/$target"
