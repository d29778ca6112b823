#!/usr/bin/env bash
#
# Open MPI's pml ucx over this project's UCX: mgi_mpi_test on host memory,
# 2 ranks on this machine, small sizes (MGI_MPI_ARGS replaces its options,
# e.g. MGI_MPI_ARGS=all for the full sizes).  What it shows:
#
#   - launch: mpirun starts 2 ranks and every mode passes, every byte
#     checked (check, bw with windows 1/4/16/64, lat, sendrecv, the
#     collectives);
#   - pml ucx and nothing else: `--mca pml ucx` makes mpirun fail unless it
#     is selected, and its selection log says so on both ranks (Open MPI
#     4.1 needs pml_ucx_tls/devices `any` for UCX_TLS=sm,self);
#   - this project's UCX: the program names the libucp it loaded, which
#     must be $UCX_PREFIX's (first on the library path) at the version
#     ucx_info gives, with cuda_mgi among the UCT modules it loaded;
#   - refusals: a bad option (status 2), --mem cuda without a GPU (77) and
#     a wait that cannot end (4, the call named), each with its message.
#
. "$(dirname "$0")/../../check/common.sh"

prog=${MGI_MPI_TEST:-}
args=${MGI_MPI_ARGS:---size 1:1M --iterations 10 --warmup 2 all}

if [ -n "${MGI_MPI_SKIP:-}" ] || [ ! -x "$prog" ]; then
    skip "MPI over UCX: ${MGI_MPI_SKIP:-$prog was not built}"
    exit 77
fi
mpirun=${MPIRUN:-mpirun}
if ! "$mpirun" --version 2>&1 | grep -q 'Open MPI'; then
    skip "MPI over UCX: $mpirun is not Open MPI's (pml ucx is Open MPI's)"
    exit 77
fi

# this project's UCX first, so that Open MPI's pml ucx loads it
export LD_LIBRARY_PATH="$UCX_PREFIX/lib:$LD_LIBRARY_PATH"
ucx_v=$("$UCX_INFO" -v | sed -n -e 's/^# Version //p' \
            -e 's/^# Library version: //p' | head -1)
# (2 ranks that poll, on 2 cores that builds share: without yielding when
# idle a ping-pong waits for the scheduler, 30 s instead of 1)
launch=("$mpirun" --oversubscribe --bind-to none --mca mpi_yield_when_idle 1
        --mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any
        -x LD_LIBRARY_PATH -x UCX_TLS=sm,self -x UCX_WARN_UNUSED_ENV_VARS=n)
[ "$(id -u)" = 0 ] && launch+=(--allow-run-as-root)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# run NAME TIMEOUT MPIRUN-ARGS...: the job's output in $out/NAME, status in rc
run() {
    local name=$1 limit=$2; shift 2
    local t0=$SECONDS
    timeout "$limit" "$@" >"$out/$name" 2>&1
    rc=$?
    echo "--- $name: exit $rc in $((SECONDS - t0)) s: $*"
    sed 's/^/    /' "$out/$name"
}

# --- the test itself ---------------------------------------------------------
# shellcheck disable=SC2086
run main 300 "${launch[@]}" -np 2 --mca pml_base_verbose 10 "$prog" $args
if [ $rc -eq 0 ] && grep -q '^# every byte right' "$out/main"; then
    pass "2 ranks over pml ucx, UCX_TLS=sm,self: every mode, every byte ($args)"
else
    fail "mgi_mpi_test over pml ucx: exit $rc (output above)"
fi

n=$(grep -c 'select: component ucx selected' "$out/main")
others=$(grep 'select: component [^ ]* selected' "$out/main" |
         grep -vc 'component ucx selected')
if [ "$n" -eq 2 ] && [ "$others" -eq 0 ]; then
    pass "pml ucx selected on both ranks (pml_base_verbose: $(grep -m1 \
'select: component ucx selected' "$out/main" | sed 's/^\[[^]]*\] //'))"
else
    fail "pml ucx selection: $n of 2 ranks say 'select: component ucx selected'"
fi

