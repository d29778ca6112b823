#!/usr/bin/env bash
# Session 6, call 2. mgi_gpu_test used to set MGI_SORTER_COALESCE to its
# -c option (default 1) whatever the environment said, so every exchange
# and send_bw figure through it ran the coalesced-by-target copy, not the
# library's default 2 (runs in segment order). Now -c is used only when
# given. Here: info logs of -c 2 against -c 1 (64 B, 16 B), probe q1 (the
# copy twice) with -c 2, alternating rounds, then the channels suite
# (its sorter steps now c2, c1, c0; every other step on the default).
set -uo pipefail
B=$PWD/bundle/bin
export PATH=$B:$PATH UCX_WARN_UNUSED_ENV_VARS=n
O=${OUT:-/tmp/out}
nvidia-smi -L
tuned="MGI_SORTER_BLOCKS=32 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64"
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
pick='^shuffle [0-9]|sorter kernel|sorter (rounds|passes)|whole stage|of the placing'
for v in c2 c1 q1c2; do for s in 64 16; do
  [ $v = q1c2 ] && [ $s = 16 ] && continue
  lib=$PWD/bundle/lib; c=${v: -1}; [ $v = q1c2 ] && lib=$PWD/abbase/q1:$lib
  f=$O/shuffle-info-${s}B-$v.txt
  env $tuned UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=10 LD_LIBRARY_PATH=$lib timeout 60 mgi_gpu_test shuffle -c $c -l 2 -s $s -n $((2147483648/s)) -b 32 -T 40 > $f 2>&1
  echo "== ${s}B $v rc=$?"; grep -E "$pick" $f | sed 's/^.*INFO  //' | sed 's/^mgi ep 1: sorter kernel.*//'
done; done
for rep in 1 2 3; do for c in 2 1; do
  for s in 64 16; do
    echo "-- rep $rep c$c shuffle ${s}B"; env $tuned timeout 60 mgi_gpu_test shuffle -c $c -l 2 -s $s -n $((2147483648/s)) -b 32 -T 40 2>&1 | grep -E "^shuffle [0-9]|FAIL|rror"
  done
  echo "-- rep $rep c$c send_bw 64B"; env $tuned timeout 60 mgi_gpu_test bench -c $c -l 2 -s 64 -n 67108864 -b 32 -T 40 2>&1 | grep -E "^send_bw [0-9]|FAIL|rror"
done; done 2>&1 | tee $O/coalesce-ab.txt
MGI_SUITE_BUDGET_S=300 timeout 400 bash bundle/run/mgi-gpu-suite.sh $B /tmp/mgi > $O/channels-suite.txt 2>&1
echo "suite rc=$?"; grep -E "^(PASS|FAIL|SKIP)" $O/channels-suite.txt | grep -v "^PASS" ; grep -E "^sorter GPU" $O/channels-suite.txt; tail -1 $O/channels-suite.txt
