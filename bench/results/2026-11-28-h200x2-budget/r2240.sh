#!/usr/bin/env bash
# run2240 (4 GPUs, kind nvidia-h200-x4): the final tree on 4 x H200:
# the machine's topology as nvidia-smi and the planner (mgi_topo) see it,
# then the whole workloads harness on 4 GPUs (every phase, every answer
# verified), run.sh's defaults.
#   bash bench/results/2026-11-28-h200x2-budget/r2240.sh  (bundle/ carried)
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L; nvidia-smi topo -m
echo "== $(date +%T) mgi_topo (discovered)"
LD_LIBRARY_PATH=$PWD/bundle/lib timeout 60 bundle/bin/mgi_topo summary 2>&1 | head -60
echo "== $(date +%T) workloads harness, 4 GPUs, run.sh's defaults"
LD_LIBRARY_PATH=$PWD/bundle/lib MGI_WL_TIMEOUT=90 timeout 450 bash bundle/run/workloads.sh /tmp/wl 2 4 > $O/harness.txt 2>&1; echo "rc=$?"
cat /tmp/wl/ratios.txt 2>/dev/null
(cd /tmp/wl && tar czf $O/harness-wl.tgz . 2>/dev/null)
echo "== $(date +%T) done in ${SECONDS}s"
