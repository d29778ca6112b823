#!/usr/bin/env bash
# The new send path: where the pipeline binds now (info logs), a source
# that pauses after a full stage ring (-S), and the channels suite.
set -uo pipefail
B=$PWD/bundle/bin
export PATH=$B:$PATH UCX_WARN_UNUSED_ENV_VARS=n
O=${OUT:-/tmp/out}
tuned="MGI_SORTER_BLOCKS=32 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64"
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
for b in 16 32; do
  echo "== info b=$b"
  env $tuned UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=10 timeout 60 mgi_gpu_test bench -l 2 -s 64 -n 67108864 -b $b -T 40 > $O/info-new-b$b.txt 2>&1
  grep -E "mover|sorter|send_bw|source kernel" $O/info-new-b$b.txt | sed 's/.*INFO  //' | grep -v "kernel on" | tail -10
done
for rep in 1 2; do
  for S in 0 200 1000 5000; do
    for b in 16 32 64; do
      echo "-- rep $rep S=$S b=$b"
      env $tuned timeout 60 mgi_gpu_test bench -l 2 -s 64 -n 67108864 -b $b -S $S -T 40 2>&1 | grep -E "^send_bw [0-9]|source kernel|rror|FAIL" | sed 's/^send_bw rank 0 ep 0 (GPU 0): //'
    done
  done
done
echo "== channels suite"
MGI_SUITE_BUDGET_S=240 bash bundle/run/mgi-gpu-suite.sh $B /tmp/mgi > $O/suite.txt 2>&1
grep -E "^(PASS|FAIL|SKIPPED|TIMEOUT|== [0-9]|send_bw [0-9]|sorter GPU)" $O/suite.txt
