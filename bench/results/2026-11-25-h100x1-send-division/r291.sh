#!/usr/bin/env bash
# run291: after the second review's mend (d8eb582): the one-rank workloads
# and #5's device send, then the GPU suite
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n
export CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000 NCCL_NVLS_ENABLE=0 UCX_TLS=sm,self,cuda_mgi,cuda_copy
L=${OUT:-/tmp}/log.txt
exec > >(tee -a $L) 2>&1
set_=(env MGI_SORTER_BLOCKS=32 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64)
for op in exchange join groupby; do echo "== $(date +%T) one rank $op"
  "${set_[@]}" timeout 60 $B/mgi_workloads --op $op --variant mgi --gpus 1 --gib 0.5 --iters 3 --warmup 1 2>&1 | grep -E "total_ms|rror|FAIL" | sed 's/sf=.*partition/partition/' | cut -c1-300; done
for s in 64 16; do echo "== $(date +%T) send_bw -l 2 -s $s -b 32 -K 4"
  MGI_DEV_TILE_BATCH=65528 "${set_[@]}" timeout 60 $B/mgi_gpu_test bench -l 2 -s $s -n 33554432 -b 32 -K 4 -T 30 2>&1 | grep -E "^send_bw [0-9]|FAIL|rror" | cut -c1-250; done
SUITE_S=420 bash abbase/r80b.sh suite '.' | tail -3
