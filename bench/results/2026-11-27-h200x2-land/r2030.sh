#!/usr/bin/env bash
# run2030 (2 GPUs): less time outside the shuffle kernel: a delete reads
# the direct rings' headers into pinned memory (not pageable), a source's
# ring pointers go in one copy, the workloads wait for the kernel in 10 us
# sleeps (not 50), and a landing shuffle does not receive between sends.
# The Exchange (2 GiB a GPU, 256 user blocks of 512 threads), every
# variant, then MGI landing against MGI through the rings three times in
# turn, then one landing run with libmgi's info log (create / delete
# times) and one with its profile.
#   bash bench/results/2026-11-27-h200x2-land/r2030.sh  (bundle/ carried)
. bench/results/2026-11-27-h200x2-publish/wl-helper.sh
S="MGI_WL_MGI_BLOCKS=256 MGI_WL_MGI_THREADS=512"
echo "== $(date +%T) exchange, every variant, $S"; wl exchange nccl,ucx,peer,mgi $S
for r in 1 2 3; do
  echo "-- land: $(wl exchange mgi $S MGI_WL_MGI_LAND=1)"
  echo "-- rings: $(wl exchange mgi $S MGI_WL_MGI_LAND=0)"
done
echo "-- land, UCX_LOG_LEVEL=info:"; wl exchange mgi $S UCX_LOG_LEVEL=info
grep -E "created in|deleted in|direct rings, " /tmp/wl.txt | sed 's/^\[[0-9.]*\] //' | tail -6 | cut -c1-300
grep -E "per shuffle on rank 0" /tmp/wl.txt
echo "-- land, profile:"; wl exchange mgi $S MGI_WL_MGI_PROFILE=1
tar czf $O/wl.tgz -C $O wl.txt && rm -f $O/wl.txt
echo "== $(date +%T) done in ${SECONDS}s"
