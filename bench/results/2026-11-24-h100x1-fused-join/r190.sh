#!/usr/bin/env bash
# run190: where the stand-in's two-rank Exchange loses to one rank: the
# movers' and sorters' info lines and the user blocks' profile, then the
# mover's batch and flush slots swept
P=$PWD
I=UCX_LOG_LEVEL=info,MGI_LOG_INTERVAL_MS=2,MGI_WL_MGI_PROFILE=1
LIST1=$'info '$I$'\ndef BASE=1\nb8 MGI_MOVER_BATCH=8\nb128 MGI_MOVER_BATCH=128\nf4 MGI_MOVER_FLUSHES=4\nf64 MGI_MOVER_FLUSHES=64\nsr1 MGI_SORT_RINGS=1\nsr8 MGI_SORT_RINGS=8' \
LIST2=$'info '$I$'\ndef BASE=1' bash abbase/r162.sh
grep -E "mover \(rank|profile|sorter totals|whole stage" $OUT/raw.txt | sed 's/^\[[^]]*\] *//' | cut -c1-700 | head -150 > $OUT/info.txt
