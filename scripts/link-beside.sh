#!/usr/bin/env bash
# Links libcuzk.a as a node does, beside filecoin-ffi's Rust staticlib: an
# installed prefix's cuzk.pc (scripts/install.sh) and a second Rust staticlib
# with its own Rust runtime and filecoin-ffi's blst 0.3.14 (tests/link-beside,
# its own lock file and target directory) into one C program (both link
# orders) and one Go program (package cuzk through pkg-config); runs them, and
# checks that each program holds two copies of the Rust runtime's personality
# routine and of blst, one per library (with only one Rust toolchain here,
# that stands in for a toolchain's runtime clashing with another's).
#
#   scripts/link-beside.sh [--link-only] [PREFIX]   # PREFIX: target/cuzk-prefix
#
# --link-only builds and checks the programs without running them (a CUDA
# build on a host without a GPU driver: scripts/gpu-run.sh --check).
set -euo pipefail
run=1
if [ "${1:-}" = "--link-only" ]; then run=0; shift; fi
root=$(cd "$(dirname "$0")/.." && pwd)
prefix=${1:-$root/target/cuzk-prefix}
[ -f "$prefix/lib/pkgconfig/cuzk.pc" ] ||
  { echo "link-beside: no $prefix/lib/pkgconfig/cuzk.pc: run scripts/install.sh --prefix $prefix first" >&2; exit 1; }
prefix=$(cd "$prefix" && pwd)
cd "$root"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
out=$root/target/link-beside
mkdir -p "$out"
(cd tests/link-beside && CARGO_TARGET_DIR="$out" cargo build --release --locked --quiet)
# filecoin-ffi's own link line has the same shape: its library, then rustc's natives.
other=(-L"$out/release" -lother -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc)
# Without LIBRARY_PATH (a CUDA build's shell has it): pkgconf would drop the
# CUDA runtime's -L, and the C programs must link by cuzk.pc's line alone.
read -ra cuzk <<<"$(env -u LIBRARY_PATH pkg-config --cflags --libs cuzk)"
version=$(pkg-config --modversion cuzk)

# own_copies PROGRAM: each library brought its own runtime and blst, and kept them.
own_copies() {
  local sym n
  for sym in rust_eh_personality blst_p1_affine_compress; do
    n=$(nm "$1" | grep -c " [Tt] $sym\$" || true)
    if [ "$n" != 2 ]; then
      echo "link-beside: $1 holds $n definitions of $sym, not one per library" >&2
      return 1
    fi
  done
}

cflags=(-std=c11 -Wall -Wextra -Werror -O1 -Itests/link-beside)
cc "${cflags[@]}" tests/link-beside/main.c -o "$out/c-cuzk-first" "${cuzk[@]}" "${other[@]}" -pthread
cc "${cflags[@]}" tests/link-beside/main.c -o "$out/c-other-first" "${other[@]}" "${cuzk[@]}" -pthread
# The Go program in a workspace with go-bindings, written here (out of the tree).
# Go caches a cgo package without asking pkg-config again (golang/go#24544): a
# define naming this install makes package cuzk compile for it, not reuse a
# build against another prefix (the CPU one, when this is the CUDA one).
rm -f "$out/go.work" "$out/go.work.sum"
(cd "$out" && go work init "$root/tests/link-beside/go" "$root/go-bindings")
stamp=$(cat "$prefix/lib/pkgconfig/cuzk.pc" "$prefix/include/cuzk.h" | cksum | cut -d' ' -f1)
(cd tests/link-beside/go && GOWORK="$out/go.work" CGO_CPPFLAGS="${CGO_CPPFLAGS:-} -DCUZK_INSTALL_STAMP=$stamp" \
  go build -o "$out/go-linkbeside" .)
for p in c-cuzk-first c-other-first go-linkbeside; do own_copies "$out/$p"; done
if [ $run = 1 ]; then
  scratch=$(mktemp -d)
  trap 'rm -rf "$scratch"' EXIT
  "$out/c-cuzk-first" "$scratch"
  "$out/c-other-first" "$scratch"
  "$out/go-linkbeside" "$scratch" "$version"
fi
echo "link-beside: cuzk $version ($prefix) and a second Rust staticlib (blst 0.3.14) in one C and one Go program$([ $run = 1 ] || echo ', linked only')"
