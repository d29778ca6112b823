#!/usr/bin/env bash
# run193: GroupBy fused with one atomic per key and warp
# (cooperative_groups::labeled_partition + reduce) against not fused
L=$'nf1 MGI_WL_MGI_FUSE=0\nfu1 MGI_WL_MGI_FUSE=1\nnf2 MGI_WL_MGI_FUSE=0\nfu2 MGI_WL_MGI_FUSE=1\nnf3 MGI_WL_MGI_FUSE=0\nfu3 MGI_WL_MGI_FUSE=1\nfup MGI_WL_MGI_FUSE=1,MGI_WL_MGI_PROFILE=1'
OP=groupby LIST1="$L" LIST2="$L" bash abbase/r162.sh
