#!/usr/bin/env bash
# 2 x H200, call 7: as call 6 (the mgi variant at 32 x 1024), with the ring
# set measured on one H100 (MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64
# MGI_SORT_RINGS=4), the rest as run62.
set -uo pipefail
O=${OUT:-/tmp/out}
W=/tmp/wl7; rm -rf $W; mkdir -p $W
export MGI_FINAL_DEPTH=64 MGI_MOVER_BATCH=32 MGI_RECV_DEPTH=1024 MGI_SORT_RINGS=4 MGI_SEG_SIZE=131072 MGI_SORT_DEPTH=256 MGI_SORTER_BLOCKS=32 MGI_SORTER_THREADS=512 MGI_STAGE_DEPTH=16
MGI_WL_ITERS=3 MGI_WL_PHASES="ops patterns" MGI_WL_TIMEOUT=120 timeout 300 bash bundle/run/workloads.sh $W/wl 2 2 > $W/workloads-run.txt 2>&1
echo "rc $?"
tar czf $O/wl-defaults-tuned.tar.gz -C $W .
cat $W/wl/ratios.txt
