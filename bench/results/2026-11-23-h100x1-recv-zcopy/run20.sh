#!/usr/bin/env bash
# Final tree: the whole channels suite (new: *_zcopy, idle_copy).
set -uo pipefail
B=$PWD/bundle/bin
export PATH=$B:$PATH UCX_WARN_UNUSED_ENV_VARS=n
O=${OUT:-/tmp/out}
nvidia-smi -L
MGI_SUITE_BUDGET_S=400 bash bundle/run/mgi-gpu-suite.sh $B /tmp/mgi > $O/suite.txt 2>&1
grep -E "^(PASS|FAIL|SKIPPED|TIMEOUT|== [0-9])|^idle_copy|^shuffle [0-9]" $O/suite.txt
for f in $(grep -oE "log /tmp/mgi/[^)]*" $O/suite.txt | cut -d' ' -f2); do cp $f $O/; done
