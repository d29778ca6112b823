#!/usr/bin/env bash
# run2280 (2 GPUs): 3958133's libmgi (the failure word published against a
# mover stopping meanwhile): peer_dies_2proc and, for the destroy's usual
# path, the two-process and one-process GroupBy, send_bw, the workloads'
# Exchange and Join steps of the GPU suite.
#   bash bench/results/2026-11-28-h200x2-budget/r2280.sh  (bundle/ carried)
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L
LD_LIBRARY_PATH=$PWD/bundle/lib MGI_SUITE_BUDGET_S=100 UCX_TLS=sm,self,cuda_mgi,cuda_copy \
  timeout 120 bash bundle/run/mgi-gpu-suite.sh $B /tmp/suite 'peer_dies|^groupby_2proc$|^groupby_1proc_2gpu$|^send_bw_64B_2proc$|^workloads_exchange$|^workloads_join$|ring_budget' > $O/mgi-suite.txt 2>&1; echo "rc=$?"
grep -E "^(PASS|FAIL|SKIP|TIMEOUT)|^== [0-9]|^peer_dies" $O/mgi-suite.txt | cut -c1-300
echo "== done in ${SECONDS}s"
