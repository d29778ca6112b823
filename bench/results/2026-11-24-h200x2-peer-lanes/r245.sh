#!/usr/bin/env bash
# run245: system-scope releases on peer lanes (no per-thread fence): the
# whole GPU suite on one H100, and the stand-in with peer lanes / mover
SUITE_S=420 bash abbase/r80b.sh suite '.' 2>&1 | grep -E "^== [0-9]|^FAIL|^TIMEOUT"
OP=exchange LIST1=$'mover MGI_PEER_DIRECT=0\npeer MGI_PEER_DIRECT=1\nmover MGI_PEER_DIRECT=0\npeer MGI_PEER_DIRECT=1' LIST2=$'def BASE=1' bash abbase/r162.sh 2>&1 | grep -E "^== [0-9]|GB/s|rror|FAIL" | sed 's/^exchange  *mgi  *//; s/ sf=.*partition_ms=0.000//' | cut -c1-300
