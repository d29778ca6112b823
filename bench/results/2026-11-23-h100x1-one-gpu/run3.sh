#!/usr/bin/env bash
# Where the GPU-local pipeline's time goes: send_bw -l 2 on one GPU (one
# process), info logs, then the mover's idle sleep and batch swept.
set -uo pipefail
B=$PWD/bundle/bin
export PATH=$B:$PATH UCX_WARN_UNUSED_ENV_VARS=n
O=${OUT:-/tmp/out}
tuned="MGI_SORTER_BLOCKS=16 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_RECV_DEPTH=256 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=16 MGI_SORT_RINGS=4"
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
echo "== info log, tuned, b=32, 4 GiB"
env $tuned UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=200 timeout 60 mgi_gpu_test bench -l 2 -s 64 -n 67108864 -b 32 -T 40 > $O/info.txt 2>&1
grep -E "mover|sorter|send_bw [0-9]" $O/info.txt | sed 's/.*INFO  //' | head -40
run() { echo "-- $*"; env $tuned "$@" timeout 60 mgi_gpu_test bench -l 2 -s 64 -n 67108864 -b ${BLK:-32} -T 40 2>&1 | grep -E "^send_bw [0-9]|rror|FAIL"; }
for rep in 1 2; do
  run MGI_IDLE_US=50
  run MGI_IDLE_US=0
  run MGI_IDLE_US=5
  run MGI_MOVER_BATCH=8
  run MGI_MOVER_BATCH=128
  run MGI_SORT_RINGS=1
  run MGI_SORTER_BLOCKS=32
  run MGI_SORTER_BLOCKS=48
  BLK=64 run MGI_SORTER_BLOCKS=32
  run MGI_SEG_SIZE=65536 MGI_MOVER_BATCH=64
done
