#!/usr/bin/env bash
# run2140 (4 GPUs, kind nvidia-h100-x4): the committed tree with GroupBy's
# warp sums: the whole workloads harness on 4 GPUs (gencheck, smoke, ops,
# patterns, Zipf; every variant, every answer verified), run.sh's defaults.
#   bash bench/results/2026-11-27-h200x2-land/r2140.sh  (bundle/ carried)
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L; nvidia-smi topo -m
echo "== $(date +%T) workloads harness, 4 GPUs, run.sh's defaults"
LD_LIBRARY_PATH=$PWD/bundle/lib MGI_WL_TIMEOUT=90 timeout 420 bash bundle/run/workloads.sh /tmp/wl 2 4 > $O/harness.txt 2>&1; echo "rc=$?"
cat /tmp/wl/ratios.txt 2>/dev/null
(cd /tmp/wl && tar czf $O/harness-wl.tgz . 2>/dev/null)
echo "== $(date +%T) done in ${SECONDS}s"
