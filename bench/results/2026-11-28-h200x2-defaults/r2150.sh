#!/usr/bin/env bash
# run2150 (2 GPUs): libmgi's ring settings as a program gets them without
# setting any (the defaults), against larger ones, on the path through
# the sorters and movers (MGI_DIRECT_RINGS=0, the default):
#   S0  the defaults
#   S1  deeper rings: stage 16, sort 256, receive 256, final 16 segments,
#       mover batch 32
#   S2  S1 with 128 KiB segments (MGI_SEG_SIZE=131072)
#   S3  S2 with 16 sorter blocks and 4 sort rings (the GPU suite's *_tuned)
# Each: device send of 64-byte tuples GPU0 -> GPU1 (mgi_gpu_test bench,
# 2 processes, 32 user blocks, 1 GiB) and the workloads' MGI Exchange and
# GroupBy (2 GiB a GPU, the program's own block counts); then each set's
# endpoint and context info lines (ring sizes).
#   bash bench/results/2026-11-28-h200x2-defaults/r2150.sh  (bundle/ carried)
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 CUDA_MODULE_LOADING=EAGER
export UCX_TLS=sm,self,cuda_mgi,cuda_copy MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi
nvidia-smi -L
S1="MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_RECV_DEPTH=256 MGI_FINAL_DEPTH=16 MGI_MOVER_BATCH=32"
S2="$S1 MGI_SEG_SIZE=131072"
S3="$S2 MGI_SORTER_BLOCKS=16 MGI_SORT_RINGS=4"
for r in 1 2; do
  for s in S0 S1 S2 S3; do
    eval "set=\${$s:-}"
    echo "-- $s send_bw: $(env $set timeout 90 $B/mgi_launch -n 2 -t 85 -- $B/mgi_gpu_test bench -s 64 -n 16777216 -b 32 -T 60 2>&1 | tee -a $O/sendbw.txt | grep -E '^send_bw [0-9]+ B tuples|FAIL|rror' | cut -c1-160)"
    for op in exchange groupby; do
      env $set timeout 90 $B/mgi_workloads --gpus 2 --iters 3 --warmup 1 --gib 2 --variant mgi --op $op > /tmp/wl.txt 2>&1
      cat /tmp/wl.txt >> $O/wl.txt
      echo "-- $s $op: $(grep -E "^$op +mgi|rror|FAIL" /tmp/wl.txt | sed 's/ sf=.*cross_GB=[0-9.]*//' | cut -c1-200)"
    done
  done
done
for s in S0 S1 S2 S3; do
  eval "set=\${$s:-}"
  env $set UCX_LOG_LEVEL=info timeout 60 $B/mgi_gpu_test bench -l 2 -s 64 -n 1048576 -b 32 -T 30 2>&1 | grep -E "mgi context|mgi ep [0-9]+: GPU" | sed 's/^\[[0-9.]*\] //;s/^.*UCX  INFO  //' | head -2 | sed "s/^/$s: /"
done
echo "== $(date +%T) done in ${SECONDS}s"
