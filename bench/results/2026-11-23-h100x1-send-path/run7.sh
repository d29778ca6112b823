#!/usr/bin/env bash
# New send path, 64 B tuples, one GPU: sorter blocks, sorter threads,
# final depth and user blocks around the tuned settings.
set -uo pipefail
B=$PWD/bundle/bin
export PATH=$B:$PATH UCX_WARN_UNUSED_ENV_VARS=n
base="MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024"
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
run() { local b=$1; shift; echo "-- b=$b $*"; env $base "$@" timeout 60 mgi_gpu_test bench -l 2 -s 64 -n 67108864 -b $b -T 40 2>&1 | grep -E "^send_bw [0-9]|rror|FAIL"; }
for rep in 1 2; do
  for sb in 16 32 48; do
    for fd in 64 128; do
      for b in 32 48; do
        run $b MGI_SORTER_BLOCKS=$sb MGI_FINAL_DEPTH=$fd
      done
    done
  done
  run 32 MGI_SORTER_BLOCKS=32 MGI_FINAL_DEPTH=64 MGI_SORTER_THREADS=512
  run 32 MGI_SORTER_BLOCKS=32 MGI_FINAL_DEPTH=64 MGI_SORT_RINGS=8
  run 32 MGI_SORTER_BLOCKS=32 MGI_FINAL_DEPTH=64 MGI_STAGE_DEPTH=32
done
