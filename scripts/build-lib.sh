#!/usr/bin/env bash
# Builds libcuzk.a (release) and stages it, with the native libraries it needs,
# where the C tests, the demo and the Go bindings link it from:
#   target/cuzk-lib/libcuzk.a
#   target/cuzk-lib/native-static-libs.txt   (rustc's --print native-static-libs)
#
#   scripts/build-lib.sh                         # default features less `oracles` (porep)
#   scripts/build-lib.sh --no-default-features   # any cargo feature flags
#   scripts/build-lib.sh --features cuda         # after: source scripts/cuda-env.sh
#
# The library a host links carries no test oracles (feature `oracles`, on by
# default for the tests and cuzk-bench): unless the flags say
# --no-default-features, they are the default features without it.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"
stage="$root/target/cuzk-lib"
mkdir -p "$stage"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# The link line is printed by rustc when it links the staticlib; cargo replays
# it from its cache when nothing changed.
case " $* " in
*" --no-default-features "*) features=("$@") ;;
*) features=(--no-default-features --features porep "$@") ;;
esac
cargo rustc --release --lib --crate-type staticlib "${features[@]}" -- --print native-static-libs 2>"$log" || { cat "$log" >&2; exit 1; }
grep -v 'native-static-libs' "$log" | grep -vE '^\s*$' >&2 || true
libs=$(sed -n 's/.*native-static-libs: //p' "$log" | tail -n 1)
if [ -z "$libs" ]; then
  echo "build-lib: rustc printed no native-static-libs line" >&2
  exit 1
fi
cp -f "$CARGO_TARGET_DIR/release/libcuzk.a" "$stage/libcuzk.a.tmp"
mv -f "$stage/libcuzk.a.tmp" "$stage/libcuzk.a"
echo "$libs" >"$stage/native-static-libs.txt"
echo "build-lib: $stage/libcuzk.a ($(du -h "$stage/libcuzk.a" | cut -f1)); link with: -lcuzk $libs" >&2
