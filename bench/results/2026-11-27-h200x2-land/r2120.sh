#!/usr/bin/env bash
# run2120 (2 GPUs): GroupBy's inserts add up a warp's tuples of one group
# first (one atomic a group and warp: __match_any_sync, then
# __reduce_add_sync), in every variant's insert kernel and in the fused
# receive.  bundle/bin/mgi_workloads: the committed tree (one atomic a
# tuple); bundle/bin/mgi_workloads_agg: with the change.  In turn, twice:
# GroupBy with every variant, uniform and Zipf 1.5; then the MGI GroupBy
# fused into the shuffle's receives (MGI_WL_MGI_FUSE=2) with each.
#   bash bench/results/2026-11-27-h200x2-land/r2120.sh  (bundle/ carried)
. bench/results/2026-11-27-h200x2-publish/wl-helper.sh
S="MGI_WL_MGI_BLOCKS=256 MGI_WL_MGI_THREADS=512"
for z in "" "--zipf 1.5" "--zipf 1.0"; do
  for r in 1 2; do
    for b in mgi_workloads mgi_workloads_agg; do
      echo "-- zipf '${z}' $b, every variant:"; ZA="$z" WLB=$b wl groupby all $S
      echo "-- zipf '${z}' $b, fused: $(ZA="$z" WLB=$b wl groupby mgi $S MGI_WL_MGI_FUSE=2)"
    done
  done
done
echo "== $(date +%T) done in ${SECONDS}s"
