#!/usr/bin/env bash
# run2210 (2 GPUs): the whole MGI GPU suite on libmgi with ring memory
# checked at an endpoint's create (its GPU's free memory), final rings
# that cannot be had named, MGI_* numbers parsed strictly, and the TCP
# bootstrap's listener closed once every rank is in; its new step
# ring_budget (receive lanes of 256 GiB, final rings of 512 GiB: refused,
# naming the setting).
#   bash bench/results/2026-11-28-h200x2-budget/r2210.sh  (bundle/ carried)
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L
echo "== $(date +%T) the whole MGI GPU suite"
LD_LIBRARY_PATH=$PWD/bundle/lib MGI_SUITE_BUDGET_S=200 UCX_TLS=sm,self,cuda_mgi,cuda_copy \
  timeout 230 bash bundle/run/mgi-gpu-suite.sh $B /tmp/suite > $O/mgi-suite.txt 2>&1; echo "rc=$?"
grep -E "^(FAIL|SKIP|TIMEOUT)|^== [0-9]" $O/mgi-suite.txt
sed -n '/^== ring_budget/,/^PASS ring_budget\|^FAIL ring_budget/p' $O/mgi-suite.txt | cut -c1-400
grep -h "MiB of rings" /tmp/suite/mover_puts_batched_p2p.log | head -2 | cut -c1-300
tar czf $O/suite-logs.tgz -C /tmp suite 2>/dev/null
echo "== $(date +%T) done in ${SECONDS}s"
