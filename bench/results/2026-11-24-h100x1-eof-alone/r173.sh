#!/usr/bin/env bash
# run173: MGI_EOF_ALONE 1 / 0 on the exchange between two endpoints of one
# process on one GPU (mgi_gpu_test shuffle -l 2), 64 B and 16 B tuples,
# 2 stage groups and 1; log into $OUT/log.txt
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
L=${OUT:-/tmp}/log.txt
exec > >(tee -a $L) 2>&1
tuned=(env MGI_SORTER_BLOCKS=32 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64)
for g in 2 1; do
  for s in 64 16; do
    for a in 1 0 1 0; do
      echo "== $(date +%T) shuffle -l 2 -s $s MGI_STAGE_GROUPS=$g MGI_EOF_ALONE=$a"
      MGI_STAGE_GROUPS=$g MGI_EOF_ALONE=$a "${tuned[@]}" timeout 40 $B/mgi_gpu_test shuffle -l 2 -s $s -n 4194304 -b 32 -T 30 2>&1 | grep -E '^shuffle [0-9]|user blocks|FAIL|rror'
    done
  done
done
