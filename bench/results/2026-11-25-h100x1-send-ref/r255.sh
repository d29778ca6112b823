#!/usr/bin/env bash
# run255: MGI_SEND_ZCOPY on the stand-in with receive by reference beside
# it, and where its time goes (profile, sorter and mover info lines)
O=${OUT:-/tmp}
R20=MGI_SEND_ZCOPY=1,MGI_STAGE_DEPTH=32,MGI_SORTER_BLOCKS=20
for op in exchange join groupby; do
OP=$op LIST1="ref20 $R20
ref20z $R20,MGI_RECV_ZCOPY=1
ref16z MGI_SEND_ZCOPY=1,MGI_STAGE_DEPTH=32,MGI_SORTER_BLOCKS=16,MGI_RECV_ZCOPY=1
ref24z MGI_SEND_ZCOPY=1,MGI_STAGE_DEPTH=32,MGI_SORTER_BLOCKS=24,MGI_RECV_ZCOPY=1
ref20 $R20
ref20z $R20,MGI_RECV_ZCOPY=1
ref16z MGI_SEND_ZCOPY=1,MGI_STAGE_DEPTH=32,MGI_SORTER_BLOCKS=16,MGI_RECV_ZCOPY=1
ref24z MGI_SEND_ZCOPY=1,MGI_STAGE_DEPTH=32,MGI_SORTER_BLOCKS=24,MGI_RECV_ZCOPY=1" LIST2= bash abbase/r162.sh 2>&1 | grep -E "^== [0-9]|GB/s|rror|FAIL" | sed 's/^\(exchange\|join\|groupby\)  *mgi  *//; s/ sf=.*partition_ms=0.000//' | cut -c1-300
done
echo "== $(date +%T) profile: exchange ref20"
OP=exchange LIST1="prof $R20,MGI_WL_MGI_PROFILE=1,UCX_LOG_LEVEL=info,MGI_LOG_INTERVAL_MS=100000" LIST2= bash abbase/r162.sh > $O/prof.txt 2>&1
grep -E "GB/s" $O/prof.txt | cut -c1-200
grep -E "# mgi|user blocks|sorter rounds|by reference in|mover \(rank|whole stage moves" $O/raw.txt | tail -16 | cut -c1-420
