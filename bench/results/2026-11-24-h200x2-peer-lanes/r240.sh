#!/usr/bin/env bash
# run240 (2 x H200): the GPU suite between two GPUs (peer steps across
# NVLink included), then the harness (#6: every variant in one invocation
# per op and Zipf) through the mover (MGI_PEER_DIRECT=0 MGI_RECV_ZCOPY=0)
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
SUITE_S=200 bash abbase/r80b.sh suite '.' 2>&1 | grep -E "^== [0-9]|^FAIL|^TIMEOUT|peer"
cp /tmp/o/suite.txt $O/suite.txt 2>/dev/null
MGI_PEER_DIRECT=0 MGI_RECV_ZCOPY=0 MGI_WL_TIMEOUT=150 MGI_WL_ITERS=3 MGI_WL_PHASES="ops zipf" \
  bash bundle/run/workloads.sh $O/wl 2 2 2>&1 |
  grep -E "^(exchange|groupby|join)|^== |FAIL|rror" | cut -c1-300
