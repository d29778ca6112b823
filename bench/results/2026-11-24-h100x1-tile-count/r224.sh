#!/usr/bin/env bash
# run224: as run223 after its mend (a channel of one destination number
# counts too), and with the next tile prefetched into L2 while one is
# sent ("cnt", this tree) against the tree before it
# ("prev", abbase/wl_prev: mgi_workloads of 14b649c) and this tree
# without the prefetch ("np", abbase/wl_np, sm_90 alone); alternating; Exchange
# with the profile; then the GPU suite (with its two new unbatched steps)
I=MGI_WL_MGI_PROFILE=1
for op in exchange join groupby; do
  P=""; [ $op = exchange ] && P="$I"
  for rep in 1 2; do
    for v in prev np cnt; do
      W=bundle/bin/mgi_workloads; [ $v = prev ] && W=abbase/wl_prev; [ $v = np ] && W=abbase/wl_np
      OP=$op WL=$W LIST1="$v $P" LIST2="$v $P" bash abbase/r162.sh 2>&1 | grep -E "^== |GB/s|profile rank 0: user|rror|FAIL" | sed 's/^\(exchange\|join\|groupby\)  *mgi  *//; s/ sf=.*partition_ms=0.000//; s/# mgi profile rank 0: user blocks/  prof:/' | cut -c1-420
    done
  done
done
SUITE_S=400 bash abbase/r80b.sh suite '.' 2>&1 | grep -E "^== [0-9]|^FAIL|unbatched"
