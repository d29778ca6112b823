#!/usr/bin/env bash
# Stage groups (MGI_STAGE_GROUPS): the channels suite's steps that use
# them and those around them, then one invocation of old against new and
# groups 1 against 2.
set -uo pipefail
B=$PWD/bundle/bin
export PATH=$B:$PATH UCX_WARN_UNUSED_ENV_VARS=n
O=${OUT:-/tmp/out}
nvidia-smi -L
MGI_SUITE_BUDGET_S=240 bash bundle/run/mgi-gpu-suite.sh $B /tmp/mgi \
    'ring_|groupby|shuffle|groups|send_bw_64B_1proc$|send_bw_64B_2proc$' > $O/suite.txt 2>&1
grep -E "^(PASS|FAIL|SKIPPED|TIMEOUT|== [0-9]|send_bw [0-9]|shuffle [0-9])" $O/suite.txt
for f in $(grep -oE "log /tmp/mgi/[^)]*" $O/suite.txt | cut -d' ' -f2); do cp $f $O/; done
tuned="MGI_SORTER_BLOCKS=32 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64"
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
OLD="env LD_LIBRARY_PATH=$PWD/abbase/old:$PWD/bundle/lib $PWD/abbase/old/mgi_gpu_test"
NEW="mgi_gpu_test"
for rep in 1 2; do
  for g in 1 2; do
    echo "-- rep $rep groups $g shuffle 64B b=32"; env $tuned MGI_STAGE_GROUPS=$g timeout 60 $NEW shuffle -l 2 -s 64 -n 33554432 -b 32 -T 40 2>&1 | grep -E "^shuffle|FAIL|rror"
    echo "-- rep $rep groups $g shuffle 16B b=32"; env $tuned MGI_STAGE_GROUPS=$g timeout 60 $NEW shuffle -l 2 -s 16 -n 67108864 -b 32 -T 40 2>&1 | grep -E "^shuffle|FAIL|rror"
  done
  for v in OLD NEW; do
    echo "-- rep $rep $v send_bw 64B b=64"; env $tuned timeout 60 ${!v} bench -l 2 -s 64 -n 67108864 -b 64 -T 40 2>&1 | grep -E "^send_bw [0-9]|FAIL|rror"
    echo "-- rep $rep $v send_bw 16B b=32"; env $tuned timeout 60 ${!v} bench -l 2 -s 16 -n 134217728 -b 32 -T 40 2>&1 | grep -E "^send_bw [0-9]|FAIL|rror"
  done
  for g in 1 2; do
    echo "-- rep $rep groups $g groupby -l 2 16M"; env $tuned MGI_STAGE_GROUPS=$g timeout 60 $NEW groupby -l 2 -n 16777216 -b 32 -k 1048576 -T 40 2>&1 | grep -E "^groupby|FAIL|rror|json"
  done
done
echo "-- info log, groups 2 shuffle 64B"
env $tuned MGI_STAGE_GROUPS=2 UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=10 timeout 60 $NEW shuffle -l 2 -s 64 -n 33554432 -b 32 -T 40 > $O/shuffle-info-groups2.txt 2>&1
grep -E "^shuffle" $O/shuffle-info-groups2.txt
