#!/usr/bin/env bash
# Probe varU (varP, but the scratch copy takes the placing copy's pattern:
# each word to its message's place in its target, target t's reservation
# at t * 256 KB of a cold slice): is the placing slow for its pattern or
# for the ring memory it writes?
set -uo pipefail
B=$PWD/bundle/bin
export PATH=$B:$PATH UCX_WARN_UNUSED_ENV_VARS=n
O=${OUT:-/tmp/out}
nvidia-smi -L
tuned="MGI_SORTER_BLOCKS=32 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64"
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
pick='^shuffle [0-9]|sorter (totals|rounds|passes)|whole stage|of the placing'
for v in varU; do s=64
  f=$O/shuffle-info-${s}B-$v.txt
  env $tuned UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=10 LD_LIBRARY_PATH=$PWD/abbase/$v:$PWD/bundle/lib timeout 60 mgi_gpu_test shuffle -l 2 -s $s -n $((2147483648/s)) -b 32 -T 40 > $f 2>&1
  echo "== ${s}B $v"; grep -E "$pick" $f | sed 's/^.*INFO  //'
done
