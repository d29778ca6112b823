#!/usr/bin/env bash
# run282: #5's device send (one process, two endpoints on one GPU) with the
# sorters' copies replaced by references: MGI_SEND_ZCOPY=1 (the mover puts
# whole stage segments from the stage rings), MGI_RECV_ZCOPY=1 (final rings
# refer to lane segments), both; alternating, twice
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=20000
L=${OUT:-/tmp}/log.txt; R=${OUT:-/tmp}/raw.txt
exec > >(tee -a $L) 2>&1
set_=(env MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64 MGI_DEV_TILE_BATCH=65528)
for r in 1 2; do for S in 64 16; do for v in "0 0 16 32" "1 0 32 32" "0 1 16 32" "1 1 32 32" "1 1 32 24" "1 1 64 32"; do
  set -- $v
  echo "== $(date +%T) bench -l 2 $S B MGI_SEND_ZCOPY=$1 MGI_RECV_ZCOPY=$2 MGI_STAGE_DEPTH=$3 MGI_SORTER_BLOCKS=$4"
  MGI_SEND_ZCOPY=$1 MGI_RECV_ZCOPY=$2 MGI_STAGE_DEPTH=$3 MGI_SORTER_BLOCKS=$4 "${set_[@]}" timeout 40 $B/mgi_gpu_test bench -l 2 -s $S -n 33554432 -b 32 -t 256 -K 4 -T 20 > /tmp/o.txt 2>&1
  cat /tmp/o.txt >> $R; grep -E "^send_bw [0-9]|user blocks|FAIL|rror|TIMEOUT" /tmp/o.txt | grep -v "ep 1:" | sed 's/, 0.0% in receive.*//' | cut -c1-300; done; done; done
