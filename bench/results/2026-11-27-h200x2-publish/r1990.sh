#!/usr/bin/env bash
# run1990 (2 GPUs): the Exchange (2 GiB a GPU, 256 user blocks of 512
# threads, MGI alone) with the kernel split into sender and receiver
# blocks (MGI_WL_MGI_RECEIVERS=R: the last R blocks only receive, each for
# consumer indices r, r + R, ... through mgi_dev_recv_block_to_as; the
# others only send), against every block sending and receiving, one
# machine:
#   mgi_workloads     run1940's (e5278f3)
#   mgi_workloads_k   run1990-build.patch applied (not committed)
#   bash bench/results/2026-11-27-h200x2-publish/r1990.sh  (bundle/ carried)
. bench/results/2026-11-27-h200x2-publish/wl-helper.sh
S="MGI_WL_MGI_BLOCKS=256 MGI_WL_MGI_THREADS=512"
echo "== $(date +%T) exchange, every variant, $S"; wl exchange nccl,ucx,peer,mgi $S
for r in 1 2; do
  echo "-- mgi_workloads: $(wl exchange mgi $S)"
  for R in 0 64 96 128; do
    echo "-- mgi_workloads_k receivers $R: $(WLB=mgi_workloads_k wl exchange mgi $S MGI_WL_MGI_RECEIVERS=$R)"
  done
done
echo "-- mgi_workloads_k receivers 96, profile:"; WLB=mgi_workloads_k wl exchange mgi $S MGI_WL_MGI_RECEIVERS=96 MGI_WL_MGI_PROFILE=1
echo "-- mgi_workloads_k receivers 96, join (its fused receives ignore it):"; WLB=mgi_workloads_k wl join nccl,mgi $S MGI_WL_MGI_RECEIVERS=96
tar czf $O/wl.tgz -C $O wl.txt && rm -f $O/wl.txt
echo "== $(date +%T) done in ${SECONDS}s"
