#!/usr/bin/env bash
# run184: the tree with channel ids reused and the table entry read with an
# acquire: the GPU suite, then the workloads on the stand-in (two ranks
# under MPS, one rank), Exchange / GroupBy / Join, with the sorter's split
SUITE_S=300 bash abbase/r80b.sh suite '.'
grep -E "round [0-9]+ on channel|: OK|FAILED" /tmp/o/suite/groupby_2proc_channels.log | head -20
L1=$'info UCX_LOG_LEVEL=info\nb1 BASE=1\nb2 BASE=1'
L2=$'info UCX_LOG_LEVEL=info\nb1 BASE=1'
LIST1="$L1" LIST2="$L2" bash abbase/r162.sh
for op in groupby join; do OP=$op LIST1="b1 BASE=1" LIST2="b1 BASE=1" bash abbase/r162.sh; done
grep -E "whole stage moves|created in" ${OUT:-/tmp}/raw.txt | sed 's/.*\] *//' | cut -c1-250 | head -12
