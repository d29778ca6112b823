#!/usr/bin/env bash
# run2010 (2 GPUs): landing buffers (mgi_ch_params_t.land): the workloads'
# shuffles that copy out (Exchange, the patterns) give the channel their
# receive buffer, and the sources store their tuples straight into it.
# 1. the whole MGI GPU suite (new: the *_land steps);
# 2. the Exchange (2 GiB a GPU, 256 user blocks of 512 threads), every
#    variant, then MGI landing (MGI_WL_MGI_LAND=1) against MGI through the
#    direct rings (=0) three times in turn, then landing with its profile;
# 3. the whole workloads harness (every variant, every answer verified).
#   bash bench/results/2026-11-27-h200x2-land/r2010.sh  (bundle/ carried)
. bench/results/2026-11-27-h200x2-publish/wl-helper.sh
echo "== $(date +%T) the whole MGI GPU suite"
LD_LIBRARY_PATH=$PWD/bundle/lib MGI_SUITE_BUDGET_S=200 UCX_TLS=sm,self,cuda_mgi,cuda_copy \
  timeout 260 bash bundle/run/mgi-gpu-suite.sh $B /tmp/suite > $O/mgi-suite.txt 2>&1; echo "rc=$?"
grep -E "^(FAIL|SKIP|TIMEOUT)|^== [0-9]" $O/mgi-suite.txt
for f in /tmp/suite/*.log; do grep -q -E "FAIL|rror" $f && { echo "-- $f"; grep -E "FAIL|rror|TIMEOUT" $f | head -4 | cut -c1-300; }; done
grep -h -E "^shuffle (rank|[0-9]+ B)" /tmp/suite/*land*.log | cut -c1-240
tar czf $O/suite-logs.tgz -C /tmp suite 2>/dev/null
S="MGI_WL_MGI_BLOCKS=256 MGI_WL_MGI_THREADS=512"
echo "== $(date +%T) exchange, every variant, $S"; wl exchange nccl,ucx,peer,mgi $S
for r in 1 2 3; do
  echo "-- land: $(wl exchange mgi $S MGI_WL_MGI_LAND=1)"
  echo "-- rings: $(wl exchange mgi $S MGI_WL_MGI_LAND=0)"
done
echo "-- land, profile:"; wl exchange mgi $S MGI_WL_MGI_PROFILE=1
tar czf $O/wl.tgz -C $O wl.txt && rm -f $O/wl.txt
echo "== $(date +%T) workloads harness, all phases, run.sh's defaults"
LD_LIBRARY_PATH=$PWD/bundle/lib MGI_WL_TIMEOUT=60 timeout 300 bash bundle/run/workloads.sh /tmp/wl 2 2 > $O/harness.txt 2>&1; echo "rc=$?"
cat /tmp/wl/ratios.txt 2>/dev/null
cd /tmp/wl && tar czf $O/harness-wl.tgz . 2>/dev/null
echo "== $(date +%T) done in ${SECONDS}s"
