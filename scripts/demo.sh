#!/usr/bin/env bash
# The main job through the C ABI on a built-in default: builds and installs
# libcuzk.a (into target/cuzk-demo) and the C demo, then extracts the PCE of
# sha256-chain at 2^16 constraints (first run), loads Groth16 parameters
# (generated on the first run, in seconds), proves, verifies, and prints
# per-stage timings and cuzk_mem_stats.
#
#   ./scripts/demo.sh [CIRCUIT [CONSTRAINTS [DIR]]]   default: sha256-chain 65536 ./cuzk-demo-data
#
# CUZK_CARGO_FLAGS passes cargo feature flags to the library build, e.g.
# "--no-default-features" (no PoRep: a much shorter first build) or
# "--features cuda" (nvcc through scripts/cuda-env.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/ensure-tools.sh
source "$here/scripts/ensure-tools.sh"
# Installed into a prefix of its own and linked through its cuzk.pc, as a host does.
# shellcheck disable=SC2086
"$here/scripts/install.sh" --prefix "$here/target/cuzk-demo" ${CUZK_CARGO_FLAGS:-}
make -s -C "$here/c-tests" demo PREFIX="$here/target/cuzk-demo" >&2
exec "$here/target/c-tests/cuzk-demo/demo" "$@"
