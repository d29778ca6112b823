#!/usr/bin/env bash
# Stage groups with an optimistic reservation (room looked for only after a
# send that found a ring full): the suite's groups steps, then groups 1
# against 2 in one invocation, with info logs of both.
set -uo pipefail
B=$PWD/bundle/bin
export PATH=$B:$PATH UCX_WARN_UNUSED_ENV_VARS=n
O=${OUT:-/tmp/out}
nvidia-smi -L
MGI_SUITE_BUDGET_S=200 bash bundle/run/mgi-gpu-suite.sh $B /tmp/mgi \
    'ring_|groupby|shuffle|groups' > $O/suite.txt 2>&1
grep -E "^(PASS|FAIL|SKIPPED|TIMEOUT|== [0-9]|shuffle [0-9])" $O/suite.txt
for f in $(grep -oE "log /tmp/mgi/[^)]*" $O/suite.txt | cut -d' ' -f2); do cp $f $O/; done
tuned="MGI_SORTER_BLOCKS=32 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64"
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
for rep in 1 2 3; do
  for g in 1 2; do
    echo "-- rep $rep groups $g shuffle 64B b=32"; env $tuned MGI_STAGE_GROUPS=$g timeout 60 mgi_gpu_test shuffle -l 2 -s 64 -n 33554432 -b 32 -T 40 2>&1 | grep -E "^shuffle [0-9]|FAIL|rror"
    echo "-- rep $rep groups $g shuffle 16B b=32"; env $tuned MGI_STAGE_GROUPS=$g timeout 60 mgi_gpu_test shuffle -l 2 -s 16 -n 67108864 -b 32 -T 40 2>&1 | grep -E "^shuffle [0-9]|FAIL|rror"
    echo "-- rep $rep groups $g shuffle 64B b=64"; env $tuned MGI_STAGE_GROUPS=$g timeout 60 mgi_gpu_test shuffle -l 2 -s 64 -n 33554432 -b 64 -T 40 2>&1 | grep -E "^shuffle [0-9]|FAIL|rror"
  done
done
for g in 1 2; do
  for sz in 64 16; do
    n=$(( sz == 64 ? 33554432 : 67108864 ))
    echo "-- info log, groups $g shuffle ${sz}B"
    env $tuned MGI_STAGE_GROUPS=$g UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=10 timeout 60 mgi_gpu_test shuffle -l 2 -s $sz -n $n -b 32 -T 40 > $O/shuffle-info-${sz}B-groups$g.txt 2>&1
    grep -E "^shuffle" $O/shuffle-info-${sz}B-groups$g.txt
  done
done
