#!/usr/bin/env bash
# run234: the suite's peer steps on the tree of 6c3c40e; the stand-in's
# profile with peer lanes, receive by reference and 20 sorter blocks
SUITE_S=200 bash abbase/r80b.sh suite 'peer' 2>&1 | grep -E "^== [0-9]|^FAIL|^TIMEOUT|^PASS"
OP=exchange LIST1=$'s20z1prof MGI_PEER_DIRECT=1,MGI_SORTER_BLOCKS=20,MGI_RECV_ZCOPY=1,MGI_WL_MGI_PROFILE=1\np1prof MGI_PEER_DIRECT=1,MGI_WL_MGI_PROFILE=1' LIST2='' bash abbase/r162.sh 2>&1 | grep -E "^== [0-9]|GB/s|rror|FAIL|# mgi profile" | sed 's/ sf=.*partition_ms=0.000//' | cut -c1-500
OP=exchange LIST1=$'s20z1info MGI_PEER_DIRECT=1,MGI_SORTER_BLOCKS=20,MGI_RECV_ZCOPY=1,UCX_LOG_LEVEL=info,MGI_LOG_INTERVAL_MS=0' LIST2='' bash abbase/r162.sh 2>&1 | grep -E "^== [0-9]|GB/s|sorter totals|sorter rounds" | sed 's/^\[[^]]*\] *//' | cut -c1-600 | head -20
