#!/usr/bin/env bash
# run1850 (2 GPUs): direct rings pooled (a deleted channel's rings serve
# the next channel of their size at its endpoint; other processes keep
# their mappings of them), 512 KiB rings by default, run.sh with direct
# rings by default (1 sorter block, 128 user blocks).
# 1. the GPU suite's direct-ring steps and their counterparts (channels
#    made and deleted one after the other, two processes and one);
# 2. the whole workloads harness (gencheck, smoke, ops, patterns, Zipf;
#    every variant, every answer verified), run.sh's defaults.
#   bash bench/results/2026-11-27-h200x2-direct/r1850.sh  (bundle/ carried)
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L
echo "== $(date +%T) MGI GPU suite, direct rings and channels"
LD_LIBRARY_PATH=$PWD/bundle/lib MGI_SUITE_BUDGET_S=120 UCX_TLS=sm,self,cuda_mgi,cuda_copy \
  timeout 150 bash bundle/run/mgi-gpu-suite.sh $B /tmp/suite '_direct|_channels' > $O/mgi-suite.txt 2>&1; echo "rc=$?"
grep -E "^(PASS|FAIL|SKIP|TIMEOUT)|^== [0-9]" $O/mgi-suite.txt
grep -E "^send_bw .*|^shuffle [0-9]+ B" $O/mgi-suite.txt | cut -c1-200
for f in /tmp/suite/*.log; do grep -q -E "FAIL|rror" $f && { echo "-- $f"; grep -E "FAIL|rror|TIMEOUT" $f | head -4 | cut -c1-300; }; done
echo "== $(date +%T) workloads harness, all phases, run.sh's defaults"
LD_LIBRARY_PATH=$PWD/bundle/lib MGI_WL_TIMEOUT=60 timeout 250 bash bundle/run/workloads.sh /tmp/wl 2 2 > $O/harness.txt 2>&1; echo "rc=$?"
cat /tmp/wl/ratios.txt 2>/dev/null
cd /tmp/wl && tar czf $O/wl.tgz . 2>/dev/null
echo "== $(date +%T) done in ${SECONDS}s"
