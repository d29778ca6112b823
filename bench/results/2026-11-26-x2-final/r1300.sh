#!/usr/bin/env bash
# run1300 (4 GPUs, nvidia-h100-x4): the final tree's workloads on 4 GPUs
# (ops: Exchange, GroupBy, Join; 3 iterations): every variant's answer
# verified, the MGI variant with 3 remote routes per endpoint (the mover
# sets each up when it appears), against NCCL and UCX-only.
# Called with the device tool, bundle/ carried:
#   bash bench/results/2026-11-26-x2-final/r1300.sh
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1
nvidia-smi -L
echo "== $(date +%T) workloads, ops, 4 GPUs"
LD_LIBRARY_PATH=$PWD/bundle/lib MGI_WL_TIMEOUT=60 MGI_WL_ITERS=3 MGI_WL_PHASES="ops" timeout 250 bash bundle/run/workloads.sh /tmp/wl 2 4 > $O/harness.txt 2>&1; echo "rc=$?"
cat /tmp/wl/ratios.txt
(cd /tmp/wl && tar czf $O/wl.tgz *.json *.txt 2>/dev/null)
echo "== $(date +%T) done in ${SECONDS}s"
