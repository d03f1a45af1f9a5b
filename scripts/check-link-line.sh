#!/usr/bin/env bash
# Keeps the documented link line honest: the native libraries rustc printed
# for libcuzk.a (--print native-static-libs, staged by scripts/build-lib.sh)
# must equal the README's "Linking from C" line and the Go bindings' cgo
# LDFLAGS. (c-tests/Makefile links with the staged line itself.)
set -euo pipefail
cd "$(dirname "$0")/.."
printed=$(cat target/cuzk-lib/native-static-libs.txt)
readme=$(sed -n 's/^.*cc .* -lcuzk \(.*\)$/\1/p' README.md | head -n 1)
golibs=$(sed -n 's/^#cgo LDFLAGS: \(-lgcc_s.*\)$/\1/p' go-bindings/internal/ccuzk/ccuzk.go)
status=0
if [ "$readme" != "$printed" ]; then
  echo "check-link-line: README says '-lcuzk $readme', rustc prints '$printed'" >&2; status=1
fi
if [ "$golibs" != "$printed" ]; then
  echo "check-link-line: go-bindings cgo LDFLAGS say '$golibs', rustc prints '$printed'" >&2; status=1
fi
[ $status = 0 ] && echo "check-link-line: README, c-tests and Go link with: -lcuzk $printed"
exit $status
