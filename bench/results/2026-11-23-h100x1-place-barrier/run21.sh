#!/usr/bin/env bash
# The reservation's next-slot path (mgi_ring_append_reserve) against the
# last tree (abbase/base: libmgi and mgi_gpu_test of 729f787), alternating,
# 3 rounds, one invocation; info logs of the new tree; the channels suite.
set -uo pipefail
B=$PWD/bundle/bin
export PATH=$B:$PATH UCX_WARN_UNUSED_ENV_VARS=n
O=${OUT:-/tmp/out}
nvidia-smi -L
tuned="MGI_SORTER_BLOCKS=32 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64"
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
pick='^shuffle [0-9]|^send_bw [0-9]|sorter (totals|rounds|passes)|whole stage|of the placing'
run() { # variant, then the test's arguments
  if [ "$1" = base ]; then shift; env $tuned LD_LIBRARY_PATH=$PWD/abbase/base:$PWD/bundle/lib timeout 60 abbase/base/mgi_gpu_test "$@"
  else shift; env $tuned timeout 60 mgi_gpu_test "$@"; fi
}
for v in base new; do
  f=$O/shuffle-info-64B-$v.txt
  UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=10 run $v shuffle -l 2 -s 64 -n 33554432 -b 32 -T 40 > $f 2>&1
  echo "== info shuffle 64B $v"; grep -E "$pick" $f | sed 's/^.*INFO  //'
  f=$O/send-bw-info-64B-$v.txt
  UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=10 run $v bench -l 2 -s 64 -n 67108864 -b 32 -T 40 > $f 2>&1
  echo "== info send_bw 64B $v"; grep -E "$pick" $f | sed 's/^.*INFO  //'
done
{
for rep in 1 2 3; do
  for v in base new; do
    echo "-- rep $rep $v shuffle 64B"; run $v shuffle -l 2 -s 64 -n 33554432 -b 32 -T 40 2>&1 | grep -E "^shuffle [0-9]|FAIL|rror"
    echo "-- rep $rep $v shuffle 16B"; run $v shuffle -l 2 -s 16 -n 67108864 -b 32 -T 40 2>&1 | grep -E "^shuffle [0-9]|FAIL|rror"
    echo "-- rep $rep $v shuffle 64B groups 2"; MGI_STAGE_GROUPS=2 run $v shuffle -l 2 -s 64 -n 33554432 -b 32 -T 40 2>&1 | grep -E "^shuffle [0-9]|FAIL|rror"
    echo "-- rep $rep $v send_bw 64B"; run $v bench -l 2 -s 64 -n 67108864 -b 32 -T 40 2>&1 | grep -E "^send_bw [0-9]|FAIL|rror"
  done
done
} > $O/reserve-ab.txt 2>&1
grep -E "^--|GB/s" $O/reserve-ab.txt | paste - - | sed 's/received in all, slowest kernel [0-9.]* ms, //; s/copy engine.*//'
MGI_SUITE_BUDGET_S=200 bash bundle/run/mgi-gpu-suite.sh $B /tmp/mgi > $O/suite.txt 2>&1
grep -E "^(FAIL|TIMEOUT|== [0-9])" $O/suite.txt
for f in $(grep -ohE "log /tmp/mgi/[^)]*" $O/suite.txt | cut -d' ' -f2); do cp $f $O/; done
