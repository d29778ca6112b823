#!/usr/bin/env bash
# run227: the final tree (ec4690e): the GPU suite, then the defaults (two
# invocations each, stand-in and one rank)
SUITE_S=400 bash abbase/r80b.sh suite '.' 2>&1 | grep -E "^== [0-9]|^FAIL"
for op in exchange join groupby; do
  OP=$op LIST1=$'def BASE=1\ndef BASE=1' LIST2=$'def BASE=1\ndef BASE=1' bash abbase/r162.sh 2>&1 | grep -E "^== [0-9]|GB/s|rror|FAIL" | sed 's/^\(exchange\|join\|groupby\)  *mgi  *//; s/ sf=.*partition_ms=0.000//' | cut -c1-200
done
