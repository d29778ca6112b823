#!/usr/bin/env bash
# run279: #5's device send between two endpoints of one process on one GPU:
# user blocks x threads (and tile) of the source, 64 B and 16 B
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
L=${OUT:-/tmp}/log.txt; R=${OUT:-/tmp}/raw.txt
exec > >(tee -a $L) 2>&1
set_=(env MGI_SORTER_BLOCKS=32 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64 MGI_DEV_TILE_BATCH=65528)
for S in 64 16; do for v in ${VS:-"32 256 4" "32 1024 4" "48 512 4" "48 1024 4" "64 512 4" "64 1024 4" "96 512 4" "64 1024 8" "64 512 8"}; do
  set -- $v
  echo "== $(date +%T) bench -l 2 $S B -b $1 -t $2 -K $3"
  "${set_[@]}" timeout 40 $B/mgi_gpu_test bench -l 2 -s $S -n 33554432 -b $1 -t $2 -K $3 -T 30 > /tmp/o.txt 2>&1
  cat /tmp/o.txt >> $R; grep -E "^send_bw [0-9]|user blocks|source kernel|FAIL|rror|TIMEOUT|fit" /tmp/o.txt | grep -v "ep 1:" | cut -c1-220; done; done
