#!/usr/bin/env bash
# run1960 (2 GPUs): the Exchange (2 GiB a GPU, 256 user blocks of 512
# threads, MGI alone) of four builds of mgi_workloads on one machine, the
# experiments' device code in run1960-builds.patch (not committed):
#   mgi_workloads     run1940's (e5278f3)
#   mgi_workloads_g   + tile sends load in 16-byte words
#                     (the patch's MGI_DEV_DRING_V16LD part, built with
#                     -DMGI_DEV_DRING_V16LD=1)
#   mgi_workloads_i   + the whole patch: a receive stores its rings' heads
#                     once at the call's end instead of after each round
#   mgi_workloads_h   mgi_workloads_i with -DMGI_DEV_RECV_ILP=16
#   bash bench/results/2026-11-27-h200x2-publish/r1960.sh  (bundle/ carried)
. bench/results/2026-11-27-h200x2-publish/wl-helper.sh
S="MGI_WL_MGI_BLOCKS=256 MGI_WL_MGI_THREADS=512"
echo "== $(date +%T) exchange, every variant, $S"; wl exchange nccl,ucx,peer,mgi $S
for r in 1 2; do
  for b in mgi_workloads mgi_workloads_g mgi_workloads_i mgi_workloads_h; do
    echo "-- $b: $(WLB=$b wl exchange mgi $S)"
  done
done
for b in mgi_workloads mgi_workloads_i; do echo "-- $b profile:"; WLB=$b wl exchange mgi $S MGI_WL_MGI_PROFILE=1; done
tar czf $O/wl.tgz -C $O wl.txt && rm -f $O/wl.txt
echo "== $(date +%T) done in ${SECONDS}s"
