#!/usr/bin/env bash
# GPU checks and benchmarks on the device machine (one H200). Run from the repo
# root there, with .devkit/gpu (scripts/gpu-run.sh) and .devkit/peer-bench
# (../shared/tools/peer-bench/build.sh --install .devkit/peer-bench) carried:
#
#   bash scripts/device-bench.sh ours   # GPU tests, gpu-check (GPU = CPU bytes), prove and pce-pipeline -j 1,2,4 at 2^20
#   bash scripts/device-bench.sh peer   # ours vs supraseal-c2 at 2^22 (real params) and 2^24 (dummy params, timing only);
#                                       # pce-pipeline -n 24 -j 1,2,4,8 on a warm engine
#   bash scripts/device-bench.sh multi  # on a multi-GPU kind: pce-pipeline on 1 GPU vs all GPUs
#   bash scripts/device-bench.sh porep  # PoRep 2 KiB with real parameters (GPU, CPU), pce-bench porep-2k
#   bash scripts/device-bench.sh engine # ours vs supraseal-c2 at 2^24, then pce-pipeline at 2^21 on
#                                       # 1 GPU and on all GPUs (2+ GPUs kind)
#   bash scripts/device-bench.sh sweep  # pce-pipeline -n 8 -j 1,2,4 at 2^20 on GPU 0, RSS plots
#   bash scripts/device-bench.sh contention # the backend stage alone on GPU 0, then on GPUs 0+1;
#                                       # then the pipelines phase
#   bash scripts/device-bench.sh pipelines  # mimc-chain 2^21 pipelines on 1 GPU, all, 1 again
#   bash scripts/device-bench.sh params     # parameter loading: ours vs bellperson's read vs supraseal-c2's
#                                       # SuprasealParameters::new, same files (sha256-chain 2^22, 2^24 dummy);
#                                       # then proofs at once after a load in the background (2^24)
#   bash scripts/device-bench.sh params-big # the same at 2^26 (24 GB: decode only, no cache, no bellperson), proofs
#                                       # after a load in the background; then a 38.6 GB file (mimc-chain 2^26)
#   bash scripts/device-bench.sh prepare    # sha256-chain and mimc-chain 2^24 (dummy params): each proof's stages, without
#                                       # and with --prepare; the CUDA backend's tests
#   bash scripts/device-bench.sh latency    # critical 2^19 proofs (the WinningPoSt size) every 3 s under
#                                       # 8 pipelines of mimc-chain 2^24 on GPU 0 (also sent as throughput)
#   bash scripts/device-bench.sh witness    # GPU tests and gpu-check; synth-only --compare-gadgets (sha256-chain 2^20,
#                                       # 2^24, 2^26); pce-pipeline 2^24 with the gadgets' witness, then the program's
#   bash scripts/device-bench.sh witness-porep # synth-only --compare-gadgets on PoRep 2 KiB and 8 MiB C1s sealed here;
#                                       # pce-pipeline porep-8MiB with the gadgets' witness, then the program's
#   bash scripts/device-bench.sh latency-big # the same under mimc-chain 2^26 partitions (J=${J:-8})
#   bash scripts/device-bench.sh pieces     # latency-big's measure with MSM pieces of at most 2^25 (a 2^26 partition's default), then 2^23
#   bash scripts/device-bench.sh ahead      # latency-big's measure with short pieces while a critical request is ahead
#                                       # (the default) and without (CUZK_MSM_PIECE_AHEAD_LG=26), -n ${N:-10} each
#   bash scripts/device-bench.sh latency-27 # the same measure under sha256-chain 2^27 partitions (J=${J:-6} pipelines)
#   bash scripts/device-bench.sh probe      # what holds the express lane back: a critical proof's NTTs and MSM beside each
#                                       # kind of throughput work (interference_timings), then latency-big's measure, -n ${N:-10}
#   bash scripts/device-bench.sh pieces-stage # the 2^26 sha256-chain backend stage with the same two bounds
#   bash scripts/device-bench.sh card-80g  # on an 80 GB card (nvidia-h100-x1): the GPU tests, then the
#                                       # sha256-chain 2^27 stage with part of its SRS resident, 1 and 2 workers
#   bash scripts/device-bench.sh working-set # one proof's device buffers at their peak (the pool's high-water mark)
#                                       # against the working set the engine reserves: the GPU test at 2^16 and
#                                       # 2^20, then gpu-scaling at 2^24 (mimc-chain) and 2^27 (sha256-chain)
#   bash scripts/device-bench.sh post       # WinningPoSt and WindowPoSt at 2 KiB and 8 MiB: a sector sealed here, real
#                                       # parameters; 5 GPU proofs each (filecoin-proofs' verifier), one CPU proof vs bellperson
#   bash scripts/device-bench.sh snap       # SnapDeals at 2 KiB and 8 MiB (4 partitions), real parameters generated here:
#                                       # GPU proofs checked by filecoin-proofs; a 2 KiB CPU proof vs bellperson
#   bash scripts/device-bench.sh ni-porep   # a NonInteractivePoRep C2 of an 8 MiB sector sealed here (13 partitions), real
#                                       # parameters: prove -n 3, pce-pipeline -j 2 and 4; an interactive C1's pipeline beside it
#   bash scripts/device-bench.sh seals      # SyntheticPoRep and NonInteractivePoRep C1s of 2 KiB and 8 MiB sectors sealed here,
#                                       # real parameters: prove -n 3 each on the GPU
#   bash scripts/device-bench.sh post-shapes # every PoSt circuit's PCE extracted from its blank circuit (up to 130M constraints)
#   bash scripts/device-bench.sh aggregate  # SnarkPack: cuzk vs filecoin-proofs' aggregate_seal_commit_proofs on 65
#                                       # NI-PoRep (8192 proofs) and 65 interactive 32 GiB seals (1024), same inputs and SRS,
#                                       # one run; vs bellperson's aggregate_proofs at 256 and 8192 proofs (v2, v1).
#                                       # CPU only: B=<any cuzk-bench> (a default build will do)
#   bash scripts/device-bench.sh soak       # N=${N:-10000} proofs through the C ABI (mixed sizes 2^10..2^16, real
#                                       # parameters, cancels, unloads, trims), nvidia-smi sampled every 5 s
#
# Everything printed goes to $OUT/<phase>.log; JSON results beside it. B names
# another cuzk-bench to run (e.g. an older commit's, for an A/B in one call);
# X adds arguments to the pipelines phase's pce-pipeline runs.
set -u -o pipefail
phase=${1:?phase: ours or peer}
OUT=${OUT:-/tmp/cuzk-device}
mkdir -p "$OUT"
G=.devkit/gpu
PB=.devkit/peer-bench
B=${B:-$G/cuzk-bench}
P=/tmp/cuzk-params
mkdir -p $P
log="$OUT/$phase.log"
T0=$(date +%s)
say() { echo "[+$(($(date +%s) - T0))s] $*" | tee -a "$log"; }
run() { say "\$ $*"; "$@" 2>&1 | tee -a "$log"; say "rc=${PIPESTATUS[0]}"; }
chmod +x $G/* $PB/* 2>/dev/null
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv; nproc; free -g | head -2; } 2>&1 | tee -a "$log"

case $phase in
witness)
  run timeout 240 $G/cuzk-lib-tests --test-threads=1 gpu:: groth16::
  run timeout 120 $B gpu-check --sizes 2^16,2^20 --json "$OUT/gpu-check.json"
  run timeout 60 $B synth-only --circuit sha256-chain --size 2^20 -i 3 --compare-gadgets --json "$OUT/synth-s20.json"
  run timeout 120 $B synth-only --circuit sha256-chain --size 2^24 -i 2 --compare-gadgets --json "$OUT/synth-s24.json"
  for mode in 0 1; do
    CUZK_WITNESS_PROGRAM=$mode run timeout 150 $B pce-pipeline --circuit sha256-chain --size 2^24 -n 16 -j 4 \
      --backend cuda:0 --dummy-params --json "$OUT/pipeline-s24-program$mode.json"
  done
  run timeout 200 $B synth-only --circuit sha256-chain --size 2^26 -i 1 --compare-gadgets --json "$OUT/synth-s26.json"
  ;;
witness-porep)
  for s in 2KiB 8MiB; do
    run timeout 200 $B c1 --sector $s --out $P/c1-$s.json
  done
  run timeout 60 $B synth-only --circuit porep-2KiB --c1 $P/c1-2KiB.json -i 3 --compare-gadgets --json "$OUT/synth-porep-2k.json"
  run timeout 200 $B synth-only --circuit porep-8MiB --c1 $P/c1-8MiB.json -i 2 --compare-gadgets --json "$OUT/synth-porep-8m.json"
  for mode in 0 1; do
    CUZK_WITNESS_PROGRAM=$mode run timeout 200 $B pce-pipeline --circuit porep-8MiB --c1 $P/c1-8MiB.json -n 16 -j 4 \
      --backend cuda:0 --dummy-params --json "$OUT/pipeline-porep-8m-program$mode.json"
  done
  ;;
params)
  for n in 22 24; do
    run timeout 200 $B params --circuit sha256-chain --size 2^$n --dummy --out $P/d$n.params
    run timeout 300 $B params --load $P/d$n.params --json "$OUT/load-d$n.json"
    run timeout 200 $PB/peer-bench-supraseal --constraints 2^$n --params $P/d$n.params --proofs 1 --no-harness --json "$OUT/peer-load.jsonl"
    rm -f $P/d$n.params.cuzk-srs
  done
  # Proofs at once after a load in the background (the devices prepared beside the first
  # witness): a first-ever load (decoding), then a restart (the cache the first one wrote).
  for from in decoded cache; do
    run timeout 150 $B prove --circuit sha256-chain --size 2^24 --backend cuda:0 -n 3 --params $P/d24.params --no-verify \
      --background-load --prepare --json "$OUT/first-proof-background-$from.json"
  done
  rm -f $P/d24.params.cuzk-srs
  ;;
params-big)
  run timeout 300 $B params --circuit sha256-chain --size 2^26 --dummy --out $P/d26.params
  run timeout 120 $B params --load $P/d26.params --no-cache --no-bellperson --json "$OUT/load-d26.json"
  run timeout 240 $PB/peer-bench-supraseal --constraints 2^26 --params $P/d26.params --proofs 1 --no-harness --json "$OUT/peer-load.jsonl"
  run timeout 240 $B prove --circuit sha256-chain --size 2^26 --backend cuda:0 -n 2 --params $P/d26.params --no-verify \
    --background-load --prepare --json "$OUT/first-proof-background-d26.json"
  rm -f $P/d26.params $P/d26.params.cuzk-srs
  # A file over 30 GiB: mimc-chain's queries are all dense (38.6 GB at 2^26). supraseal-c2 is
  # timed on its load only (its sha256-chain circuit does not match these parameters).
  run timeout 300 $B params --circuit mimc-chain --size 2^26 --dummy --out $P/m26.params
  run timeout 120 $B params --load $P/m26.params --no-cache --no-bellperson --json "$OUT/load-m26.json"
  run timeout 120 $PB/peer-bench-supraseal --constraints 2^26 --params $P/m26.params --proofs 1 --no-harness --json "$OUT/peer-load.jsonl"
  rm -f $P/m26.params
  ;;
prepare)
  # The first proof after loading, with and without the devices made ready first (Engine::prepare):
  # sha256-chain from a parameter file, mimc-chain (a short witness: the GPU stage shows) in memory.
  run timeout 60 $G/cuzk-lib-tests --test-threads=1 groth16::cuda::
  run timeout 200 $B params --circuit sha256-chain --size 2^24 --dummy --out $P/d24.params
  run timeout 150 $B prove --circuit sha256-chain --size 2^24 --backend cuda:0 -n 4 --params $P/d24.params --no-verify --json "$OUT/first-proof.json"
  run timeout 150 $B prove --circuit sha256-chain --size 2^24 --backend cuda:0 -n 4 --params $P/d24.params --no-verify --prepare --json "$OUT/first-proof-prepared.json"
  run timeout 150 $B prove --circuit mimc-chain --size 2^24 --backend cuda:0 -n 4 --json "$OUT/first-proof-mimc.json"
  run timeout 150 $B prove --circuit mimc-chain --size 2^24 --backend cuda:0 -n 4 --prepare --json "$OUT/first-proof-mimc-prepared.json"
  ;;
latency)
  run timeout 560 $B latency --circuit mimc-chain --size 2^19 --background mimc-chain --background-size 2^24 -j ${J:-8} -n 20 --interval 3 --workers 2 --backend cuda:0 --as-throughput --json "$OUT/latency-2p24.json"
  ;;
latency-big)
  run timeout 580 $B latency --circuit mimc-chain --size 2^19 --background mimc-chain --background-size 2^26 -j ${J:-8} -n 20 --interval 3 --workers 2 --backend cuda:0 --json "$OUT/latency-2p26.json"
  ;;
pieces)
  # How long a throughput MSM piece may be (CUZK_MSM_PIECE_MAX_LG): critical latency and the
  # background's throughput beside mimc-chain 2^26 partitions, their default (2^25) against 2^23.
  for lg in 25 23; do
    CUZK_MSM_PIECE_MAX_LG=$lg run timeout 280 $B latency --circuit mimc-chain --size 2^19 --background mimc-chain --background-size 2^26 -j 8 -n 10 --interval 3 --workers 2 --backend cuda:0 --json "$OUT/latency-2p26-piece$lg.json"
  done
  ;;
ahead)
  # Throughput MSM pieces while a critical request is in the engine: 2^23 (the default)
  # against the partitions' own halves (2^25 for a 2^26 MSM), beside mimc-chain 2^26.
  run timeout 60 $G/cuzk-lib-tests --test-threads=1 device_room turns pieces
  for lg in 23 26; do
    CUZK_MSM_PIECE_AHEAD_LG=$lg run timeout 270 $B latency --circuit mimc-chain --size 2^19 --background mimc-chain --background-size 2^26 -j 8 -n ${N:-10} --interval 3 --workers 2 --backend cuda:0 --json "$OUT/latency-2p26-ahead$lg.json"
  done
  ;;
probe)
  run timeout 200 $G/cuzk-lib-tests --ignored --nocapture --test-threads=1 interference_timings
  run timeout 300 $B latency --circuit mimc-chain --size 2^19 --background mimc-chain --background-size 2^26 -j 8 -n ${N:-10} --interval 3 --workers 2 --backend cuda:0 --json "$OUT/latency-2p26.json"
  ;;
latency-27)
  run timeout 580 $B latency --circuit mimc-chain --size 2^19 --background sha256-chain --background-size 2^27 -j ${J:-6} -n 10 --interval 3 --workers 2 --backend cuda:0 --json "$OUT/latency-2p27.json"
  ;;
pieces-stage)
  # The same bound's cost to the backend stage of a 2^26 sha256-chain partition alone.
  for lg in 25 23; do
    CUZK_MSM_PIECE_MAX_LG=$lg run timeout 280 $B gpu-scaling --circuit sha256-chain --size 2^26 --devices 0 --workers 1,2 -n 3 --json "$OUT/scaling-2p26-piece$lg.json"
  done
  ;;
card-80g)
  run timeout 120 $G/cuzk-lib-tests --test-threads=1 gpu:: groth16::
  run timeout 420 $B gpu-scaling --circuit sha256-chain --size 2^27 --devices 0 --workers 1,2 -n 2 --json "$OUT/scaling-2p27.json"
  ;;
working-set)
  run timeout 150 $G/cuzk-lib-tests --test-threads=1 --nocapture a_proofs_device_buffers_fit_its_working_set
  run timeout 100 $B gpu-scaling --circuit mimc-chain --size 2^24 --devices 0 --workers 1 -n 2 --json "$OUT/buffers-m24.json"
  run timeout 330 $B gpu-scaling --circuit sha256-chain --size 2^27 --devices 0 --workers 1,2 -n 2 --json "$OUT/buffers-s27.json"
  ;;
post)
  for s in 2KiB 8MiB; do
    for k in winning window; do
      c=$k-post-$s
      run timeout 120 $B fixture --circuit $c --out $P/$c.input
      run timeout 300 $B params --circuit $c --out $P/$c.params
      run timeout 120 $B prove --circuit $c --input $P/$c.input --params $P/$c.params --backend cuda:0 -n 5 --json "$OUT/prove-$c-gpu.json"
      run timeout 120 $B prove --circuit $c --input $P/$c.input --params $P/$c.params --backend cpu --compare-bellperson --json "$OUT/prove-$c-cpu.json"
    done
  done
  ;;
snap)
  for c in snap-2KiB snap-8MiB; do
    run timeout 150 $B fixture --circuit $c --out $P/$c.input
    run timeout 200 $B params --circuit $c --out $P/$c.params
    run timeout 200 $B prove --circuit $c --input $P/$c.input --params $P/$c.params --backend cuda:0 -n 3 --json "$OUT/prove-$c-gpu.json"
  done
  c=snap-2KiB
  run timeout 200 $B prove --circuit $c --input $P/$c.input --params $P/$c.params --backend cpu --compare-bellperson --json "$OUT/prove-$c-cpu.json"
  ;;
ni-porep)
  c=porep-8MiB
  run timeout 200 $B c1 --sector 8MiB --seal non-interactive --out $P/ni-8MiB.json
  run timeout 200 $B c1 --sector 8MiB --out $P/c1-8MiB.json
  run timeout 200 $B params --circuit $c --out $P/$c.params
  run timeout 200 $B prove --circuit $c --input $P/ni-8MiB.json --params $P/$c.params --backend cuda:0 -n 3 --json "$OUT/prove-ni-8MiB-gpu.json"
  for j in 2 4; do
    run timeout 200 $B pce-pipeline --circuit $c --input $P/ni-8MiB.json --params $P/$c.params -n 12 -j $j --backend cuda:0 --json "$OUT/pipeline-ni-8MiB-j$j.json"
  done
  run timeout 200 $B pce-pipeline --circuit $c --input $P/c1-8MiB.json --params $P/$c.params -n 64 -j 4 --backend cuda:0 --json "$OUT/pipeline-c1-8MiB-j4.json"
  ;;
seals)
  for s in 2KiB 8MiB; do
    c=porep-$s
    [ -s $P/$c.params ] || run timeout 200 $B params --circuit $c --out $P/$c.params
    for seal in synthetic non-interactive; do
      run timeout 400 $B c1 --sector $s --seal $seal --out $P/$seal-$s.json
      run timeout 200 $B prove --circuit $c --input $P/$seal-$s.json --params $P/$c.params --backend cuda:0 -n 3 --json "$OUT/prove-$seal-$s-gpu.json"
    done
  done
  ;;
post-shapes)
  for s in 2KiB 8MiB 512MiB 32GiB 64GiB; do
    for k in winning window; do
      run timeout 400 $B extract --circuit $k-post-$s --out $P/$k-$s.pce --json "$OUT/shape-$k-$s.json"
      rm -f $P/$k-$s.pce
    done
  done
  ;;
soak)
  nvidia-smi --query-gpu=timestamp,memory.used --format=csv -l 5 > "$OUT/soak-nvidia-smi.csv" 2>&1 &
  smi=$!
  run timeout 560 $B soak -n ${N:-10000} --threads 12 --dir $P/soak --json "$OUT/soak.json"
  kill $smi
  ;;
ours)
  run timeout 120 $G/cuzk-lib-tests --test-threads=1 gpu::
  run timeout 150 $B gpu-check --sizes 2^16,2^20,2^22 --repeat 50 --json "$OUT/gpu-check.json"
  run timeout 150 $B params --circuit sha256-chain --size 2^20 --out $P/s20.params
  run timeout 120 $B prove --circuit sha256-chain --size 2^20 --backend cuda:0 -n 3 --params $P/s20.params --json "$OUT/ours-2p20.json"
  for j in 1 2 4; do
    run timeout 150 $B pce-pipeline --circuit sha256-chain --size 2^20 -n 8 -j $j --backend cuda:0 --params $P/s20.params --plot "$OUT/pipeline-j$j.svg" --json "$OUT/pipeline-j$j.json"
  done
  ;;
peer)
  # Ours against supraseal-c2 (bellperson 0.27 cuda-supraseal) on the same circuit and parameters.
  run timeout 240 $B params --circuit sha256-chain --size 2^22 --out $P/s22.params
  run timeout 120 $PB/peer-bench-supraseal --constraints 2^22 --params $P/s22.params --proofs 3 --no-harness --json "$OUT/peer.jsonl"
  run timeout 120 $B prove --circuit sha256-chain --size 2^22 --backend cuda:0 -n 3 --params $P/s22.params --json "$OUT/ours-2p22.json"
  rm -f $P/s22.params
  run timeout 120 $B params --circuit sha256-chain --size 2^24 --dummy --out $P/d24.params
  run timeout 150 $PB/peer-bench-supraseal --constraints 2^24 --params $P/d24.params --proofs 2 --no-harness --json "$OUT/peer.jsonl"
  run timeout 150 $B prove --circuit sha256-chain --size 2^24 --backend cuda:0 -n 2 --params $P/d24.params --no-verify --json "$OUT/ours-2p24.json"
  rm -f $P/d24.params
  # Pipelines with a warm engine, enough proofs to amortise ramp-up.
  run timeout 100 $B params --circuit sha256-chain --size 2^20 --out $P/s20.params
  for j in 1 2 4 8; do
    run timeout 100 $B pce-pipeline --circuit sha256-chain --size 2^20 -n 24 -j $j --backend cuda:0 --params $P/s20.params --json "$OUT/pipeline-j$j.json"
  done
  ;;
multi)
  # Several GPUs in one process (nvidia-h200-x2 or larger): the same pipeline on
  # one GPU, then spread over all of them.
  run timeout 100 $B params --circuit sha256-chain --size 2^20 --out $P/s20.params
  nvidia-smi --query-gpu=index,memory.used --format=csv 2>&1 | tee -a "$log"
  run timeout 100 $B pce-pipeline --circuit sha256-chain --size 2^20 -n 32 -j 8 --backend cuda:0 --params $P/s20.params --json "$OUT/multi-1gpu.json"
  run timeout 100 $B pce-pipeline --circuit sha256-chain --size 2^20 -n 64 -j 16 --backend auto --params $P/s20.params --json "$OUT/multi-allgpu.json"
  nvidia-smi --query-gpu=index,memory.used --format=csv 2>&1 | tee -a "$log"
  ;;
porep)
  # PoRep C2 on a real 2 KiB C1 with real parameters (generated here), verified.
  run timeout 400 $B params --circuit porep-2KiB --out $P/porep-2k.params
  run timeout 60 $B c1 --sector 2KiB --out $P/c1-2k.json
  run timeout 200 $B prove --circuit porep-2KiB --c1 $P/c1-2k.json --params $P/porep-2k.params --backend cuda:0 -n 3 --json "$OUT/porep-2k-gpu.json"
  run timeout 200 $B prove --circuit porep-2KiB --c1 $P/c1-2k.json --params $P/porep-2k.params --backend cpu -n 1 --json "$OUT/porep-2k-cpu.json"
  rm -f $P/porep-2k.params
  run timeout 200 $B pce-bench --circuit porep-2k --json "$OUT/pce-bench-porep-2k.json"
  ;;
engine)
  # Side by side with supraseal-c2 at 2^24 (dummy parameters: timing only).
  run timeout 120 $B params --circuit sha256-chain --size 2^24 --dummy --out $P/d24.params
  run timeout 150 $PB/peer-bench-supraseal --constraints 2^24 --params $P/d24.params --proofs 2 --no-harness --json "$OUT/peer.jsonl"
  run timeout 150 $B prove --circuit sha256-chain --size 2^24 --backend cuda:0 -n 3 --params $P/d24.params --no-verify --json "$OUT/ours-2p24.json"
  rm -f $P/d24.params
  # One GPU kept busy, then every GPU: two backend workers per device.
  run timeout 300 $B params --circuit sha256-chain --size 2^21 --out $P/s21.params
  nvidia-smi --query-gpu=index,memory.used --format=csv 2>&1 | tee -a "$log"
  run timeout 150 $B pce-pipeline --circuit sha256-chain --size 2^21 -n 160 -j 12 --workers 2 --backend cuda:0 --params $P/s21.params --json "$OUT/engine-1gpu.json"
  run timeout 150 $B pce-pipeline --circuit sha256-chain --size 2^21 -n 320 -j 24 --workers 2 --backend auto --params $P/s21.params --json "$OUT/engine-allgpu.json"
  nvidia-smi --query-gpu=index,memory.used --format=csv 2>&1 | tee -a "$log"
  ;;
sweep)
  # Issue 8's sweep: the engine's predicted peak against VmHWM, with the
  # reservations and the RSS beyond them, and an RSS plot per J.
  run timeout 100 $B params --circuit sha256-chain --size 2^20 --out $P/s20.params
  for j in 1 2 4; do
    run timeout 60 $B pce-pipeline --circuit sha256-chain --size 2^20 -n 8 -j $j --backend cuda:0 --params $P/s20.params --plot "$OUT/sweep-j$j.svg" --json "$OUT/sweep-j$j.json"
  done
  ;;
contention)
  run timeout 150 $G/cuzk-lib-tests --test-threads=1 gpu:: groth16::cuda
  for c in mimc-chain sha256-chain; do
    run timeout 150 $B gpu-scaling --circuit $c --size 2^21 --devices 0,1 --workers 2 -n 60 --json "$OUT/gpu-scaling-$c.json"
  done
  ;&
pipelines)
  [ -f $P/m21.params ] || run timeout 240 $B params --circuit mimc-chain --size 2^21 --out $P/m21.params
  run timeout 100 $B pce-pipeline --circuit mimc-chain --size 2^21 -n 300 -j 18 --workers 2 --backend cuda:0 --params $P/m21.params ${X:-} --json "$OUT/mimc-chain-1gpu.json"
  run timeout 100 $B pce-pipeline --circuit mimc-chain --size 2^21 -n 600 -j 36 --workers 2 --backend auto --params $P/m21.params ${X:-} --json "$OUT/mimc-chain-allgpu.json"
  run timeout 100 $B pce-pipeline --circuit mimc-chain --size 2^21 -n 300 -j 18 --workers 2 --backend cuda:0 --params $P/m21.params ${X:-} --json "$OUT/mimc-chain-1gpu-again.json"
  ;;
aggregate)
  # filecoin-proofs-api's aggregate_seal_commit_proofs itself: 65 NI-PoRep seals (8192 proofs), 65 interactive (1024).
  run timeout 240 $B aggregate --seals 65 --registered-proof StackedDrg32GiBV1_2_Feat_NonInteractivePoRep --repeat 2 \
    --json "$OUT/aggregate-seals-ni65.json"
  run timeout 120 $B aggregate --seals 65 --registered-proof StackedDrg32GiBV1_1 --repeat 2 --json "$OUT/aggregate-seals-i65.json"
  # bellperson's aggregate_proofs, and the MSMs' share.
  for n in 256 8192; do
    run timeout 200 $B aggregate --proofs $n --json "$OUT/aggregate-$n.json"
  done
  run timeout 200 $B aggregate --proofs 8192 --version 1 --json "$OUT/aggregate-8192-v1.json"
  ;;
esac
say "done"
