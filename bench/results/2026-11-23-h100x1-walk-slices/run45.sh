#!/usr/bin/env bash
# The final tree with mgi_gpu_test shuffle -P 16 as its default: the
# channels suite.
set -uo pipefail
B=$PWD/bundle/bin
export PATH=$B:$PATH UCX_WARN_UNUSED_ENV_VARS=n
O=${OUT:-/tmp/out}
nvidia-smi -L
MGI_SUITE_BUDGET_S=300 bash bundle/run/mgi-gpu-suite.sh $B /tmp/mgi > $O/suite.txt 2>&1
grep -E "^(FAIL|TIMEOUT|== [0-9])" $O/suite.txt
grep -E "^shuffle [0-9]" $O/suite.txt
for f in $(grep -ohE "log /tmp/mgi/[^)]*" $O/suite.txt | cut -d' ' -f2); do cp $f $O/; done
