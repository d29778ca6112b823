#!/usr/bin/env bash
# A/B of the device send chain on one GPU, one process (base = tree
# 4bde330, new = working tree), alternating; then the channels suite's
# one-process steps on one GPU.
set -uo pipefail
B=$PWD/bundle/bin
export PATH=$B:$PATH UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0
O=${OUT:-/tmp/out}
nvidia-smi -L
tuned="MGI_SORTER_BLOCKS=16 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_RECV_DEPTH=256 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=16 MGI_SORT_RINGS=4"
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
for rep in 1 2 3; do
  for v in base new; do
    if [ $v = base ]; then BIN=$PWD/abbase/bin; else BIN=$B; fi
    for b in 32 128; do
      echo "-- $v rep $rep sorter 64B b=$b"
      env $tuned timeout 60 $BIN/mgi_gpu_test sorter -r per-block -c 1 -s 64 -n 16777216 -b $b -T 40 2>&1 | grep -E "^sorter|rror|FAIL"
    done
    echo "-- $v rep $rep sorter 16B b=32"
    env $tuned timeout 60 $BIN/mgi_gpu_test sorter -r per-block -c 1 -s 16 -n 67108864 -b 32 -T 40 2>&1 | grep -E "^sorter|rror|FAIL"
    for b in 32 128; do
      echo "-- $v rep $rep send_bw 64B -l 2 one GPU b=$b"
      env $tuned timeout 60 $BIN/mgi_gpu_test bench -l 2 -s 64 -n 16777216 -b $b -T 40 2>&1 | grep -E "^send_bw [0-9]|rror|FAIL"
    done
    echo "-- $v rep $rep groupby -l 2 one GPU"
    env $tuned timeout 60 $BIN/mgi_gpu_test groupby -l 2 -n 8000000 -b 32 -T 40 2>&1 | grep -iE "groupby|rror|FAIL" | tail -2
  done
done
echo "== channels suite, one-process steps (one GPU)"
MGI_SUITE_BUDGET_S=120 bash bundle/run/mgi-gpu-suite.sh $B /tmp/mgi '1proc|ring_|thread_recv|blocking' > $O/suite1.txt 2>&1
grep -E "^(PASS|FAIL|SKIPPED|TIMEOUT|==|send_bw [0-9]|groupby)" $O/suite1.txt
