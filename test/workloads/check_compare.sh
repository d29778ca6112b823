#!/bin/sh
#
# bench/compare.py on the fixtures in test/workloads/fixtures: an unchanged run
# passes, a run whose figures dropped (or whose answer was wrong) fails and
# names them, a wider band lets the same drop pass, and results of
# different kinds are refused.  Python 3's standard library only ($PYTHON,
# default python3; skipped, status 77, without it).
#
# The fixtures (2 x H200, bench/RESULTS.md): perftest-base.txt holds the
# 64 and 256 MiB and latency figures of the perf-* lines, perftest-same.txt
# other runs of the same invocations as medians, perftest-drop.txt a run
# whose 64 MiB put_bw and tag_bw fell to 0.61 and 0.71 of cuda_ipc;
# wl-base and wl-same are the Exchange and Join of two harness runs
# (h200x2-land, wl-h200x2) cut to three iterations and four variants, and
# wl-drop is wl-same with the mgi Exchange 25 % slower and its Join answer
# marked wrong.
#
set -u
py=${PYTHON:-python3}
bench=${MGI_BENCH:-$(dirname "$0")/../../bench}
fx=$(dirname "$0")/fixtures
"$py" -c 'import json' 2>/dev/null || { echo "SKIP: no $py"; exit 77; }
[ -f "$bench/compare.py" ] && [ -d "$fx" ] ||
    { echo "SKIP: no $bench/compare.py or $fx"; exit 77; }
rc=0
out=$(mktemp "${TMPDIR:-/tmp}/mgi_compare.XXXXXX")
trap 'rm -f "$out"' EXIT

# expect STATUS WHAT-THE-OUTPUT-MUST-HOLD ARGS...
expect() {
    want_st=$1 want=$2; shift 2
    "$py" "$bench/compare.py" "$@" >"$out" 2>&1
    st=$?
    if [ $st -eq "$want_st" ] && grep -qE -- "$want" "$out"; then
        echo "PASS: compare.py $* -> $st"
    else
        echo "FAIL: compare.py $* -> exit $st (want $want_st, '$want'):"
        cat "$out"
        rc=1
    fi
}

expect 0 "30 figures, 0 dropped" "$fx/perftest-base.txt" "$fx/perftest-same.txt"
expect 1 "^put_bw 64 MiB cuda_mgi .*DROP" \
    "$fx/perftest-base.txt" "$fx/perftest-drop.txt"
expect 1 "6 dropped by more than 10 %" \
    "$fx/perftest-base.txt" "$fx/perftest-drop.txt"
expect 0 "0 dropped by more than 50 %" --band 0.5 \
    "$fx/perftest-base.txt" "$fx/perftest-drop.txt"
expect 0 "14 figures, 0 dropped" "$fx/wl-base" "$fx/wl-same"
expect 1 "^exchange mgi .*DROP" "$fx/wl-base" "$fx/wl-drop"
expect 1 "^join mgi .*NOT VERIFIED" "$fx/wl-base" "$fx/wl-drop"
expect 0 "0 dropped" "$fx/wl-base/exchange.json" "$fx/wl-same/exchange.json"
expect 2 "is workloads output" "$fx/wl-base" "$fx/perftest-base.txt"
expect 2 "not a fraction" --band 2 "$fx/wl-base" "$fx/wl-same"
exit $rc
