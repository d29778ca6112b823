#!/usr/bin/env bash
#
# The tests: set up (first time only) and build, then `make check` (CPU:
# the module loads and configures, the planner, the channels), then, where
# the machine has a GPU, the GPU suite (every byte checked).
#
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
"$top/contrib/setup.sh"

cd "$top"
rc=0
make -j"${MGI_JOBS:-$(nproc)}" check || rc=$?
if [ $rc -ne 0 ]; then
    for log in $(find test src -name 'test-suite.log'); do
        echo "==== $log"; cat "$log"
    done
fi

skipped_gpu=0
ngpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
if [ "${ngpus:-0}" -ge 1 ]; then
    echo "== GPU suite ($ngpus GPUs)"
    "$top/test/gtest_cuda_mgi" || rc=1
else
    echo "SKIPPED: GPU suite (test/gtest_cuda_mgi): needs a GPU, this machine has none"
    skipped_gpu=1
fi

# One closing line for every test program make check ran
results=$(find test src -name '*.trs' -exec grep -h '^:test-result:' {} + || true)
npass=$(echo "$results" | grep -c ' PASS' || true)
nfail=$(echo "$results" | grep -cE ' (FAIL|ERROR|XPASS)' || true)
nskip=$(echo "$results" | grep -c ' SKIP' || true)
echo "$npass passed, $nfail failed, $((nskip + skipped_gpu)) skipped"
[ "$nfail" -eq 0 ] || rc=1
exit $rc
