#!/usr/bin/env bash
# Which clock counters crash the sorter? libmgi variants: A none, B place,
# C sort-ring syncs, D whole stage moves, all = the bundle's.
set -uo pipefail
B=$PWD/bundle/bin
export PATH=$B:$PATH UCX_WARN_UNUSED_ENV_VARS=n
O=${OUT:-/tmp/out}
tuned="MGI_SORTER_BLOCKS=32 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64"
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=20000
for v in A B C D all; do
  L=$PWD/abbase/var$v; [ $v = all ] && L=$PWD/bundle/lib
  echo "== variant $v"
  env $tuned LD_LIBRARY_PATH=$L:$PWD/bundle/lib timeout 40 $PWD/bundle/bin/mgi_gpu_test shuffle -l 2 -s 64 -n 33554432 -b 32 -T 30 > $O/v$v-shuffle.txt 2>&1
  grep -E "^shuffle [0-9]|launch failure" $O/v$v-shuffle.txt | head -3
  env $tuned LD_LIBRARY_PATH=$L:$PWD/bundle/lib timeout 40 $PWD/bundle/bin/mgi_gpu_test bench -l 2 -s 64 -n 67108864 -b 32 -T 30 > $O/v$v-sendbw.txt 2>&1
  grep -E "^send_bw [0-9]|launch failure" $O/v$v-sendbw.txt | head -3
done
