#!/usr/bin/env bash
# run286: the one-destination tile send with the message index carried
# instead of divided per word (abbase/gtp2) against the division (gtp);
# both timed by phase; alternating, twice
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=20000
L=${OUT:-/tmp}/log.txt
exec > >(tee -a $L) 2>&1
set_=(env MGI_SORTER_BLOCKS=32 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64 MGI_DEV_TILE_BATCH=65528)
for r in 1 2; do for S in 64 16; do for bin in gtp gtp2; do
  echo "== $(date +%T) $bin bench -l 2 $S B -b 32 -t 256 -K 4"
  "${set_[@]}" timeout 30 abbase/$bin bench -l 2 -s $S -n 33554432 -b 32 -t 256 -K 4 -T 20 2>&1 | grep -E "^send_bw [0-9]|user blocks|tile_one|FAIL|rror" | grep -v "ep 1:" | sed 's/, 0.0% in receive.*//' | cut -c1-250
done; done; done
