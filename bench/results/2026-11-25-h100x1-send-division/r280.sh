#!/usr/bin/env bash
# run280: #5's device send (one process, two endpoints on one GPU): the
# tile's words a thread loads at once (MGI_DEV_TILE_WORDS 8 / 16 / 32:
# abbase/gt8, gt16, gt32, sm_90 builds of mgi_gpu_test), alternating
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=20000
L=${OUT:-/tmp}/log.txt; R=${OUT:-/tmp}/raw.txt
exec > >(tee -a $L) 2>&1
set_=(env MGI_SORTER_BLOCKS=32 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64 MGI_DEV_TILE_BATCH=65528)
for r in 1 2; do for v in "32 256 4" "32 512 4" "32 256 8"; do for S in 64 16; do for K in 8 16 32; do
  set -- $v
  echo "== $(date +%T) gt$K bench -l 2 $S B -b $1 -t $2 -K $3"
  "${set_[@]}" timeout 30 abbase/gt$K bench -l 2 -s $S -n 33554432 -b $1 -t $2 -K $3 -T 20 > /tmp/o.txt 2>&1
  cat /tmp/o.txt >> $R; grep -E "^send_bw [0-9]|user blocks|FAIL|rror|TIMEOUT" /tmp/o.txt | grep -v "ep 1:" | sed 's/, 0.0% in receive.*//' | cut -c1-200; done; done; done; done
