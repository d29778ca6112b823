#!/usr/bin/env bash
# run2050 (2 GPUs): the committed build (landing buffers; the workloads'
# Exchange and patterns land by default):
# 1. the whole MGI GPU suite;
# 2. the whole workloads harness (gencheck, smoke, ops, patterns, Zipf;
#    every variant, every answer verified), run.sh's defaults.
#   bash bench/results/2026-11-27-h200x2-land/r2050.sh  (bundle/ carried)
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L
echo "== $(date +%T) the whole MGI GPU suite"
LD_LIBRARY_PATH=$PWD/bundle/lib MGI_SUITE_BUDGET_S=200 UCX_TLS=sm,self,cuda_mgi,cuda_copy \
  timeout 260 bash bundle/run/mgi-gpu-suite.sh $B /tmp/suite > $O/mgi-suite.txt 2>&1; echo "rc=$?"
grep -E "^(FAIL|SKIP|TIMEOUT)|^== [0-9]" $O/mgi-suite.txt
grep -h -E "^shuffle (rank|[0-9]+ B)" /tmp/suite/*land*.log | cut -c1-200
tar czf $O/suite-logs.tgz -C /tmp suite 2>/dev/null
echo "== $(date +%T) workloads harness, all phases, run.sh's defaults"
LD_LIBRARY_PATH=$PWD/bundle/lib MGI_WL_TIMEOUT=60 timeout 300 bash bundle/run/workloads.sh /tmp/wl 2 2 > $O/harness.txt 2>&1; echo "rc=$?"
cat /tmp/wl/ratios.txt 2>/dev/null
cd /tmp/wl && tar czf $O/wl.tgz . 2>/dev/null
echo "== $(date +%T) done in ${SECONDS}s"
