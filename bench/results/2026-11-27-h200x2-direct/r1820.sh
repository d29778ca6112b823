#!/usr/bin/env bash
# run1820 (2 GPUs): direct rings (MGI_DIRECT_RINGS=1) after run1810
# (channels freed: their mappings of other processes' rings are closed at
# mgi_context_destroy, not while the sorter runs; a receive takes a run of
# each of its rings in turn, up to its bound).
# 1. the whole MGI GPU suite (the *_direct steps among them);
# 2. the workloads harness, ops (Exchange, GroupBy, Join; every variant,
#    every answer verified), the mgi variant with direct rings, 1 sorter
#    block, 128 user blocks a GPU, 3 iterations;
# 3. the harness's Zipf sweep of the Exchange, the same settings.
#   bash bench/results/2026-11-27-h200x2-direct/r1820.sh  (bundle/ carried)
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L
echo "== $(date +%T) MGI GPU suite"
LD_LIBRARY_PATH=$PWD/bundle/lib MGI_SUITE_BUDGET_S=200 UCX_TLS=sm,self,cuda_mgi,cuda_copy \
  timeout 230 bash bundle/run/mgi-gpu-suite.sh $B /tmp/suite > $O/mgi-suite.txt 2>&1; echo "rc=$?"
grep -E "^(FAIL|SKIP|TIMEOUT)|^== [0-9]" $O/mgi-suite.txt
grep -E "^send_bw .*direct|^shuffle [0-9]+ B" $O/mgi-suite.txt | cut -c1-200
for f in /tmp/suite/*.log; do grep -q -E "FAIL|rror" $f && { echo "-- $f"; grep -E "FAIL|rror|TIMEOUT" $f | head -4 | cut -c1-300; }; done
echo "== $(date +%T) workloads harness, ops, direct rings"
export MGI_DIRECT_RINGS=1 MGI_SORTER_BLOCKS=1 MGI_WL_MGI_BLOCKS=128 MGI_WL_ITERS=3
LD_LIBRARY_PATH=$PWD/bundle/lib MGI_WL_TIMEOUT=60 MGI_WL_PHASES="gencheck ops" timeout 170 bash bundle/run/workloads.sh /tmp/wl 2 2 > $O/harness.txt 2>&1; echo "rc=$?"
grep -E "^(exchange|groupby|join) " /tmp/wl/summary.txt 2>/dev/null | sed 's/ sf=[0-9.]* zipf=off//' | cut -c1-230
cat /tmp/wl/ratios.txt 2>/dev/null
echo "== $(date +%T) workloads harness, Zipf Exchange, direct rings"
LD_LIBRARY_PATH=$PWD/bundle/lib MGI_WL_TIMEOUT=60 MGI_WL_PHASES=zipf MGI_WL_ZIPF_OPS=exchange MGI_WL_VARIANTS=nccl,ucx,mgi \
  timeout 110 bash bundle/run/workloads.sh /tmp/wl 2 2 > $O/harness-zipf.txt 2>&1; echo "rc=$?"
cat /tmp/wl/ratios.txt 2>/dev/null
cd /tmp/wl && tar czf $O/wl.tgz . 2>/dev/null
echo "== $(date +%T) done in ${SECONDS}s"
