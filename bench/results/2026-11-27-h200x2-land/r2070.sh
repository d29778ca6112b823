#!/usr/bin/env bash
# run2070 (4 GPUs, kind nvidia-h100-x4): the committed build's whole
# workloads harness on four GPUs (every variant, every answer verified),
# run.sh's defaults (direct rings, landing).
#   bash bench/results/2026-11-27-h200x2-land/r2070.sh  (bundle/ carried)
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L; nvidia-smi topo -m
echo "== $(date +%T) workloads harness, all phases, run.sh's defaults, 4 GPUs"
LD_LIBRARY_PATH=$PWD/bundle/lib MGI_WL_TIMEOUT=90 timeout 420 bash bundle/run/workloads.sh /tmp/wl 2 4 > $O/harness.txt 2>&1; echo "rc=$?"
cat /tmp/wl/ratios.txt 2>/dev/null
cd /tmp/wl && tar czf $O/wl.tgz . 2>/dev/null
echo "== $(date +%T) done in ${SECONDS}s"
