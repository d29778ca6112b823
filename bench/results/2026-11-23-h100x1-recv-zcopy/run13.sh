#!/usr/bin/env bash
# Receive by reference (MGI_RECV_ZCOPY): copy (0) against reference (1) in
# one invocation, exchange and send_bw, stage groups 1 and 2; info logs;
# then the whole channels suite with the defaults.
set -uo pipefail
B=$PWD/bundle/bin
export PATH=$B:$PATH UCX_WARN_UNUSED_ENV_VARS=n
O=${OUT:-/tmp/out}
nvidia-smi -L
tuned="MGI_SORTER_BLOCKS=32 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64"
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
for rep in 1 2; do
  for g in 1 2; do
    for z in 0 1; do
      echo "-- rep $rep groups $g zcopy $z shuffle 64B b=32"; env $tuned MGI_STAGE_GROUPS=$g MGI_RECV_ZCOPY=$z timeout 60 mgi_gpu_test shuffle -l 2 -s 64 -n 33554432 -b 32 -T 40 2>&1 | grep -E "^shuffle [0-9]|FAIL|rror"
      echo "-- rep $rep groups $g zcopy $z shuffle 16B b=32"; env $tuned MGI_STAGE_GROUPS=$g MGI_RECV_ZCOPY=$z timeout 60 mgi_gpu_test shuffle -l 2 -s 16 -n 67108864 -b 32 -T 40 2>&1 | grep -E "^shuffle [0-9]|FAIL|rror"
    done
  done
  for z in 0 1; do
    echo "-- rep $rep zcopy $z send_bw 64B b=32"; env $tuned MGI_RECV_ZCOPY=$z timeout 60 mgi_gpu_test bench -l 2 -s 64 -n 67108864 -b 32 -T 40 2>&1 | grep -E "^send_bw|^bench|GB/s|FAIL|rror" | tail -3
    echo "-- rep $rep zcopy $z send_bw 16B b=32"; env $tuned MGI_RECV_ZCOPY=$z timeout 60 mgi_gpu_test bench -l 2 -s 16 -n 134217728 -b 32 -T 40 2>&1 | grep -E "^send_bw|^bench|GB/s|FAIL|rror" | tail -3
  done
done
for g in 1 2; do
  for z in 0 1; do
    echo "-- info log, groups $g zcopy $z shuffle 64B"
    env $tuned MGI_STAGE_GROUPS=$g MGI_RECV_ZCOPY=$z UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=10 timeout 60 mgi_gpu_test shuffle -l 2 -s 64 -n 33554432 -b 32 -T 40 > $O/shuffle-info-64B-groups$g-zcopy$z.txt 2>&1
    grep -E "^shuffle|sorter (totals|rounds)" $O/shuffle-info-64B-groups$g-zcopy$z.txt
  done
done
MGI_SUITE_BUDGET_S=330 bash bundle/run/mgi-gpu-suite.sh $B /tmp/mgi > $O/suite.txt 2>&1
grep -E "^(PASS|FAIL|SKIPPED|TIMEOUT|== [0-9])" $O/suite.txt | tail -50
for f in $(grep -oE "log /tmp/mgi/[^)]*" $O/suite.txt | cut -d' ' -f2); do cp $f $O/; done
