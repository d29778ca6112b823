#!/usr/bin/env bash
# 2 x H200, call 1: the machine, the channels suite (GroupBy on 2 GPUs, the
# send_bw and sorter steps), then #5's figures with the settings tuned on
# one H100: device send GPU0 -> GPU1 of 64 B and 16 B tuples (4 GiB),
# one process and two, MGI_SORT_RINGS 4 and 2 alternating, 3 rounds; the
# exchange between the two GPUs; one info run.
set -uo pipefail
B=$PWD/bundle/bin
export PATH=$B:$PATH UCX_WARN_UNUSED_ENV_VARS=n LD_LIBRARY_PATH=$PWD/bundle/lib
O=${OUT:-/tmp/out}
{ nvidia-smi -L; nvidia-smi topo -m; nvidia-smi --query-gpu=clocks.max.sm,clocks.max.mem,power.limit --format=csv; } > $O/machine.txt 2>&1
MGI_SUITE_BUDGET_S=300 bash bundle/run/mgi-gpu-suite.sh $B /tmp/mgi > $O/channels-suite.txt 2>&1
tail -2 $O/channels-suite.txt
tuned="MGI_SORTER_BLOCKS=32 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64"
pat="^shuffle [0-9]|^send_bw [0-9]|\(GPU|user blocks|FAIL|rror|TIMEOUT"
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
for rep in 1 2 3; do for r in 4 2; do
  echo "-- rep $rep rings $r send_bw 64B 1proc"; env $tuned MGI_SORT_RINGS=$r timeout 60 mgi_gpu_test bench -l 2 -s 64 -n 67108864 -b 32 -T 40 2>&1 | grep -E "$pat"
  echo "-- rep $rep rings $r send_bw 64B 2proc"; env $tuned MGI_SORT_RINGS=$r timeout 70 mgi_launch -n 2 -t 60 -- mgi_gpu_test bench -s 64 -n 67108864 -b 32 -T 40 2>&1 | grep -E "$pat"
  echo "-- rep $rep rings $r send_bw 16B 1proc"; env $tuned MGI_SORT_RINGS=$r timeout 60 mgi_gpu_test bench -l 2 -s 16 -n 268435456 -b 32 -T 40 2>&1 | grep -E "$pat"
  for s in 64 16; do
    echo "-- rep $rep rings $r shuffle ${s}B 1proc"; env $tuned MGI_SORT_RINGS=$r timeout 60 mgi_gpu_test shuffle -l 2 -s $s -n $((2147483648/s)) -b 32 -T 40 2>&1 | grep -E "$pat"
  done
done; done 2>&1 | tee $O/targets-ab.txt | grep -E '^--|GB/s' | grep -v 'rank'
env $tuned MGI_SORT_RINGS=4 UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=10 timeout 60 mgi_gpu_test bench -l 2 -s 64 -n 67108864 -b 32 -T 40 > $O/send_bw-info-64B.txt 2>&1
