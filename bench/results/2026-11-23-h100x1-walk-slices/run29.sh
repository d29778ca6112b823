#!/usr/bin/env bash
# The run's words in segment order (MGI_SORTER_COALESCE=2) and the walk's
# ranks per warp slice (two barriers a run), with the hint path's
# acquiring add on a fresh slot: this tree (new) against a6f5035 (abbase/
# head: its libmgi and mgi_gpu_test), alternating, 3 rounds; new with
# MGI_SORTER_COALESCE=0 (a thread per message: the walk change alone);
# info logs; the channels suite.
set -uo pipefail
B=$PWD/bundle/bin
export PATH=$B:$PATH UCX_WARN_UNUSED_ENV_VARS=n
O=${OUT:-/tmp/out}
nvidia-smi -L
tuned="MGI_SORTER_BLOCKS=32 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64"
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
pick='^shuffle [0-9]|^send_bw [0-9]|sorter (totals|rounds|passes)|whole stage|of the placing'
run() { v=$1; shift
  case $v in
    head) env $tuned LD_LIBRARY_PATH=$PWD/abbase/head:$PWD/bundle/lib timeout 60 abbase/head/mgi_gpu_test "$@" ;;
    new0) env $tuned MGI_SORTER_COALESCE=0 timeout 60 mgi_gpu_test "$@" ;;
    *)    env $tuned timeout 60 mgi_gpu_test "$@" ;;
  esac
}
for v in new head; do
  for s in 64 16; do
    f=$O/shuffle-info-${s}B-$v.txt
    UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=10 run $v shuffle -l 2 -s $s -n $((2147483648/s)) -b 32 -T 40 > $f 2>&1
    echo "== info shuffle ${s}B $v"; grep -E "$pick" $f | sed 's/^.*INFO  //'
  done
done
{
for rep in 1 2 3; do
  for v in head new new0; do
    for s in 64 16; do
      echo "-- rep $rep $v shuffle ${s}B"; run $v shuffle -l 2 -s $s -n $((2147483648/s)) -b 32 -T 40 2>&1 | grep -E "^shuffle [0-9]|FAIL|rror"
    done
    [ $v = new0 ] || { echo "-- rep $rep $v send_bw 64B"; run $v bench -l 2 -s 64 -n 67108864 -b 32 -T 40 2>&1 | grep -E "^send_bw [0-9]|FAIL|rror"; }
  done
done
} > $O/order-ab.txt 2>&1
grep -E "^--|GB/s|FAIL|rror" $O/order-ab.txt | paste - - | sed 's/received in all, slowest kernel [0-9.]* ms, //; s/copy engine.*//; s/ 1 stage group.*//; s/tuples: 2 endpoints (one process), //'
MGI_SUITE_BUDGET_S=300 bash bundle/run/mgi-gpu-suite.sh $B /tmp/mgi > $O/suite.txt 2>&1
grep -E "^(FAIL|TIMEOUT|== [0-9])" $O/suite.txt
for f in $(grep -ohE "log /tmp/mgi/[^)]*" $O/suite.txt | cut -d' ' -f2); do cp $f $O/; done
