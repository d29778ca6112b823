#!/usr/bin/env bash
# run2160 (2 GPUs): which of run2150's S3 settings carry the device send,
# for defaults that follow the endpoint's kind (sorter blocks and sort
# rings serve GPU endpoints only; depths and segments every endpoint):
#   T1  the defaults with 16 sorter blocks and 4 sort rings
#   T2  T1 with depths stage / sort / receive / final 16 / 256 / 256 / 16
#       and mover batch 32 (the segment as derived: 36992 bytes here)
#   T3  T2 with 64 KiB segments
#   S3  T2 with 128 KiB segments (run2150's S3)
# Device send of 64-byte tuples GPU0 -> GPU1 (2 processes, 32 user blocks,
# 1 GiB), twice in turn; the workloads' MGI Exchange with T3 and S3.
#   bash bench/results/2026-11-28-h200x2-defaults/r2160.sh  (bundle/ carried)
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 CUDA_MODULE_LOADING=EAGER
export UCX_TLS=sm,self,cuda_mgi,cuda_copy MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi
nvidia-smi -L
T1="MGI_SORTER_BLOCKS=16 MGI_SORT_RINGS=4"
T2="$T1 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_RECV_DEPTH=256 MGI_FINAL_DEPTH=16 MGI_MOVER_BATCH=32"
T3="$T2 MGI_SEG_SIZE=65536"
S3="$T2 MGI_SEG_SIZE=131072"
for r in 1 2; do
  for s in T1 T2 T3 S3; do
    eval "set=\${$s}"
    echo "-- $s send_bw: $(env $set timeout 90 $B/mgi_launch -n 2 -t 85 -- $B/mgi_gpu_test bench -s 64 -n 16777216 -b 32 -T 60 2>&1 | tee -a $O/sendbw.txt | grep -E '^send_bw [0-9]+ B tuples|FAIL|rror' | cut -c1-160)"
  done
  for s in T3 S3; do
    eval "set=\${$s}"
    env $set timeout 90 $B/mgi_workloads --gpus 2 --iters 3 --warmup 1 --gib 2 --variant mgi --op exchange > /tmp/wl.txt 2>&1
    cat /tmp/wl.txt >> $O/wl.txt
    echo "-- $s exchange: $(grep -E "^exchange +mgi|rror|FAIL" /tmp/wl.txt | sed 's/ sf=.*cross_GB=[0-9.]*//' | cut -c1-200)"
  done
done
echo "== $(date +%T) done in ${SECONDS}s"
