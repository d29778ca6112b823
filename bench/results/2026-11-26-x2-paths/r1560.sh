#!/usr/bin/env bash
# run1560 (2 GPUs): the workloads with the new `peer` variant (the
# partition kernel's scatter stores straight into the destinations'
# receive buffers over NVLink, CUDA IPC; no library, no rings): first the
# Exchange alone with nccl, peer and mgi, then the whole harness (every
# phase, run.sh's default iterations; every answer verified). Tree of the
# commit that adds this script (contrib/bundle.sh's bundle), called with
# the device tool, bundle/ carried (gtest_cuda_mgi, ucx_perftest,
# mgi_gpu_test and gpu_ring_test left out):
#   bash bench/results/2026-11-26-x2-paths/r1560.sh
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L
echo "== $(date +%T) Exchange: nccl, peer, mgi"
LD_LIBRARY_PATH=$PWD/bundle/lib MGI_WL_TIMEOUT=60 MGI_WL_PHASES=ops MGI_WL_OPS=exchange MGI_WL_VARIANTS=nccl,peer,mgi \
  timeout 200 bash bundle/run/workloads.sh /tmp/wl0 2 2 > $O/quick.txt 2>&1; echo "rc=$?"
grep -E "^(exchange|groupby|join) |absent|rror" $O/quick.txt | cut -c1-220 | head -20
echo "== $(date +%T) workloads harness"
LD_LIBRARY_PATH=$PWD/bundle/lib MGI_WL_TIMEOUT=60 timeout 450 bash bundle/run/workloads.sh /tmp/wl 2 2 > $O/harness.txt 2>&1; echo "rc=$?"
grep -A100 "^== summary" $O/harness.txt | cut -c1-200 | head -60
cp /tmp/wl/ratios.txt $O/ratios.txt 2>/dev/null; cat $O/ratios.txt
(cd /tmp/wl && tar czf $O/wl.tgz *.json *.txt png 2>/dev/null)
echo "== $(date +%T) done in ${SECONDS}s"
