#!/usr/bin/env bash
# 2 x H200, call 2: the workloads (Exchange, GroupBy, Join, the patterns,
# the Zipf sweep of the Exchange) with every variant in one invocation per
# op, with the settings of the c2a761f run
# (bench/results/2026-11-22-h200x2-final-c2a761f/workloads.txt); then the
# ops once more with the settings tuned on one H100 (wl-tuned/). Both
# directories packed into wl.tar.gz (the output's file count is limited).
set -uo pipefail
O=${OUT:-/tmp/out}
W=/tmp/wlrun; rm -rf $W; mkdir -p $W
(
export MGI_FINAL_DEPTH=16 MGI_MOVER_BATCH=32 MGI_RECV_DEPTH=256 MGI_SEG_SIZE=131072 MGI_SORT_DEPTH=256 MGI_SORTER_BLOCKS=32 MGI_SORTER_THREADS=512 MGI_STAGE_DEPTH=16
MGI_WL_ITERS=3 MGI_WL_PHASES="ops patterns zipf" MGI_WL_ZIPF_OPS=exchange MGI_WL_TIMEOUT=120 timeout 400 bash bundle/run/workloads.sh $W/wl 2 2 > $W/workloads-run.txt 2>&1
echo "rc $?"
)
(
export MGI_SORTER_BLOCKS=32 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64
MGI_WL_ITERS=3 MGI_WL_PHASES="ops" MGI_WL_TIMEOUT=120 timeout 120 bash bundle/run/workloads.sh $W/wl-tuned 2 2 > $W/workloads-tuned-run.txt 2>&1
echo "rc $?"
)
tar czf $O/wl.tar.gz -C $W .
cat $W/wl/ratios.txt; cat $W/wl-tuned/ratios.txt
