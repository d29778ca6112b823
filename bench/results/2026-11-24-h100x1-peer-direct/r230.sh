#!/usr/bin/env bash
# run230: the tree with MGI_PEER_DIRECT (and peer_misuse): the whole GPU
# suite; then the stand-in GroupBy A/B and the Exchange with 1 sort ring
SUITE_S=420 bash abbase/r80b.sh suite '.' 2>&1 | grep -E "^== [0-9]|^FAIL|^TIMEOUT|peer"
grep -h "peer_misuse" /tmp/o/suite/peer_misuse.log
for op in groupby; do
  OP=$op LIST1=$'p0 MGI_PEER_DIRECT=0\np1 MGI_PEER_DIRECT=1\np0 MGI_PEER_DIRECT=0\np1 MGI_PEER_DIRECT=1' LIST2='' bash abbase/r162.sh 2>&1 | grep -E "^== [0-9]|GB/s|rror|FAIL" | sed 's/^\(exchange\|join\|groupby\)  *mgi  *//; s/ sf=.*partition_ms=0.000//' | cut -c1-300
done
OP=exchange LIST1=$'p1r1 MGI_PEER_DIRECT=1,MGI_SORT_RINGS=1\np1 MGI_PEER_DIRECT=1\np1info MGI_PEER_DIRECT=1,MGI_WL_MGI_PROFILE=1' LIST2='' bash abbase/r162.sh 2>&1 | grep -E "^== [0-9]|GB/s|rror|FAIL|# mgi profile" | sed 's/ sf=.*partition_ms=0.000//' | cut -c1-400
