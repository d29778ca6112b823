#!/bin/sh
#
# The workload program's host communication on the CPU: the UCX-only
# all-to-all over shared memory and TCP with 1-4 ranks (every byte checked),
# a failing rank that must end the run instead of hanging it, and NCCL
# loaded with dlopen from the CUDA toolkit (or $MGI_NCCL_LIB).
#
set -u
t=./test_mgi_wl_comm
rc=0
run() {  # timeout-guarded; the name of the case, then the command
    name=$1; shift
    if timeout 120 "$@"; then
        echo "PASS: $name"
    else
        echo "FAIL: $name"; rc=1
    fi
}
for n in 1 2 4; do
    run "alltoall $n ranks sm" env UCX_TLS=sm,self $t exchange $n
done
run "alltoall 3 ranks tcp" env UCX_TLS=tcp,self $t exchange 3
run "alltoall 3 ranks, transports by ucp_config_modify" \
    env UCX_TLS=bogus $t exchange 3 tcp,self
run "a failing rank ends the run" env UCX_TLS=sm,self $t fail 4
# no GPU driver here: UCX loads no cuda transport, and that must be seen
if ! ls /dev/nvidia0 >/dev/null 2>&1; then
    run "a cuda transport UCX did not load is reported" \
        $t tlcheck 2 "sm,self,cuda_copy,cuda_mgi|cuda_copy"
fi
run "no cuda transport asked, none missing" $t tlcheck 2 "sm,self|"

# a killed launcher takes its ranks with it (no GPU processes left behind):
# only the launcher is killed, as a timeout in another process group would
pids=$(mktemp)
$t sleep 3 "$pids" >/dev/null 2>&1 &
for i in 1 2 3 4 5 6 7 8 9 10; do
    [ "$(wc -l < "$pids")" -ge 3 ] && break
    sleep 1
done
launcher=$(awk 'NR == 1 {print $1}' "$pids")
[ -n "$launcher" ] && kill -KILL "$launcher" 2>/dev/null
sleep 1
left=0
for p in $(awk '{print $2}' "$pids"); do
    # a zombie is dead (its new parent may never reap it here)
    state=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' \
            "/proc/$p/status" 2>/dev/null)
    if [ -n "$state" ] && [ "$state" != Z ]; then
        left=$((left + 1))
        kill -KILL "$p" 2>/dev/null
    fi
done
if [ "$(wc -l < "$pids")" -eq 3 ] && [ "$left" -eq 0 ]; then
    echo "PASS: ranks die with a killed launcher"
else
    echo "FAIL: ranks die with a killed launcher ($left of" \
         "$(wc -l < "$pids") left)"
    rc=1
fi
rm -f "$pids"

lib=${MGI_NCCL_LIB:-${CUDA_HOME:-/usr/local/cuda}/lib64/libnccl.so.2}
if [ -e "$lib" ]; then
    run "dlopen NCCL" env MGI_NCCL_LIB="$lib" $t nccl
else
    echo "SKIP: dlopen NCCL (no $lib)"
fi
exit $rc
