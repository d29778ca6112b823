#!/usr/bin/env bash
# run221: as run220, with "ni" (abbase/wl_ni: the lay-out in a function not inlined, fewer spills in the kernel)
# other warps copy the round before ("new", this tree) against the tree
# before (abbase/wl_old, mgi_workloads of 6882250); alternating, one
# invocation each; Exchange with the profile; then the GPU suite
I=MGI_WL_MGI_PROFILE=1
for op in exchange join groupby; do
  P=""; [ $op = exchange ] && P="$I"
  for rep in 1 2; do
    for v in old new ni; do
      W=bundle/bin/mgi_workloads; [ $v = old ] && W=abbase/wl_old; [ $v = ni ] && W=abbase/wl_ni
      OP=$op WL=$W LIST1="$v $P" LIST2="$v $P" bash abbase/r162.sh 2>&1 | grep -E "^== |GB/s|profile rank 0: user|rror|FAIL" | sed 's/^\(exchange\|join\|groupby\)  *mgi  *//; s/ sf=.*partition_ms=0.000//; s/# mgi profile rank 0: user blocks/  prof:/' | cut -c1-420
    done
  done
done
