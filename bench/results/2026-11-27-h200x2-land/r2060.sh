#!/usr/bin/env bash
# run2060 (2 GPUs): the Exchange's ratios against the baselines over
# separate invocations: five runs of mgi_workloads, each with NCCL,
# UCX-only and MGI on the same data (2 GiB a GPU, 3 iterations, run.sh's
# direct-ring settings, landing), the committed build.
#   bash bench/results/2026-11-27-h200x2-land/r2060.sh  (bundle/ carried)
. bench/results/2026-11-27-h200x2-publish/wl-helper.sh
S="MGI_WL_MGI_BLOCKS=256 MGI_WL_MGI_THREADS=512"
for r in 1 2 3 4 5; do
  echo "== $(date +%T) invocation $r"; wl exchange nccl,ucx,mgi $S
done
tar czf $O/wl.tgz -C $O wl.txt && rm -f $O/wl.txt
echo "== $(date +%T) done in ${SECONDS}s"
