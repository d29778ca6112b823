#!/usr/bin/env bash
# run1970 (2 GPUs): the Exchange (2 GiB a GPU, MGI alone) with the shuffle
# kernel built for 384 threads a block, two blocks an SM (80 registers, 36
# bytes of spills a thread against 64 registers and 180 bytes), against
# run1940's build (256 blocks of 512 threads), on one machine:
#   mgi_workloads     run1940's (e5278f3)
#   mgi_workloads_j   mgi_workloads.cu with run1970-build.diff applied
#   bash bench/results/2026-11-27-h200x2-publish/r1970.sh  (bundle/ carried)
. bench/results/2026-11-27-h200x2-publish/wl-helper.sh
S="MGI_WL_MGI_BLOCKS=256 MGI_WL_MGI_THREADS=512"
J="MGI_WL_MGI_BLOCKS=256 MGI_WL_MGI_THREADS=384"
echo "== $(date +%T) exchange, every variant, $S"; wl exchange nccl,ucx,peer,mgi $S
for r in 1 2; do
  echo "-- mgi_workloads $S: $(wl exchange mgi $S)"
  echo "-- mgi_workloads_j $J: $(WLB=mgi_workloads_j wl exchange mgi $J)"
  echo "-- mgi_workloads_j 262 x 384: $(WLB=mgi_workloads_j wl exchange mgi MGI_WL_MGI_BLOCKS=262 MGI_WL_MGI_THREADS=384)"
  echo "-- mgi_workloads_j 256 x 256: $(WLB=mgi_workloads_j wl exchange mgi MGI_WL_MGI_BLOCKS=256 MGI_WL_MGI_THREADS=256)"
done
echo "-- mgi_workloads_j profile:"; WLB=mgi_workloads_j wl exchange mgi $J MGI_WL_MGI_PROFILE=1
tar czf $O/wl.tgz -C $O wl.txt && rm -f $O/wl.txt
echo "== $(date +%T) done in ${SECONDS}s"
