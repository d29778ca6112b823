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

# The channels' steps: the ring tests, two processes on direct rings, the
# sorters' path (a persistent sorter kernel beside the user's, in one
# process and in two) and the tile sends.  Two things of the tools meet a
# persistent kernel:
#  - a stream's synchronization returns for a stream with a kernel only
#    once the whole device is idle, which it never is while a sorter
#    runs; libmgi and the test programs wait on events instead
#    (mgi_gpu_event_wait, wait_stream), which see the stream's progress;
#  - memcheck knows the allocations that existed when a kernel was
#    launched: the sorter's reads of rings and mirrors that a channel
#    allocates later are reported out of bounds though they are inside
#    them (probe_late shows it with a 4-byte buffer).  So memcheck checks
#    the channels' steps with the sorter kernel left out (every other
#    kernel and every CUDA call checked); synccheck and racecheck, which
#    check barriers and shared memory, check it too.
# BUDGET_S is for MGI_SUITE_SLOW=3 and grows with it.
suite() {  # TOOL BUDGET_S REGEX [TOOL OPTIONS...]
    local tool=$1 budget=$2 regex=$3
    shift 3
    [[ $tool =~ $parts ]] || return 0
    echo "== channels: mgi-gpu-suite.sh under $tool"
    rm -rf "${out:?}/$tool"
    MGI_SUITE_WRAP="$cs --tool $tool ${opts[*]} $*" \
    MGI_SUITE_BUDGET_S=$((budget * MGI_SUITE_SLOW / 3)) \
        mgi-gpu-suite.sh "$here/bin" "$out/$tool" "$regex" \
        > "$out/$tool.txt" 2>&1
    local rc=$? log
    grep -E '^(PASS|FAIL|SKIPPED|TIMEOUT)' "$out/$tool.txt"
    for log in "$out/$tool"/*.log; do
        [ -e "$log" ] || continue
        echo "  $(basename "$log" .log): $(grep -hE '(ERROR|RACECHECK) SUMMARY' "$log" | head -1)"
        findings "$log" || rc=$((rc + 1))
    done
    bad=$((bad + rc))
}
two='peer_dies_2proc_defaults|groupby_2proc_defaults_thread_recv'
sorters='groupby_1proc_2gpu|groupby_2proc'
# the tile sends (shared-memory tiles of the user's block), into the
# sorters' stage rings and into direct rings, in one process
tiles='shuffle_64B_1proc_tile|shuffle_64B_1proc_direct_tile'
# a relay's sorter forwarding (three endpoints of one process), a source
# spreading over two relays (four); racecheck also a relay spreading over
# two (five: under memcheck and synccheck the fifth endpoint's kernels do
# not start beside the other four's, and the test says so and fails)
relay='shuffle_16B_3ep_relay|shuffle_16B_4ep_split'
suite memcheck 300 "^(ring_thread|ring_warp|ring_block|$two|$sorters|$tiles|$relay)\$" \
    --kernel-name-exclude kns=mgi_sorter_kernel
suite racecheck 240 "^(ring_block|$two|$sorters|$tiles|$relay|shuffle_16B_5ep_fan)\$"
suite synccheck 240 "^(ring_block|$two|$sorters|$tiles|$relay)\$"
echo "gpu-sanitize: $bad step(s) with findings or failures"
exit $bad
