#!/bin/sh
#
# mgi_workloads' command line on the CPU: a value that is not one of its
# option's (a word for a number, out of range, a variant or operation that
# does not exist) ends the program with status 2 and a line naming the
# option and the value, before anything starts.  The program is the one
# built in bench/workloads ($MGI_WL_BUILD, which make check sets).
#
set -u
w=${MGI_WL_BUILD:-../../bench/workloads}/mgi_workloads
rc=0
[ -x "$w" ] || { echo "SKIP: no $w"; exit 77; }
bad() {  # what the error must say, then the arguments
    want=$1; shift
    out=$(timeout 30 $w "$@" 2>&1)
    st=$?
    if [ $st -eq 2 ] && printf '%s\n' "$out" | grep -qF -- "$want"; then
        echo "PASS: $* -> $want"
    else
        echo "FAIL: $* -> exit $st, said: $out"; rc=1
    fi
}
bad "--gpus abc: not a whole number" --gpus abc
bad "--gpus 0: not a whole number from 1" --gpus 0
bad "--gib -1: not a number from" --gib -1
bad "--gib 1x: not a number" --gib 1x
bad "--zipf x: not a number from 0 to 10" --zipf x
bad "--zipf 11: not a number from 0 to 10" --zipf 11
bad "--iters 2.5: not a whole number" --iters 2.5
bad "--sf nan: not a number" --sf nan
bad "--variant mgi,foo: no variant 'foo'" --variant mgi,foo
bad "usage:" --op foo
bad "usage:" --gpus
exit $rc
