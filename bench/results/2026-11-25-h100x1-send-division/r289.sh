#!/usr/bin/env bash
# run289: a kernel with device printf launched beside the endpoints' sorter
# kernels (abbase/gtsp): as it is, with the printf FIFO sized before the
# endpoints (GT_FIFO), and with a printf kernel run once before them
# (GT_WARM); MGI_MOVER_STREAMS 1 against 4 (the default) on the device
# send between two endpoints of one process, alternating, twice; then the
# GPU suite on the final tree
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=20000
L=${OUT:-/tmp}/log.txt
exec > >(tee -a $L) 2>&1
set_=(env MGI_SORTER_BLOCKS=32 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64 MGI_DEV_TILE_BATCH=65528)
for v in "" "GT_FIFO=1048576" "GT_WARM=1" "GT_WARM=1 GT_FIFO=1048576"; do
  echo "== $(date +%T) gtsp $v"
  env $v "${set_[@]}" timeout 30 abbase/gtsp bench -l 2 -s 64 -n 33554432 -b 32 -t 256 -K 4 -T 20 2>&1 | grep -E "^send_bw [0-9]|block 0 calls|FAIL|rror" | cut -c1-250
done
for r in 1 2; do for S in 64 16; do for ms in 1 4; do
  echo "== $(date +%T) bench -l 2 $S B MGI_MOVER_STREAMS=$ms"
  MGI_MOVER_STREAMS=$ms "${set_[@]}" timeout 30 $B/mgi_gpu_test bench -l 2 -s $S -n 33554432 -b 32 -t 256 -K 4 -T 20 2>&1 | grep -E "^send_bw [0-9]|FAIL|rror" | cut -c1-250
done; done; done
SUITE_S=420 bash abbase/r80b.sh suite '.' | tail -12
