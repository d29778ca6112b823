#!/usr/bin/env bash
# run203: the Join with its lineitem channel created while the orders'
# kernel runs ("new", bundle/bin) against creating it after ("old",
# abbase/old/mgi_workloads of 0340f91), alternating, stand-in and one rank
P=$PWD
for k in 1 2 3; do
  for v in old new; do
    [ $v = old ] && export WL=$P/abbase/old/mgi_workloads || export WL=$P/bundle/bin/mgi_workloads
    OP=join LIST1="$v$k BASE=1" LIST2="$v$k BASE=1" bash abbase/r162.sh
  done
done
unset WL
OP=join LIST1=$'prof MGI_WL_MGI_PROFILE=1' LIST2= bash abbase/r162.sh
