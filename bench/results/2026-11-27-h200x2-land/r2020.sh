#!/usr/bin/env bash
# run2020 (2 GPUs): where a shuffle's time outside its kernel goes: the
# Exchange (MGI alone, 256 user blocks of 512 threads, landing) with
# libmgi's info log, which times each channel create (its steps, the direct
# rings' steps) and delete; then the same through the rings.
#   bash bench/results/2026-11-27-h200x2-land/r2020.sh  (bundle/ carried)
. bench/results/2026-11-27-h200x2-publish/wl-helper.sh
S="MGI_WL_MGI_BLOCKS=256 MGI_WL_MGI_THREADS=512"
for land in 1 0; do
  echo "== $(date +%T) exchange, mgi, MGI_WL_MGI_LAND=$land, UCX_LOG_LEVEL=info"
  wl exchange mgi $S MGI_WL_MGI_LAND=$land UCX_LOG_LEVEL=info
  grep -E "created in|deleted in|direct rings, " /tmp/wl.txt | sed 's/^\[[0-9.]*\] //' | tail -12 | cut -c1-300
  grep -E "per shuffle on rank 0" /tmp/wl.txt
done
tar czf $O/wl.tgz -C $O wl.txt && rm -f $O/wl.txt
echo "== $(date +%T) done in ${SECONDS}s"
