#!/usr/bin/env bash
# run930 (2 GPUs): the final tree from the bundle: the transport's GPU
# suite (gtest, every byte checked; the relay cases need 3-4 GPUs and say
# so), MGI's GPU suite, then the workloads' harness (ops phase).
# Called with the device tool, bundle/ carried:
#   bash bench/results/2026-11-26-h200x2-owner-steps/r930.sh
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1
nvidia-smi -L
echo "== $(date +%T) transport GPU suite"
timeout 280 bash bundle/run/gpu-suite.sh /tmp/gs > $O/gtest-suite.txt 2>&1; echo "rc=$?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests? ran" $O/gtest-suite.txt | head -20
echo "== $(date +%T) MGI GPU suite"
MGI_SUITE_BUDGET_S=150 UCX_TLS=sm,self,cuda_mgi,cuda_copy timeout 200 bash bundle/run/mgi-gpu-suite.sh $B /tmp/suite > $O/mgi-suite.txt 2>&1; echo "rc=$?"
grep -E "^(FAIL|SKIP)|^== [0-9]" $O/mgi-suite.txt | tail -6
echo "== $(date +%T) workloads, ops"
MGI_WL_TIMEOUT=60 MGI_WL_ITERS=3 MGI_WL_PHASES="ops" timeout 150 bash bundle/run/workloads.sh /tmp/wl 2 2 2>&1 | grep -E "^[a-z]+ +- " | cut -c1-120
cp /tmp/wl/ratios.txt $O/ratios.txt 2>/dev/null
echo "== $(date +%T) done in ${SECONDS}s"
