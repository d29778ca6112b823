#!/usr/bin/env bash
#
# ucx_perftest: cuda_mgi beside cuda_ipc, GPU0 -> GPU1, in one invocation.
# Each size runs both transports back to back, REPEAT times, alternating;
# the median of each is reported with the ratio cuda_mgi / cuda_ipc.
#
#   UCT put_bw:  ucx_perftest -d cuda -x <tl> -t put_bw -m cuda -D zcopy
#   UCP tag_bw:  UCX_TLS=sm,<tl>,cuda_copy ucx_perftest -t tag_bw -m cuda
#   UCT put_lat: ucx_perftest -d cuda -x <tl> -t put_lat -m cuda -D zcopy
#   UCP tag_lat: UCX_TLS=sm,<tl>,cuda_copy ucx_perftest -t tag_lat -m cuda
#   bidir_put_bw: two put_bw pairs at once, GPU0->GPU1 and GPU1->GPU0 (sum)
#
# MGI_PERF_ARGS adds ucx_perftest options to every client (e.g. "-O 1" for
# one operation in flight at a time).
# MGI_PERF_MODES picks the tests (default: put_bw tag_bw put_lat tag_lat
# bidir_put_bw); the latency tests run at 8 B and 64 KiB.
#
# GB/s = 1e9 bytes/s.  Output: one line per measurement, then a JSON line.
#
# Usage: perftest_compare.sh [SIZES] [REPEAT]
#        SIZES: comma-separated byte counts (default 64 KiB, 1, 4, 16, 64 and
#               256 MiB)
set -uo pipefail

sizes=${1:-65536,1048576,4194304,16777216,67108864,268435456}
repeat=${2:-3}
port=${MGI_PERF_PORT:-13337}
export UCX_WARN_UNUSED_ENV_VARS=n

iters_for() {  # about 8 GiB of traffic per run, between 20 and 50000 iterations
    local n=$(( 8589934592 / $1 ))
    [ $n -lt 20 ] && n=20
    [ $n -gt 50000 ] && n=50000
    echo $n
}

# wait_listen PORT PID: until a socket listens on PORT (the server's), at
# most 10 s; 1 if it did not, or PID ended first. (A fixed sleep before
# each client was a quarter of a run's time.)
wait_listen() {
    local hex end=$((SECONDS + 10))
    hex=$(printf '%04X' "$1")
    while [ $SECONDS -lt $end ]; do
        if awk -v p=":$hex" '$4 == "0A" && substr($2, length($2) - 4) == p \
               {f = 1} END {exit !f}' /proc/net/tcp /proc/net/tcp6 \
               2>/dev/null; then
            return 0
        fi
        kill -0 "$2" 2>/dev/null || return 1
        sleep 0.05
    done
    return 1
}

# run_one MODE TL SIZE -> prints bandwidth in GB/s (or latency in us)
run_one() {
    local mode=$1 tl=$2 size=$3 n srv cli out
    n=$(iters_for "$size")
    port=$((port + 1))
    case $mode in
    put_bw|put_lat)
        srv=(ucx_perftest -d cuda -x "$tl" -p $port)
        cli=(ucx_perftest 127.0.0.1 -p $port -d cuda -x "$tl" -t "$mode"
             -m cuda -D zcopy -s "$size" -n "$n" ${MGI_PERF_ARGS:-})
        envs=() ;;
    tag_bw|tag_lat)
        srv=(ucx_perftest -p $port)
        cli=(ucx_perftest 127.0.0.1 -p $port -t "$mode" -m cuda -s "$size"
             -n "$n" ${MGI_PERF_ARGS:-})
        envs=(UCX_TLS=sm,$tl,cuda_copy) ;;
    esac
    timeout 150 env "${envs[@]}" "${srv[@]}" >/dev/null 2>&1 &
    local spid=$!
    wait_listen $port $spid ||
        echo "perftest_compare: the $tl server on port $port did not listen" >&2
    out=$(timeout 120 env "${envs[@]}" "${cli[@]}" 2>&1)
    wait $spid 2>/dev/null
    # Final: iters typ.lat avg.lat overall.lat bw.avg bw.overall mr.avg mr.overall
    if [ "$mode" = put_lat ] || [ "$mode" = tag_lat ]; then
        echo "$out" | awk '/Final:/ {print $4}'
    else
        echo "$out" | awk '/Final:/ {printf "%.2f\n", $6 * 1048576 / 1e9}'
    fi
    echo "$out" | grep -iE 'error|fail' | head -3 >&2
}

