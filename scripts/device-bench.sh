#!/usr/bin/env bash
# GPU checks and benchmarks on a GPU host, one phase per call. Build and stage
# the binaries with scripts/gpu-run.sh, copy the checkout (or just scripts/ and
# .devkit/gpu) to the GPU host, then from its root:
#
#   bash scripts/device-bench.sh PHASE [PEER_BENCH]
#   bash scripts/device-bench.sh help          # the phases, grouped by capability
#
# Every command runs under `timeout`. What a phase prints goes to
# $OUT/<phase>.log, its JSON results beside it. The phases are listed in PHASES
# below; `help` prints them with the variables that steer them.
set -u -o pipefail

PHASES=(
  "= correctness"
  "gpu-check|GPU tests (gpu::, groth16::) and gpu-check: GPU proofs byte-equal to the CPU's at 2^16, 2^20, 2^22, 50 each"
  "= GPU primitives"
  "kernels|gpu-timings primitives (NTT, MSM by size), wide-window (a 2^27 H MSM by piece and window), interference (a critical proof's NTTs and MSM beside each kind of throughput work)"
  "= proof time"
  "prove|one proof at a time: sha256-chain 2^20 (real parameters) with its GPU steps (gpu-timings stage-breakdown); sha256-chain 2^24 (parameter file) and mimc-chain 2^24, each without and with --prepare"
  "= witness"
  "witness|synth-only --compare-gadgets (sha256-chain 2^20, 2^24, 2^26); pce-pipeline 2^24 with --no-witness-program, then the program's witness"
  "witness-porep|the same on PoRep 2 KiB and 8 MiB C1s sealed here (pce-pipeline porep-8MiB)"
  "= throughput"
  "pipelines|one GPU: pce-pipeline sha256-chain 2^20 -j 1,2,4,8 on a warm engine; mimc-chain 2^21 -j 18 with 2 backend workers"
  "multi-gpu|2+ GPUs: the backend stage (gpu-scaling 2^21) on GPU 0, then GPUs 0+1; pce-pipeline sha256-chain and mimc-chain 2^21 on one GPU, then on all"
  "= memory"
  "host-memory|pce-pipeline sha256-chain 2^20 -j 1,2,4: the engine's predicted peak against VmHWM, an RSS plot per J"
  "device-memory|a proof's device buffers at their peak against the working set the engine reserves: the GPU test, then gpu-scaling mimc-chain 2^24 and sha256-chain 2^27 (1, 2 workers; on an 80 GB card part of the SRS streams)"
  "= parameters"
  "params|loading (decode, the SRS cache, bellperson's read) of 2^22 and 2^24 files; the first proofs after a load in the background, decoded and from the cache"
  "params-big|the same at 2^26 (24 GB, decode only) with the first proofs; then a 38.6 GB file (mimc-chain 2^26)"
  "= latency (critical requests under throughput work)"
  "latency|critical 2^19 proofs every 3 s under J (default 8) mimc-chain 2^24 pipelines, sent also as throughput"
  "latency-big|the same under mimc-chain 2^26 partitions (J default 8; N critical proofs, default 20)"
  "latency-27|the same under sha256-chain 2^27 partitions (J default 6)"
  "= Filecoin proofs (sectors sealed and parameters generated here)"
  "porep|PoRep 2 KiB: GPU proofs, a CPU proof; pce-bench porep-2k"
  "seals|SyntheticPoRep and NonInteractivePoRep C1s of 2 KiB and 8 MiB sectors: 3 GPU proofs each"
  "ni-porep|NonInteractivePoRep 8 MiB (13 partitions): prove -n 3, pce-pipeline -j 2 and 4; an interactive C1's pipeline beside it"
  "post|WinningPoSt and WindowPoSt at 2 KiB and 8 MiB: 5 GPU proofs each, one CPU proof against bellperson"
  "snap|SnapDeals at 2 KiB and 8 MiB: GPU proofs; a 2 KiB CPU proof against bellperson"
  "post-shapes|every PoSt circuit's PCE extracted from its blank circuit (up to 130M constraints)"
  "aggregate|SnarkPack (CPU only): cuzk against filecoin-proofs' aggregate_seal_commit_proofs (65 NI and 65 interactive seals) and bellperson's aggregate_proofs (256, 8192 proofs)"
  "= endurance"
  "soak|N (default 10000) proofs through the C ABI (sizes 2^10..2^16, real parameters, cancels, unloads, trims), nvidia-smi every 5 s"
  "= against a peer prover (needs PEER_BENCH)"
  "peer|sha256-chain 2^22 (real parameters) and 2^24 (dummy): the peer's proofs and parameter load, then ours, on the same files"
  "peer-big|the same at 2^26 (load, first proofs); the peer's load of a 38.6 GB mimc-chain 2^26 file"
)

