#!/usr/bin/env bash
# run1950 (2 GPUs): run1940's build with the suite's two new direct-ring
# steps (a tail published after every send; 16-byte tuples in tile sends
# through 4 KiB rings between two processes): the '_direct' steps.
#   bash bench/results/2026-11-27-h200x2-publish/r1950.sh  (bundle/ carried)
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L
echo "== $(date +%T) MGI GPU suite, _direct steps"
LD_LIBRARY_PATH=$PWD/bundle/lib MGI_SUITE_BUDGET_S=150 UCX_TLS=sm,self,cuda_mgi,cuda_copy \
  timeout 200 bash bundle/run/mgi-gpu-suite.sh $B /tmp/suite '_direct' > $O/mgi-suite.txt 2>&1; echo "rc=$?"
grep -E "^(PASS|FAIL|SKIP|TIMEOUT)|^== [0-9]" $O/mgi-suite.txt
grep -E "^shuffle|OK|FAIL" /tmp/suite/shuffle_16B_2proc_*direct*.log | cut -c1-220
tar czf $O/suite-logs.tgz -C /tmp suite 2>/dev/null
echo "== $(date +%T) done in ${SECONDS}s"
