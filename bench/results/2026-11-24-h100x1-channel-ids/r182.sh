#!/usr/bin/env bash
# run182: the create's phases (info log) and a profile, two ranks and one
L1=$'info UCX_LOG_LEVEL=info\nprof MGI_WL_MGI_PROFILE=1\nb1 BASE=1\nb2 BASE=1'
L2=$'info UCX_LOG_LEVEL=info\nprof MGI_WL_MGI_PROFILE=1\nb1 BASE=1\nb2 BASE=1'
LIST1="$L1" LIST2="$L2" bash abbase/r162.sh
grep -E "created in" ${OUT:-/tmp}/raw.txt | sed 's/.*\] *//' | cut -c1-250 | tail -12
