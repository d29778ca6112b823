#!/usr/bin/env bash
# run500 (2 x H200): with the lane owners apart, the split of the SMs
# between sorter blocks (MGI_SORTER_BLOCKS) and the workloads' user blocks
# (MGI_WL_MGI_BLOCKS), in turn: 64+64 (run.sh's), 48+84, 40+92, 32+100;
# Exchange twice each, then GroupBy and Join for 64+64 and the two others
# that moved most. Called with the device tool, bundle/ carried:
#   bash bench/results/2026-11-26-h200x2-poll/r500.sh
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n \
       NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
export MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi MGI_SORTER_BLOCKS=64 MGI_SEND_ZCOPY=1 \
       MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=1024 \
       MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=64 MGI_SORT_RINGS=4
wl() { timeout 60 $B/mgi_workloads --gpus 2 --iters 3 --warmup 1 --gib 2 --variant mgi --op "$@" 2>&1 | grep -E "^[a-z]+ +mgi|rror" | sed 's/ sf=.*partition_ms=0.000//'; }
nvidia-smi -L
echo "== $(date +%T) [${SECONDS}s] 1 exchange: sorter + user blocks, in turn"
for r in 1 2; do
  for v in "64 64" "48 84" "40 92" "32 100"; do
    set -- $v; echo "- MGI_SORTER_BLOCKS=$1 MGI_WL_MGI_BLOCKS=$2"
    MGI_SORTER_BLOCKS=$1 MGI_WL_MGI_BLOCKS=$2 wl exchange
  done
done
echo "== $(date +%T) [${SECONDS}s] 2 groupby and join"
for op in groupby join; do
  for v in "64 64" "48 84" "40 92" "32 100"; do
    set -- $v; echo "- MGI_SORTER_BLOCKS=$1 MGI_WL_MGI_BLOCKS=$2"
    MGI_SORTER_BLOCKS=$1 MGI_WL_MGI_BLOCKS=$2 wl $op
  done
done
echo "== $(date +%T) [${SECONDS}s] 3 exchange with UCX_CUDA_MGI_BATCH=y"
for v in "64 64" "40 92" "32 100"; do
  set -- $v; echo "- MGI_SORTER_BLOCKS=$1 MGI_WL_MGI_BLOCKS=$2 UCX_CUDA_MGI_BATCH=y"
  UCX_CUDA_MGI_BATCH=y MGI_SORTER_BLOCKS=$1 MGI_WL_MGI_BLOCKS=$2 wl exchange
done
echo "== $(date +%T) done in ${SECONDS}s"
