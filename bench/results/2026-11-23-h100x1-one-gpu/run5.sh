#!/usr/bin/env bash
# Is the GPU-local pipeline bound by its loop latency (credits)? Receive
# lane and final ring depths swept, one GPU, one process, 4 GiB.
set -uo pipefail
B=$PWD/bundle/bin
export PATH=$B:$PATH UCX_WARN_UNUSED_ENV_VARS=n
O=${OUT:-/tmp/out}
base="MGI_SORTER_BLOCKS=32 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4"
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
run() { echo "-- $*"; env $base "$@" timeout 60 mgi_gpu_test bench -l 2 -s 64 -n 67108864 -b ${BLK:-32} -T 40 2>&1 | grep -E "^send_bw [0-9]|rror|FAIL"; }
for rep in 1 2; do
  for rd in 256 1024 2048; do
    for fd in 16 64; do
      run MGI_RECV_DEPTH=$rd MGI_FINAL_DEPTH=$fd
    done
  done
  BLK=64 run MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64
  run MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64 MGI_SORT_DEPTH=1024
  run MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64 MGI_MOVER_BATCH=8
done
echo "== info: recv depth 1024, final 64"
env $base MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64 UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=10 timeout 60 mgi_gpu_test bench -l 2 -s 64 -n 67108864 -b 32 -T 40 > $O/info-deep.txt 2>&1
grep -E "mover|sorter|send_bw [0-9]" $O/info-deep.txt | sed 's/.*INFO  //' | grep -v "kernel on" | head -24
