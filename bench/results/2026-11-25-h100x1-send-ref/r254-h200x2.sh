#!/usr/bin/env bash
# For the next 2 x H200 session (not run here: only one-GPU kinds were
# lent). Copy to abbase/ and call with the device tool, carrying bundle and
# abbase; about 3 minutes. MGI_SEND_ZCOPY=1 (whole stage segments put by
# the mover from the stage rings) against the mover's copies, alternating,
# 2 GiB a GPU, run.sh's ring set with stage rings of 32; then fewer sorter
# blocks (the program fits its user blocks beside them) with receive by
# reference (the stand-in's best, ref20z); then #5's device send GPU0 ->
# GPU1 (64 B, tiles).
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0
export MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_RECV_DEPTH=1024 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=64 MGI_SORT_RINGS=4 CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
nvidia-smi -L
for op in exchange exchange join groupby; do
  for v in "0 16 48 0" "1 32 48 0" "1 32 32 1" "1 32 24 1"; do
    set -- $v
    echo "== $(date +%T) $op 2 GPUs mgi MGI_SEND_ZCOPY=$1 MGI_STAGE_DEPTH=$2 MGI_SORTER_BLOCKS=$3 MGI_RECV_ZCOPY=$4"
    MGI_SEND_ZCOPY=$1 MGI_STAGE_DEPTH=$2 MGI_SORTER_BLOCKS=$3 MGI_RECV_ZCOPY=$4 timeout 100 $B/mgi_workloads --gpus 2 --iters 3 --warmup 1 --op $op --gib 2 --variant mgi 2>&1 | grep -E "^$op|rror|FAIL" | sed 's/ sf=.*partition_ms=0.000//' | cut -c1-300
  done
done
tuned=(env UCX_TLS=sm,self,cuda_mgi,cuda_copy MGI_SORTER_BLOCKS=48 MGI_DEV_TILE_BATCH=65528)
for v in "0 16" "1 32" "1 64"; do
  set -- $v
  echo "== $(date +%T) mgi_gpu_test bench -l 2 -s 64 -b 48 -K 4, MGI_SEND_ZCOPY=$1 MGI_STAGE_DEPTH=$2"
  "${tuned[@]}" MGI_SEND_ZCOPY=$1 MGI_STAGE_DEPTH=$2 timeout 60 $B/mgi_gpu_test bench -l 2 -s 64 -n 67108864 -b 48 -K 4 -T 40 2>&1 | grep -E "^send_bw [0-9]|FAIL|rror|TIMEOUT" | cut -c1-300
done
