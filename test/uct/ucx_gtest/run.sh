#!/usr/bin/env bash
#
# Run UCX's generic UCT tests on cuda_mgi (ucx_gtest_cuda_mgi, see build.sh)
# on a GPU node, from a bundle (bundle/run/ucx-gtest.sh, the binary in
# bundle/bin) or from the source tree (test/uct/ucx_gtest/build).
#
# Usage: run.sh [-o OUTDIR] [-t INSTANCES] [-w SECONDS] [-a] [-l] [-- ARGS]
#
#   -o OUTDIR     results (default ./ucx-gtest-results):
#                   ucx_gtest.json  gtest's report (a test UCX skips shows
#                                   there as passed: see summary.tsv)
#                   ucx_gtest.log   the run's output
#                   summary.tsv     instance, test, PASS|SKIP|FAIL|CRASH,
#                                   skip reason
#                   env.txt         binary, command line, GPUs, UCX settings
#   -t INSTANCES  comma-separated (default cuda_mgi); cuda_ipc is UCX's own
#                 CUDA IPC transport, the reference; self, posix and cma
#                 are the host-memory controls
#   -w SECONDS    UCX's watchdog: abort the run if one test takes longer
#                 (default 180)
#   -a            also run the tests excluded below as not applicable
#   -l            list the tests that would run, and exit
#   ARGS          passed to the binary (e.g. --gtest_repeat=3, -s SEED)
#
# Exit status: the binary's (non-zero if a test failed or the run died), or
# 3 if an instance ran no test at all (its transport found no devices).
#
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out=$PWD/ucx-gtest-results
instances=cuda_mgi
watchdog=180
all=0
list=0

die() { printf '[ucx-gtest] error: %s\n' "$*" >&2; exit 2; }
usage() { sed -n '/^# Usage/,/^# Exit/p' "$0" | sed 's/^# \{0,1\}//'; exit "$1"; }

while getopts "o:t:w:alh" opt; do
    case $opt in
    o) out=$OPTARG ;;
    t) instances=$OPTARG ;;
    w) watchdog=$OPTARG ;;
    a) all=1 ;;
    l) list=1 ;;
    h) usage 0 ;;
    *) usage 2 ;;
    esac
done
shift $((OPTIND - 1))

bin=${UCX_GTEST_BIN:-}
for b in "$here/../bin/ucx_gtest_cuda_mgi" "$here/build/ucx_gtest_cuda_mgi"; do
    [ -z "$bin" ] && [ -x "$b" ] && bin=$b
done
[ -n "$bin" ] && [ -x "$bin" ] ||
    die "ucx_gtest_cuda_mgi not found: build it (build.sh) or set UCX_GTEST_BIN"

# Not applicable to cuda_mgi, whatever the transport does (-a runs them):
#  test_uct_peer_failure_keepalive.killed: it needs the peer to die; in one
#    process UCX fakes that only for its shared-memory transports, by
#    editing their endpoint's keepalive state.  Peer death across processes
#    is the project's own GPU suite's to test.
#  uct_flush_test.put_bcopy_*: they put into host memory, which cuda_mgi
#    does not reach (its MD accesses CUDA memory only).  Where cuda_mgi
#    registers no host memory (UCP's second protocol layer), the buffer has
#    no key and the test passes UCT_INVALID_RKEY, which cuda_mgi takes for
#    a key and dereferences: the run would end there.
#  test_md.invalidate: it packs each key into a uint64_t, as an 8-byte ib
#    key fits; cuda_mgi's packed key (an IPC handle and its owner) is larger
#    and would overrun the test's stack.  It runs only where cuda_mgi
#    registers host memory (UCX_PROTO_ENABLE=n); cuda_ipc never does.
excluded="cuda_mgi/test_uct_peer_failure_keepalive.killed/*"
excluded+=":cuda_mgi/uct_flush_test.put_bcopy_*"
excluded+=":cuda_mgi/test_md.invalidate/*"

filter=
for i in ${instances//,/ }; do
    filter+="${filter:+:}$i/*"
done
[ $all -eq 1 ] || filter+="-$excluded"

# The settings UCX's own gtest runs with (test/gtest/Makefile.am), except
# that a fatal error prints a backtrace and ends the run instead of waiting
# for a debugger
export UCX_HANDLE_ERRORS=${UCX_HANDLE_ERRORS:-bt}
export UCX_LOG_LEVEL=${UCX_LOG_LEVEL:-warn}
export UCX_LOG_PRINT_ENABLE=${UCX_LOG_PRINT_ENABLE:-y}
export UCX_WARN_UNUSED_ENV_VARS=n

if [ $list -eq 1 ]; then
    exec "$bin" --gtest_list_tests --gtest_filter="$filter"
fi

mkdir -p "$out" || die "cannot create $out"
out=$(cd "$out" && pwd)
{
    echo "binary: $bin"
    echo "command: $bin --gtest_filter=$filter -t $watchdog $*"
    echo "date: $(date -u +%FT%TZ)"
    echo "host: $(hostname)"
    nvidia-smi -L 2>/dev/null || echo "nvidia-smi: not found"
    [ -x "$(dirname "$bin")/ucx_info" ] && "$(dirname "$bin")/ucx_info" -v
    env | grep -E '^(UCX_|CUDA_VISIBLE_DEVICES=|GTEST_)' | sort
} > "$out/env.txt"

"$bin" --gtest_filter="$filter" --gtest_output="json:$out/ucx_gtest.json" \
    --gtest_color=no -t "$watchdog" "$@" 2>&1 | tee "$out/ucx_gtest.log"
rc=${PIPESTATUS[0]}

# One line a test: UCX reports a skipped test as passed, with a SKIP line
# in between; a test with a RUN line and no result ended the run
awk -v OFS='\t' '
    function flush_test(result) {
        print inst, name, result, reason
        running = 0
    }
    /^\[ RUN      \] / {
        if (running) { flush_test("CRASH") }
        full = $4; inst = full; sub(/\/.*/, "", inst)
        name = full; sub(/^[^\/]*\//, "", name)
        running = 1; skipped = 0; reason = ""
        next
    }
    running && /^\[     SKIP \]/ {
        skipped = 1
        reason = $0; sub(/^\[     SKIP \] */, "", reason)
        next
    }
    running && /^\[       OK \] / { flush_test(skipped ? "SKIP" : "PASS"); next }
    running && /^\[  FAILED  \] / { flush_test("FAIL"); next }
    END { if (running) { flush_test("CRASH") } }
' "$out/ucx_gtest.log" > "$out/summary.tsv"

for i in ${instances//,/ }; do
    awk -v i="$i" '$1 == i { n[$3]++ }
        END { printf "[ucx-gtest] %s: %d passed, %d skipped, %d failed, %d crashed\n",
                     i, n["PASS"], n["SKIP"], n["FAIL"], n["CRASH"] }' \
        "$out/summary.tsv"
    # no test at all: the transport found no devices (no driver, no GPU)
    if ! awk -v i="$i" '$1 == i { found = 1 } END { exit !found }' \
             "$out/summary.tsv"; then
        echo "[ucx-gtest] error: no $i tests ran: $i has no devices here" >&2
        [ $rc -ne 0 ] || rc=3
    fi
done
echo "[ucx-gtest] results in $out (exit status $rc)"
exit $rc
