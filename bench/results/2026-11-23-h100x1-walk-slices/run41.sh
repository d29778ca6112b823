#!/usr/bin/env bash
# The final tree (walk ranks per warp slice, runs copied in segment order,
# MGI_SORTER_MSG_COPY gone, the hint path's acquiring add on a fresh slot):
# the channels suite, and exchange / send_bw against abbase/head (a6f5035:
# its libmgi and mgi_gpu_test), alternating, 2 rounds; info log of 16 B.
set -uo pipefail
B=$PWD/bundle/bin
export PATH=$B:$PATH UCX_WARN_UNUSED_ENV_VARS=n
O=${OUT:-/tmp/out}
nvidia-smi -L
tuned="MGI_SORTER_BLOCKS=32 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64"
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
pick='^shuffle [0-9]|sorter (totals|rounds|passes)|of the placing'
run() { v=$1; shift
  if [ "$v" = final ]; then env $tuned timeout 60 mgi_gpu_test "$@"
  else env $tuned LD_LIBRARY_PATH=$PWD/abbase/$v:$PWD/bundle/lib timeout 60 abbase/$v/mgi_gpu_test "$@"; fi
}
MGI_SUITE_BUDGET_S=300 bash bundle/run/mgi-gpu-suite.sh $B /tmp/mgi > $O/suite.txt 2>&1
grep -E "^(FAIL|TIMEOUT|== [0-9])" $O/suite.txt
for f in $(grep -ohE "log /tmp/mgi/[^)]*" $O/suite.txt | cut -d' ' -f2); do cp $f $O/; done
f=$O/shuffle-info-64B-final.txt
UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=10 run final shuffle -l 2 -s 64 -n 33554432 -b 32 -T 40 > $f 2>&1
echo "== info shuffle 64B final"; grep -E "$pick" $f | sed 's/^.*INFO  //'
{
for rep in 1 2; do
  for v in head final; do
    for s in 64 16; do
      echo "-- rep $rep $v shuffle ${s}B"; run $v shuffle -l 2 -s $s -n $((2147483648/s)) -b 32 -T 40 2>&1 | grep -E "^shuffle [0-9]|FAIL|rror"
    done
    echo "-- rep $rep $v send_bw 64B"; run $v bench -l 2 -s 64 -n 67108864 -b 32 -T 40 2>&1 | grep -E "^send_bw [0-9]|FAIL|rror"
  done
done
} > $O/final-ab.txt 2>&1
grep -E "^--|GB/s|FAIL|rror" $O/final-ab.txt | paste - - | sed 's/received in all, slowest kernel [0-9.]* ms, //; s/copy engine.*//; s/ 1 stage group.*//; s/tuples: 2 endpoints (one process), //'
