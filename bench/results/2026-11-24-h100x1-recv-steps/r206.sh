#!/usr/bin/env bash
# run206: where one rank's Exchange goes (the receive split: calls that
# found nothing against those that took tuples, rounds a call), then the
# receive cadence and the user/sorter block split swept
P=$PWD
which ncu nsys 2>&1 | head -3; ls -d /usr/local/cuda*/bin 2>&1 | head -3
I=MGI_WL_MGI_PROFILE=1
LIST1=$'prof '$I \
LIST2=$'prof '$I$'\ninfo UCX_LOG_LEVEL=info,MGI_LOG_INTERVAL_MS=2,'$I$'\ndef BASE=1\nre1 MGI_WL_MGI_RECV_EVERY=1,'$I$'\nre2 MGI_WL_MGI_RECV_EVERY=2,'$I$'\nre32 MGI_WL_MGI_RECV_EVERY=32,'$I$'\nb80 MGI_WL_MGI_BLOCKS=80,MGI_SORTER_BLOCKS=48,'$I$'\nb112 MGI_WL_MGI_BLOCKS=112,MGI_SORTER_BLOCKS=16,'$I$'\ndef2 BASE=1' bash abbase/r162.sh
grep -E "profile|sorter rounds|whole stage|sorter passes" $OUT/raw.txt | sed 's/^\[[^]]*\] *//' | cut -c1-900 | head -80 > $OUT/info.txt
