#!/usr/bin/env bash
# run256: the run check of MGI_SEND_ZCOPY by the whole sorter block (was
# thread 0 alone): the whole GPU suite, the stand-in against the mover's
# copies, alternating, and the sorter's info lines
O=${OUT:-/tmp}
SUITE_S=420 bash abbase/r80b.sh suite '.' 2>&1 | grep -E "^== [0-9]|^FAIL|^TIMEOUT"
R20=MGI_SEND_ZCOPY=1,MGI_STAGE_DEPTH=32,MGI_SORTER_BLOCKS=20
for op in exchange join groupby; do
OP=$op LIST1="mover MGI_SEND_ZCOPY=0
ref20 $R20
ref20z $R20,MGI_RECV_ZCOPY=1
mover MGI_SEND_ZCOPY=0
ref20 $R20
ref20z $R20,MGI_RECV_ZCOPY=1" LIST2= bash abbase/r162.sh 2>&1 | grep -E "^== [0-9]|GB/s|rror|FAIL" | sed 's/^\(exchange\|join\|groupby\)  *mgi  *//; s/ sf=.*partition_ms=0.000//' | cut -c1-300
done
echo "== $(date +%T) profile: exchange ref20"
: > $O/raw.txt
OP=exchange LIST1="prof $R20,MGI_WL_MGI_PROFILE=1,UCX_LOG_LEVEL=info,MGI_LOG_INTERVAL_MS=100000" LIST2= bash abbase/r162.sh > $O/prof.txt 2>&1
grep -E "GB/s" $O/prof.txt | cut -c1-200
grep -E "mgi profile rank 0: user|sorter rounds|by reference in|whole stage moves" $O/raw.txt | tail -8 | cut -c1-420
