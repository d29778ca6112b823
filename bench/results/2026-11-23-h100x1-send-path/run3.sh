#!/usr/bin/env bash
# Where a user block's mgi_dev_send_block call spends its cycles.
set -uo pipefail
B=$PWD/bundle/bin
export PATH=$B:$PATH UCX_WARN_UNUSED_ENV_VARS=n
tuned="MGI_SORTER_BLOCKS=32 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64"
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
for b in 8 32; do
  echo "-- prof b=$b"
  env $tuned timeout 60 abbase/prof/mgi_gpu_test bench -l 2 -s 64 -n 67108864 -b $b -T 40 2>&1 | grep -E "PROF|^send_bw [0-9]|source kernel|rror|FAIL"
done
