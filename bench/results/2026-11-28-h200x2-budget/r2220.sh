#!/usr/bin/env bash
# run2220 (2 GPUs): the whole MGI GPU suite on libmgi whose mover watches
# the processes of the other ranks of its host (a rank that ends before
# its destroy stops it, the calls fail with UCS_ERR_CONNECTION_RESET),
# the TCP bootstrap closing every rank's connection when an allgather
# fails; and run2210's ring-memory checks.
#   bash bench/results/2026-11-28-h200x2-budget/r2220.sh  (bundle/ carried)
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
