#!/usr/bin/env bash
# The exchange's user blocks receiving while they send: mgi_gpu_test
# shuffle -P K (a receive call after every K block sends; 0, the default:
# only when a send finds the stage ring full), K = 16, 32, 64, 0, alternating,
# 2 rounds, 64 B and 16 B tuples.
set -uo pipefail
B=$PWD/bundle/bin
export PATH=$B:$PATH UCX_WARN_UNUSED_ENV_VARS=n
O=${OUT:-/tmp/out}
nvidia-smi -L
tuned="MGI_SORTER_BLOCKS=32 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64"
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
pick='^shuffle [0-9]|sorter (totals|rounds|passes)|of the placing|shuffle rank'
{
for rep in 1 2; do
  for k in 16 32 64 0; do
    for s in 64 16; do
      echo "-- rep $rep P $k shuffle ${s}B"; env $tuned timeout 60 mgi_gpu_test shuffle -l 2 -s $s -n $((2147483648/s)) -b 32 -T 40 -P $k 2>&1 | grep -E "^shuffle [0-9]|FAIL|rror"
    done
  done
done
} > $O/recv-every-sweep2.txt 2>&1
grep -E "^--|GB/s|FAIL|rror" $O/recv-every-sweep2.txt | paste - - | sed 's/received in all, slowest kernel [0-9.]* ms, //; s/ 1 stage group.*//; s/tuples: 2 endpoints (one process), //'
