#!/usr/bin/env bash
# MGI_MOVER_FLUSHES on one GPU (one process, both endpoints on GPU 0, deep
# receive lanes and final rings), then the channels suite on this tree.
set -uo pipefail
B=$PWD/bundle/bin
export PATH=$B:$PATH UCX_WARN_UNUSED_ENV_VARS=n
O=${OUT:-/tmp/out}
base="MGI_SORTER_BLOCKS=32 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64"
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
run() { echo "-- b=${BLK:-32} $*"; env $base "$@" timeout 60 mgi_gpu_test bench -l 2 -s 64 -n 67108864 -b ${BLK:-32} -T 40 2>&1 | grep -E "^send_bw [0-9]|rror|FAIL"; }
for rep in 1 2 3; do
  for f in 16 32 64; do
    run MGI_MOVER_FLUSHES=$f
    BLK=64 run MGI_MOVER_FLUSHES=$f
  done
done
echo "== info: 64 flushes, b=64"
env $base MGI_MOVER_FLUSHES=64 UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=10 timeout 60 mgi_gpu_test bench -l 2 -s 64 -n 67108864 -b 64 -T 40 > $O/info-flushes64.txt 2>&1
grep -E "mover|sorter|send_bw [0-9]" $O/info-flushes64.txt | sed 's/.*INFO  //' | grep -v "kernel on" | head -24
echo "== channels suite (one GPU)"
MGI_SUITE_BUDGET_S=200 bash bundle/run/mgi-gpu-suite.sh $B /tmp/mgi > $O/suite-final.txt 2>&1
grep -E "^(PASS|FAIL|SKIPPED|TIMEOUT|== [0-9])" $O/suite-final.txt
