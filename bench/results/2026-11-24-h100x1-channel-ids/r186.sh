#!/usr/bin/env bash
# run186: as run185 with the blocks' starts spread over the final rings;
# new / pre interleaved, the first pair with the info log
P=$PWD
PRE="LD_LIBRARY_PATH=$P/abbase/pre185:$P/bundle/lib"
L=$'new1 UCX_LOG_LEVEL=info\npre1 UCX_LOG_LEVEL=info,'$PRE$'\nnew2 BASE=1\npre2 '$PRE$'\nnew3 BASE=1\npre3 '$PRE
LIST1="$L" LIST2="$L" bash abbase/r162.sh
grep -E "^== |whole stage moves" ${OUT:-/tmp}/raw.txt | sed 's/.*\] *//' | cut -c1-200
for op in groupby join; do OP=$op LIST1=$'new BASE=1\npre '$PRE LIST2=$'new BASE=1\npre '$PRE bash abbase/r162.sh; done
