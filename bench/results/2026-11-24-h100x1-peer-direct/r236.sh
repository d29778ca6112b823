#!/usr/bin/env bash
# run236: with peer lanes and receive by reference (20 sorter blocks a
# rank): how often the user blocks receive, and how much a call takes
B1='MGI_PEER_DIRECT=1,MGI_RECV_ZCOPY=1,MGI_SORTER_BLOCKS=20'
for op in exchange join; do
  OP=$op LIST1="base $B1
e4 $B1,MGI_WL_MGI_RECV_EVERY=4
e16 $B1,MGI_WL_MGI_RECV_EVERY=16
t256k $B1,MGI_WL_MGI_RECV_TUPLES=262144
f16 $B1,MGI_FINAL_DEPTH=16
base $B1
e4 $B1,MGI_WL_MGI_RECV_EVERY=4
e16 $B1,MGI_WL_MGI_RECV_EVERY=16
t256k $B1,MGI_WL_MGI_RECV_TUPLES=262144
f16 $B1,MGI_FINAL_DEPTH=16" LIST2='' bash abbase/r162.sh 2>&1 | grep -E "^== [0-9]|GB/s|rror|FAIL" | sed 's/^\(exchange\|join\|groupby\)  *mgi  *//; s/ sf=.*partition_ms=0.000//; s/MGI_PEER_DIRECT=1,MGI_RECV_ZCOPY=1,MGI_SORTER_BLOCKS=20/B1/' | cut -c1-300
done
