#!/usr/bin/env bash
# Session 6 of 2026-11-23, call 1: the channels suite on b08fe1a (sorter
# counters in one list), then the placing probes q1-q3 (64 B exchange,
# info logs): q1 the real copy twice (first in "copying and committing",
# second in "to reserve"); q2 the placing pattern into a scratch region
# registered like ring memory (SYNC_MEMOPS set, IPC handle exported); q3
# the placing pattern into scratch, the 32 blocks of an endpoint side by
# side in a 4 MB window (128 KiB each), as reservations lie in a ring.
set -uo pipefail
B=$PWD/bundle/bin
export PATH=$B:$PATH UCX_WARN_UNUSED_ENV_VARS=n
O=${OUT:-/tmp/out}
nvidia-smi -L
tuned="MGI_SORTER_BLOCKS=32 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64"
export CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
MGI_SUITE_BUDGET_S=300 timeout 360 bash bundle/run/mgi-gpu-suite.sh $B /tmp/mgi > $O/channels-suite.txt 2>&1
echo "suite rc=$?"; tail -3 $O/channels-suite.txt
export UCX_TLS=sm,self,cuda_mgi,cuda_copy
pick='^shuffle [0-9]|sorter (totals|rounds|passes)|whole stage|of the placing'
for v in base q1 q2 q3; do s=64
  lib=$PWD/bundle/lib; [ $v != base ] && lib=$PWD/abbase/$v:$lib
  f=$O/shuffle-info-${s}B-$v.txt
  env $tuned UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=10 LD_LIBRARY_PATH=$lib timeout 60 mgi_gpu_test shuffle -l 2 -s $s -n $((2147483648/s)) -b 32 -T 40 > $f 2>&1
  echo "== ${s}B $v rc=$?"; grep -E "$pick" $f | sed 's/^.*INFO  //'
done
