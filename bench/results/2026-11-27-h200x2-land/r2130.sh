#!/usr/bin/env bash
# run2130 (2 GPUs): the committed tree with GroupBy's warp sums (every
# variant's inserts add up a warp's tuples of one group before the atomic):
# 1. the whole workloads harness (gencheck, smoke, ops, patterns, Zipf;
#    every variant, every answer verified), run.sh's defaults;
# 2. one MGI Exchange with libmgi's info log: what a process's first
#    channel create spends its time on.
#   bash bench/results/2026-11-27-h200x2-land/r2130.sh  (bundle/ carried)
. bench/results/2026-11-27-h200x2-publish/wl-helper.sh
echo "== $(date +%T) workloads harness, all phases, run.sh's defaults"
LD_LIBRARY_PATH=$PWD/bundle/lib MGI_WL_TIMEOUT=60 timeout 300 bash bundle/run/workloads.sh /tmp/wl 2 2 > $O/harness.txt 2>&1; echo "rc=$?"
cat /tmp/wl/ratios.txt 2>/dev/null
(cd /tmp/wl && tar czf $O/harness-wl.tgz . 2>/dev/null)
echo "== $(date +%T) the Exchange with libmgi's info log"
S="MGI_WL_MGI_BLOCKS=256 MGI_WL_MGI_THREADS=512"
wl exchange mgi $S UCX_LOG_LEVEL=info
grep -E "created in|deleted in|mgi endpoint|sorter" /tmp/wl.txt | sed 's/^\[[0-9.]*\] //' | head -12 | cut -c1-400
echo "== $(date +%T) done in ${SECONDS}s"
