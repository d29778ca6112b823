#!/usr/bin/env bash
# run210: the receive with a drained segment released in its round and
# the copy without a search and a division a word ("new", bundle/bin)
# against the tree before ("old", abbase/old), alternating, Exchange with
# the profile, Join, GroupBy (one rank and the stand-in); then the GPU suite
I=MGI_WL_MGI_PROFILE=1
for op in exchange join groupby; do
  for wl in old new old new; do
    if [ $wl = old ]; then W=$PWD/abbase/old/mgi_workloads; else W=$PWD/bundle/bin/mgi_workloads; fi
    echo "=== $op $wl"
    P=""; [ $op = exchange ] && P=$I
    WL=$W OP=$op LIST1="$op-$wl ${P:-BASE=1}" LIST2="$op-$wl ${P:-BASE=1}" bash abbase/r162.sh 2>&1 | grep -E "GB/s|profile rank 0: user|rror|FAIL" | sed 's/^exchange  mgi  *//; s/^join  *mgi  *//; s/^groupby  *mgi  *//; s/ sf=.*partition_ms=0.000//' | cut -c1-420
  done
done
[ -n "$NOSUITE" ] || SUITE_S=380 bash abbase/r80b.sh suite '.' 2>&1 | grep -E "^== |^FAIL"
