#!/usr/bin/env bash
# run257: how often MGI_SEND_ZCOPY without receive by reference stalls on
# the stand-in (run253/run256 saw 2 of 12 runs several ms long): ten
# Exchange runs with the mover's and sorters' info lines, then ten of
# GroupBy
O=${OUT:-/tmp}
R20=MGI_SEND_ZCOPY=1,MGI_STAGE_DEPTH=32,MGI_SORTER_BLOCKS=20,UCX_LOG_LEVEL=info,MGI_LOG_INTERVAL_MS=100000
L=""; for i in 0 1 2 3 4 5 6 7 8 9; do L="$L
r$i $R20"; done
for op in exchange groupby; do
  : > $O/raw.txt
  OP=$op LIST1="$L" LIST2= bash abbase/r162.sh 2>&1 | grep -E "GB/s" | sed 's/ sf=.*partition_ms=0.000//' | cut -c1-200
  grep -E "^== r|mover \(rank|sorter rounds" $O/raw.txt | sed 's/^\[[^]]*\] \[[^]]*\] *//' | cut -c1-330 > $O/info-$op.txt
done
tar czf $O/info.tgz -C $O info-exchange.txt info-groupby.txt
