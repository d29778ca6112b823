#!/usr/bin/env bash
# run192: GroupBy and Join with the operator's step in the shuffle's
# receives (MGI_WL_MGI_FUSE=1, the new default) against copying into
# t->recv and computing after (=0), alternating; stand-in and one rank
for op in groupby join; do
  L=$'nf1 MGI_WL_MGI_FUSE=0\nfu1 MGI_WL_MGI_FUSE=1\nnf2 MGI_WL_MGI_FUSE=0\nfu2 MGI_WL_MGI_FUSE=1\nnf3 MGI_WL_MGI_FUSE=0\nfu3 MGI_WL_MGI_FUSE=1\nfup MGI_WL_MGI_FUSE=1,MGI_WL_MGI_PROFILE=1'
  OP=$op LIST1="$L" LIST2="$L" bash abbase/r162.sh
done
L=$'ex1 BASE=1\nex2 BASE=1'
LIST1="$L" LIST2="$L" bash abbase/r162.sh
