#!/usr/bin/env bash
# 2 x H200, call 5: the workloads' ops (nccl and mgi only) with more threads
# per user block of the mgi variant (16-byte tuples) and other splits.
set -uo pipefail
O=${OUT:-/tmp/out}
W=/tmp/wl5; rm -rf $W; mkdir -p $W
tuned="MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64"
for cfg in 64:256:32 64:512:32 32:1024:32 48:1024:48 64:1024:64; do
  IFS=: read u t so <<< "$cfg"
  env $tuned MGI_SORTER_BLOCKS=$so MGI_WL_MGI_BLOCKS=$u MGI_WL_MGI_THREADS=$t MGI_WL_VARIANTS=nccl,mgi MGI_WL_ITERS=3 MGI_WL_PHASES=ops MGI_WL_TIMEOUT=100 timeout 150 bash bundle/run/workloads.sh $W/wl-b$u-t$t-s$so 2 2 > $W/run-b$u-t$t-s$so.txt 2>&1
  echo "== mgi blocks $u x $t threads, sorter blocks $so"; grep -E '^(exchange|groupby|join) .*mgi' $W/wl-b$u-t$t-s$so/ratios.txt
done 2>&1 | tee $O/wl-threads.txt
tar czf $O/wl-threads.tar.gz -C $W .
