#!/usr/bin/env bash
# run281: mgi_gpu_test's residency check (a kernel whose blocks do not all
# start within 5 s fails at once, saying so); #5's device send against the
# user blocks (fewer sorter blocks so that they fit on one GPU)
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=20000
L=${OUT:-/tmp}/log.txt; R=${OUT:-/tmp}/raw.txt
exec > >(tee -a $L) 2>&1
set_=(env MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64 MGI_DEV_TILE_BATCH=65528)
echo "== $(date +%T) residency: bench -l 2 64 B -b 48 -t 512, 32 sorter blocks"
MGI_SORTER_BLOCKS=32 "${set_[@]}" timeout 60 $B/mgi_gpu_test bench -l 2 -s 64 -n 33554432 -b 48 -t 512 -K 4 -T 20 2>&1 | grep -vE "^\[|^ *$" | tail -4 | cut -c1-400; echo "rc=${PIPESTATUS[0]}"
for v in "32 32 256" "16 32 256" "16 64 256" "16 96 256" "16 64 512" "24 64 256" "16 128 256"; do for S in 64 16; do
  set -- $v
  echo "== $(date +%T) bench -l 2 $S B MGI_SORTER_BLOCKS=$1 -b $2 -t $3"
  MGI_SORTER_BLOCKS=$1 "${set_[@]}" timeout 40 $B/mgi_gpu_test bench -l 2 -s $S -n 33554432 -b $2 -t $3 -K 4 -T 20 > /tmp/o.txt 2>&1
  cat /tmp/o.txt >> $R; grep -E "^send_bw [0-9]|user blocks|FAIL|rror|TIMEOUT" /tmp/o.txt | grep -v "ep 1:" | sed 's/, 0.0% in receive.*//' | cut -c1-300; done; done
