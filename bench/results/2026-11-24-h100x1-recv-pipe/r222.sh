#!/usr/bin/env bash
# run222: user blocks of 512 threads with up to 128 registers a thread
# ("t512": abbase/wl_t512, mgi_workloads.cu with WL_MGI_THREADS and
# WL_MGI_MAX_THREADS 512, so __launch_bounds__(512, 1)) against this
# tree's 1024 threads at 64 registers ("d1024", bundle); alternating
I=MGI_WL_MGI_PROFILE=1
for op in exchange join groupby; do
  P=""; [ $op = exchange ] && P="$I"
  for rep in 1 2; do
    for v in d1024 t512; do
      W=bundle/bin/mgi_workloads; [ $v = t512 ] && W=abbase/wl_t512
      OP=$op WL=$W LIST1="$v $P" LIST2="$v $P" bash abbase/r162.sh 2>&1 | grep -E "^== |GB/s|profile rank 0: user|# mgi: |rror|FAIL" | sed 's/^\(exchange\|join\|groupby\)  *mgi  *//; s/ sf=.*partition_ms=0.000//; s/# mgi profile rank 0: user blocks/  prof:/' | cut -c1-420
    done
  done
done
