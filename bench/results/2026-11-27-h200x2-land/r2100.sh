#!/usr/bin/env bash
# run2100 (2 GPUs): a lighter channel create: the final rings' set-up and
# the routes queue their writes and wait once, and a deleted channel's
# source records are pooled for the next channel of their size (no
# cudaMalloc at a create):
#   bundle/lib       libmgi with these changes
#   bundle/lib_old   libmgi of 02d700e (the committed tree)
# 1. the whole MGI GPU suite with the new libmgi;
# 2. the Exchange (MGI alone, landing, 256 x 512), old and new libmgi three
#    times in turn; each once more with libmgi's info log (create times);
#    then NCCL, UCX-only and MGI (new) once for the ratios.
#   bash bench/results/2026-11-27-h200x2-land/r2100.sh  (bundle/ carried)
. bench/results/2026-11-27-h200x2-publish/wl-helper.sh
echo "== $(date +%T) the whole MGI GPU suite"
LD_LIBRARY_PATH=$PWD/bundle/lib MGI_SUITE_BUDGET_S=200 UCX_TLS=sm,self,cuda_mgi,cuda_copy \
  timeout 260 bash bundle/run/mgi-gpu-suite.sh $B /tmp/suite > $O/mgi-suite.txt 2>&1; echo "rc=$?"
grep -E "^(FAIL|SKIP|TIMEOUT)|^== [0-9]" $O/mgi-suite.txt
tar czf $O/suite-logs.tgz -C /tmp suite 2>/dev/null
S="MGI_WL_MGI_BLOCKS=256 MGI_WL_MGI_THREADS=512"
OLD="LD_LIBRARY_PATH=$PWD/bundle/lib_old:$PWD/bundle/lib"
for r in 1 2 3; do
  echo "-- old: $(wl exchange mgi $S $OLD)"
  echo "-- new: $(wl exchange mgi $S)"
done
for v in old new; do
  if [ $v = old ]; then wl exchange mgi $S $OLD UCX_LOG_LEVEL=info > /dev/null; else wl exchange mgi $S UCX_LOG_LEVEL=info > /dev/null; fi
  echo "-- $v, info:"; grep -E "created in|deleted in" /tmp/wl.txt | sed 's/^\[[0-9.]*\] //' | tail -4 | cut -c1-250
  grep -E "per shuffle on rank 0" /tmp/wl.txt
done
echo "-- baselines:"; wl exchange nccl,ucx,mgi $S
tar czf $O/wl.tgz -C $O wl.txt && rm -f $O/wl.txt
echo "== $(date +%T) done in ${SECONDS}s"
