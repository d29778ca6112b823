#!/usr/bin/env bash
# run241 (2 x H200): the harness again (as run240's second part), its
# whole output folder packed (the device tool returns a few files only)
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
MGI_PEER_DIRECT=0 MGI_RECV_ZCOPY=0 MGI_WL_TIMEOUT=150 MGI_WL_ITERS=3 MGI_WL_PHASES="ops patterns zipf" \
  bash bundle/run/workloads.sh /tmp/wl 2 2 2>&1 |
  grep -E "^(exchange|groupby|join|many2one|one2many|p2p)|^== |FAIL|rror" | cut -c1-300
tar czf $O/wl.tgz -C /tmp wl
