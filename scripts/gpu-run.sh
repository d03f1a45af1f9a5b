#!/usr/bin/env bash
# Builds the `cuda` feature here (no GPU needed) and stages the test binary in
# .devkit/gpu/ (git-ignored) for the device machine, then prints the command
# to run there. The device machine has no Rust: everything is linked here.
#
#   scripts/gpu-run.sh            # build + stage
#   scripts/gpu-run.sh --check    # compile and link only (what CI does)
#
# Uses its own target dir (target/cuda) so CPU-only builds are not disturbed.
set -euo pipefail
cd "$(dirname "$0")/.."

# nvcc 13.0 from PyPI; exports CUDA_HOME, LIBRARY_PATH and RUSTFLAGS (-L native=$CUDA_HOME/lib).
# shellcheck disable=SC1091
source ../shared/tools/cuda-env.sh >/dev/null
# The device image's libstdc++ may be older than this machine's: link it in.
case " ${RUSTFLAGS:-} " in *" -C link-arg=-static-libstdc++ "*) ;; *) export RUSTFLAGS="$RUSTFLAGS -C link-arg=-static-libstdc++" ;; esac
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target/cuda}"

if [ "${1:-}" = "--check" ]; then
  exec cargo test --release --features cuda --lib --no-run
fi

# The lib's unit tests hold the GPU tests and the primitive timings (gpu::tests).
bin=$(cargo test --release --features cuda --lib --no-run --message-format=json 2>/dev/null |
      python3 -c 'import json,sys
for l in sys.stdin:
    m=json.loads(l)
    if m.get("reason")=="compiler-artifact" and m.get("executable") and m["target"]["name"]=="cuzk" and m["profile"]["test"]:
        print(m["executable"])' | tail -n 1) || true
[ -n "$bin" ] || { cargo test --release --features cuda --lib --no-run; echo "gpu-run: no test binary" >&2; exit 1; }
cargo build --release --features cuda --bin cuzk-bench
mkdir -p .devkit/gpu
cp -f "$bin" .devkit/gpu/cuzk-lib-tests
cp -f "$CARGO_TARGET_DIR/release/cuzk-bench" .devkit/gpu/cuzk-bench
# The working tree that travels to the device machine is capped at 64 MiB.
strip .devkit/gpu/cuzk-lib-tests .devkit/gpu/cuzk-bench
ls -l .devkit/gpu/
cat <<'CMD'

# On the device machine (run tool, carry [".devkit/gpu"]):
set -o pipefail; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee $OUT/gpu.txt
.devkit/gpu/cuzk-lib-tests --test-threads=1 gpu:: 2>&1 | tee $OUT/gpu-tests.log
.devkit/gpu/cuzk-lib-tests --ignored --nocapture --test-threads=1 gpu_primitive_timings 2>&1 | tee $OUT/gpu-timings.log
.devkit/gpu/cuzk-bench gpu-check --sizes 2^16,2^20,2^22 --json $OUT/gpu-check.json 2>&1 | tee $OUT/gpu-check.log
CMD