usage() {
  cat <<'EOF'
usage: bash scripts/device-bench.sh PHASE [PEER_BENCH]
       bash scripts/device-bench.sh help

Runs one phase of GPU checks and benchmarks on a GPU host, from the folder that
holds scripts/ and .devkit/gpu (scripts/gpu-run.sh stages it). Phases:
EOF
  local entry
  for entry in "${PHASES[@]}"; do
    case $entry in
    "= "*) printf '\n  %s\n' "${entry#= }" ;;
    *) printf '    %-14s %s\n' "${entry%%|*}" "$(echo "${entry#*|}" | fold -s -w 62 | sed 's/ *$//' | sed '2,$s/^/                   /')" ;;
    esac
  done
  cat <<'EOF'

Variables:
  OUT         where the logs and JSON go (default /tmp/cuzk-device)
  B           the cuzk-bench to run (default .devkit/gpu/cuzk-bench; another
              commit's for an A/B in one call; aggregate needs no GPU build)
  T           the GPU test binary (default .devkit/gpu/cuzk-lib-tests)
  PEER_BENCH  peer and peer-big: a supraseal-c2 bench binary proving the same
              sha256-chain circuit, run as: PEER_BENCH --constraints 2^N
              --params FILE --proofs K --no-harness --json FILE (also the
              second argument)
  J, N        pipelines and proofs where a phase says so
  X           extra cuzk-bench flags for the phases' prove, pce-pipeline and
              latency runs, e.g. X="--msm-piece-max-lg 23",
              X="--msm-piece-ahead-lg 26", X="--msm-window-bits 0",
              X="--no-witness-program"
  DRY=1       print the commands without running them
Exit status: 0 when every command passed, 1 when one failed, 2 on a usage error.
EOF
}

phase=${1:-}
if [ "$phase" = help ] || [ "$phase" = -h ] || [ "$phase" = --help ]; then
  usage
  exit 0
fi
known=" "
for entry in "${PHASES[@]}"; do
  case $entry in "= "*) ;; *) known+="${entry%%|*} " ;; esac
done
if [ -z "$phase" ] || [ "${known#* "$phase" }" = "$known" ]; then
  if [ -z "$phase" ]; then echo "device-bench: ERROR: no phase given" >&2; else echo "device-bench: ERROR: unknown phase '$phase'" >&2; fi
  usage >&2
  exit 2
fi

DRY=${DRY:-}
OUT=${OUT:-/tmp/cuzk-device}
G=.devkit/gpu
B=${B:-$G/cuzk-bench}
T=${T:-$G/cuzk-lib-tests}
PEER_BENCH=${2:-${PEER_BENCH:-}}
P=/tmp/cuzk-params
read -r -a XA <<<"${X:-}"
mkdir -p "$OUT" "$P"
log="$OUT/$phase.log"
T0=$(date +%s)
failed=0
ran=0
say() { echo "[+$(($(date +%s) - T0))s] $*" | tee -a "$log"; }
# run CMD...: logged with its start time, exit status and duration.
run() {
  local t=$SECONDS rc
  say "\$ $*"
  [ -n "$DRY" ] && return 0
  "$@" 2>&1 | tee -a "$log"
  rc=${PIPESTATUS[0]}
  ran=$((ran + 1))
  [ "$rc" = 0 ] || failed=$((failed + 1))
  say "rc=$rc ($((SECONDS - t))s)"
}
need() { # need WHAT HOW: stop with status 2 when a phase cannot run here
  echo "device-bench: ERROR: phase $phase needs $1" >&2
  echo "  $2" >&2
  exit 2
}
smi() { [ -n "$DRY" ] || nvidia-smi "$@" 2>&1 | tee -a "$log"; }