line=$(grep -m1 '^# UCX: ' "$out/main")
got_v=$(echo "$line" | sed -n 's/^# UCX: \([^ ]*\) (.*$/\1/p')
got_lib=$(echo "$line" | sed -n 's/^# UCX: [^ ]* (\(.*\))$/\1/p')
want_lib=$UCX_PREFIX/lib/libucp.so.0
if [ -n "$got_lib" ] && [ "$(readlink -f "$got_lib")" = "$(readlink -f "$want_lib")" ] &&
   [ "$got_v" = "$ucx_v" ]; then
    pass "the ranks loaded this project's UCX: $line"
else
    fail "the ranks' UCX: '${line:-no # UCX line}', expected $ucx_v ($want_lib)"
fi

mods=$(sed -n 's/^# UCX UCT modules: //p' "$out/main")
if [ -e "$UCX_PREFIX/lib/ucx/libuct_cuda_mgi.so.0" ] ||
   [ -e "$UCX_PREFIX/lib/ucx/libuct_cuda_mgi.so" ]; then
    if [[ " $mods " == *" cuda_mgi "* ]]; then
        pass "UCX loaded cuda_mgi into the MPI processes (UCT modules: $mods)"
    else
        fail "cuda_mgi is installed in $UCX_PREFIX/lib/ucx but the ranks' UCX did not load it (UCT modules: ${mods:-none})"
    fi
else
    skip "cuda_mgi in the MPI processes: not installed in $UCX_PREFIX/lib/ucx (make install)"
fi

sections=$(grep -c '^# Size' "$out/main")
if [ "$sections" -eq 10 ] && ! grep -q 'SKIPPED\|FAILED' "$out/main"; then
    pass "10 result tables (check, bw x 4 windows, lat, sendrecv, alltoall, allreduce, bcast), none skipped"
elif [ "${MGI_MPI_ARGS+set}" != set ]; then
    fail "expected 10 result tables and no SKIPPED or FAILED line, got $sections"
fi

# --- refusals -----------------------------------------------------------------
run bad_option 60 "$prog" --bogus
if [ $rc -eq 2 ] && grep -q -- '--bogus' "$out/bad_option"; then
    pass "a bad option is refused with status 2, named"
else
    fail "mgi_mpi_test --bogus: exit $rc, expected 2 and a message naming --bogus"
fi

if [ "$MGI_HAVE_DRIVER" = 0 ]; then
    # (the CUDA runtime found, the driver a stub: no device)
    LD_LIBRARY_PATH="$LD_LIBRARY_PATH:${CUDA_HOME:-/usr/local/cuda}/lib64" \
        run no_gpu 120 "${launch[@]}" -np 2 "$prog" --mem cuda --size 1:1K check
    if [ $rc -eq 77 ] && grep -q 'mem cuda: cannot run here' "$out/no_gpu"; then
        pass "--mem cuda without a GPU: status 77, $(grep -m1 'cannot run here' \
"$out/no_gpu" | sed 's/^.*cannot run here: //')"
    else
        fail "--mem cuda without a GPU: exit $rc, expected 77 and 'cannot run here'"
    fi
else
    skip "--mem cuda without a GPU: this machine has a driver (run-gpu.sh runs device buffers)"
fi

# rank 0 measures bandwidth while rank 1 answers pings: rank 0's wait for
# the bandwidth test's reply and rank 1's for the second ping never end
# (whichever rank's watchdog comes first aborts the job)
run timeout 120 "${launch[@]}" -np 1 "$prog" --timeout 2 --size 1:1 bw : \
                                -np 1 "$prog" --timeout 2 --size 1:1 lat
if [ $rc -eq 4 ] && grep -Eq 'timeout: MPI_Recv of the (reply|ping) did not complete within 2 s' \
        "$out/timeout"; then
    pass "a wait that cannot end: status 4, $(grep -m1 'timeout:' "$out/timeout" |
        sed 's/^.*timeout: //')"
else
    fail "a wait that cannot end: exit $rc, expected 4 and 'timeout: MPI_Recv of the reply' (or ping)"
fi

finish
