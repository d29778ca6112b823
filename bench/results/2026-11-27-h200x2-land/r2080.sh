#!/usr/bin/env bash
# run2080 (2 GPUs): user blocks and threads of the landing Exchange (MGI
# alone, 2 GiB a GPU, the committed build): 256 x 512 (run.sh's) against
# 512 x 256, 1024 x 128 and 384 x 256, two rounds in turn, then NCCL and
# UCX-only once for the ratios.
#   bash bench/results/2026-11-27-h200x2-land/r2080.sh  (bundle/ carried)
. bench/results/2026-11-27-h200x2-publish/wl-helper.sh
for r in 1 2; do
  for bt in 256:512 512:256 1024:128 384:256; do
    echo "-- ${bt/:/ x }: $(wl exchange mgi MGI_WL_MGI_BLOCKS=${bt%%:*} MGI_WL_MGI_THREADS=${bt##*:})"
  done
done
echo "-- baselines: "; wl exchange nccl,ucx,mgi MGI_WL_MGI_BLOCKS=256 MGI_WL_MGI_THREADS=512
tar czf $O/wl.tgz -C $O wl.txt && rm -f $O/wl.txt
echo "== $(date +%T) done in ${SECONDS}s"
