#!/usr/bin/env bash
# Builds libcuzk.a (release) and stages it, with the libraries it needs, where
# the C tests, the demo, scripts/install.sh and scripts/link-beside.sh take it
# from; CPU and CUDA builds apart, so a host never links the other one:
#   target/cuzk-lib/{cpu,cuda}/libcuzk.a
#   target/cuzk-lib/{cpu,cuda}/native-static-libs.txt   rustc's --print native-static-libs
#   target/cuzk-lib/{cpu,cuda}/libs.txt                 what a link line needs after -lcuzk
# and prints the stage folder on stdout (its one line there).
#
#   scripts/build-lib.sh                         # default features less `oracles` (porep)
#   scripts/build-lib.sh --no-default-features   # any cargo feature flags
#   scripts/build-lib.sh --features cuda         # finds nvcc through scripts/cuda-env.sh
#
# The library a host links carries no test oracles (feature `oracles`, on by
# default for the tests and cuzk-bench): unless the flags say
# --no-default-features, they are the default features without it.
#
# Its only global definitions are the functions include/cuzk.h declares: the
# staticlib's objects are linked into one relocatable object in which every
# other symbol (the Rust runtime, blst, sppark, filecoin-proofs, ...) is made
# local, so it links into one binary beside another Rust staticlib (another
# toolchain, another blst: scripts/link-beside.sh). Undefined references (libc,
# libgcc_s, libstdc++, the CUDA runtime) stay undefined: the link line names them.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"
variant=cpu
case " $* " in *[\ =,]cuda[\ ,]* | *" --all-features "*) variant=cuda ;; esac
cudart=""
if [ $variant = cuda ]; then
  # shellcheck source=scripts/cuda-env.sh
  source scripts/cuda-env.sh
  # The CUDA runtime the build linked: cuda-env.sh puts its folder on LIBRARY_PATH.
  IFS=: read -ra dirs <<<"${LIBRARY_PATH:-}"
  for d in "${dirs[@]}"; do
    if [ -z "$cudart" ] && [ -f "$d/libcudart_static.a" ]; then cudart=$d; fi
  done
  [ -n "$cudart" ] || { echo "build-lib: no libcudart_static.a on LIBRARY_PATH (scripts/cuda-env.sh)" >&2; exit 1; }
fi
stage="$root/target/cuzk-lib/$variant"
mkdir -p "$stage"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The link line is printed by rustc when it links the staticlib; cargo replays
# it from its cache when nothing changed.
case " $* " in
*" --no-default-features "*) features=("$@") ;;
*) features=(--no-default-features --features porep "$@") ;;
esac
cargo rustc --release --lib --crate-type staticlib "${features[@]}" -- --print native-static-libs 2>"$work/log" || { cat "$work/log" >&2; exit 1; }
grep -vE 'native-static-libs|link against the following native artifacts' "$work/log" | grep -vE '^\s*$' >&2 || true
libs=$(sed -n 's/.*native-static-libs: //p' "$work/log" | tail -n 1)
if [ -z "$libs" ]; then
  echo "build-lib: rustc printed no native-static-libs line" >&2
  exit 1
fi

# The exported names: the functions include/cuzk.h declares (not the CUDA
# code's own cuzk_* entries).
scripts/check-symbols.sh --exports >"$work/exports"
# One object; section groups (C++ templates and inline functions) dissolved, so
# that their symbols can be local and never merge with a host's copies.
ld -r --whole-archive --force-group-allocation "$CARGO_TARGET_DIR/release/libcuzk.a" -o "$work/cuzk-all.o"
# The standard library's embedded bitcode is excluded from every link anyway,
# and concatenated it is no module at all (LLVM's binutils plugin chokes on it).
# objcopy localizes globals and weak symbols but not C++'s STB_GNU_UNIQUE ones:
# they are made weak first (objcopy fails on an empty list).
readelf -sW "$work/cuzk-all.o" | awk '$5 == "UNIQUE" && $7 != "UND" { print $8 }' | sort -u >"$work/unique"
weaken=()
if [ -s "$work/unique" ]; then weaken=(--weaken-symbols="$work/unique"); fi
objcopy --remove-section=.llvmbc --remove-section=.llvmcmd "${weaken[@]}" "$work/cuzk-all.o" "$work/cuzk-weak.o"
objcopy --keep-global-symbols="$work/exports" "$work/cuzk-weak.o" "$work/cuzk.o"
rm -f "$work/libcuzk.a"
ar rcsD "$work/libcuzk.a" "$work/cuzk.o"

# What a link line needs after -lcuzk: the CUDA runtime's folder, then rustc's
# libraries, each once, at its last place (pkg-config keeps the same one).
# shellcheck disable=SC2086
after=$(printf '%s\n' $libs | tac | awk '!seen[$0]++' | tac | tr '\n' ' ')
after="${cudart:+-L$cudart }${after% }"
mv -f "$work/libcuzk.a" "$stage/libcuzk.a"
echo "$libs" >"$stage/native-static-libs.txt"
echo "$after" >"$stage/libs.txt"
scripts/check-symbols.sh "$stage/libcuzk.a" >&2
echo "build-lib: $stage/libcuzk.a ($(du -h "$stage/libcuzk.a" | cut -f1)); link with: -L$stage -lcuzk $after" >&2
echo "$stage"
