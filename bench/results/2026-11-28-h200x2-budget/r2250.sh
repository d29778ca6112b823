#!/usr/bin/env bash
# run2250 (2 GPUs): the whole MGI GPU suite with the context's failure word
# for the device calls (mgi_dev_failed; mgi_dev_flush gives -2 once the
# context failed) and its new step peer_dies_2proc (rank 1 ends after the
# channel's create; rank 0's kernel flushes with no spin limit), then the
# whole workloads harness (mgi_dev_ch_t grew a field: every kernel rebuilt).
#   bash bench/results/2026-11-28-h200x2-budget/r2250.sh  (bundle/ carried)
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L
echo "== $(date +%T) the whole MGI GPU suite"
LD_LIBRARY_PATH=$PWD/bundle/lib MGI_SUITE_BUDGET_S=170 UCX_TLS=sm,self,cuda_mgi,cuda_copy \
  timeout 200 bash bundle/run/mgi-gpu-suite.sh $B /tmp/suite > $O/mgi-suite.txt 2>&1; echo "rc=$?"
grep -E "^(FAIL|SKIP|TIMEOUT)|^== [0-9]" $O/mgi-suite.txt
sed -n '/^== peer_dies_2proc/,/^PASS peer_dies\|^FAIL peer_dies/p' $O/mgi-suite.txt | cut -c1-300
tar czf $O/suite-logs.tgz -C /tmp suite 2>/dev/null
echo "== $(date +%T) workloads harness, all phases, run.sh's defaults"
LD_LIBRARY_PATH=$PWD/bundle/lib MGI_WL_TIMEOUT=60 timeout 330 bash bundle/run/workloads.sh /tmp/wl 2 2 > $O/harness.txt 2>&1; echo "rc=$?"
cat /tmp/wl/ratios.txt 2>/dev/null | grep -E "^op|^(exchange|groupby|join) +- "
(cd /tmp/wl && tar czf $O/harness-wl.tgz . 2>/dev/null)
echo "== $(date +%T) done in ${SECONDS}s"
