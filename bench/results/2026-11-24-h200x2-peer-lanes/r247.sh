#!/usr/bin/env bash
# run247: after the second review's mend (no lane control words with peer
# lanes, mgi_lane_at): the whole GPU suite on one H100, and the stand-in
SUITE_S=420 bash abbase/r80b.sh suite '.' 2>&1 | grep -E "^== [0-9]|^FAIL|^TIMEOUT"
OP=exchange LIST1=$'mover MGI_PEER_DIRECT=0\npeer MGI_PEER_DIRECT=1' LIST2='' bash abbase/r162.sh 2>&1 | grep -E "^== [0-9]|GB/s|rror|FAIL" | sed 's/^exchange  *mgi  *//; s/ sf=.*partition_ms=0.000//' | cut -c1-300
