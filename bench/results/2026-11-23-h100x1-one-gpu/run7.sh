#!/usr/bin/env bash
# The final code on one GPU: channels suite and transport gtest.
set -uo pipefail
B=$PWD/bundle/bin
export PATH=$B:$PATH UCX_WARN_UNUSED_ENV_VARS=n
O=${OUT:-/tmp/out}
nvidia-smi -L
MGI_SUITE_BUDGET_S=200 bash bundle/run/mgi-gpu-suite.sh $B /tmp/mgi > $O/suite-review.txt 2>&1
grep -E "^(PASS|FAIL|SKIPPED|TIMEOUT|== [0-9]|send_bw [0-9]|sorter GPU)" $O/suite-review.txt
timeout -k 5 200 $B/gtest_cuda_mgi > $O/gtest-review.txt 2>&1
tail -20 $O/gtest-review.txt | grep -E "PASSED|FAILED|SKIPPED  \]|tests ran"
