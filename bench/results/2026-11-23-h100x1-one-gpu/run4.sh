#!/usr/bin/env bash
set -uo pipefail
B=$PWD/bundle/bin
export PATH=$B:$PATH UCX_WARN_UNUSED_ENV_VARS=n
O=${OUT:-/tmp/out}
tuned="MGI_SORTER_BLOCKS=32 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_RECV_DEPTH=256 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=16 MGI_SORT_RINGS=4"
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
for b in 32 64; do
echo "== info log, 32 sorter blocks, b=$b, 16 GiB"
env $tuned UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=25 timeout 60 mgi_gpu_test bench -l 2 -s 64 -n 268435456 -b $b -T 40 > $O/info$b.txt 2>&1
grep -E "mover|sorter|send_bw [0-9]" $O/info$b.txt | sed 's/.*INFO  //' | grep -v "kernel on" | head -30
done
