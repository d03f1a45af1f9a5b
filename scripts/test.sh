#!/usr/bin/env bash
# Runs every test: Rust (cargo test), C (c-tests under ASan+LSan+UBSan), Go
# (go test -race with cgocheck2), plus the lint (shellcheck, gofmt, rustfmt,
# clippy), the header, rustdoc, the symbol and link-line checks of the
# installed library and the link-beside programs. Prints each step's
# duration when it ends and a table of them at the end (also on a failure).
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
name=""  # the step under way
began=0
took=()  # "seconds name" of each step ended
# step NAME WHAT: ends the step under way (printing its duration), starts NAME.
step() {
  end_step
  name=$1
  began=$SECONDS
  echo
  echo "=== $name: $2 ($((began - t0))s)"
}
end_step() {
  [ -n "$name" ] || return 0
  echo "=== step $name took $((SECONDS - began))s"
  took+=("$((SECONDS - began)) $name")
  name=""
}
summary() {
  local rc=$? row failed=$name
  end_step
  echo
  echo "=== steps (seconds)"
  for row in "${took[@]}"; do printf '%7s  %s\n' "${row%% *}" "${row#* }"; done
  printf '%7s  %s\n' "$((SECONDS - t0))" "total"
  if [ "$rc" != 0 ]; then echo "=== step ${failed:-?} FAILED (exit status $rc)"; fi
}
trap summary EXIT

step lint "shellcheck, gofmt, rustfmt and clippy -D warnings"
scripts/lint.sh

step header "include/cuzk.h is what the pinned cbindgen generates"
# On a fresh machine gen-header.sh installs cbindgen: built unoptimized, in a
# quarter of the time (about 30 s against 130 s on two cores); it still reads
# src/ffi/ in a tenth of a second.
CARGO_PROFILE_RELEASE_OPT_LEVEL=0 scripts/gen-header.sh --check

step rustdoc "cargo doc --no-deps --lib, warnings as errors"
# shellcheck disable=SC2086
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --release --lib $flags

# Fixtures for the Rust, C and Go tests, made once before them: real 2 KiB C1 outputs (one per
# seal variant), 2 KiB WinningPoSt, WindowPoSt and SnapDeals inputs, and real parameters for
# their circuits (generated from their PCEs: about three minutes in all; the Rust tests copy
# the parameters instead of generating their own). Skipped by builds without the porep feature.
case " $flags " in
*" --no-default-features "*) ;;
*)
  step porep-fixtures "2 KiB PoRep C1 outputs and real partition parameters"
  fx=target/fixtures
  mkdir -p "$fx"
  bench=${CARGO_TARGET_DIR:-target}/release/cuzk-bench
  # shellcheck disable=SC2086
  cargo build --release $flags --bin cuzk-bench
  "$bench" c1 --sector 2KiB --out "$fx/porep-2k-c1.json"
  for seal in synthetic non-interactive; do
    "$bench" c1 --sector 2KiB --seal $seal --out "$fx/porep-2k-$seal-c1.json"
  done
  [ -s "$fx/porep-2k.params" ] || "$bench" params --circuit porep-2KiB --out "$fx/porep-2k.params"
  export CUZK_TEST_POREP_C1="$PWD/$fx/porep-2k-c1.json" CUZK_TEST_POREP_PARAMS="$PWD/$fx/porep-2k.params" CUZK_TEST_POREP_REAL=1
  step post-snap-fixtures "2 KiB WinningPoSt, WindowPoSt and SnapDeals inputs and real parameters"
  for kind in winning-post window-post snap; do
    "$bench" fixture --circuit $kind-2KiB --out "$fx/$kind-2k.input"
    [ -s "$fx/$kind-2k.params" ] || "$bench" params --circuit $kind-2KiB --out "$fx/$kind-2k.params"
  done
  export CUZK_TEST_FIXTURES="$PWD/$fx"
  ;;
esac

step rust-tests "cargo test --release $flags"
# shellcheck disable=SC2086
cargo test --release $flags

# The C and Go tests link libcuzk.a as a host does: installed, through its cuzk.pc.
prefix=$PWD/target/cuzk-prefix
step c-lib "build libcuzk.a (only cuzk.h's functions global), install it into target/cuzk-prefix, check its link line"
# shellcheck disable=SC2086
scripts/install.sh --prefix "$prefix" $flags
scripts/check-symbols.sh "$prefix/lib/libcuzk.a"
scripts/check-link-line.sh "$prefix"

step c-tests "c-tests under AddressSanitizer + LeakSanitizer + UBSan, and c2 on a sparse 2 KiB C1"
make -C c-tests test PREFIX="$prefix"
# c2: a PoRep C2 through the C ABI as a host makes one, which filecoin-proofs' verify_seal must
# accept for its sector and refuse for the next (a sparse sector's C1, the fixture parameters).
if [ -n "${fx:-}" ]; then
  make -C c-tests c2 PREFIX="$prefix"
  sector=$("$bench" c1 --sector 2KiB --sparse --out "$fx/porep-2k-sparse-c1.json" | grep -o 'id [0-9]*' | cut -d' ' -f2)
  "target/c-tests/$(basename "$prefix")/c2" "$fx/porep-2k-sparse-c1.json" "$fx/porep-2k.pce" "$CUZK_TEST_POREP_PARAMS" 1000 "$sector"
fi

step link-beside "libcuzk.a and a second Rust staticlib (own runtime, blst 0.3.14) in one C and one Go program"
scripts/link-beside.sh "$prefix"

# cgocheck2 (full checks of pointers passed to C) is a GOEXPERIMENT since Go 1.21.
goexp=cgocheck2
case "$(go env GOVERSION)" in go1.1[0-9]|go1.1[0-9].*|go1.20|go1.20.*) goexp= ;; esac
step go-tests "go vet, go test -race${goexp:+ (GOEXPERIMENT=$goexp)}"
# Go caches a cgo package without asking pkg-config again (golang/go#24544): a
# define naming the installed header and link line recompiles it when they change.
# The tag linkbeside links package filecoin's test binary (every filecoin-ffi
# call proven and verified) beside the second Rust staticlib link-beside built.
stamp=$(cat "$prefix/lib/pkgconfig/cuzk.pc" "$prefix/include/cuzk.h" | cksum | cut -d' ' -f1)
(
  cd go-bindings
  export PKG_CONFIG_PATH="$prefix/lib/pkgconfig" CGO_CPPFLAGS="${CGO_CPPFLAGS:-} -DCUZK_INSTALL_STAMP=$stamp"
  go vet -tags linkbeside ./... && GOEXPERIMENT=$goexp go test -tags linkbeside -race -count=1 -timeout 25m ./...
)

end_step
echo
echo "=== all tests passed"
