#!/usr/bin/env bash
# run1790 (2 GPUs): the GPU suite's two steps that check libmgi's batching
# of its mover's copies, now on point-to-point between two processes (the
# slow 2-process device send of run1780 had no copies overlapping, so
# nothing to batch), then the steps the change could touch (two processes).
#   bash bench/results/2026-11-27-h200x2-mover-puts/r1790.sh  (bundle/ carried)
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L
LD_LIBRARY_PATH=$PWD/bundle/lib MGI_SUITE_BUDGET_S=150 UCX_TLS=sm,self,cuda_mgi,cuda_copy \
  timeout 200 bash bundle/run/mgi-gpu-suite.sh $PWD/bundle/bin /tmp/suite 'mover_puts|2proc' > $O/mgi-suite.txt 2>&1; echo "rc=$?"
grep -E "^(PASS|FAIL|SKIP)|^== [0-9]|copies posted in|invalid configuration" $O/mgi-suite.txt | cut -c1-160
echo "== $(date +%T) done in ${SECONDS}s"
