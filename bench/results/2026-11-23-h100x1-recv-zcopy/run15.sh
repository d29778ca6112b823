#!/usr/bin/env bash
# Copies inside one GPU beside resident blocks that sleep or poll; then the
# exchange and send_bw with sorter blocks that sleep when idle (1000 ns,
# the default) or poll on (MGI_SORTER_IDLE_NS=0), one invocation.
set -uo pipefail
B=$PWD/bundle/bin
export PATH=$B:$PATH UCX_WARN_UNUSED_ENV_VARS=n
O=${OUT:-/tmp/out}
timeout 150 abbase/probe/memcpy_sm 2>&1 | tee $O/memcpy-sm-3.txt
tuned="MGI_SORTER_BLOCKS=32 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64"
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
for rep in 1 2; do
  for ns in 1000 0; do
    echo "-- rep $rep idle_ns $ns shuffle 64B"; env $tuned MGI_SORTER_IDLE_NS=$ns timeout 60 mgi_gpu_test shuffle -l 2 -s 64 -n 33554432 -b 32 -T 40 2>&1 | grep -E "^shuffle [0-9]|FAIL|rror"
    echo "-- rep $rep idle_ns $ns shuffle 16B"; env $tuned MGI_SORTER_IDLE_NS=$ns timeout 60 mgi_gpu_test shuffle -l 2 -s 16 -n 67108864 -b 32 -T 40 2>&1 | grep -E "^shuffle [0-9]|FAIL|rror"
    echo "-- rep $rep idle_ns $ns send_bw 64B"; env $tuned MGI_SORTER_IDLE_NS=$ns timeout 60 mgi_gpu_test bench -l 2 -s 64 -n 67108864 -b 32 -T 40 2>&1 | grep -E "^send_bw [0-9]|FAIL|rror"
  done
done 2>&1 | tee $O/idle.txt
