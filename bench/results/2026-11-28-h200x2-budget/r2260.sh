#!/usr/bin/env bash
# run2260 (2 GPUs): the GPU suite's peer_dies_2proc step as rewritten after
# run2250 (rank 0's kernel waits for rank 1's tuples until mgi_dev_failed;
# run2250's version waited in a flush, which completed before the failure
# was seen: delivered into rank 1's lane), with groupby_2proc and
# ring_budget beside it (the rest of the suite passed in run2250 on the
# same libmgi).
#   bash bench/results/2026-11-28-h200x2-budget/r2260.sh  (bundle/ carried)
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L
LD_LIBRARY_PATH=$PWD/bundle/lib MGI_SUITE_BUDGET_S=100 UCX_TLS=sm,self,cuda_mgi,cuda_copy \
  timeout 120 bash bundle/run/mgi-gpu-suite.sh $B /tmp/suite 'peer_dies|^groupby_2proc$|ring_budget' > $O/mgi-suite.txt 2>&1; echo "rc=$?"
grep -E "^(PASS|FAIL|SKIP|TIMEOUT)|^== [0-9]|^peer_dies" $O/mgi-suite.txt | cut -c1-300
echo "== done in ${SECONDS}s"
