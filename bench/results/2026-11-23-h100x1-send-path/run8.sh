#!/usr/bin/env bash
# Review refactor (shared warp prefix sum, shared TMA chunk loads): the
# channels suite and the send/sorter figures once more.
set -uo pipefail
B=$PWD/bundle/bin
export PATH=$B:$PATH UCX_WARN_UNUSED_ENV_VARS=n
O=${OUT:-/tmp/out}
nvidia-smi -L
MGI_SUITE_BUDGET_S=330 bash bundle/run/mgi-gpu-suite.sh $B /tmp/mgi > $O/suite.txt 2>&1
grep -E "^(PASS|FAIL|SKIPPED|TIMEOUT|== [0-9]|send_bw [0-9]|sorter GPU)" $O/suite.txt
tuned="MGI_SORTER_BLOCKS=32 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64"
sorter="MGI_SORTER_BLOCKS=16 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_RECV_DEPTH=256 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=16 MGI_SORT_RINGS=4"
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
echo "-- send_bw 64B b=64"; env $tuned timeout 60 mgi_gpu_test bench -l 2 -s 64 -n 67108864 -b 64 -T 40 2>&1 | grep -E "^send_bw [0-9]|FAIL"
echo "-- send_bw 16B b=32"; env $tuned timeout 60 mgi_gpu_test bench -l 2 -s 16 -n 134217728 -b 32 -T 40 2>&1 | grep -E "^send_bw [0-9]|FAIL"
echo "-- sorter 64B b=32"; env $sorter timeout 60 mgi_gpu_test sorter -r per-block -c 1 -s 64 -n 16777216 -b 32 2>&1 | grep -E "^sorter GPU|FAIL"
