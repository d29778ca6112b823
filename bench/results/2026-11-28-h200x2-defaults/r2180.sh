#!/usr/bin/env bash
# run2180 (4 GPUs, kind nvidia-h100-x4): 1. the workloads' patterns
# (many-to-one, one-to-many, point-to-point; every variant, every answer
# verified) three times, run.sh's defaults: run2140 had MGI's
# point-to-point at 279.7 GB/s where run2070 had 328.1; 2. device send of
# 64-byte tuples GPU0 -> GPU1 (2 processes, 32 user blocks, 1 GiB) with
# libmgi's ring defaults on this machine (the GPU set) and with
# MGI_GPU_DEFAULTS=0, twice in turn.
#   bash bench/results/2026-11-28-h200x2-defaults/r2180.sh  (bundle/ carried)
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L
for r in 1 2 3; do
  echo "== $(date +%T) patterns, 4 GPUs, round $r"
  MGI_WL_PHASES=patterns MGI_WL_TIMEOUT=90 timeout 200 bash bundle/run/workloads.sh /tmp/wl$r 2 4 > $O/patterns$r.txt 2>&1; echo "rc=$?"
  grep -E '^(many2one|one2many|p2p) ' /tmp/wl$r/ratios.txt
done
echo "== $(date +%T) device send, ring defaults"
export UCX_TLS=sm,self,cuda_mgi,cuda_copy
for r in 1 2; do
  for s in "" "MGI_GPU_DEFAULTS=0"; do
    echo "-- '$s' send_bw: $(env $s timeout 90 $B/mgi_launch -n 2 -t 85 -- $B/mgi_gpu_test bench -s 64 -n 16777216 -b 32 -T 60 2>&1 | tee -a $O/sendbw.txt | grep -E '^send_bw [0-9]+ B tuples|FAIL|rror' | cut -c1-160)"
  done
done
echo "== $(date +%T) done in ${SECONDS}s"
