#!/usr/bin/env bash
# run235: after the review's mend (system-scope marks on peer lanes):
# the whole GPU suite; the stand-in with run.sh's settings (peer lanes,
# receive by reference) and through the mover, alternating; one rank
SUITE_S=420 bash abbase/r80b.sh suite '.' 2>&1 | grep -E "^== [0-9]|^FAIL|^TIMEOUT"
for op in exchange join groupby; do
  OP=$op LIST1=$'mover MGI_PEER_DIRECT=0\npz1 MGI_PEER_DIRECT=1,MGI_RECV_ZCOPY=1\nmover MGI_PEER_DIRECT=0\npz1 MGI_PEER_DIRECT=1,MGI_RECV_ZCOPY=1' LIST2=$'def BASE=1' bash abbase/r162.sh 2>&1 | grep -E "^== [0-9]|GB/s|rror|FAIL" | sed 's/^\(exchange\|join\|groupby\)  *mgi  *//; s/ sf=.*partition_ms=0.000//' | cut -c1-300
done
