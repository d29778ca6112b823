#!/usr/bin/env bash
# run208: the receive copy and the one-destination tile send without a
# division a word ("new", bundle/bin) against the tree before ("old",
# abbase/old: the same but for those), alternating; Exchange with the
# profile, then Join and GroupBy; one rank and the two-rank stand-in
I=MGI_WL_MGI_PROFILE=1
for op in exchange join groupby; do
  for wl in old new old new; do
    if [ $wl = old ]; then W=$PWD/abbase/old/mgi_workloads; else W=$PWD/bundle/bin/mgi_workloads; fi
    echo "=== $op $wl"
    P=""; [ $op = exchange ] && P=$I
    WL=$W OP=$op LIST1="$op-$wl ${P:-BASE=1}" LIST2="$op-$wl ${P:-BASE=1}" bash abbase/r162.sh 2>&1 | grep -E "GB/s|profile rank 0: user|rror|FAIL" | sed 's/^exchange  mgi  *//; s/^join  *mgi  *//; s/^groupby  *mgi  *//' | cut -c1-420
  done
done
