#!/usr/bin/env bash
# run2090 (2 GPUs): bigger tile sends for the landing Exchange (MGI alone,
# 2 GiB a GPU, 256 user blocks of 512 threads), one machine:
#   mgi_workloads     the committed build, 4 tuples a thread a send
#   mgi_workloads_t   the same with -DMGI_DEV_TILE_WORDS=16: 8 tuples of 16
#                     bytes a thread a send (MGI_WL_MGI_TILE=8), 64 KB a call
# three rounds in turn, then NCCL and UCX-only once for the ratios.
#   bash bench/results/2026-11-27-h200x2-land/r2090.sh  (bundle/ carried)
. bench/results/2026-11-27-h200x2-publish/wl-helper.sh
S="MGI_WL_MGI_BLOCKS=256 MGI_WL_MGI_THREADS=512"
for r in 1 2 3; do
  echo "-- 4 a thread: $(wl exchange mgi $S)"
  echo "-- 8 a thread: $(WLB=mgi_workloads_t wl exchange mgi $S MGI_WL_MGI_TILE=8)"
done
echo "-- 8 a thread, profile:"; WLB=mgi_workloads_t wl exchange mgi $S MGI_WL_MGI_TILE=8 MGI_WL_MGI_PROFILE=1
echo "-- baselines:"; WLB=mgi_workloads_t wl exchange nccl,ucx,mgi $S MGI_WL_MGI_TILE=8
tar czf $O/wl.tgz -C $O wl.txt && rm -f $O/wl.txt
echo "== $(date +%T) done in ${SECONDS}s"
