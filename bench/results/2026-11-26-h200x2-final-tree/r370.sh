#!/usr/bin/env bash
# run370 (2 x H200): the suites on the tree of 3920df1. Called with the
# device tool, bundle/ carried:
#   bash bench/results/2026-11-26-h200x2-final-tree/r370.sh
#   1. cuda_mgi's whole gtest suite (bundle/run/gpu-suite.sh)
#   2. MGI's GPU suite (bundle/run/mgi-gpu-suite.sh)
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n \
       NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L
echo "== $(date +%T) [${SECONDS}s] 1 cuda_mgi gtest suite"
timeout 300 bash bundle/run/gpu-suite.sh /tmp/gs > $O/gtest-suite.txt 2>&1; echo "rc=$?"
grep -E "^\[  (PASSED|FAILED) |^\[==========\]|FAILED" $O/gtest-suite.txt | tail -20
echo "== $(date +%T) [${SECONDS}s] 2 MGI GPU suite"
MGI_SUITE_BUDGET_S=150 UCX_TLS=sm,self,cuda_mgi,cuda_copy timeout 200 bash bundle/run/mgi-gpu-suite.sh $B /tmp/suite > $O/mgi-suite.txt 2>&1; echo "rc=$?"
grep -E "^(FAIL|SKIP)|^== [0-9]" $O/mgi-suite.txt | tail -12
echo "== $(date +%T) done in ${SECONDS}s"
