#!/usr/bin/env bash
# The mechanical checks: shellcheck on scripts/ and .ci/run, gofmt on the Go
# bindings, no import circles between the library's files
# (scripts/import-cycles.py), rustfmt (rustfmt.toml) and clippy with warnings
# as errors on every target, for the default features; with --cuda, clippy for
# the `cuda` feature too (no GPU needed: nvcc from scripts/cuda-env.sh). Clippy
# reads no object code, so it skips nvcc's build of cuda/*.cu: the builds of the
# cuda feature compile them (CI: scripts/gpu-run.sh --check).
#
#   scripts/lint.sh           # shellcheck, gofmt, import circles, rustfmt, clippy (default features)
#   scripts/lint.sh --cuda    # and clippy --features cuda
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/ensure-tools.sh
source scripts/ensure-tools.sh
shellcheck -x scripts/*.sh .ci/run
unformatted=$("$(go env GOROOT)/bin/gofmt" -l go-bindings tests/link-beside/go)
if [ -n "$unformatted" ]; then
  echo "lint: gofmt would change these files (run: gofmt -w on them):" >&2
  echo "$unformatted" >&2
  exit 1
fi
python3 scripts/import-cycles.py
cargo fmt --check
(cd tests/link-beside && cargo fmt --check)
cargo clippy --release --all-targets -- -D warnings
if [ "${1:-}" = "--cuda" ]; then
  (
    # shellcheck source=scripts/cuda-env.sh
    source scripts/cuda-env.sh
    # Clippy runs build.rs apart from the builds (it builds build.rs itself), with
    # this nvcc first on PATH: empty objects for cuda/*.cu and for the device link
    # of their archive, the real nvcc for anything else (sppark's probes and its
    # own library, whose build the builds share). The CUDA runtime that build.rs
    # looks for beside nvcc is linked in beside it.
    fake=${CARGO_TARGET_DIR:-$PWD/target}/clippy-nvcc
    mkdir -p "$fake/bin"
    for d in lib lib64 targets; do
      if [ -e "$CUDA_HOME/$d" ]; then ln -sfn "$CUDA_HOME/$d" "$fake/$d"; fi
    done
    cat >"$fake/bin/nvcc.new" <<EOF
#!/usr/bin/env bash
# scripts/lint.sh --cuda: clippy's nvcc.
out="" prev="" skip=0
for a in "\$@"; do
  case \$a in cuda/*.cu | */libcuzk_cuda.a) skip=1 ;; esac
  if [ "\$prev" = -o ]; then out=\$a; fi
  prev=\$a
done
if [ \$skip = 1 ] && [ -n "\$out" ]; then : >"\$out"; exit 0; fi
exec "$CUDA_HOME/bin/nvcc" "\$@"
EOF
    chmod +x "$fake/bin/nvcc.new"
    mv -f "$fake/bin/nvcc.new" "$fake/bin/nvcc"
    PATH=$fake/bin:$PATH cargo clippy --release --features cuda --all-targets -- -D warnings
  )
fi
echo "lint: clean"
