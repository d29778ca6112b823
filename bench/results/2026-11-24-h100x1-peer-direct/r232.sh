#!/usr/bin/env bash
# run232: with peer lanes on the stand-in: MGI_RECV_ZCOPY, the block split,
# stage groups 1, alternating; Exchange and Join
for op in exchange join; do
  OP=$op LIST1=$'p1 MGI_PEER_DIRECT=1\nz1 MGI_PEER_DIRECT=1,MGI_RECV_ZCOPY=1\ns24 MGI_PEER_DIRECT=1,MGI_SORTER_BLOCKS=24\ns16 MGI_PEER_DIRECT=1,MGI_SORTER_BLOCKS=16\np1 MGI_PEER_DIRECT=1\nz1 MGI_PEER_DIRECT=1,MGI_RECV_ZCOPY=1\ns24 MGI_PEER_DIRECT=1,MGI_SORTER_BLOCKS=24\ns16 MGI_PEER_DIRECT=1,MGI_SORTER_BLOCKS=16' LIST2='' bash abbase/r162.sh 2>&1 | grep -E "^== [0-9]|GB/s|rror|FAIL|fit" | sed 's/^\(exchange\|join\|groupby\)  *mgi  *//; s/ sf=.*partition_ms=0.000//' | cut -c1-300
done
