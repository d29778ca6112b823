#!/usr/bin/env bash
# The final tree (e8b676c) against the last session's (abbase/base =
# 729f787), alternating, 3 rounds, one invocation; then the channels suite
# on the final tree.
set -uo pipefail
B=$PWD/bundle/bin
export PATH=$B:$PATH UCX_WARN_UNUSED_ENV_VARS=n
O=${OUT:-/tmp/out}
nvidia-smi -L
tuned="MGI_SORTER_BLOCKS=32 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64"
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
run() { v=$1; shift
  if [ "$v" = final ]; then env $tuned timeout 60 mgi_gpu_test "$@"
  else env $tuned LD_LIBRARY_PATH=$PWD/abbase/base:$PWD/bundle/lib timeout 60 abbase/base/mgi_gpu_test "$@"; fi
}
{
for rep in 1 2 3; do
  for v in base final; do
    for s in 64 16; do
      echo "-- rep $rep $v shuffle ${s}B"; run $v shuffle -l 2 -s $s -n $((2147483648/s)) -b 32 -T 40 2>&1 | grep -E "^shuffle [0-9]|FAIL|rror"
    done
    echo "-- rep $rep $v send_bw 64B"; run $v bench -l 2 -s 64 -n 67108864 -b 32 -T 40 2>&1 | grep -E "^send_bw [0-9]|FAIL|rror"
  done
done
} > $O/final-ab.txt 2>&1
grep -E "^--|GB/s" $O/final-ab.txt | paste - - | sed 's/received in all, slowest kernel [0-9.]* ms, //; s/copy engine.*//; s/ 1 stage group.*//; s/tuples: 2 endpoints (one process), //'
MGI_SUITE_BUDGET_S=300 bash bundle/run/mgi-gpu-suite.sh $B /tmp/mgi > $O/suite.txt 2>&1
grep -E "^(FAIL|TIMEOUT|== [0-9])" $O/suite.txt
for f in $(grep -ohE "log /tmp/mgi/[^)]*" $O/suite.txt | cut -d' ' -f2); do cp $f $O/; done
