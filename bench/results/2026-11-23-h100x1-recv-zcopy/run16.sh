#!/usr/bin/env bash
# Where a sorter block's time goes (finer clocks): info logs of the
# exchange with groups 1 and 2 and of send_bw; the copy probe.
set -uo pipefail
B=$PWD/bundle/bin
export PATH=$B:$PATH UCX_WARN_UNUSED_ENV_VARS=n
O=${OUT:-/tmp/out}
tuned="MGI_SORTER_BLOCKS=32 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64"
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
for g in 1 2; do
  f=$O/shuffle-info-64B-groups$g.txt
  env $tuned MGI_STAGE_GROUPS=$g UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=10 timeout 60 mgi_gpu_test shuffle -l 2 -s 64 -n 33554432 -b 32 -T 40 > $f 2>&1
  echo "== groups $g"; grep -E "^shuffle [0-9]|sorter (totals|rounds|passes)|whole stage|sort ring syncs" $f | sed 's/^.*INFO  //'
done
f=$O/send-bw-info-64B.txt
env $tuned UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=10 timeout 60 mgi_gpu_test bench -l 2 -s 64 -n 67108864 -b 32 -T 40 > $f 2>&1
echo "== send_bw"; grep -E "^send_bw [0-9]|sorter (totals|rounds|passes)|whole stage|sort ring syncs" $f | sed 's/^.*INFO  //'
timeout 150 abbase/probe/memcpy_sm 2>&1 | tee $O/memcpy-sm-3.txt
