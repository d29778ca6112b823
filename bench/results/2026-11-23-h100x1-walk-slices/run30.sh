#!/usr/bin/env bash
# Probes of the placing copy: varI (this tree + clocks: thread 0's copy
# loop and its fence, in the "whole stage moves" line's fields), varK
# (varI + 16-byte stores for a run when every address is 16-aligned);
# then new (this tree) against varK, alternating, 3 rounds.
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
    new) env $tuned timeout 60 mgi_gpu_test "$@" ;;
    *)   env $tuned LD_LIBRARY_PATH=$PWD/abbase/$v:$PWD/bundle/lib timeout 60 mgi_gpu_test "$@" ;;
  esac
}
for v in varI varK; do
  for s in 64 16; do
    f=$O/shuffle-info-${s}B-$v.txt
    UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=10 run $v shuffle -l 2 -s $s -n $((2147483648/s)) -b 32 -T 40 > $f 2>&1
    echo "== info shuffle ${s}B $v"; grep -E "$pick" $f | sed 's/^.*INFO  //'
  done
done
{
for rep in 1 2 3; do
  for v in new varK; do
    for s in 64; do
      echo "-- rep $rep $v shuffle ${s}B"; run $v shuffle -l 2 -s $s -n $((2147483648/s)) -b 32 -T 40 2>&1 | grep -E "^shuffle [0-9]|FAIL|rror"
    done
  done
done
} > $O/v16-ab.txt 2>&1
grep -E "^--|GB/s|FAIL|rror" $O/v16-ab.txt | paste - - | sed 's/received in all, slowest kernel [0-9.]* ms, //; s/copy engine.*//; s/ 1 stage group.*//; s/tuples: 2 endpoints (one process), //'
