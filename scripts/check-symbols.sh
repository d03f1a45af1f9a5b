#!/usr/bin/env bash
# Checks that a staged libcuzk.a defines, as global symbols, exactly the
# functions include/cuzk.h declares: nothing of the Rust runtime, blst, sppark
# or filecoin-proofs may clash with another library linked beside it (only one
# Rust toolchain is installed here, so this stands in for linking beside a
# staticlib of another toolchain). scripts/build-lib.sh runs it on each build.
#
#   scripts/check-symbols.sh [ARCHIVE...]   # default: every staged target/cuzk-lib/*/libcuzk.a
#   scripts/check-symbols.sh --exports      # print the header's function names
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

# A declaration starts its line in the generated header (comments do not).
exports() {
  grep -oE '^[a-z].*\bcuzk_[a-z0-9_]+\(' "$root/include/cuzk.h" | grep -oE 'cuzk_[a-z0-9_]+\($' | tr -d '(' | sort -u
}
if [ "${1:-}" = "--exports" ]; then
  exports
  exit 0
fi
if [ $# = 0 ]; then
  set -- "$root"/target/cuzk-lib/*/libcuzk.a
  [ -f "$1" ] || { echo "check-symbols: no target/cuzk-lib/*/libcuzk.a: run scripts/build-lib.sh first" >&2; exit 1; }
fi
want=$(exports)
status=0
for lib in "$@"; do
  # Global definitions of every kind (T, D, B, R, W, V, u, i, ...): nm -g
  # --defined-only lists no undefined (U, w, v) ones.
  defs=$(nm -g --defined-only "$lib" | awk 'NF == 3 { print $3 }' | sort -u)
  extra=$(comm -13 <(echo "$want") <(echo "$defs"))
  missing=$(comm -23 <(echo "$want") <(echo "$defs"))
  if [ -n "$extra" ]; then
    echo "check-symbols: $lib defines $(echo "$extra" | wc -l) global symbols cuzk.h does not declare, e.g.:" >&2
    echo "$extra" | head -n 10 >&2
    status=1
  fi
  if [ -n "$missing" ]; then
    echo "check-symbols: $lib lacks functions cuzk.h declares: $(echo "$missing" | tr "\n" " ")" >&2
    status=1
  fi
  [ $status = 0 ] && echo "check-symbols: $lib defines only the $(echo "$want" | wc -l) functions of cuzk.h"
done
exit $status
