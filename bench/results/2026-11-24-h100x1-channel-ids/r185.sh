#!/usr/bin/env bash
# run185: whole moves straight to a final ring choose it from the block's
# own counter, the channel's entry read once (new) against the library
# before (pre, abbase/pre185), same invocation, info log on
P=$PWD
PRE="LD_LIBRARY_PATH=$P/abbase/pre185:$P/bundle/lib"
L1=$'new1 UCX_LOG_LEVEL=info\npre1 UCX_LOG_LEVEL=info,'$PRE$'\nnew2 UCX_LOG_LEVEL=info\npre2 UCX_LOG_LEVEL=info,'$PRE
L2=$'new1 UCX_LOG_LEVEL=info\npre1 UCX_LOG_LEVEL=info,'$PRE$'\nnew2 UCX_LOG_LEVEL=info\npre2 UCX_LOG_LEVEL=info,'$PRE
LIST1="$L1" LIST2="$L2" bash abbase/r162.sh
grep -E "^== |whole stage moves" ${OUT:-/tmp}/raw.txt | sed 's/.*\] *//' | cut -c1-200
