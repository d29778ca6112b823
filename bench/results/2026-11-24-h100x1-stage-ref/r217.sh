#!/usr/bin/env bash
# run217: the batched tile send with stage groups: warp 0 loads the
# slots' routes side by side (thread 0 had, one after the other), lane g
# keeps group g's ring (loaded under the tile's loads) and its mark's CAS
# answer in registers (in shared memory the CAS was waited for at once)
# ("new", bundle/bin) against eca4c5a ("old", abbase/old), alternating:
# the stand-in's Exchange with the profile, Join, GroupBy; mgi_gpu_test
# shuffle -l 2 with two stage groups
I=MGI_WL_MGI_PROFILE=1
for op in exchange join groupby; do
  for wl in old new old new; do
    if [ $wl = old ]; then W=$PWD/abbase/old/mgi_workloads; else W=$PWD/bundle/bin/mgi_workloads; fi
    P=""; [ $op = exchange ] && P=$I
    echo "=== $op $wl"
    WL=$W OP=$op LIST1="$op-$wl ${P:-BASE=1}" LIST2= bash abbase/r162.sh 2>&1 | grep -E "GB/s|profile rank 0: user|rror|FAIL" | sed 's/^\(exchange\|join\|groupby\)  *mgi  *//; s/ sf=.*partition_ms=0.000//; s/# mgi profile rank 0: user blocks/  prof:/' | cut -c1-260
  done
done
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
tuned=(env MGI_SORTER_BLOCKS=32 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64 MGI_DEV_TILE_BATCH=65528 MGI_STAGE_GROUPS=2)
for s in 64 16; do
  for b in old new old new; do
    G=$PWD/bundle/bin/mgi_gpu_test; [ $b = old ] && G=$PWD/abbase/old/mgi_gpu_test
    echo "== $b shuffle -s $s, 2 groups"
    "${tuned[@]}" timeout 40 $G shuffle -l 2 -s $s -n 16777216 -b 32 -K 3 -T 30 2>&1 | grep -E "^shuffle [0-9]|user blocks|FAIL|rror" | cut -c1-300
  done
done