# run_bidir TL SIZE -> GB/s of GPU0->GPU1 and GPU1->GPU0 put_bw at once.
# ucx_perftest puts from its client (CUDA device 1) into its server (device
# 0); the second pair sees the GPUs in the other order.
run_bidir() {
    local tl=$1 size=$2 n pa pb outa outb
    n=$(iters_for "$size")
    pa=$((port + 1)); pb=$((port + 2)); port=$((port + 2))
    timeout 150 ucx_perftest -d cuda -x "$tl" -p $pa >/dev/null 2>&1 &
    local sa=$!
    CUDA_VISIBLE_DEVICES=1,0 timeout 150 ucx_perftest -d cuda -x "$tl" \
        -p $pb >/dev/null 2>&1 &
    local sb=$!
    wait_listen $pa $sa && wait_listen $pb $sb ||
        echo "perftest_compare: a $tl server (ports $pa, $pb) did not listen" >&2
    outa=$(mktemp); outb=$(mktemp)
    timeout 120 ucx_perftest 127.0.0.1 -p $pa -d cuda -x "$tl" -t put_bw \
        -m cuda -D zcopy -s "$size" -n "$n" >"$outa" 2>&1 &
    local ca=$!
    CUDA_VISIBLE_DEVICES=1,0 timeout 120 ucx_perftest 127.0.0.1 -p $pb \
        -d cuda -x "$tl" -t put_bw -m cuda -D zcopy -s "$size" -n "$n" \
        >"$outb" 2>&1 &
    local cb=$!
    wait $ca $cb $sa $sb 2>/dev/null
    awk '/Final:/ {s += $6 * 1048576 / 1e9} END {printf "%.2f\n", s}' \
        "$outa" "$outb"
    rm -f "$outa" "$outb"
}

median() { sort -g | awk '{a[NR]=$1} END {if (NR == 0) print "nan"; else print a[int((NR + 1) / 2)]}'; }

modes=${MGI_PERF_MODES:-put_bw tag_bw put_lat tag_lat bidir_put_bw}
echo "# $(ucx_info -v | sed -n 's/^# *\(Library version\|Version\)/UCX/p' | head -1)"
json="["
for mode in $modes; do
    msizes=$sizes
    case $mode in *_lat) msizes=8,65536 ;; esac
    for size in ${msizes//,/ }; do
        mgi=(); ipc=()
        for ((r = 0; r < repeat; r++)); do
            if [ "$mode" = bidir_put_bw ]; then
                mgi+=("$(run_bidir cuda_mgi $size)")
                ipc+=("$(run_bidir cuda_ipc $size)")
            else
                mgi+=("$(run_one $mode cuda_mgi $size)")
                ipc+=("$(run_one $mode cuda_ipc $size)")
            fi
        done
        m=$(printf '%s\n' "${mgi[@]}" | median)
        i=$(printf '%s\n' "${ipc[@]}" | median)
        ratio=$(awk -v a="$m" -v b="$i" 'BEGIN {if (b > 0) printf "%.3f", a / b; else print "nan"}')
        unit=GB/s; case $mode in *_lat) unit=us ;; esac
        printf '%-8s %10s B  cuda_mgi %9s %s  cuda_ipc %9s %s  ratio %s  (runs: mgi %s | ipc %s)\n' \
               "$mode" "$size" "$m" "$unit" "$i" "$unit" "$ratio" "${mgi[*]}" "${ipc[*]}"
        json+="{\"test\":\"$mode\",\"size\":$size,\"unit\":\"$unit\",\"cuda_mgi\":$m,\"cuda_ipc\":$i,\"ratio\":$ratio},"
    done
done
echo "JSON ${json%,}]"
