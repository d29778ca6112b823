#!/usr/bin/env bash
# run211: MGI_STAGE_ZCOPY=1 (whole stage segments for this endpoint to
# their final rings by reference) against 0 (copied), one binary,
# alternating; Exchange with the profile and the sorters' info lines,
# Join, GroupBy (one rank and the stand-in); mgi_gpu_test shuffle
I=MGI_WL_MGI_PROFILE=1
for op in exchange join groupby; do
  P=""; [ $op = exchange ] && P=",$I"
  OP=$op LIST1=$'z0 MGI_STAGE_ZCOPY=0'$P$'\nz1 MGI_STAGE_ZCOPY=1'$P$'\nz0 MGI_STAGE_ZCOPY=0'$P$'\nz1 MGI_STAGE_ZCOPY=1'$P \
  LIST2=$'z0 MGI_STAGE_ZCOPY=0'$P$'\nz1 MGI_STAGE_ZCOPY=1'$P$'\nz0 MGI_STAGE_ZCOPY=0'$P$'\nz1 MGI_STAGE_ZCOPY=1'$P \
  bash abbase/r162.sh 2>&1 | grep -E "^== |GB/s|profile rank 0: user|rror|FAIL" | sed 's/^\(exchange\|join\|groupby\)  *mgi  *//; s/ sf=.*partition_ms=0.000//; s/# mgi profile rank 0: user blocks/  prof:/' | cut -c1-330
done
OP=exchange LIST1= LIST2=$'i0 MGI_STAGE_ZCOPY=0,UCX_LOG_LEVEL=info\ni1 MGI_STAGE_ZCOPY=1,UCX_LOG_LEVEL=info' bash abbase/r162.sh > /dev/null 2>&1
grep -E "sorter totals|whole stage moves|sorter rounds" ${OUT:-/tmp}/raw.txt | sed 's/^\[[^]]*\] *//' | cut -c1-600 | tail -8
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
tuned=(env MGI_SORTER_BLOCKS=32 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64 MGI_DEV_TILE_BATCH=65528)
for s in 64 16; do
  for z in 0 1 0 1; do
    echo "== shuffle -s $s MGI_STAGE_ZCOPY=$z"
    MGI_STAGE_ZCOPY=$z "${tuned[@]}" timeout 40 bundle/bin/mgi_gpu_test shuffle -l 2 -s $s -n 16777216 -b 32 -K 4 -T 30 2>&1 | grep -E "^shuffle [0-9]|FAIL|rror"
  done
done
