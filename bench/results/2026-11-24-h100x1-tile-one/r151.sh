#!/usr/bin/env bash
# run151: MGI_WL_MGI_RECV_EVERY on one GPU (1 rank) and two ranks under MPS
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n
export CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000 UCX_TLS=sm,self,cuda_copy,cuda_ipc
L=${OUT:-/tmp}/log.txt
exec > >(tee -a $L) 2>&1
set_=(env MGI_SORTER_BLOCKS=32 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64)
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
for r in 1 2; do for op in exchange groupby; do for e in 1 2 4 8; do
  echo "== $(date +%T) round $r one rank --op $op MGI_WL_MGI_RECV_EVERY=$e"
  "${set_[@]}" MGI_WL_MGI_RECV_EVERY=$e timeout 120 $B/mgi_workloads --op $op --variant mgi --gpus 1 --gib 0.5 --iters 3 --warmup 1 2>&1 | grep -E "GB/s|rror" | cut -c1-300
done; done; done
nvidia-cuda-mps-control -d && echo "== MPS daemon started"; sleep 1
for r in 1 2; do for op in exchange groupby; do for e in 1 2 4 8; do
  echo "== $(date +%T) round $r two ranks on one GPU, MPS --op $op MGI_WL_MGI_RECV_EVERY=$e"
  "${set_[@]}" MGI_WL_MGI_BLOCKS=32 MGI_WL_SHARE_GPUS=1 MGI_STAGE_GROUPS=2 MGI_WL_MGI_RECV_EVERY=$e timeout 120 $B/mgi_workloads --op $op --variant mgi --gpus 2 --gib 0.5 --iters 3 --warmup 1 2>&1 | grep -E "GB/s|rror" | cut -c1-300
done; done; done
echo quit | nvidia-cuda-mps-control; sleep 1
