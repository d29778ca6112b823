#!/usr/bin/env bash
# Session 6, call 7 (review mend): mgi_gpu_walk_run writes each message's
# src / size / dst entries only when a copy reads them (not with the
# default copy in segment order). prev = libmgi of 2fb472d; new = the
# bundle's. Alternating, 2 rounds; then the channels suite.
set -uo pipefail
B=$PWD/bundle/bin
export PATH=$B:$PATH UCX_WARN_UNUSED_ENV_VARS=n
O=${OUT:-/tmp/out}
nvidia-smi -L
tuned="MGI_SORTER_BLOCKS=32 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64"
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
for rep in 1 2; do for v in new prev; do
  lib=$PWD/bundle/lib; [ $v = prev ] && lib=$PWD/abbase/prev:$lib
  for s in 64 16; do
    echo "-- rep $rep $v shuffle ${s}B"; env $tuned LD_LIBRARY_PATH=$lib timeout 60 mgi_gpu_test shuffle -l 2 -s $s -n $((2147483648/s)) -b 32 -T 40 2>&1 | grep -E "^shuffle [0-9]|FAIL|rror"
  done
done; done 2>&1 | tee $O/entries-ab.txt
MGI_SUITE_BUDGET_S=300 timeout 400 bash bundle/run/mgi-gpu-suite.sh $B /tmp/mgi > $O/channels-suite.txt 2>&1
echo "suite rc=$?"; grep -E "^(FAIL|SKIP)" $O/channels-suite.txt; tail -1 $O/channels-suite.txt
