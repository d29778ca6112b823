#!/usr/bin/env bash
#
# The GPU suites under NVIDIA's compute-sanitizer, from a bundle, on a
# machine with 2 or more GPUs: the transport's gtest under memcheck, and
# the channels' GPU steps that can run under it (see suite() below) under
# memcheck, racecheck and synccheck.  A sanitized kernel runs many times
# slower than a plain one: small data, each tool within its own budget.
#
# Usage: bundle/run/gpu-sanitize.sh OUTDIR [PARTS]
#   PARTS: a regex of the parts to run, of gtest, memcheck, racecheck,
#   synccheck (default: all)
#
# compute-sanitizer comes from $MGI_SANITIZE_BIN, else from PATH, else
# from the CUDA toolkit ($CUDA_HOME, /usr/local/cuda) of the GPU machine:
# it must be of the driver's CUDA release.
# Each step's summary line is printed with its findings (see findings());
# exit status: the number of steps with findings or failures.
#
set -uo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: gpu-sanitize.sh OUTDIR [PARTS]}
parts=${2:-.}
mkdir -p "$out"
export PATH=$here/bin:$here/run:$PATH
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0

cs=${MGI_SANITIZE_BIN:-$(command -v compute-sanitizer ||
                          ls "${CUDA_HOME:-/usr/local/cuda}"/bin/compute-sanitizer 2>/dev/null)}
[ -n "$cs" ] || { echo "gpu-sanitize: no compute-sanitizer on PATH or in" \
    "\$CUDA_HOME/bin: set MGI_SANITIZE_BIN"; exit 77; }
"$cs" --version | tail -1 || { echo "gpu-sanitize: $cs does not run"; exit 1; }

# a sanitized kernel is slow: the libraries' waits get room
export MGI_TIMEOUT_MS=120000 MGI_KERNEL_TIMEOUT_S=120 MGI_SUITE_TUPLES=100000 \
       MGI_SUITE_SLOW=${MGI_SUITE_SLOW:-3}
opts=(--target-processes all --print-limit 100)
bad=0

# The findings in sanitizer logs.  A device-side finding (memcheck's
# invalid accesses, racecheck's hazards, synccheck's barrier errors) fails;
# so does a failed CUDA call whose innermost host frame is this project's
# (libuct_cuda_mgi, libmgi, its test programs).  Failed calls that UCX's
# own modules make while probing (cuda_copy's cuCtxSetFlags at md_open,
# cuMemRetainAllocationHandle on memory not of cuMemCreate, cuMemCreate of
# fabric memory where the machine has none) are counted and listed, not
# failed.  Exit: 1 when one fails.
findings() {  # LOG...
    awk '
        function flush() {
            if (msg == "") return
            if (api && lib !~ /libuct_cuda_mgi|libmgi|gtest_cuda_mgi|mgi_gpu_test|gpu_ring_test|shuffle/) {
                other[msg " (in " fn ", " lib ")"]++
            } else { print "  finding: " msg (fn != "" ? " (in " fn ", " lib ")" : ""); ours++ }
            msg = ""; fn = ""; lib = ""
        }
        /^========= [^ ]/ {
            if ($0 ~ /ERROR SUMMARY|COMPUTE-SANITIZER|RACECHECK SUMMARY|Target application returned/) next
            flush()
            msg = substr($0, 11); api = (msg ~ /^Program hit/); next
        }
        /Host Frame:/ && msg != "" && fn == "" {
            fn = $4; lib = $NF; next
        }
        /^========= *$/ { flush() }
        END {
            flush()
            for (k in other) printf "  not this project'"'"'s (%dx): %s\n", other[k], k
            exit (ours > 0)
        }' "$@"
}

if [[ gtest =~ $parts ]]; then
    echo "== transport: gtest_cuda_mgi under memcheck"
    timeout -k 10 200 "$cs" --tool memcheck "${opts[@]}" gtest_cuda_mgi \
        --gtest_filter='uct_cuda_mgi.*:uct_cuda_mgi_ipc.*:ucp_cuda_mgi.*' \
        > "$out/gtest-memcheck.log" 2>&1
    rc=$?
    grep -E '^\[  (PASSED|FAILED) ' "$out/gtest-memcheck.log"
    findings "$out/gtest-memcheck.log" || rc=1
    [ $rc -eq 0 ] || { echo "FAIL gtest under memcheck (exit $rc)"; bad=$((bad + 1)); }
fi

# The channels' steps: one regex a tool.  The steps through the sorters and
# movers (a sorter kernel beside the user's) did not end within their
# limits under any tool, even one process on one GPU with 20 000 tuples and
# 300 s; two kernels of one process do run side by side under each tool
# (with CUDA_MODULE_LOADING=EAGER), so that is not the cause.  They stop
# inside the first mgi_ch_create, after the plan; host waits on mapped
# memory, cudaMalloc, and copies on another stream with its
# synchronization beside a running kernel do not stop under the tool.
# The ring tests and the two-process steps on direct rings end.
# BUDGET_S is for MGI_SUITE_SLOW=3 and grows with it.
suite() {  # TOOL BUDGET_S REGEX
    [[ $1 =~ $parts ]] || return 0
    echo "== channels: mgi-gpu-suite.sh under $1"
    rm -rf "${out:?}/$1"
    MGI_SUITE_WRAP="$cs --tool $1 ${opts[*]}" \
    MGI_SUITE_BUDGET_S=$(($2 * MGI_SUITE_SLOW / 3)) \
        mgi-gpu-suite.sh "$here/bin" "$out/$1" "$3" > "$out/$1.txt" 2>&1
    local rc=$? log
    grep -E '^(PASS|FAIL|SKIPPED|TIMEOUT)' "$out/$1.txt"
    for log in "$out/$1"/*.log; do
        [ -e "$log" ] || continue
        echo "  $(basename "$log" .log): $(grep -h 'ERROR SUMMARY' "$log" | head -1)"
        findings "$log" || rc=$((rc + 1))
    done
    bad=$((bad + rc))
}
two='peer_dies_2proc_defaults|groupby_2proc_defaults_thread_recv'
suite memcheck 170 "^(ring_thread|ring_warp|ring_block|$two)\$"
suite racecheck 110 "^(ring_block|$two)\$"
suite synccheck 110 "^(ring_block|$two)\$"
echo "gpu-sanitize: $bad step(s) with findings or failures"
exit $bad
