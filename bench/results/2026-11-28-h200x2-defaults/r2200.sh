#!/usr/bin/env bash
# run2200 (2 GPUs): the whole MGI GPU suite on the final libmgi (the ring
# geometry agreed at the context's create, the channel signature without
# it, the context's info line, one drop for kept device memory), then the
# whole workloads harness (every phase, every answer verified) on it.
#   bash bench/results/2026-11-28-h200x2-defaults/r2200.sh  (bundle/ carried)
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L
echo "== $(date +%T) the whole MGI GPU suite"
LD_LIBRARY_PATH=$PWD/bundle/lib MGI_SUITE_BUDGET_S=150 UCX_TLS=sm,self,cuda_mgi,cuda_copy \
  timeout 170 bash bundle/run/mgi-gpu-suite.sh $B /tmp/suite > $O/mgi-suite.txt 2>&1; echo "rc=$?"
grep -E "^(FAIL|SKIP|TIMEOUT)|^== [0-9]" $O/mgi-suite.txt
tar czf $O/suite-logs.tgz -C /tmp suite 2>/dev/null
echo "== $(date +%T) workloads harness, all phases, run.sh's defaults"
LD_LIBRARY_PATH=$PWD/bundle/lib MGI_WL_TIMEOUT=60 timeout 330 bash bundle/run/workloads.sh /tmp/wl 2 2 > $O/harness.txt 2>&1; echo "rc=$?"
cat /tmp/wl/ratios.txt 2>/dev/null
(cd /tmp/wl && tar czf $O/harness-wl.tgz . 2>/dev/null)
echo "== $(date +%T) done in ${SECONDS}s"
