#!/usr/bin/env bash
# run226: tiles copied ahead into shared memory (MGI_WL_MGI_SMEM_TILES=1,
# the new default) against 0 (the send reads the tile in global memory),
# one binary, alternating; Exchange with the profile; then the GPU suite
# on this tree (also the review's mend: mgi_msg_step, mgi_dev_group_sync)
I=MGI_WL_MGI_PROFILE=1
for op in exchange join groupby; do
  P=""; [ $op = exchange ] && P=",$I"
  L=$'s0 MGI_WL_MGI_SMEM_TILES=0'$P$'\ns1 MGI_WL_MGI_SMEM_TILES=1'$P$'\ns0 MGI_WL_MGI_SMEM_TILES=0'$P$'\ns1 MGI_WL_MGI_SMEM_TILES=1'$P
  OP=$op LIST1="$L" LIST2="$L" bash abbase/r162.sh 2>&1 | grep -E "^== |GB/s|profile rank 0: user|rror|FAIL|fit" | sed 's/^\(exchange\|join\|groupby\)  *mgi  *//; s/ sf=.*partition_ms=0.000//; s/# mgi profile rank 0: user blocks/  prof:/' | cut -c1-420
done
SUITE_S=400 bash abbase/r80b.sh suite '.' 2>&1 | grep -E "^== [0-9]|^FAIL"
