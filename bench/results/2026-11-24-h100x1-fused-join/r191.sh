#!/usr/bin/env bash
# run191: blocks claiming their input's tiles (MGI_WL_MGI_DYNAMIC=1, the
# new default) against each its share (=0), alternating, on the stand-in
# and one rank; then the profile of each
L=$'st1 MGI_WL_MGI_DYNAMIC=0\ndy1 MGI_WL_MGI_DYNAMIC=1\nst2 MGI_WL_MGI_DYNAMIC=0\ndy2 MGI_WL_MGI_DYNAMIC=1\nst3 MGI_WL_MGI_DYNAMIC=0\ndy3 MGI_WL_MGI_DYNAMIC=1'
Q=$'stp MGI_WL_MGI_DYNAMIC=0,MGI_WL_MGI_PROFILE=1\ndyp MGI_WL_MGI_DYNAMIC=1,MGI_WL_MGI_PROFILE=1'
LIST1="$L"$'\n'"$Q" LIST2="$L"$'\n'"$Q" bash abbase/r162.sh
for op in groupby join; do
  L2=$'st1 MGI_WL_MGI_DYNAMIC=0\ndy1 MGI_WL_MGI_DYNAMIC=1\nst2 MGI_WL_MGI_DYNAMIC=0\ndy2 MGI_WL_MGI_DYNAMIC=1'
  OP=$op LIST1="$L2" LIST2="$L2" bash abbase/r162.sh
done
