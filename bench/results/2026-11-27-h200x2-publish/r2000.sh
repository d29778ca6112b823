#!/usr/bin/env bash
# run2000 (2 GPUs): the Exchange (2 GiB a GPU, 256 user blocks of 512
# threads, MGI alone) with the direct receive's copy through the TMA
# (cp.async.bulk global -> shared -> global, 3 chunks of 8 KiB in flight,
# thread 0 driving them) against run1940's register copy, one machine:
#   mgi_workloads     run1940's (e5278f3)
#   mgi_workloads_l   run2000-build.patch applied, -DMGI_DEV_BULK=1
#   bash bench/results/2026-11-27-h200x2-publish/r2000.sh  (bundle/ carried)
. bench/results/2026-11-27-h200x2-publish/wl-helper.sh
S="MGI_WL_MGI_BLOCKS=256 MGI_WL_MGI_THREADS=512"
echo "== $(date +%T) exchange, every variant, $S"; wl exchange nccl,ucx,peer,mgi $S
for r in 1 2 3; do
  echo "-- mgi_workloads: $(wl exchange mgi $S)"
  echo "-- mgi_workloads_l: $(WLB=mgi_workloads_l wl exchange mgi $S)"
done
echo "-- mgi_workloads_l profile:"; WLB=mgi_workloads_l wl exchange mgi $S MGI_WL_MGI_PROFILE=1
echo "-- mgi_workloads_l 128 x 1024: $(WLB=mgi_workloads_l wl exchange mgi)"
tar czf $O/wl.tgz -C $O wl.txt && rm -f $O/wl.txt
echo "== $(date +%T) done in ${SECONDS}s"
