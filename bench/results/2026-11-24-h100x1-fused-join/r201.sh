#!/usr/bin/env bash
# run201: most tuples a receive call takes (MGI_WL_MGI_RECV_TUPLES, 65536
# before and by default): GroupBy after its shuffle and fused, the Join
# fused, the Exchange; stand-in and one rank
L=$'g0_64k MGI_WL_MGI_FUSE=0\ng2_64k MGI_WL_MGI_FUSE=2\ng0_16k MGI_WL_MGI_FUSE=0,MGI_WL_MGI_RECV_TUPLES=16384\ng2_16k MGI_WL_MGI_FUSE=2,MGI_WL_MGI_RECV_TUPLES=16384\ng0_4k MGI_WL_MGI_FUSE=0,MGI_WL_MGI_RECV_TUPLES=4096\ng2_4k MGI_WL_MGI_FUSE=2,MGI_WL_MGI_RECV_TUPLES=4096'
OP=groupby LIST1="$L" LIST2="$L" bash abbase/r162.sh
L=$'j_64k BASE=1\nj_16k MGI_WL_MGI_RECV_TUPLES=16384\nj_4k MGI_WL_MGI_RECV_TUPLES=4096\nj_64k BASE=1'
OP=join LIST1="$L" LIST2="$L" bash abbase/r162.sh
L=$'x_64k BASE=1\nx_16k MGI_WL_MGI_RECV_TUPLES=16384\nx_64k BASE=1\nx_16k MGI_WL_MGI_RECV_TUPLES=16384'
OP=exchange LIST1="$L" LIST2="$L" bash abbase/r162.sh
OP=join LIST1= LIST2=$'bad0 MGI_WL_MGI_RECV_TUPLES=0' bash abbase/r162.sh
grep -h "RECV_TUPLES" $OUT/raw.txt | head -2
