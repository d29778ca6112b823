#!/usr/bin/env bash
# run2110 (2 GPUs): the committed tree fb6763e (one pool keep/take for the
# direct rings and source records; the review mend: mgi_dland_count,
# mgi_gpu_dout_layout, the delete's fixed pinned header buffer), which had
# not run on a GPU:
# 1. the whole MGI GPU suite;
# 2. the whole workloads harness (gencheck, smoke, ops, patterns, Zipf;
#    every variant, every answer verified), run.sh's defaults;
# 3. GroupBy's insert in the shuffle's receives (MGI_WL_MGI_FUSE=2) against
#    after the shuffle (the default), MGI alone, twice in turn, uniform and
#    Zipf 1.5 (last measured on one H100, before direct rings).
#   bash bench/results/2026-11-27-h200x2-land/r2110.sh  (bundle/ carried)
. bench/results/2026-11-27-h200x2-publish/wl-helper.sh
echo "== $(date +%T) the whole MGI GPU suite"
LD_LIBRARY_PATH=$PWD/bundle/lib MGI_SUITE_BUDGET_S=200 UCX_TLS=sm,self,cuda_mgi,cuda_copy \
  timeout 260 bash bundle/run/mgi-gpu-suite.sh $B /tmp/suite > $O/mgi-suite.txt 2>&1; echo "rc=$?"
grep -E "^(FAIL|SKIP|TIMEOUT)|^== [0-9]" $O/mgi-suite.txt
grep -h -E "^shuffle (rank|[0-9]+ B)" /tmp/suite/*land*.log | cut -c1-200
grep -h -E "deleted in|created in" /tmp/suite/*.log 2>/dev/null | head -4 | cut -c1-250
tar czf $O/suite-logs.tgz -C /tmp suite 2>/dev/null
echo "== $(date +%T) workloads harness, all phases, run.sh's defaults"
LD_LIBRARY_PATH=$PWD/bundle/lib MGI_WL_TIMEOUT=60 timeout 300 bash bundle/run/workloads.sh /tmp/wl 2 2 > $O/harness.txt 2>&1; echo "rc=$?"
cat /tmp/wl/ratios.txt 2>/dev/null
(cd /tmp/wl && tar czf $O/harness-wl.tgz . 2>/dev/null)
echo "== $(date +%T) GroupBy fused (MGI_WL_MGI_FUSE=2) against after the shuffle"
S="MGI_WL_MGI_BLOCKS=256 MGI_WL_MGI_THREADS=512"
for z in "" "--zipf 1.5"; do
  for r in 1 2; do
    echo "-- zipf '${z}' after: $(ZA="$z" wl groupby mgi $S)"
    echo "-- zipf '${z}' fused: $(ZA="$z" wl groupby mgi $S MGI_WL_MGI_FUSE=2)"
  done
done
echo "== $(date +%T) done in ${SECONDS}s"
