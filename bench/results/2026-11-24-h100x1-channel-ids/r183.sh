#!/usr/bin/env bash
# run183: where a whole stage move's reservation goes (info log)
L1=$'info UCX_LOG_LEVEL=info'
L2=$'info UCX_LOG_LEVEL=info'
LIST1="$L1" LIST2="$L2" bash abbase/r162.sh
grep -E "whole stage moves|sorter rounds|sorter totals" ${OUT:-/tmp}/raw.txt | sed 's/.*\] *//' | cut -c1-300
