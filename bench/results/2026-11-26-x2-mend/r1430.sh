#!/usr/bin/env bash
# run1430 (2 GPUs): the whole workloads harness (every phase, run.sh's
# default iterations) with run.sh's stage segments of 133120 bytes
# (run1420), on the final tree (contrib/bundle.sh's bundle of 061eaa6,
# bundle/run/workloads.sh being bench/workloads/run.sh of the commit that
# adds this script). Every answer verified by the harness.
# Called with the device tool, bundle/ carried (gtest_cuda_mgi and
# ucx_perftest left out to stay within what a call carries):
#   bash bench/results/2026-11-26-x2-mend/r1430.sh
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L
echo "== $(date +%T) workloads harness"
LD_LIBRARY_PATH=$PWD/bundle/lib MGI_WL_TIMEOUT=60 timeout 450 bash bundle/run/workloads.sh /tmp/wl 2 2 > $O/harness.txt 2>&1; echo "rc=$?"
grep -A100 "^== summary" $O/harness.txt | cut -c1-200 | head -60
cp /tmp/wl/ratios.txt $O/ratios.txt 2>/dev/null; cat $O/ratios.txt
(cd /tmp/wl && tar czf $O/wl.tgz *.json *.txt 2>/dev/null)
echo "== $(date +%T) done in ${SECONDS}s"
