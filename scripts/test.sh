#!/usr/bin/env bash
# Runs every test: Rust (cargo test), C (c-tests under ASan+LSan+UBSan), Go
# (go test -race with cgocheck2), plus the header and link-line checks.
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

step "header: include/cuzk.h is what the pinned cbindgen generates"
scripts/gen-header.sh --check

step "Rust: cargo test --release $flags"
# shellcheck disable=SC2086
cargo test --release $flags

step "C: build libcuzk.a and the link line"
# shellcheck disable=SC2086
scripts/build-lib.sh $flags
scripts/check-link-line.sh

step "C: c-tests under AddressSanitizer + LeakSanitizer + UBSan"
make -C c-tests test

# cgocheck2 (full checks of pointers passed to C) is a GOEXPERIMENT since Go 1.21.
goexp=cgocheck2
case "$(go env GOVERSION)" in go1.1[0-9]|go1.1[0-9].*|go1.20|go1.20.*) goexp= ;; esac
step "Go: go test -race${goexp:+ (GOEXPERIMENT=$goexp)}"
(cd go-bindings && go vet ./... && GOEXPERIMENT=$goexp go test -race -count=1 ./...)

step "all tests passed"