if [ -z "$DRY" ]; then
  chmod +x "$G"/* 2>/dev/null
  [ -x "$B" ] || need "cuzk-bench at $B" "run scripts/gpu-run.sh where the repo builds and copy .devkit/gpu here, or set B=/path/to/cuzk-bench"
  case $phase in gpu-check | device-memory)
    [ -x "$T" ] || need "the GPU test binary at $T" "run scripts/gpu-run.sh and copy .devkit/gpu here, or set T=/path/to/cuzk-lib-tests" ;;
  esac
  ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
else
  ngpu=${NGPU:-2}
fi
case $phase in peer | peer-big)
  [ -n "$PEER_BENCH" ] || need "a peer prover: PEER_BENCH=/path/to/peer-bench-supraseal (or as the second argument)" \
    "a supraseal-c2 bench binary run as: PEER_BENCH --constraints 2^N --params FILE --proofs K --no-harness --json FILE"
  [ -n "$DRY" ] || [ -x "$PEER_BENCH" ] || need "an executable PEER_BENCH" "$PEER_BENCH is not an executable file" ;;
multi-gpu)
  [ "$ngpu" -ge 2 ] || need "2 or more GPUs" "this host has $ngpu" ;;
esac
{
  smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
  echo "cpus: $(nproc)"
  free -g | head -2
} 2>&1 | tee -a "$log"

case $phase in
gpu-check)
  run timeout 240 "$T" --test-threads=1 gpu:: groth16::
  run timeout 150 "$B" gpu-check --sizes 2^16,2^20,2^22 --repeat 50 --json "$OUT/gpu-check.json"
  ;;
kernels)
  run timeout 150 "$B" gpu-timings primitives --lg-g1 24 --lg-g2 22
  run timeout 240 "$B" gpu-timings wide-window --lg 27 --pieces 26,25 --wbits 18,20,21,22
  run timeout 200 "$B" gpu-timings interference --samples 12
  ;;
prove)
  [ -s $P/s20.params ] || run timeout 150 "$B" params --circuit sha256-chain --size 2^20 --out $P/s20.params
  run timeout 120 "$B" prove --circuit sha256-chain --size 2^20 --backend cuda:0 -n 3 --params $P/s20.params "${XA[@]}" --json "$OUT/prove-s20.json"
  run timeout 120 "$B" gpu-timings stage-breakdown --lg 20 --params $P/s20.params
  # The first proof after loading, without and with the devices made ready first (Engine::prepare):
  # sha256-chain from a parameter file, mimc-chain (a short witness: the GPU stage shows) in memory.
  run timeout 200 "$B" params --circuit sha256-chain --size 2^24 --dummy --out $P/d24.params
  for prep in "" --prepare; do
    run timeout 150 "$B" prove --circuit sha256-chain --size 2^24 --backend cuda:0 -n 4 --params $P/d24.params --no-verify ${prep:+"$prep"} "${XA[@]}" --json "$OUT/prove-d24${prep:+-prepared}.json"
  done
  rm -f $P/d24.params $P/d24.params.cuzk-srs
  for prep in "" --prepare; do
    run timeout 150 "$B" prove --circuit mimc-chain --size 2^24 --backend cuda:0 -n 4 ${prep:+"$prep"} "${XA[@]}" --json "$OUT/prove-m24${prep:+-prepared}.json"
  done
  ;;
witness)
  run timeout 60 "$B" synth-only --circuit sha256-chain --size 2^20 -i 3 --compare-gadgets --json "$OUT/synth-s20.json"
  run timeout 120 "$B" synth-only --circuit sha256-chain --size 2^24 -i 2 --compare-gadgets --json "$OUT/synth-s24.json"
  for program in no yes; do
    wp=()
    if [ $program = no ]; then wp=(--no-witness-program); fi
    run timeout 150 "$B" pce-pipeline --circuit sha256-chain --size 2^24 -n 16 -j 4 --backend cuda:0 --dummy-params \
      "${wp[@]}" "${XA[@]}" --json "$OUT/pipeline-s24-program-$program.json"
  done
  run timeout 200 "$B" synth-only --circuit sha256-chain --size 2^26 -i 1 --compare-gadgets --json "$OUT/synth-s26.json"
  ;;
witness-porep)
  for s in 2KiB 8MiB; do
    run timeout 200 "$B" c1 --sector $s --out $P/c1-$s.json
  done
  run timeout 60 "$B" synth-only --circuit porep-2KiB --input $P/c1-2KiB.json -i 3 --compare-gadgets --json "$OUT/synth-porep-2k.json"
  run timeout 200 "$B" synth-only --circuit porep-8MiB --input $P/c1-8MiB.json -i 2 --compare-gadgets --json "$OUT/synth-porep-8m.json"
  for program in no yes; do
    wp=()
    if [ $program = no ]; then wp=(--no-witness-program); fi
    run timeout 200 "$B" pce-pipeline --circuit porep-8MiB --input $P/c1-8MiB.json -n 16 -j 4 --backend cuda:0 --dummy-params \
      "${wp[@]}" "${XA[@]}" --json "$OUT/pipeline-porep-8m-program-$program.json"
  done
  ;;
pipelines)
  # Enough proofs to amortise the ramp-up.
  [ -s $P/s20.params ] || run timeout 150 "$B" params --circuit sha256-chain --size 2^20 --out $P/s20.params
  for j in 1 2 4 8; do
    run timeout 100 "$B" pce-pipeline --circuit sha256-chain --size 2^20 -n 24 -j $j --backend cuda:0 --params $P/s20.params "${XA[@]}" --json "$OUT/pipeline-s20-j$j.json"
  done
  [ -s $P/m21.params ] || run timeout 240 "$B" params --circuit mimc-chain --size 2^21 --out $P/m21.params
  run timeout 100 "$B" pce-pipeline --circuit mimc-chain --size 2^21 -n 300 -j 18 --workers 2 --backend cuda:0 --params $P/m21.params "${XA[@]}" --json "$OUT/pipeline-m21.json"
  ;;
multi-gpu)
  # The backend stage alone (no witness, no engine): GPU 0, then GPUs 0 and 1 at once.
  for c in mimc-chain sha256-chain; do
    run timeout 150 "$B" gpu-scaling --circuit $c --size 2^21 --devices 0,1 --workers 2 -n 60 --json "$OUT/gpu-scaling-$c.json"
  done
  # Whole pipelines, two backend workers per device: one GPU kept busy, then every GPU
  # (mimc-chain: one GPU again after, to show the first run was not warming up).
  [ -s $P/s21.params ] || run timeout 300 "$B" params --circuit sha256-chain --size 2^21 --out $P/s21.params
  smi --query-gpu=index,memory.used --format=csv
  run timeout 150 "$B" pce-pipeline --circuit sha256-chain --size 2^21 -n 160 -j 12 --workers 2 --backend cuda:0 --params $P/s21.params "${XA[@]}" --json "$OUT/multi-s21-1gpu.json"
  run timeout 150 "$B" pce-pipeline --circuit sha256-chain --size 2^21 -n $((160 * ngpu)) -j $((12 * ngpu)) --workers 2 --backend auto --params $P/s21.params "${XA[@]}" --json "$OUT/multi-s21-allgpu.json"
  [ -s $P/m21.params ] || run timeout 240 "$B" params --circuit mimc-chain --size 2^21 --out $P/m21.params
  run timeout 100 "$B" pce-pipeline --circuit mimc-chain --size 2^21 -n 300 -j 18 --workers 2 --backend cuda:0 --params $P/m21.params "${XA[@]}" --json "$OUT/multi-m21-1gpu.json"
  run timeout 100 "$B" pce-pipeline --circuit mimc-chain --size 2^21 -n $((300 * ngpu)) -j $((18 * ngpu)) --workers 2 --backend auto --params $P/m21.params "${XA[@]}" --json "$OUT/multi-m21-allgpu.json"
  run timeout 100 "$B" pce-pipeline --circuit mimc-chain --size 2^21 -n 300 -j 18 --workers 2 --backend cuda:0 --params $P/m21.params "${XA[@]}" --json "$OUT/multi-m21-1gpu-again.json"
  smi --query-gpu=index,memory.used --format=csv
  ;;
host-memory)
  [ -s $P/s20.params ] || run timeout 150 "$B" params --circuit sha256-chain --size 2^20 --out $P/s20.params
  for j in 1 2 4; do
    run timeout 60 "$B" pce-pipeline --circuit sha256-chain --size 2^20 -n 8 -j $j --backend cuda:0 --params $P/s20.params "${XA[@]}" \
      --plot "$OUT/host-memory-j$j.svg" --json "$OUT/host-memory-j$j.json"
  done
  ;;
device-memory)
  run timeout 150 "$T" --test-threads=1 --nocapture a_proofs_device_buffers_fit_its_working_set
  run timeout 100 "$B" gpu-scaling --circuit mimc-chain --size 2^24 --devices 0 --workers 1 -n 2 --json "$OUT/device-memory-m24.json"
  run timeout 330 "$B" gpu-scaling --circuit sha256-chain --size 2^27 --devices 0 --workers 1,2 -n 2 --json "$OUT/device-memory-s27.json"
  ;;
params)
  for n in 22 24; do
    run timeout 200 "$B" params --circuit sha256-chain --size 2^$n --dummy --out $P/d$n.params
    run timeout 300 "$B" params --load $P/d$n.params --json "$OUT/load-d$n.json"
    rm -f $P/d$n.params.cuzk-srs
  done
  rm -f $P/d22.params
  # Proofs at once after a load in the background (the devices prepared beside the first
  # witness): a first-ever load (decoding), then a restart (the cache the first one wrote).
  for from in decoded cache; do
    run timeout 150 "$B" prove --circuit sha256-chain --size 2^24 --backend cuda:0 -n 3 --params $P/d24.params --no-verify \
      --background-load --prepare "${XA[@]}" --json "$OUT/first-proof-background-$from.json"
  done
  rm -f $P/d24.params $P/d24.params.cuzk-srs
  ;;
params-big)
  run timeout 300 "$B" params --circuit sha256-chain --size 2^26 --dummy --out $P/d26.params
  run timeout 120 "$B" params --load $P/d26.params --no-cache --no-bellperson --json "$OUT/load-d26.json"
  run timeout 240 "$B" prove --circuit sha256-chain --size 2^26 --backend cuda:0 -n 2 --params $P/d26.params --no-verify \
    --background-load --prepare "${XA[@]}" --json "$OUT/first-proof-background-d26.json"
  rm -f $P/d26.params $P/d26.params.cuzk-srs
  # A file over 30 GiB: mimc-chain's queries are all dense (38.6 GB at 2^26).
  run timeout 300 "$B" params --circuit mimc-chain --size 2^26 --dummy --out $P/m26.params
  run timeout 120 "$B" params --load $P/m26.params --no-cache --no-bellperson --json "$OUT/load-m26.json"
  rm -f $P/m26.params
  ;;
latency)
  run timeout 560 "$B" latency --circuit mimc-chain --size 2^19 --background mimc-chain --background-size 2^24 -j "${J:-8}" -n 20 \
    --interval 3 --workers 2 --backend cuda:0 --as-throughput "${XA[@]}" --json "$OUT/latency-2p24.json"
  ;;
latency-big)
  run timeout 580 "$B" latency --circuit mimc-chain --size 2^19 --background mimc-chain --background-size 2^26 -j "${J:-8}" -n "${N:-20}" \
    --interval 3 --workers 2 --backend cuda:0 "${XA[@]}" --json "$OUT/latency-2p26.json"
  ;;
latency-27)
  run timeout 580 "$B" latency --circuit mimc-chain --size 2^19 --background sha256-chain --background-size 2^27 -j "${J:-6}" -n 10 \
    --interval 3 --workers 2 --backend cuda:0 "${XA[@]}" --json "$OUT/latency-2p27.json"
  ;;
porep)
  # PoRep C2 on a real 2 KiB C1 with real parameters (generated here), verified.
  run timeout 400 "$B" params --circuit porep-2KiB --out $P/porep-2KiB.params
  run timeout 60 "$B" c1 --sector 2KiB --out $P/c1-2KiB.json
  run timeout 200 "$B" prove --circuit porep-2KiB --input $P/c1-2KiB.json --params $P/porep-2KiB.params --backend cuda:0 -n 3 "${XA[@]}" --json "$OUT/porep-2k-gpu.json"
  run timeout 200 "$B" prove --circuit porep-2KiB --input $P/c1-2KiB.json --params $P/porep-2KiB.params --backend cpu -n 1 "${XA[@]}" --json "$OUT/porep-2k-cpu.json"
  run timeout 200 "$B" pce-bench --circuit porep-2k --json "$OUT/pce-bench-porep-2k.json"
  ;;
seals)
  for s in 2KiB 8MiB; do
    c=porep-$s
    [ -s $P/$c.params ] || run timeout 200 "$B" params --circuit $c --out $P/$c.params
    for seal in synthetic non-interactive; do
      run timeout 400 "$B" c1 --sector $s --seal $seal --out $P/$seal-$s.json
      run timeout 200 "$B" prove --circuit $c --input $P/$seal-$s.json --params $P/$c.params --backend cuda:0 -n 3 "${XA[@]}" --json "$OUT/prove-$seal-$s-gpu.json"
    done
  done
  ;;
ni-porep)
  c=porep-8MiB
  run timeout 200 "$B" c1 --sector 8MiB --seal non-interactive --out $P/non-interactive-8MiB.json
  run timeout 200 "$B" c1 --sector 8MiB --out $P/c1-8MiB.json
  [ -s $P/$c.params ] || run timeout 200 "$B" params --circuit $c --out $P/$c.params
  run timeout 200 "$B" prove --circuit $c --input $P/non-interactive-8MiB.json --params $P/$c.params --backend cuda:0 -n 3 "${XA[@]}" --json "$OUT/prove-ni-8MiB-gpu.json"
  for j in 2 4; do
    run timeout 200 "$B" pce-pipeline --circuit $c --input $P/non-interactive-8MiB.json --params $P/$c.params -n 12 -j $j --backend cuda:0 "${XA[@]}" --json "$OUT/pipeline-ni-8MiB-j$j.json"
  done
  run timeout 200 "$B" pce-pipeline --circuit $c --input $P/c1-8MiB.json --params $P/$c.params -n 64 -j 4 --backend cuda:0 "${XA[@]}" --json "$OUT/pipeline-c1-8MiB-j4.json"
  ;;
post)
  for s in 2KiB 8MiB; do
    for k in winning window; do
      c=$k-post-$s
      run timeout 120 "$B" fixture --circuit $c --out $P/$c.input
      run timeout 300 "$B" params --circuit $c --out $P/$c.params
      run timeout 120 "$B" prove --circuit $c --input $P/$c.input --params $P/$c.params --backend cuda:0 -n 5 "${XA[@]}" --json "$OUT/prove-$c-gpu.json"
      run timeout 120 "$B" prove --circuit $c --input $P/$c.input --params $P/$c.params --backend cpu --compare-bellperson "${XA[@]}" --json "$OUT/prove-$c-cpu.json"
    done
  done
  ;;
snap)
  for c in snap-2KiB snap-8MiB; do
    run timeout 150 "$B" fixture --circuit $c --out $P/$c.input
    run timeout 200 "$B" params --circuit $c --out $P/$c.params
    run timeout 200 "$B" prove --circuit $c --input $P/$c.input --params $P/$c.params --backend cuda:0 -n 3 "${XA[@]}" --json "$OUT/prove-$c-gpu.json"
  done
  c=snap-2KiB
  run timeout 200 "$B" prove --circuit $c --input $P/$c.input --params $P/$c.params --backend cpu --compare-bellperson "${XA[@]}" --json "$OUT/prove-$c-cpu.json"
  ;;
post-shapes)
  for s in 2KiB 8MiB 512MiB 32GiB 64GiB; do
    for k in winning window; do
      run timeout 400 "$B" extract --circuit $k-post-$s --out $P/$k-$s.pce --json "$OUT/shape-$k-$s.json"
      rm -f $P/$k-$s.pce
    done
  done
  ;;
aggregate)
  # filecoin-proofs-api's aggregate_seal_commit_proofs itself: 65 NI-PoRep seals (8192 proofs), 65 interactive (1024).
  run timeout 240 "$B" aggregate --seals 65 --registered-proof StackedDrg32GiBV1_2_Feat_NonInteractivePoRep --repeat 2 \
    --json "$OUT/aggregate-seals-ni65.json"
  run timeout 120 "$B" aggregate --seals 65 --registered-proof StackedDrg32GiBV1_1 --repeat 2 --json "$OUT/aggregate-seals-i65.json"
  # bellperson's aggregate_proofs, and the MSMs' share.
  for n in 256 8192; do
    run timeout 200 "$B" aggregate --proofs $n --json "$OUT/aggregate-$n.json"
  done
  run timeout 200 "$B" aggregate --proofs 8192 --version 1 --json "$OUT/aggregate-8192-v1.json"
  ;;
soak)
  if [ -z "$DRY" ]; then
    nvidia-smi --query-gpu=timestamp,memory.used --format=csv -l 5 >"$OUT/soak-nvidia-smi.csv" 2>&1 &
    smi_pid=$!
  fi
  run timeout 560 "$B" soak -n "${N:-10000}" --threads 12 --dir $P/soak --json "$OUT/soak.json"
  if [ -z "$DRY" ]; then kill "$smi_pid"; fi
  ;;
peer)
  # The peer (its first proof includes its start-up and parameter load) and ours on the same files.
  run timeout 240 "$B" params --circuit sha256-chain --size 2^22 --out $P/s22.params
  run timeout 120 "$B" params --load $P/s22.params --json "$OUT/load-s22.json"
  run timeout 120 "$PEER_BENCH" --constraints 2^22 --params $P/s22.params --proofs 3 --no-harness --json "$OUT/peer.jsonl"
  run timeout 120 "$B" prove --circuit sha256-chain --size 2^22 --backend cuda:0 -n 3 --params $P/s22.params "${XA[@]}" --json "$OUT/ours-2p22.json"
  rm -f $P/s22.params $P/s22.params.cuzk-srs
  # Dummy parameters: timing only.
  run timeout 200 "$B" params --circuit sha256-chain --size 2^24 --dummy --out $P/d24.params
  run timeout 300 "$B" params --load $P/d24.params --json "$OUT/load-d24.json"
  run timeout 150 "$PEER_BENCH" --constraints 2^24 --params $P/d24.params --proofs 2 --no-harness --json "$OUT/peer.jsonl"
  run timeout 150 "$B" prove --circuit sha256-chain --size 2^24 --backend cuda:0 -n 3 --params $P/d24.params --no-verify "${XA[@]}" --json "$OUT/ours-2p24.json"
  rm -f $P/d24.params $P/d24.params.cuzk-srs
  ;;
peer-big)
  run timeout 300 "$B" params --circuit sha256-chain --size 2^26 --dummy --out $P/d26.params
  run timeout 120 "$B" params --load $P/d26.params --no-cache --no-bellperson --json "$OUT/load-d26.json"
  run timeout 240 "$PEER_BENCH" --constraints 2^26 --params $P/d26.params --proofs 1 --no-harness --json "$OUT/peer.jsonl"
  run timeout 240 "$B" prove --circuit sha256-chain --size 2^26 --backend cuda:0 -n 2 --params $P/d26.params --no-verify \
    --background-load --prepare "${XA[@]}" --json "$OUT/first-proof-background-d26.json"
  rm -f $P/d26.params $P/d26.params.cuzk-srs
  # The peer's load alone: its sha256-chain circuit does not match mimc-chain's parameters.
  run timeout 300 "$B" params --circuit mimc-chain --size 2^26 --dummy --out $P/m26.params
  run timeout 120 "$PEER_BENCH" --constraints 2^26 --params $P/m26.params --proofs 1 --no-harness --json "$OUT/peer.jsonl"
  rm -f $P/m26.params
  ;;
esac
if [ "$failed" -gt 0 ]; then
  say "done: $failed of $ran commands failed"
  exit 1
fi
say "done${DRY:+ (dry run)}"
