#!/bin/sh
#
# The region workloads on the CPU (--cpu: the region code on host threads
# over host memory, the proxy and UCP carrying the remote parts): MGG's
# aggregation over 2 and 3 ranks, a get a row and the distinct remote rows
# fetched once (cpu-cache), and PROACT's push and bulk, every answer
# checked against the CPU reference ("checked=yes"); then the command
# lines' refusals (status 2, a line naming the option and the value);
# and bench/workloads/plot_regions.py's charts of those runs' lines
# (skipped, with the reason, where python3 has no matplotlib).
# The programs are those built in bench/workloads ($MGI_WL_BUILD, which
# make check sets).
#
set -u
rc=0
export UCX_WARN_UNUSED_ENV_VARS=n MGI_TEST_GPU_DEFAULTS=0 MGI_TIMEOUT_MS=60000
wl=${MGI_WL_BUILD:-../../bench/workloads}
mgg=$wl/mgi_mgg proact=$wl/mgi_proact
for p in "$mgg" "$proact"; do
    [ -x "$p" ] || { echo "SKIP: no $p"; exit 77; }
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mgi_region_wl.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
run() {  # the name, the transports, the lines, then the command; every
         # line checked
    name=$1; tls=$2; lines=$3; shift 3
    out=$(UCX_TLS=$tls timeout 300 "$@" 2>&1)
    st=$?
    printf '%s\n' "$out" >> "$tmp/runs.txt"
    if [ $st -eq 0 ] &&
       [ "$(printf '%s\n' "$out" | grep -c "checked=yes")" -eq "$lines" ] &&
       ! printf '%s\n' "$out" | grep -q "checked=NO"; then
        echo "PASS: $name"
        printf '%s\n' "$out" | grep "checked="
    else
        echo "FAIL: $name (exit $st)"; printf '%s\n' "$out" | tail -20; rc=1
    fi
}
run "mgg --cpu 2 ranks sm" sm,self 2 "$mgg" --cpu --gpus 2 --scale 10 \
    --dim 32
run "mgg --cpu 3 ranks tcp" tcp,self 2 "$mgg" --cpu --gpus 3 --scale 9 \
    --dim 20 --ps 3 --dist 0
run "proact --cpu sm" sm,self 4 "$proact" --cpu --mib 2 --tiles 16K,512K
run "proact --cpu tcp" tcp,self 2 "$proact" --cpu --mib 1 --tiles 64K \
    --work 1
plot=$wl/plot_regions.py
[ -f "$plot" ] || plot=$(dirname "$0")/../../bench/workloads/plot_regions.py
if ! python3 -c 'import matplotlib' 2>/dev/null; then
    echo "SKIP: plot_regions.py (no matplotlib for python3)"
elif python3 "$plot" "$tmp/charts" "$tmp/runs.txt" > "$tmp/plot.txt" 2>&1 &&
     [ -s "$tmp/charts/mgg_2gpu.png" ] && [ -s "$tmp/charts/mgg_3gpu.png" ] &&
     [ -s "$tmp/charts/proact_work8.png" ] &&
     [ -s "$tmp/charts/proact_work1.png" ]; then
    echo "PASS: plot_regions.py: $(tr '\n' ' ' < "$tmp/plot.txt")"
else
    echo "FAIL: plot_regions.py"; cat "$tmp/plot.txt"; ls "$tmp/charts"; rc=1
fi
bad() {  # what the error must say, the program, then the arguments
    want=$1; shift
    out=$(timeout 30 "$@" 2>&1)
    st=$?
    if [ $st -eq 2 ] && printf '%s\n' "$out" | grep -qF -- "$want"; then
        echo "PASS: $* -> $want"
    else
        echo "FAIL: $* -> exit $st, said: $out"; rc=1
    fi
}
bad "--dim 0: not a whole number from 4 to 256" "$mgg" --dim 0
bad "--dim 30: not a multiple of 4" "$mgg" --dim 30
bad "--gpus x: not a whole number" "$mgg" --gpus x
bad "--ps 33: not a whole number from 1 to 32" "$mgg" --ps 33
bad "no variant 'foo'" "$mgg" --variant region,foo
bad "exceeds 200 KiB: lower --ps" "$mgg" --ps 32 --dim 256
bad "usage:" "$mgg" --scale
bad "--mib 0: not a whole number from 1" "$proact" --mib 0
bad "'3K' is not a power of two" "$proact" --tiles 16K,3K
bad "is not a multiple of the tile" "$proact" --mib 1 --tiles 2M
bad "--variant stores needs GPUs" "$proact" --cpu --variant stores
bad "--bw needs GPUs" "$proact" --cpu --bw
bad "usage:" "$proact" --bogus 1
exit $rc
