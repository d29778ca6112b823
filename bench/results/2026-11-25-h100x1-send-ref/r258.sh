#!/usr/bin/env bash
# run258: the slow runs of MGI_SEND_ZCOPY without receive by reference:
# twelve GroupBy runs with the mover's line every 5 ms
O=${OUT:-/tmp}
R20=MGI_SEND_ZCOPY=1,MGI_STAGE_DEPTH=32,MGI_SORTER_BLOCKS=20,UCX_LOG_LEVEL=info,MGI_LOG_INTERVAL_MS=5
L=""; for i in 0 1 2 3 4 5 6 7 8 9 10 11; do L="$L
r$i $R20"; done
: > $O/raw.txt
OP=groupby LIST1="$L" LIST2= bash abbase/r162.sh 2>&1 | grep -E "GB/s" | sed 's/ sf=.*partition_ms=0.000//' | cut -c1-200
grep -E "^== r|mover \(rank|GB/s" $O/raw.txt | sed 's/^\[[^]]*\] \[[^]]*\] *//' | cut -c1-600 > $O/info-groupby.txt
gzip -c $O/info-groupby.txt > $O/info.gz
