#!/usr/bin/env bash
# run1280 (2 GPUs): the workloads' MGI Exchange on the final tree with
# the user blocks' receive interleave and tile size around run.sh's set
# (receive every 8 sends, tiles of 4 tuples a thread), two rounds in turn;
# GroupBy with the same.
# Called with the device tool, bundle/ carried:
#   bash bench/results/2026-11-26-x2-final/r1280.sh
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1
nvidia-smi -L
wl() {  # the workloads' MGI variant with run.sh's settings, then VAR=value settings: OP
  ( export LD_LIBRARY_PATH=$PWD/bundle/lib MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi MGI_SORTER_BLOCKS=40 MGI_SEND_ZCOPY=1 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 \
      MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=1024 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=64 MGI_SORT_RINGS=4
    op=$1; shift; for v in "$@"; do export "$v"; done
    timeout 90 $B/mgi_workloads --gpus 2 --iters 3 --warmup 1 --gib 2 --variant mgi --op $op 2>&1 | grep -E "^[a-z]+ +mgi|rror" | sed 's/ sf=.*partition_ms=0.000//;s/ iters=3//;s/gpus=2 //' | cut -c1-140 )
}
declare -A C=(
  [1]=""
  [2]="MGI_WL_MGI_RECV_EVERY=4"
  [3]="MGI_WL_MGI_RECV_EVERY=16"
  [4]="MGI_WL_MGI_RECV_EVERY=32"
  [5]="MGI_WL_MGI_TILE=8"
  [6]="MGI_WL_MGI_TILE=2"
  [7]="MGI_WL_MGI_RECV_TUPLES=262144"
  [8]="MGI_STAGE_DEPTH=64 MGI_WL_MGI_RECV_EVERY=16"
)
for r in 1 2; do
  for k in 1 2 3 4 5 6 7 8; do
    echo "-- r$r $k (${C[$k]:-run.sh}): $(wl exchange ${C[$k]})"
  done
done
for k in 1 3 4; do echo "-- $k groupby: $(wl groupby ${C[$k]})"; done
echo "== $(date +%T) done in ${SECONDS}s"
