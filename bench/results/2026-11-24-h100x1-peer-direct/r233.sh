#!/usr/bin/env bash
# run233: with peer lanes on the stand-in: 24 sorter blocks with and
# without MGI_RECV_ZCOPY, 20 sorter blocks, against the ring set's 32;
# each op; one rank alone with the defaults (no peer lane there)
for op in exchange join groupby; do
  OP=$op LIST1=$'p1 MGI_PEER_DIRECT=1\ns24 MGI_PEER_DIRECT=1,MGI_SORTER_BLOCKS=24\ns24z1 MGI_PEER_DIRECT=1,MGI_SORTER_BLOCKS=24,MGI_RECV_ZCOPY=1\ns20z1 MGI_PEER_DIRECT=1,MGI_SORTER_BLOCKS=20,MGI_RECV_ZCOPY=1\np1 MGI_PEER_DIRECT=1\ns24 MGI_PEER_DIRECT=1,MGI_SORTER_BLOCKS=24\ns24z1 MGI_PEER_DIRECT=1,MGI_SORTER_BLOCKS=24,MGI_RECV_ZCOPY=1\ns20z1 MGI_PEER_DIRECT=1,MGI_SORTER_BLOCKS=20,MGI_RECV_ZCOPY=1' LIST2=$'def BASE=1\ndef BASE=1' bash abbase/r162.sh 2>&1 | grep -E "^== [0-9]|GB/s|rror|FAIL|fit" | sed 's/^\(exchange\|join\|groupby\)  *mgi  *//; s/ sf=.*partition_ms=0.000//' | cut -c1-300
done
