#!/usr/bin/env bash
# run350 (2 x H200): what copies of a mover's size can move between the
# GPUs, and how long the mover's puts are when stage runs may grow.
# Called with the device tool, bundle/ carried:
#   bash bench/results/2026-11-26-h200x2-copy-sizes/r350.sh
#   1. mgi_gpu_test copy_sizes: GPU0 -> GPU1 by copy size, five ways
#   2. the MGI Exchange (run.sh's set) with info logs every 2 ms: the set,
#      then MGI_MOVER_BATCH=64 MGI_STAGE_DEPTH=64 with MGI_SEND_WAIT_ROUNDS
#      16 / 64 / 256
O=${OUT:-/tmp}; LIMIT=${LIMIT:-200}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n \
       NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
part() { if [ $SECONDS -gt $LIMIT ]; then echo "== $(date +%T) SKIPPED $1 (${SECONDS}s > ${LIMIT}s)"; return 1; fi; echo "== $(date +%T) [${SECONDS}s] $1"; }
nvidia-smi -L
part "1 copy sizes" && timeout 120 $B/mgi_gpu_test copy_sizes
export MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi MGI_SORTER_BLOCKS=64 MGI_SEND_ZCOPY=1 \
       MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=1024 \
       MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=64 MGI_SORT_RINGS=4
if part "2 exchange, mover lines"; then
  n=0
  for v in "MGI_X=0" "MGI_MOVER_BATCH=64 MGI_STAGE_DEPTH=64" "MGI_MOVER_BATCH=64 MGI_STAGE_DEPTH=64 MGI_SEND_WAIT_ROUNDS=64" "MGI_MOVER_BATCH=64 MGI_STAGE_DEPTH=64 MGI_SEND_WAIT_ROUNDS=256"; do
    n=$((n + 1)); echo "-- $v"
    env $v UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=2 timeout 60 $B/mgi_workloads --gpus 2 --iters 1 --warmup 1 --gib 2 --variant mgi --op exchange > $O/info-exchange-$n.txt 2>&1
    grep -E "^exchange" $O/info-exchange-$n.txt | sed 's/ sf=.*partition_ms=0.000//'
    grep -E "mover \(rank" $O/info-exchange-$n.txt | grep -v " 0 segments/s" | sed 's/.*INFO  //' | cut -c1-330 | tail -6
    timeout 60 env $v $B/mgi_workloads --gpus 2 --iters 3 --warmup 1 --gib 2 --variant mgi --op exchange 2>&1 | grep -E "^exchange +mgi|rror" | sed 's/ sf=.*partition_ms=0.000//'
  done
fi
echo "== $(date +%T) done in ${SECONDS}s"
