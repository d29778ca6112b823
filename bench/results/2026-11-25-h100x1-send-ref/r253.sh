#!/usr/bin/env bash
# run253: MGI_SEND_ZCOPY on the stand-in with fewer sorter blocks (their
# user blocks fit beside them): Exchange, Join, GroupBy, alternating
for op in exchange join groupby; do
OP=$op LIST1=$'mover MGI_SEND_ZCOPY=0\nref20 MGI_SEND_ZCOPY=1,MGI_STAGE_DEPTH=32,MGI_SORTER_BLOCKS=20\nref16 MGI_SEND_ZCOPY=1,MGI_STAGE_DEPTH=32,MGI_SORTER_BLOCKS=16\nref20d64 MGI_SEND_ZCOPY=1,MGI_STAGE_DEPTH=64,MGI_SORTER_BLOCKS=20\nmover MGI_SEND_ZCOPY=0\nref20 MGI_SEND_ZCOPY=1,MGI_STAGE_DEPTH=32,MGI_SORTER_BLOCKS=20\nref16 MGI_SEND_ZCOPY=1,MGI_STAGE_DEPTH=32,MGI_SORTER_BLOCKS=16\nref20d64 MGI_SEND_ZCOPY=1,MGI_STAGE_DEPTH=64,MGI_SORTER_BLOCKS=20' LIST2= bash abbase/r162.sh 2>&1 | grep -E "^== [0-9]|GB/s|rror|FAIL" | sed 's/^\(exchange\|join\|groupby\)  *mgi  *//; s/ sf=.*partition_ms=0.000//' | cut -c1-300
done
