#!/usr/bin/env bash
# Builds the `cuda` feature here (no GPU needed) and stages the GPU test binary
# and cuzk-bench in .devkit/gpu/ (git-ignored), then prints the commands to run
# on a GPU host. The GPU host needs no Rust and no CUDA toolkit: everything is
# linked here; it needs an NVIDIA driver for CUDA 13.0 or newer (580+) when
# built with the PyPI nvcc that scripts/cuda-env.sh installs.
#
#   scripts/gpu-run.sh            # build + stage
#   scripts/gpu-run.sh --check    # compile and link only (what CI does): the
#                                 # installed libcuzk.a into programs
#
# The cuda build shares target/ with CPU builds: only cuzk and sppark differ.
set -euo pipefail
cd "$(dirname "$0")/.."

# CUDA_HOME, or the nvcc on PATH, or nvcc 13.0 from PyPI (build.rs finds the CUDA
# runtime beside it).
# shellcheck source=scripts/cuda-env.sh
source scripts/cuda-env.sh
target_dir=${CARGO_TARGET_DIR:-$PWD/target}

if [ "${1:-}" = "--check" ]; then
  # libcuzk.a of the cuda feature as a host links it: compiled (nvcc's cuda/ and
  # the crate; clippy --cuda has type-checked the GPU tests), installed, its
  # cuzk.pc's link line checked against rustc's and the README's, and linked (not
  # run: no GPU driver here) into the C and Go programs beside another Rust
  # staticlib. Oracles too: the native libraries of the GPU test build.
  prefix=$PWD/target/cuzk-prefix-cuda
  scripts/install.sh --cuda --features oracles --prefix "$prefix"
  scripts/check-link-line.sh "$prefix"
  exec scripts/link-beside.sh --link-only "$prefix"
fi

# The lib's unit tests hold the GPU tests (gpu::, groth16::cuda::); the GPU
# timings are cuzk-bench's `gpu-timings`.
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
cp -f "$target_dir/release/cuzk-bench" .devkit/gpu/cuzk-bench
# Stripped: a fraction of the size to copy.
strip .devkit/gpu/cuzk-lib-tests .devkit/gpu/cuzk-bench
ls -l .devkit/gpu/
cat <<'CMD'

# Copy .devkit/gpu to a GPU host and run, from the folder that holds .devkit
# (results in $OUT; scripts/device-bench.sh has the longer benchmarks):
set -o pipefail; OUT=${OUT:-cuzk-gpu-results}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$OUT/gpu.txt"
.devkit/gpu/cuzk-lib-tests --test-threads=1 gpu:: 2>&1 | tee "$OUT/gpu-tests.log"
.devkit/gpu/cuzk-bench gpu-timings primitives 2>&1 | tee "$OUT/gpu-timings.log"
.devkit/gpu/cuzk-bench gpu-check --sizes 2^16,2^20,2^22 --json "$OUT/gpu-check.json" 2>&1 | tee "$OUT/gpu-check.log"
CMD
