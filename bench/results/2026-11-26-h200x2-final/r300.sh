#!/usr/bin/env bash
# run300 (2 x H200): the tree of 2c9d24a between two GPUs, first
# time since run241. Called with the device tool, bundle/ carried:
#   bash bench/results/2026-11-26-h200x2-final/r300.sh
# Parts in order of importance; a part that would start after $LIMIT s
# is skipped and says so. Everything is logged into $OUT as it goes.
#   1. the harness (#6): Exchange / GroupBy / Join, every variant in one
#      invocation per op, 2 GiB a GPU (workloads.sh, phase ops)
#   2. mgi only: the mover's copies against MGI_SEND_ZCOPY=1, alternating
#   3. #5's device send GPU0 -> GPU1, 64 B and 16 B tiles, with the copy
#      engine in the same run
#   4. one Exchange with info logs (the sorters' and the mover's lines)
#   5. the Zipf sweep (workloads.sh, phase zipf)
#   6. the GPU suite's two-GPU steps of GroupBy, send by reference and
#      the workloads
O=${OUT:-/tmp}; LIMIT=${LIMIT:-250}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n \
       NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER \
       MGI_TIMEOUT_MS=30000
part() { if [ $SECONDS -gt $LIMIT ]; then echo "== $(date +%T) SKIPPED $1 (${SECONDS}s > ${LIMIT}s)"; return 1; fi; echo "== $(date +%T) [${SECONDS}s] $1"; }
nvidia-smi -L; nvidia-smi topo -m 2>&1 | head -4
wlgrep='^(exchange|groupby|join)|^== |FAIL|rror'
part "1 harness ops" &&
  MGI_WL_TIMEOUT=60 MGI_WL_ITERS=3 MGI_WL_PHASES="ops" \
    bash bundle/run/workloads.sh /tmp/wl 2 2 2>&1 | grep -E "$wlgrep" | cut -c1-300
cp /tmp/wl/ratios.txt $O/ratios-ops.txt 2>/dev/null
wl() { timeout 60 $B/mgi_workloads --gpus 2 --iters 3 --warmup 1 --gib 2 --variant mgi "$@" 2>&1 | grep -E "^[a-z]+ +mgi|rror|FAIL" | sed 's/ sf=.*partition_ms=0.000//' | cut -c1-300; }
export MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi MGI_SORTER_BLOCKS=48 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_RECV_DEPTH=1024 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=64 MGI_SORT_RINGS=4
if part "2 send by reference"; then
  for op in exchange join groupby; do
    for v in "0 16" "1 32" "0 16" "1 32"; do
      set -- $v; echo "-- $op MGI_SEND_ZCOPY=$1 MGI_STAGE_DEPTH=$2"
      MGI_SEND_ZCOPY=$1 MGI_STAGE_DEPTH=$2 wl --op $op
    done
  done
fi
if part "3 device send"; then
  for s in 64 16; do
    echo "-- mgi_gpu_test bench -l 2 -s $s -b 48 -K 4 (tuned set, 48 sorter blocks)"
    UCX_TLS=sm,self,cuda_mgi,cuda_copy MGI_STAGE_DEPTH=16 MGI_DEV_TILE_BATCH=65528 timeout 60 \
      $B/mgi_gpu_test bench -l 2 -s $s -n 67108864 -b 48 -K 4 -T 40 2>&1 |
      grep -E "^send_bw|FAIL|rror|TIMEOUT" | cut -c1-300
  done
fi
if part "4 exchange with info logs"; then
  UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=100000 MGI_STAGE_DEPTH=16 timeout 60 $B/mgi_workloads --gpus 2 --iters 1 --warmup 0 --gib 2 --variant mgi --op exchange > $O/info-exchange.txt 2>&1
  grep -E "^exchange" $O/info-exchange.txt
fi
part "5 harness zipf" &&
  MGI_WL_TIMEOUT=60 MGI_WL_ITERS=3 MGI_WL_PHASES="zipf" \
    bash bundle/run/workloads.sh /tmp/wl 2 2 2>&1 | grep -E "$wlgrep" | cut -c1-300
cp /tmp/wl/ratios.txt $O/ratios.txt 2>/dev/null
tar czf $O/wl.tgz -C /tmp wl 2>/dev/null
if part "6 suite, two-GPU steps"; then
  unset MGI_SORTER_BLOCKS MGI_SORTER_THREADS MGI_SEG_SIZE MGI_RECV_DEPTH MGI_SORT_DEPTH MGI_MOVER_BATCH MGI_FINAL_DEPTH MGI_SORT_RINGS MGI_WL_MGI_TLS
  MGI_SUITE_BUDGET_S=$(( LIMIT + 40 - SECONDS )) UCX_TLS=sm,self,cuda_mgi,cuda_copy \
    bash bundle/run/mgi-gpu-suite.sh $B /tmp/suite '^groupby_(2proc|1proc_2gpu)$|send_ref|^workloads_(exchange|join_fused|groupby)$' > $O/suite.txt 2>&1
  grep -E "^(PASS|FAIL|SKIP)|^== " $O/suite.txt
fi
echo "== $(date +%T) done in ${SECONDS}s"
