#!/usr/bin/env bash
# run1600 (2 GPUs): the MGI GPU suite from the bundle on the final tree
# (the review's mend: the workloads' peer-variant messages and the
# suite's new steps for the partition kernel's two kinds of scatter,
# workloads_exchange_ucx / _exchange_peer / _join_peer). Called with the
# device tool, bundle/ carried (gtest_cuda_mgi and ucx_perftest left out):
#   bash bench/results/2026-11-26-x2-paths/r1600.sh
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
nvidia-smi -L
echo "== $(date +%T) MGI GPU suite"
LD_LIBRARY_PATH=$PWD/bundle/lib MGI_SUITE_BUDGET_S=240 UCX_TLS=sm,self,cuda_mgi,cuda_copy \
  bash bundle/run/mgi-gpu-suite.sh bundle/bin /tmp/suite > $O/mgi-suite.txt 2>&1; echo "rc=$?"
grep -E "^(PASS|FAIL|SKIPPED|TIMEOUT)|failed|skipped step" $O/mgi-suite.txt | tail -60
grep -hE "^(exchange|join) +(ucx|peer) " /tmp/suite/workloads_*_ucx.log /tmp/suite/workloads_*_peer.log 2>/dev/null | cut -c1-200
echo "== $(date +%T) done in ${SECONDS}s"
