#!/usr/bin/env bash
# Builds libcuzk.a (scripts/build-lib.sh) and installs what a host links:
#   PREFIX/lib/libcuzk.a
#   PREFIX/include/cuzk.h
#   PREFIX/lib/pkgconfig/cuzk.pc   Libs: the exact static link line of this build
#
#   scripts/install.sh [--prefix DIR] [--cuda] [cargo feature flags...]   # DIR: /usr/local
#
# --cuda builds the `cuda` feature (nvcc through scripts/cuda-env.sh); its link
# line adds libstdc++ and the CUDA runtime (libcudart_static.a) of the nvcc
# that built it. Then, from C or Go:
#   cc app.c $(PKG_CONFIG_PATH=DIR/lib/pkgconfig pkg-config --cflags --libs cuzk)
#   PKG_CONFIG_PATH=DIR/lib/pkgconfig go build ./...
set -euo pipefail
prefix=/usr/local
flags=()
while [ $# -gt 0 ]; do
  case $1 in
  --prefix) prefix=${2:?"install: --prefix needs a folder"}; shift 2 ;;
  --prefix=*) prefix=${1#--prefix=}; shift ;;
  --cuda) flags+=(--features cuda); shift ;;
  *) flags+=("$1"); shift ;;
  esac
done
mkdir -p "$prefix/lib/pkgconfig" "$prefix/include"
prefix=$(cd "$prefix" && pwd)
cd "$(dirname "$0")/.."
stage=$(scripts/build-lib.sh "${flags[@]}")
build=$(basename "$stage")  # cpu or cuda
version=$(sed -n 's/^#define CUZK_VERSION "\(.*\)"$/\1/p' include/cuzk.h)
install -m 644 "$stage/libcuzk.a" "$prefix/lib/libcuzk.a"
install -m 644 include/cuzk.h "$prefix/include/cuzk.h"
pc="$prefix/lib/pkgconfig/cuzk.pc"
cat >"$pc.tmp" <<EOF
prefix=$prefix
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: cuzk
Description: Groth16 prover for Filecoin, static library (${build^^} build)
Version: $version
Cflags: -I\${includedir}
Libs: -L\${libdir} -lcuzk $(cat "$stage/libs.txt")
EOF
mv -f "$pc.tmp" "$pc"
echo "install: $prefix (cuzk $version, $build); PKG_CONFIG_PATH=$prefix/lib/pkgconfig" >&2
