#!/usr/bin/env bash
# run1610 (2 GPUs): run1600's new suite steps again under names of their
# own (workloads_exchange_peer was already the MGI_PEER_DIRECT step's, so
# run1600's later step overwrote the log): the steps whose name has
# _ucx or _peer_variant, from the bundle (contrib/bundle.sh of the commit
# that adds this script).
#   bash bench/results/2026-11-26-x2-paths/r1610.sh   (bundle/ carried)
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
nvidia-smi -L
LD_LIBRARY_PATH=$PWD/bundle/lib MGI_SUITE_BUDGET_S=120 UCX_TLS=sm,self,cuda_mgi,cuda_copy \
  bash bundle/run/mgi-gpu-suite.sh bundle/bin /tmp/suite 'workloads_.*(_ucx|_peer_variant)$' > $O/mgi-suite.txt 2>&1; echo "rc=$?"
grep -E "^(PASS|FAIL|SKIPPED|TIMEOUT)|failed|skipped step" $O/mgi-suite.txt
grep -hE "^(exchange|join) +(ucx|peer) " /tmp/suite/workloads_*_ucx.log /tmp/suite/workloads_*_peer_variant.log | cut -c1-220
echo "== $(date +%T) done in ${SECONDS}s"
