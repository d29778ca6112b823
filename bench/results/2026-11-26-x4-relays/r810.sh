#!/usr/bin/env bash
# run810: the workloads on 4 GPUs (paper Fig. 10 and 12): Exchange, GroupBy,
# Join and the many-to-one / one-to-many / point-to-point patterns, every
# variant (MGI, NCCL, UCX-only, UCX over cuda_mgi, one GPU) in one
# invocation per op, 2 GiB of lineitem per GPU, every answer checked.
# Usage (device machine, repository root, bundle/ carried): bash r810.sh
set -u
B=$PWD/bundle
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
O=${OUT:-/tmp/out}; mkdir -p $O
nvidia-smi -L
t0=$(date +%s)
MGI_WL_TIMEOUT=${WL_TIMEOUT:-90} MGI_WL_ITERS=${ITERS:-3} \
MGI_WL_PHASES=${PHASES:-"smoke ops patterns"} \
    bash $B/run/workloads.sh $O/wl4 2 4 2>&1 | tail -80
echo "[+$(( $(date +%s) - t0 )) s] done"
cat $O/wl4/summary.txt 2>/dev/null | tail -40
