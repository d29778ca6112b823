#!/usr/bin/env bash
# Probe varY (varU with the scratch reservations 16 bytes past 64-byte
# alignment, as a ring segment's payload is past its 16-byte header): do
# 64-byte tuples that straddle 32-byte sectors cost the placing its time?
set -uo pipefail
B=$PWD/bundle/bin
export PATH=$B:$PATH UCX_WARN_UNUSED_ENV_VARS=n
O=${OUT:-/tmp/out}
nvidia-smi -L
tuned="MGI_SORTER_BLOCKS=32 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64"
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
pick='^shuffle [0-9]|sorter (totals|rounds|passes)|whole stage|of the placing'
for v in varY; do s=64
  f=$O/shuffle-info-${s}B-$v.txt
  env $tuned UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=10 LD_LIBRARY_PATH=$PWD/abbase/$v:$PWD/bundle/lib timeout 60 mgi_gpu_test shuffle -l 2 -s $s -n $((2147483648/s)) -b 32 -T 40 > $f 2>&1
  echo "== ${s}B $v"; grep -E "$pick" $f | sed 's/^.*INFO  //'
done
