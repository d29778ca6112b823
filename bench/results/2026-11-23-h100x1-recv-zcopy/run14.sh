#!/usr/bin/env bash
# Does a copy inside one GPU need free SMs? D2D cudaMemcpyAsync while
# spinning blocks hold k SMs; then the exchange with fewer blocks held.
set -uo pipefail
B=$PWD/bundle/bin
export PATH=$B:$PATH UCX_WARN_UNUSED_ENV_VARS=n
O=${OUT:-/tmp/out}
timeout 120 abbase/probe/memcpy_sm 2>&1 | tee $O/memcpy-sm.txt
tuned="MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64"
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
for rep in 1 2; do
  for sb in 32 16 8; do
    for ub in 32 16; do
      echo "-- rep $rep sorter blocks $sb user blocks $ub shuffle 64B"; env $tuned MGI_SORTER_BLOCKS=$sb timeout 60 mgi_gpu_test shuffle -l 2 -s 64 -n 33554432 -b $ub -T 40 2>&1 | grep -E "^shuffle [0-9]|FAIL|rror"
    done
  done
done 2>&1 | tee $O/shuffle-blocks.txt
