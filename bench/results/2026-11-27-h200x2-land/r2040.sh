#!/usr/bin/env bash
# run2040 (2 GPUs): tile sends that stage the tile in shared memory by
# destination and write each destination's run with one bulk copy
# (cp.async.bulk shared -> global, to this GPU or across NVLink) instead
# of a 16-byte store per tuple, one machine:
#   mgi_workloads     b204c05's (run2030)
#   mgi_workloads_b   the same with -DMGI_DEV_DRING_BULK=1
# The Exchange (2 GiB a GPU, 256 user blocks of 512 threads, landing),
# every variant, then the two builds three times in turn (landing, and
# through the rings), then the bulk build's profile.
#   bash bench/results/2026-11-27-h200x2-land/r2040.sh  (bundle/ carried)
. bench/results/2026-11-27-h200x2-publish/wl-helper.sh
S="MGI_WL_MGI_BLOCKS=256 MGI_WL_MGI_THREADS=512"
echo "== $(date +%T) exchange, every variant, $S"; wl exchange nccl,ucx,peer,mgi $S
for r in 1 2 3; do
  echo "-- stores: $(wl exchange mgi $S)"
  echo "-- bulk: $(WLB=mgi_workloads_b wl exchange mgi $S)"
done
for r in 1 2; do
  echo "-- stores, rings: $(wl exchange mgi $S MGI_WL_MGI_LAND=0)"
  echo "-- bulk, rings: $(WLB=mgi_workloads_b wl exchange mgi $S MGI_WL_MGI_LAND=0)"
done
echo "-- bulk, profile:"; WLB=mgi_workloads_b wl exchange mgi $S MGI_WL_MGI_PROFILE=1
for op in many2one one2many p2p; do echo "-- bulk $op: $(WLB=mgi_workloads_b wl $op mgi $S)"; done
tar czf $O/wl.tgz -C $O wl.txt && rm -f $O/wl.txt
echo "== $(date +%T) done in ${SECONDS}s"
