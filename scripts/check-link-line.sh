#!/usr/bin/env bash
# Keeps the link line honest. An installed cuzk.pc (scripts/install.sh) must
# give exactly -L<prefix>/lib -lcuzk, for a CUDA build the folder of a
# libcudart_static.a, then the native libraries rustc printed for that
# libcuzk.a (--print native-static-libs, staged by scripts/build-lib.sh; each
# once, at its last place); and the README's line for that kind of build
# (CPU, or CUDA with $CUDA_LIB) must name the same libraries.
#
#   scripts/check-link-line.sh [PREFIX]   # PREFIX: target/cuzk-prefix
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
prefix=${1:-$root/target/cuzk-prefix}
[ -f "$prefix/lib/pkgconfig/cuzk.pc" ] ||
  { echo "check-link-line: no $prefix/lib/pkgconfig/cuzk.pc: run scripts/install.sh --prefix $prefix first" >&2; exit 1; }
prefix=$(cd "$prefix" && pwd)
cd "$root"
# The staged build the installed library is a copy of.
stage=""
for d in target/cuzk-lib/*/; do
  if cmp -s "$d/libcuzk.a" "$prefix/lib/libcuzk.a"; then stage=${d%/}; fi
done
[ -n "$stage" ] || { echo "check-link-line: $prefix/lib/libcuzk.a is no staged build under target/cuzk-lib/" >&2; exit 1; }
# shellcheck disable=SC2046
printed=$(printf '%s\n' $(cat "$stage/native-static-libs.txt") | tac | awk '!seen[$0]++' | tac | tr '\n' ' ')
printed=${printed% }
# Without LIBRARY_PATH (scripts/cuda-env.sh sets it): pkgconf drops the -L of
# a folder on it, as a host's shell without it would not.
got=$(env -u LIBRARY_PATH PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --libs cuzk)
got=${got% }
status=0
case $(basename "$stage") in
cuda)
  cudart=$(echo "$got" | awk '{ print $3 }')
  want="-L$prefix/lib -lcuzk $cudart $printed"
  [ -f "${cudart#-L}/libcudart_static.a" ] ||
    { echo "check-link-line: cuzk.pc names no CUDA runtime folder after -lcuzk: '$got'" >&2; status=1; }
  # shellcheck disable=SC2016  # the README's literal $CUDA_LIB
  readme=$(sed -n 's/^.* -lcuzk -L\$CUDA_LIB \(.*\)$/\1/p' README.md | head -n 1) ;;
*)
  want="-L$prefix/lib -lcuzk $printed"
  readme=$(sed -n 's/^.* -lcuzk \(-l.*\)$/\1/p' README.md | head -n 1) ;;
esac
if [ "$got" != "$want" ]; then
  echo "check-link-line: pkg-config --libs cuzk says '$got', rustc's libraries make '$want'" >&2; status=1
fi
if [ "$readme" != "$printed" ]; then
  echo "check-link-line: README's $(basename "$stage") line says '-lcuzk ${readme}', rustc prints '$printed'" >&2; status=1
fi
[ $status = 0 ] && echo "check-link-line: cuzk.pc, README and rustc agree ($(basename "$stage")): $got"
exit $status
