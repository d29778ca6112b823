#!/usr/bin/env bash
# Call 3: a probe build timing the phases of mgi_dev_send_block and the
# receive rounds (abbase/probe), then the channels suite on the tree.
set -uo pipefail
B=$PWD/bundle/bin
export PATH=$B:$PATH UCX_WARN_UNUSED_ENV_VARS=n
O=${OUT:-/tmp/out}
nvidia-smi -L
tuned="MGI_SORTER_BLOCKS=32 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64"
pat="^shuffle [0-9]|^send_bw [0-9]|user blocks|probe|FAIL|rror"
(
export LD_LIBRARY_PATH=$PWD/bundle/lib
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
T=$PWD/abbase/probe/mgi_gpu_test
for rep in 1 2; do
for s in 64 16; do
  echo "-- probe shuffle ${s}B"; env $tuned timeout 60 $T shuffle -l 2 -s $s -n $((2147483648/s)) -b 32 -T 40 2>&1 | grep -E "$pat"
done
echo "-- probe send_bw 64B"; env $tuned timeout 60 $T bench -l 2 -s 64 -n 67108864 -b 32 -T 40 2>&1 | grep -E "$pat"
echo "-- tree shuffle 64B"; env $tuned timeout 60 mgi_gpu_test shuffle -l 2 -s 64 -n 33554432 -b 32 -T 40 2>&1 | grep -E "$pat"
done
) 2>&1 | tee $O/probe-send.txt
MGI_SUITE_BUDGET_S=300 bash bundle/run/mgi-gpu-suite.sh $B /tmp/mgi > $O/channels-suite.txt 2>&1
tail -5 $O/channels-suite.txt
