#!/usr/bin/env bash
# Runs every test: Rust (cargo test), C (c-tests under ASan+LSan+UBSan), Go
# (go test -race with cgocheck2), plus rustfmt, clippy, the header and the
# link-line checks.
#
#   ./scripts/test.sh
#
# CUZK_CARGO_FLAGS passes cargo feature flags (default: the default features).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
# shellcheck source=scripts/ensure-tools.sh
source scripts/ensure-tools.sh
flags=${CUZK_CARGO_FLAGS:-}
t0=$SECONDS
step() { echo; echo "=== $* ($((SECONDS - t0))s)"; }

step "lint: rustfmt and clippy -D warnings"
scripts/lint.sh

step "header: include/cuzk.h is what the pinned cbindgen generates"
scripts/gen-header.sh --check

step "Rust: cargo test --release $flags"
# shellcheck disable=SC2086
cargo test --release $flags

step "C: build libcuzk.a and the link line"
# shellcheck disable=SC2086
scripts/build-lib.sh $flags
scripts/check-link-line.sh

# Fixtures for the C and Go tests: real 2 KiB C1 outputs (one per seal variant), 2 KiB WinningPoSt,
# WindowPoSt and SnapDeals inputs, and real parameters for their circuits
# (generated from their PCEs: about three minutes in all). Skipped by builds
# without the porep feature.
case " $flags " in
*" --no-default-features "*) ;;
*)
  step "fixtures: a 2 KiB PoRep C1 output and real partition parameters"
  fx=target/fixtures
  mkdir -p "$fx"
  bench=${CARGO_TARGET_DIR:-target}/release/cuzk-bench
  # shellcheck disable=SC2086
  [ -x "$bench" ] || cargo build --release $flags --bin cuzk-bench
  "$bench" c1 --sector 2KiB --out "$fx/porep-2k-c1.json"
  for seal in synthetic non-interactive; do
    "$bench" c1 --sector 2KiB --seal $seal --out "$fx/porep-2k-$seal-c1.json"
  done
  [ -s "$fx/porep-2k.params" ] || "$bench" params --circuit porep-2KiB --out "$fx/porep-2k.params"
  export CUZK_TEST_POREP_C1="$PWD/$fx/porep-2k-c1.json" CUZK_TEST_POREP_PARAMS="$PWD/$fx/porep-2k.params" CUZK_TEST_POREP_REAL=1
  step "fixtures: 2 KiB WinningPoSt, WindowPoSt and SnapDeals inputs and real parameters"
  for kind in winning-post window-post snap; do
    "$bench" fixture --circuit $kind-2KiB --out "$fx/$kind-2k.input"
    [ -s "$fx/$kind-2k.params" ] || "$bench" params --circuit $kind-2KiB --out "$fx/$kind-2k.params"
  done
  export CUZK_TEST_FIXTURES="$PWD/$fx"
  ;;
esac

step "C: c-tests under AddressSanitizer + LeakSanitizer + UBSan"
make -C c-tests test

# cgocheck2 (full checks of pointers passed to C) is a GOEXPERIMENT since Go 1.21.
goexp=cgocheck2
case "$(go env GOVERSION)" in go1.1[0-9]|go1.1[0-9].*|go1.20|go1.20.*) goexp= ;; esac
step "Go: go test -race${goexp:+ (GOEXPERIMENT=$goexp)}"
(cd go-bindings && go vet ./... && GOEXPERIMENT=$goexp go test -race -count=1 ./...)

step "all tests passed"
