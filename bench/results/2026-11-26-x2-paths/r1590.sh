#!/usr/bin/env bash
# run1590 (2 GPUs): the whole harness once more on the tree of run1580
# (every phase, run.sh's default iterations, every answer verified), its
# JSON, tables and charts brought back in one archive (run1580's charts
# did not all come back).
#   bash bench/results/2026-11-26-x2-paths/r1590.sh   (bundle/ carried)
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L
echo "== $(date +%T) workloads harness"
LD_LIBRARY_PATH=$PWD/bundle/lib MGI_WL_TIMEOUT=60 timeout 450 bash bundle/run/workloads.sh /tmp/wl 2 2 > $O/harness.txt 2>&1; echo "rc=$?"
cp /tmp/wl/ratios.txt $O/ratios.txt 2>/dev/null; cat $O/ratios.txt
(cd /tmp/wl && tar czf $O/wl.tgz *.json *.txt png 2>/dev/null)
echo "== $(date +%T) done in ${SECONDS}s"
