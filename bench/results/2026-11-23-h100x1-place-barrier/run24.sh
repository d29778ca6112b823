#!/usr/bin/env bash
# Clocks that are compiler barriers (mgi_clock): where a walked pass goes;
# MGI_SORTER_COALESCE 2 (default) against 1, alternating, 3 rounds.
set -uo pipefail
B=$PWD/bundle/bin
export PATH=$B:$PATH UCX_WARN_UNUSED_ENV_VARS=n
O=${OUT:-/tmp/out}
tuned="MGI_SORTER_BLOCKS=32 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64"
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
pick='^shuffle [0-9]|^send_bw [0-9]|sorter (totals|rounds|passes)|whole stage|of the placing'
for c in 2 1; do for s in 64 16; do
  f=$O/shuffle-info-${s}B-coalesce$c.txt
  env $tuned MGI_SORTER_COALESCE=$c UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=10 timeout 60 mgi_gpu_test shuffle -l 2 -s $s -n $((2147483648/s)) -b 32 -T 40 > $f 2>&1
  echo "== info shuffle ${s}B coalesce $c"; grep -E "$pick" $f | sed 's/^.*INFO  //'
done; done
{
for rep in 1 2 3; do
  for c in 2 1; do
    for s in 64 16; do
      echo "-- rep $rep coalesce $c shuffle ${s}B"; env $tuned MGI_SORTER_COALESCE=$c timeout 60 mgi_gpu_test shuffle -l 2 -s $s -n $((2147483648/s)) -b 32 -T 40 2>&1 | grep -E "^shuffle [0-9]|FAIL|rror"
    done
    echo "-- rep $rep coalesce $c send_bw 64B"; env $tuned MGI_SORTER_COALESCE=$c timeout 60 mgi_gpu_test bench -l 2 -s 64 -n 67108864 -b 32 -T 40 2>&1 | grep -E "^send_bw [0-9]|FAIL|rror"
  done
done
} > $O/coalesce-ab.txt 2>&1
grep -E "^--|GB/s" $O/coalesce-ab.txt | paste - - | sed 's/received in all, slowest kernel [0-9.]* ms, //; s/copy engine.*//'
