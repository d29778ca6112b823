#!/usr/bin/env bash
# run284: why did abbase/gtp's kernel not start (run283)? the bundle's
# mgi_gpu_test beside it
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=20000
L=${OUT:-/tmp}/log.txt
exec > >(tee -a $L) 2>&1
set_=(env MGI_SORTER_BLOCKS=32 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64 MGI_DEV_TILE_BATCH=65528)
for bin in $B/mgi_gpu_test abbase/gtp; do
  echo "== $(date +%T) $bin bench -l 2 64 B -b 32 -t 256 -K 4"
  "${set_[@]}" timeout 30 $bin bench -l 2 -s 64 -n 33554432 -b 32 -t 256 -K 4 -T 20 2>&1 | grep -vE "^\[" | tail -12 | cut -c1-250
done
echo "== $(date +%T) groupby"
timeout 30 $B/mgi_gpu_test groupby -n 200000 -b 8 -T 20 2>&1 | tail -3 | cut -c1-250
