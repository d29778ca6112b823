#!/usr/bin/env bash
# run283: where a one-destination tile send's cycles go (abbase/gtp:
# mgi_gpu_test with mgi_dev_send_tile_one timed by phase, sm_90)
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=20000
L=${OUT:-/tmp}/log.txt
exec > >(tee -a $L) 2>&1
set_=(env MGI_SORTER_BLOCKS=32 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64 MGI_DEV_TILE_BATCH=65528)
for S in 64 16; do for K in 4 8; do
  echo "== $(date +%T) gtp bench -l 2 $S B -b 32 -t 256 -K $K"
  "${set_[@]}" timeout 30 abbase/gtp bench -l 2 -s $S -n 33554432 -b 32 -t 256 -K $K -T 20 2>&1 | grep -E "^send_bw [0-9]|user blocks|tile_one|FAIL|rror" | grep -v "ep 1:" | sed 's/, 0.0% in receive.*//' | cut -c1-250
done; done
