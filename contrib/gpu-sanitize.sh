#!/usr/bin/env bash
#
# The GPU suites under NVIDIA's compute-sanitizer, from a bundle, on a
# machine with 2 or more GPUs: the transport's gtest under memcheck, and
# the channels' GPU steps under memcheck, racecheck and synccheck.  A
# sanitized kernel runs many times slower than a plain one, so each tool
# gets the steps whose data fits its time (small GroupBy, shuffle and ring
# steps; the two-process steps under memcheck only, which follows a
# launcher's children), each tool within its own budget.
#
# Usage: bundle/run/gpu-sanitize.sh OUTDIR
#
# compute-sanitizer comes from $MGI_SANITIZE_BIN, else from the wheel
# that MGI_SANITIZE_BUNDLE=1 contrib/bundle.sh puts in the bundle's
# wheels/ (PyPI's nvidia-cuda-sanitizer-api, of the CUDA release of the
# GPU machines' driver), unpacked into OUTDIR.
# Each tool's summary line ("ERROR SUMMARY: N errors") is printed per
# step; exit status: the number of steps with findings or failures.
#
set -uo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: gpu-sanitize.sh OUTDIR}
mkdir -p "$out"
export PATH=$here/bin:$here/run:$PATH
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0

cs=${MGI_SANITIZE_BIN:-}
if [ -z "$cs" ]; then
    whl=$(ls "$here"/wheels/nvidia_cuda_sanitizer_api-*.whl 2>/dev/null | head -1)
    [ -n "$whl" ] || { echo "gpu-sanitize: no compute-sanitizer: set" \
        "MGI_SANITIZE_BIN or bundle with MGI_SANITIZE_BUNDLE=1"; exit 77; }
    python3 -m zipfile -e "$whl" "$out/cs" ||
        { echo "gpu-sanitize: cannot unpack $whl"; exit 1; }
    cs=$(find "$out/cs" -path '*compute-sanitizer/compute-sanitizer' -type f | head -1)
    chmod +x "$(dirname "$cs")"/* 2>/dev/null
fi
"$cs" --version | tail -1 || { echo "gpu-sanitize: $cs does not run"; exit 1; }

# a sanitized kernel is slow: the libraries' waits get room
export MGI_TIMEOUT_MS=120000 MGI_KERNEL_TIMEOUT_S=120 MGI_SUITE_TUPLES=100000
opts=(--target-processes all --error-exitcode 86 --print-limit 20)
bad=0

echo "== transport: gtest_cuda_mgi under memcheck"
timeout -k 10 200 "$cs" --tool memcheck "${opts[@]}" gtest_cuda_mgi \
    --gtest_filter='uct_cuda_mgi.*:uct_cuda_mgi_ipc.*:ucp_cuda_mgi.*' \
    > "$out/gtest-memcheck.log" 2>&1
rc=$?
grep -E 'ERROR SUMMARY|^\[  (PASSED|FAILED) ' "$out/gtest-memcheck.log"
[ $rc -eq 0 ] || { echo "FAIL gtest under memcheck (exit $rc)"; bad=$((bad + 1)); }

# the channels' steps: one regex a tool
suite() {  # TOOL BUDGET_S REGEX
    echo "== channels: mgi-gpu-suite.sh under $1"
    MGI_SUITE_WRAP="$cs --tool $1 ${opts[*]}" MGI_SUITE_BUDGET_S=$2 \
        mgi-gpu-suite.sh "$here/bin" "$out/$1" "$3" > "$out/$1.txt" 2>&1
    local rc=$?
    grep -E '^(PASS|FAIL|SKIPPED|TIMEOUT)' "$out/$1.txt"
    grep -h 'ERROR SUMMARY' "$out/$1"/*.log 2>/dev/null | sort | uniq -c
    bad=$((bad + rc))
}
suite memcheck 200 '^(ring_thread|ring_warp|groupby_1proc_2gpu|groupby_1proc_2gpu_defaults|groupby_2proc|peer_dies_2proc_defaults|shuffle_24B_1proc_tiny_direct_land)$'
suite racecheck 120 '^(ring_block|groupby_1proc_2gpu|groupby_1proc_2gpu_defaults)$'
suite synccheck 120 '^(ring_block|groupby_1proc_2gpu|groupby_1proc_2gpu_defaults)$'
echo "gpu-sanitize: $bad step(s) with findings or failures"
exit $bad
