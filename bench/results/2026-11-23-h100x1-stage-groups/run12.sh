#!/usr/bin/env bash
# Final tree (stage groups, optimistic reservation, mark keys by shared
# atomics as before): the whole channels suite, then old against new
# send_bw and groups 1 against 2 in one invocation.
set -uo pipefail
B=$PWD/bundle/bin
export PATH=$B:$PATH UCX_WARN_UNUSED_ENV_VARS=n
O=${OUT:-/tmp/out}
nvidia-smi -L
MGI_SUITE_BUDGET_S=330 bash bundle/run/mgi-gpu-suite.sh $B /tmp/mgi > $O/channels-suite-final.txt 2>&1
grep -E "^(PASS|FAIL|SKIPPED|TIMEOUT|== [0-9])" $O/channels-suite-final.txt
for f in $(grep -oE "log /tmp/mgi/[^)]*" $O/channels-suite-final.txt | cut -d' ' -f2); do cp $f $O/; done
tuned="MGI_SORTER_BLOCKS=32 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64"
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
OLD="env LD_LIBRARY_PATH=$PWD/abbase/old:$PWD/bundle/lib $PWD/abbase/old/mgi_gpu_test"
NEW="mgi_gpu_test"
for rep in 1 2; do
  for v in OLD NEW; do
    echo "-- rep $rep $v send_bw 64B b=64"; env $tuned timeout 60 ${!v} bench -l 2 -s 64 -n 67108864 -b 64 -T 40 2>&1 | grep -E "^send_bw [0-9]|FAIL|rror"
    echo "-- rep $rep $v send_bw 16B b=32"; env $tuned timeout 60 ${!v} bench -l 2 -s 16 -n 134217728 -b 32 -T 40 2>&1 | grep -E "^send_bw [0-9]|FAIL|rror"
  done
  for g in 1 2; do
    echo "-- rep $rep groups $g shuffle 64B b=32"; env $tuned MGI_STAGE_GROUPS=$g timeout 60 $NEW shuffle -l 2 -s 64 -n 33554432 -b 32 -T 40 2>&1 | grep -E "^shuffle [0-9]|FAIL|rror"
    echo "-- rep $rep groups $g shuffle 16B b=32"; env $tuned MGI_STAGE_GROUPS=$g timeout 60 $NEW shuffle -l 2 -s 16 -n 67108864 -b 32 -T 40 2>&1 | grep -E "^shuffle [0-9]|FAIL|rror"
  done
done
