#!/usr/bin/env bash
# 2 x H200, call 6: the workloads (ops and patterns, every variant) with
# the mgi variant's new defaults (32 user blocks of 1024 threads), the
# settings of run62 otherwise.
set -uo pipefail
O=${OUT:-/tmp/out}
W=/tmp/wl6; rm -rf $W; mkdir -p $W
export MGI_FINAL_DEPTH=16 MGI_MOVER_BATCH=32 MGI_RECV_DEPTH=256 MGI_SEG_SIZE=131072 MGI_SORT_DEPTH=256 MGI_SORTER_BLOCKS=32 MGI_SORTER_THREADS=512 MGI_STAGE_DEPTH=16
MGI_WL_ITERS=3 MGI_WL_PHASES="ops patterns" MGI_WL_TIMEOUT=120 timeout 300 bash bundle/run/workloads.sh $W/wl 2 2 > $W/workloads-run.txt 2>&1
echo "rc $?"
tar czf $O/wl-defaults.tar.gz -C $W .
cat $W/wl/ratios.txt
