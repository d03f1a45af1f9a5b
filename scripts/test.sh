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

# Fixtures for the C and Go tests: a real 2 KiB C1 output and dummy parameters of
# the PoRep partition circuit's shape (real ones take ~20 min of these cores;
# with dummy ones the proofs are checked not to verify); 2 KiB WinningPoSt
# and WindowPoSt inputs with real parameters (under a minute), and a SnapDeals
# input with dummy parameters (real ones for 1.7M constraints: too long). Skipped by
# builds without the porep feature.
case " $flags " in
*" --no-default-features "*) ;;
*)
  step "fixtures: a 2 KiB PoRep C1 output and dummy partition parameters"
  fx=target/fixtures
  mkdir -p "$fx"
  bench=${CARGO_TARGET_DIR:-target}/release/cuzk-bench
  # shellcheck disable=SC2086
  [ -x "$bench" ] || cargo build --release $flags --bin cuzk-bench
  "$bench" c1 --sector 2KiB --out "$fx/porep-2k-c1.json"
  [ -s "$fx/porep-2k-dummy.params" ] || "$bench" params --circuit porep-2KiB --dummy --out "$fx/porep-2k-dummy.params"
  export CUZK_TEST_POREP_C1="$PWD/$fx/porep-2k-c1.json" CUZK_TEST_POREP_PARAMS="$PWD/$fx/porep-2k-dummy.params"
  step "fixtures: 2 KiB WinningPoSt and WindowPoSt inputs and real parameters, SnapDeals with dummy ones"
  for kind in winning window; do
    "$bench" fixture --circuit $kind-post-2KiB --out "$fx/$kind-post-2k.input"
    [ -s "$fx/$kind-post-2k.params" ] || "$bench" params --circuit $kind-post-2KiB --out "$fx/$kind-post-2k.params"
  done
  "$bench" fixture --circuit snap-2KiB --out "$fx/snap-2k.input"
  [ -s "$fx/snap-2k-dummy.params" ] || "$bench" params --circuit snap-2KiB --dummy --out "$fx/snap-2k-dummy.params"
  export CUZK_TEST_POST_DIR="$PWD/$fx"
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
