#!/usr/bin/env bash
#
# run-gpu.sh's own logic, on any machine: its runs of cuda_mgi and
# cuda_ipc alternate MGI_MPI_REPEAT times and compare.txt holds each
# transport's median per table and size, with their ratio; a bad
# MGI_MPI_REPEAT is refused. mpirun and mgi_mpi_test are stand-ins here
# (a table whose values differ by transport and by run), so that the
# medians are known; run-gpu.sh's real runs need 2 GPUs.
#
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd -P)
ucx=${UCX_PREFIX:-$here/../../../.deps/ucx}
[ -e "$ucx/lib/libucp.so.0" ] ||
    { echo "SKIP: no UCX at $ucx (run-gpu.sh checks for one)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin"
cp "$here/run-gpu.sh" "$tmp/"
printf '#!/bin/sh\nexit 0\n' >"$tmp/mgi_mpi_test"
# the n-th run of a transport prints 1000 * f + n (bandwidth) and 5 + n
# (latency), f = 2 for cuda_mgi, 1 for cuda_ipc
cat >"$tmp/bin/mpirun" <<'FAKE'
#!/usr/bin/env bash
[ "${1:-}" = --version ] && { echo "stand-in mpirun"; exit 0; }
case "$*" in *check*) echo "[0] UCX INFO ep_cfg[0]: $UCX_TLS"; exit 0 ;; esac
f=1; case $UCX_TLS in *cuda_mgi*) f=2 ;; esac
c=$(dirname "$0")/count.$f
n=$(( $(cat "$c" 2>/dev/null || echo 0) + 1 )); echo $n >"$c"
echo "# MGI MPI Bandwidth Test, window 4"
echo "# Size      Bandwidth (MB/s)"
echo "65536   $((1000 * f + n))"
echo "# MGI MPI Latency Test"
echo "# Size      Latency (us)"
echo "65536   $((5 + n))"
echo "# every byte right"
FAKE
chmod +x "$tmp/mgi_mpi_test" "$tmp/bin/mpirun"

fail=0
check() {   # what, command...
    local what=$1; shift
    if "$@"; then echo "PASS: $what"; else echo "FAIL: $what"; fail=1; fi
}
PATH=$tmp/bin:$PATH MGI_UCX=$ucx MGI_MPI_REPEAT=4 \
    bash "$tmp/run-gpu.sh" "$tmp/out" >"$tmp/log" 2>&1
rc=$?
check "4 runs of each, exit 0 (exit $rc)" [ $rc -eq 0 ]
order=$(grep -oE 'cuda_(mgi|ipc),cuda_copy, run [1-4] of 4: exit 0' "$tmp/log" |
        cut -c6-8 | tr '\n' ' ')
check "runs alternate ($order)" [ "$order" = "mgi ipc mgi ipc mgi ipc mgi ipc " ]
# medians: cuda_mgi 2001..2004 -> 2002.50, cuda_ipc 1001..1004 -> 1002.50
check "bandwidth medians and ratio" \
    grep -qE '^65536 +2002\.50 +1002\.50 +1\.998$' "$tmp/out/compare.txt"
check "latency medians and ratio" \
    grep -qE '^65536 +7\.50 +7\.50 +1\.000$' "$tmp/out/compare.txt"
PATH=$tmp/bin:$PATH MGI_UCX=$ucx MGI_MPI_REPEAT=x \
    bash "$tmp/run-gpu.sh" "$tmp/out2" >"$tmp/log2" 2>&1
rc=$?
check "MGI_MPI_REPEAT=x refused, naming it (exit $rc)" \
    eval '[ $rc -eq 2 ] && grep -q "MGI_MPI_REPEAT=x" "$tmp/log2"'
[ $fail -eq 0 ] || { echo "--- log"; cat "$tmp/log" "$tmp/log2";
                     cat "$tmp/out/compare.txt"; }
exit $fail
