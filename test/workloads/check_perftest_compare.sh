#!/bin/sh
#
# bench/perftest_compare.sh's own logic, without a GPU: a stand-in
# ucx_perftest (this directory's perftest_stub.py) listens late as a
# server and prints a fixed "Final:" line as a client, cuda_mgi twice
# cuda_ipc's bandwidth and half its latency. The script must start each
# client only once its server listens (a client that finds no server
# fails, as ucx_perftest does), take the medians, print ratio 2.000 and
# 0.500 and the JSON line, and say so when a server never listens, without
# waiting out its bound. Python 3 ($PYTHON, default python3; skipped,
# status 77, without it).
#
set -u
py=${PYTHON:-python3}
bench=${MGI_BENCH:-$(dirname "$0")/../../bench}
here=$(cd "$(dirname "$0")" && pwd)
"$py" -c 'import socket' 2>/dev/null || { echo "SKIP: no $py"; exit 77; }
[ -f "$bench/perftest_compare.sh" ] ||
    { echo "SKIP: no $bench/perftest_compare.sh"; exit 77; }
rc=0
dir=$(mktemp -d "${TMPDIR:-/tmp}/mgi_perfstub.XXXXXX")
trap 'rm -rf "$dir"' EXIT
printf '#!/bin/sh\nexec %s %s "$@"\n' "$py" "$here/perftest_stub.py" \
    > "$dir/ucx_perftest"
printf '#!/bin/sh\necho "# Library version: 0.0.0 (stand-in)"\n' \
    > "$dir/ucx_info"
chmod +x "$dir/ucx_perftest" "$dir/ucx_info"

# has WHAT FILE: FILE holds the line WHAT (a fixed string)
has() {
    if grep -qF -- "$1" "$2"; then
        echo "PASS: $1"
    else
        echo "FAIL: no '$1' in:"; cat "$2"; rc=1
    fi
}

port=$(( 20000 + $$ % 20000 ))
# servers that listen 1.5 s after they start, later than the fixed second
# the script used to wait
PATH="$dir:$PATH" MGI_PERF_PORT=$port STUB_LISTEN_DELAY=1.5 \
    MGI_PERF_MODES="put_bw bidir_put_bw" \
    timeout 120 bash "$bench/perftest_compare.sh" 65536 2 \
    > "$dir/out" 2> "$dir/err"
echo "perftest_compare.sh exit $?"
has "put_bw        65536 B  cuda_mgi    400.00 GB/s  cuda_ipc    200.00 GB/s  ratio 2.000  (runs: mgi 400.00 400.00 | ipc 200.00 200.00)" "$dir/out"
has "bidir_put_bw      65536 B  cuda_mgi    800.00 GB/s  cuda_ipc    400.00 GB/s  ratio 2.000" "$dir/out"
has '"test":"bidir_put_bw","size":65536,"unit":"GB/s","cuda_mgi":800.00,"cuda_ipc":400.00,"ratio":2.000}]' "$dir/out"
if grep -q "did not listen\|failed" "$dir/err"; then
    echo "FAIL: a client started before its server listened:"; cat "$dir/err"
    rc=1
fi
# the latency tests' own sizes (8 B and 64 KiB), whatever SIZES says
PATH="$dir:$PATH" MGI_PERF_PORT=$((port + 50)) MGI_PERF_MODES=tag_lat \
    timeout 60 bash "$bench/perftest_compare.sh" 4096 1 > "$dir/out" \
    2> "$dir/err"
has "tag_lat           8 B  cuda_mgi    10.000 us  cuda_ipc    20.000 us  ratio 0.500" "$dir/out"
has "tag_lat       65536 B  cuda_mgi    10.000 us  cuda_ipc    20.000 us  ratio 0.500" "$dir/out"

# a server that ends without listening: said at once, not after 10 s
start=$(date +%s)
PATH="$dir:$PATH" MGI_PERF_PORT=$((port + 100)) STUB_SERVER_DEAF=1 \
    MGI_PERF_MODES=put_bw timeout 60 \
    bash "$bench/perftest_compare.sh" 65536 1 > "$dir/out" 2> "$dir/err"
has "the cuda_mgi server on port $((port + 101)) did not listen" "$dir/err"
if [ $(( $(date +%s) - start )) -ge 10 ]; then
    echo "FAIL: a server that ended was waited for $(( $(date +%s) - start )) s"
    rc=1
fi
exit $rc
