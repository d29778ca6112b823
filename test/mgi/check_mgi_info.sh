#!/bin/sh
# mgi_info -c: libmgi's settings, their help, and what a context would
# refuse (a removed setting, a value out of range), said with exit status 2.
# Run by make check from test/mgi with MGI_INFO set to the program.
info=${MGI_INFO:-../../src/ucp_ext/mgi_info}
fail=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT

no() { echo "FAIL: $*"; fail=1; }

# the user's settings, every one of them and no other (test hooks apart)
want="MGI_BOOTSTRAP MGI_RANK MGI_NRANKS MGI_UCX_TLS MGI_SEG_SIZE
MGI_STAGE_DEPTH MGI_SORT_DEPTH MGI_RECV_DEPTH MGI_FINAL_DEPTH
MGI_SORTER_BLOCKS MGI_MOVER_BATCH MGI_DIRECT_RINGS MGI_TIMEOUT_MS
MGI_IDLE_US MGI_LOG_INTERVAL_MS"
env -u MGI_TEST_GPU_DEFAULTS "$info" -c > "$out" 2>&1 || no "mgi_info -c exited $?"
cat "$out"
got=$(grep -o '^MGI_[A-Z_]*=' "$out" | tr -d = | sort | tr '\n' ' ')
exp=$(echo $want | tr ' ' '\n' | sort | tr '\n' ' ')
[ "$got" = "$exp" ] || no "settings listed: $got; expected: $exp"
[ $(echo $want | wc -w) -le 15 ] || no "more than 15 settings"
grep -q '^MGI_TEST_' "$out" && no "test hooks among the settings"

# their help, and the values of the environment
MGI_SORT_DEPTH=64 "$info" -c -f > "$out" 2>&1 || no "mgi_info -c -f exited $?"
grep -q '^MGI_SORT_DEPTH=64$' "$out" || no "MGI_SORT_DEPTH=64 not shown"
grep -q 'Bound of every host-side wait' "$out" || no "no help for MGI_TIMEOUT_MS"
[ $(grep -c '^# syntax:' "$out") -eq 15 ] || no "not every setting has its syntax"
"$info" -c -t > "$out" 2>&1 || no "mgi_info -c -t exited $?"
grep -q '^MGI_TEST_SORT_MIRROR=' "$out" || no "-t shows no test hooks"

# refusals: exit status 2 and a message naming the variable
refused() {  # VAR=value PATTERN
    env "$1" "$info" -c > "$out" 2>&1
    rc=$?
    if [ $rc -ne 2 ] || ! grep -q -- "$2" "$out"; then
        no "$1: exit $rc, expected 2 and \"$2\":"; cat "$out"
    else
        echo "refused as it should: $1"
    fi
}
refused MGI_PEER_DIRECT=1 "MGI_PEER_DIRECT is no longer a setting"
refused MGI_SORTER_COALESCE=2 "MGI_SORTER_COALESCE is no longer a setting"
refused MGI_LOOP_DIRECT=0 "MGI_LOOP_DIRECT is no longer a setting"
refused MGI_IDLE_US=4294967295 "idle_us (MGI_IDLE_US) 4294967295 is out of range"
refused MGI_MOVER_BATCH=4294967295 "mover_batch (MGI_MOVER_BATCH) 4294967295 is out of range"
refused MGI_TIMEOUT_MS=0 "timeout_ms (MGI_TIMEOUT_MS) 0 is out of range"
refused MGI_SORT_DEPTH=2097152 "sort_depth (MGI_SORT_DEPTH) 2097152 is out of range"
refused MGI_RECV_DEPTH=1x 'MGI_RECV_DEPTH="1x" is not a decimal number'
refused MGI_SEG_SIZE=4g "seg_size (MGI_SEG_SIZE)"

# an MGI_ variable libmgi does not know: warned of, not refused
env -u UCX_WARN_UNUSED_ENV_VARS MGI_NO_SUCH_SETTING=1 "$info" -c > "$out" 2>&1 ||
    no "unknown variable refused"
grep -q 'MGI_NO_SUCH_SETTING is not a libmgi setting' "$out" ||
    no "unknown variable not warned of"
UCX_WARN_UNUSED_ENV_VARS=n MGI_NO_SUCH_SETTING=1 "$info" -c > "$out" 2>&1
grep -q 'MGI_NO_SUCH_SETTING' "$out" && no "warned with UCX_WARN_UNUSED_ENV_VARS=n"

[ $fail -eq 0 ] && echo "mgi_info: OK"
exit $fail
