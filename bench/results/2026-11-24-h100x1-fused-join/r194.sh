#!/usr/bin/env bash
# run194: the final workloads program (dynamic tiles, the Join fused by
# default): Join and GroupBy beside every baseline on one GPU, fused and
# not on the stand-in and one rank at Zipf 1.5, tile sends off (the
# fused Join falls back to copying), a bad MGI_WL_MGI_FUSE
B=$PWD/bundle/bin
L=$'fuse0 MGI_WL_MGI_FUSE=0\nfuse1 BASE=1\nfuse2 MGI_WL_MGI_FUSE=2'
for op in join groupby; do
  OP=$op ARGS="--zipf 1.5" LIST1="$L" LIST2="$L" bash abbase/r162.sh
done
OP=join LIST1=$'tile0 MGI_WL_MGI_TILE=0' LIST2=$'tile0 MGI_WL_MGI_TILE=0' bash abbase/r162.sh
OP=join LIST1= LIST2=$'bad MGI_WL_MGI_FUSE=3' bash abbase/r162.sh
grep -E "MGI_WL_MGI_FUSE" $OUT/raw.txt | head -3
for op in exchange groupby join; do
  OP=$op VARIANT=all LIST1= LIST2=$'all BASE=1' bash abbase/r162.sh
done
