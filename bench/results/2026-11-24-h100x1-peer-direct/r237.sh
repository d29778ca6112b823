#!/usr/bin/env bash
# run237: MGI_WL_MGI_RECV_TUPLES 65536 (default) against 262144 and
# 1048576: stand-in with peer lanes (as run236's B1) and one rank alone
B1='MGI_PEER_DIRECT=1,MGI_RECV_ZCOPY=1,MGI_SORTER_BLOCKS=20'
for op in exchange groupby join; do
  OP=$op LIST1="t64k $B1
t256k $B1,MGI_WL_MGI_RECV_TUPLES=262144
t1m $B1,MGI_WL_MGI_RECV_TUPLES=1048576
t64k $B1
t256k $B1,MGI_WL_MGI_RECV_TUPLES=262144
t1m $B1,MGI_WL_MGI_RECV_TUPLES=1048576" LIST2=$'t64k BASE=1\nt256k MGI_WL_MGI_RECV_TUPLES=262144\nt1m MGI_WL_MGI_RECV_TUPLES=1048576\nt64k BASE=1\nt256k MGI_WL_MGI_RECV_TUPLES=262144\nt1m MGI_WL_MGI_RECV_TUPLES=1048576' bash abbase/r162.sh 2>&1 | grep -E "^== [0-9]|GB/s|rror|FAIL" | sed 's/^\(exchange\|join\|groupby\)  *mgi  *//; s/ sf=.*partition_ms=0.000//; s/MGI_PEER_DIRECT=1,MGI_RECV_ZCOPY=1,MGI_SORTER_BLOCKS=20/B1/' | cut -c1-300
done
