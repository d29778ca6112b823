#!/usr/bin/env bash
# run212: the tree with MGI_STAGE_ZCOPY=1 the default: the GPU suite, then
# the defaults against MGI_STAGE_ZCOPY=0 (two each, alternating) and every
# variant of the workloads on one GPU
SUITE_S=380 bash abbase/r80b.sh suite '.' 2>&1 | grep -E "^== [0-9]|^FAIL"
grep -E "stage_ref|stage_copy" ${OUT:-/tmp}/suite-*.txt | grep -E "^(PASS|FAIL)" | head
for op in exchange join groupby; do
  OP=$op LIST1=$'def BASE=1\nz0 MGI_STAGE_ZCOPY=0\ndef BASE=1\nz0 MGI_STAGE_ZCOPY=0' \
  LIST2=$'def BASE=1\nz0 MGI_STAGE_ZCOPY=0\ndef BASE=1\nz0 MGI_STAGE_ZCOPY=0' \
  bash abbase/r162.sh 2>&1 | grep -E "^== [0-9]|GB/s|rror|FAIL" | sed 's/^\(exchange\|join\|groupby\)  *mgi  *//; s/ sf=.*partition_ms=0.000//' | cut -c1-200
done
for op in exchange groupby join; do
  VARIANT=all OP=$op LIST1= LIST2='all BASE=1' bash abbase/r162.sh 2>&1 | grep -E "GB/s|rror" | cut -c1-220
done
