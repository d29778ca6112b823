#!/usr/bin/env bash
# run215: with the receive and the stage references in, are the block
# split and MGI_RECV_ZCOPY still where they were? One invocation each,
# alternating: sorter blocks 24 / 32 (the ring set's) / 40 with the user
# blocks the program fits beside them; MGI_RECV_ZCOPY=1 against 0
L=$'s32 BASE=1\ns24 MGI_SORTER_BLOCKS=24\ns40 MGI_SORTER_BLOCKS=40\nz1 MGI_RECV_ZCOPY=1\ns32 BASE=1\ns24 MGI_SORTER_BLOCKS=24\ns40 MGI_SORTER_BLOCKS=40\nz1 MGI_RECV_ZCOPY=1'
for op in exchange join; do
  OP=$op LIST1="$L" LIST2="$L" bash abbase/r162.sh 2>&1 | grep -E "^== [0-9]|GB/s|# mgi: |rror|FAIL" | sed 's/^\(exchange\|join\|groupby\)  *mgi  *//; s/ sf=.*partition_ms=0.000//; s/per shuffle on rank 0.*//' | cut -c1-200
done
